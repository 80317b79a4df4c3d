"""An experiment's settings, as a person gives them, and the one check that turns them into a sweep.

The experiment panel and ``gpu-workbench run`` both describe a sweep in :class:`Experiment` and
both ask :func:`check` / :func:`plan` whether it can run: each problem comes back once, named by
the setting it is about, so the panel shows it next to that field and the command line prefixes
its option's name. The engine process still refuses a spec it cannot run (it is the last to see
it), but no view decides on its own any more whether a sweep may start.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from workbench.catalog.backends import BACKENDS, Availability, base_name, is_gpu, probe
from workbench.catalog.workloads import REGISTRY
from workbench.core.sizes import parse_bytes, parse_int, parse_sizes, steps
from workbench.measure import engine
from workbench.measure import threads as threads_mod

@dataclass(frozen=True)
class Experiment:
    """What a sweep is asked to be: plain values as typed, checked by :func:`check`.

    Sizes are given one of three ways: ``sizes``, an expression as the command line takes it
    (``1024,2^20``, ``2^10:2^20:x4``); or ``size_from``, ``size_to`` and ``size_steps``, as the
    panel takes them; or neither, for the workload's own sizes. ``backends`` None: every backend
    of the workload usable here."""

    workload: str | None = None           # None: none chosen yet
    backends: tuple[str, ...] | None = None
    sizes: str | None = None
    size_from: str = ""
    size_to: str = ""
    size_steps: int = 0
    dtype: str = "float32"
    variants: tuple[str, ...] = ()
    host_memory: str = "pageable"
    repeats: int | None = None            # the fewest samples per point
    budget_s: float | None = None         # the most seconds of samples per point
    noise: float | None = None            # the noise target, a fraction (0.01 for 1 %)
    min_time_s: float | None = None
    device_memory_limit: str | None = None   # as typed ("8GiB"); None for no cap
    energy: bool = False                  # energy per call, in a pass of its own after each point
    threads: str = ""                     # '1,4,all': each threaded CPU backend once per count ('numba x4')

    @classmethod
    def from_panel(cls, settings: Mapping[str, Any]) -> "Experiment":
        """The panel's settings (``ExperimentPanel.settings()``): the noise target in percent."""
        noise = settings.get("noise_percent")
        return cls(workload=str(settings.get("workload") or "") or None, backends=tuple(settings.get("backends") or ()),
                   size_from=str(settings.get("size_from") or ""), size_to=str(settings.get("size_to") or ""),
                   size_steps=int(settings.get("size_steps") or 0), dtype=str(settings.get("dtype") or "float32"),
                   host_memory=str(settings.get("host_memory") or "pageable"),
                   repeats=settings.get("repeats"), budget_s=settings.get("budget_s"),
                   noise=None if noise is None else float(noise) / 100,
                   device_memory_limit=str(settings.get("device_memory_limit") or "").strip() or None,
                   energy=bool(settings.get("energy")), threads=str(settings.get("threads") or "").strip())


@dataclass(frozen=True)
class Problem:
    """Why an experiment cannot run: the setting it is about and one line for a person."""

    setting: str          # "workload", "sizes", "backends", "device_memory_limit", or "sweep" (the rest)
    text: str


class SettingsError(ValueError):
    """An experiment that cannot run; ``problem`` says which setting and why."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(problem.text)


#: The message for a sweep with no backend: both the command line's words and the panel's hint.
NO_BACKEND = "no backend chosen: choose at least one usable backend"


@dataclass(frozen=True)
class Checked:
    """What :func:`check` found: the spec (None where a problem stops it) and every problem."""

    spec: engine.SweepSpec | None
    problems: tuple[Problem, ...] = ()
    sizes: tuple[int, ...] = ()           # the sizes read, where they could be read
    workload: Any = field(default=None, compare=False)

    def about(self, setting: str) -> str:
        """The first problem with ``setting`` ('' for none)."""
        return next((p.text for p in self.problems if p.setting == setting), "")


def check(e: Experiment, usable: Callable[[str], Availability] = probe) -> Checked:
    """Every problem of ``e``, each named by its setting, and the sweep it describes when it has
    none. ``usable`` says whether a backend can run here (the window passes what its probes found)."""
    problems: list[Problem] = []
    try:
        workload = REGISTRY.get(e.workload) if e.workload is not None else None
    except KeyError as exc:
        return Checked(None, (Problem("workload", str(exc.args[0])),))
    if workload is None:
        return Checked(None, (Problem("workload", "Choose a workload."),))
    sizes: tuple[int, ...] = ()
    try:
        sizes = _sizes(e, workload)
        engine.check_memory(workload, max(sizes), e.dtype if e.dtype in workload.dtypes else workload.dtypes[0])
    except (ValueError, engine.PlanError) as exc:
        problems.append(Problem("sizes", str(exc)))
    names = tuple(b for b in workload.backends if usable(b).usable) if e.backends is None else \
        tuple(b.strip() for b in e.backends if b.strip())
    if not names:
        problems.append(Problem("backends", NO_BACKEND))
    if e.threads:
        try:
            counts = threads_mod.counts(e.threads)
        except ValueError as exc:
            problems.append(Problem("threads", str(exc)))
        else:
            names = threads_mod.series(names, counts, workload.implementations)
    limit = 0
    try:
        limit = parse_bytes(e.device_memory_limit) if e.device_memory_limit is not None else 0
    except ValueError as exc:
        problems.append(Problem("device_memory_limit", str(exc)))
    if problems:
        return Checked(None, tuple(problems), sizes, workload)
    repeats = e.repeats if e.repeats is not None else engine.DEFAULT_MIN_REPEATS
    spec = engine.SweepSpec(
        workload=workload.name, backends=names, sizes=sizes, dtype=e.dtype, variants=tuple(e.variants),
        host_memory=e.host_memory, min_repeats=repeats,
        budget_s=e.budget_s if e.budget_s is not None else engine.DEFAULT_BUDGET_S,
        noise=e.noise if e.noise is not None else engine.DEFAULT_NOISE,
        min_time_s=e.min_time_s if e.min_time_s is not None else engine.DEFAULT_MIN_TIME_S,
        device_memory_limit=limit, energy=bool(e.energy))
    if isinstance(repeats, int) and not isinstance(repeats, bool):
        spec = dataclasses.replace(spec, max_repeats=max(spec.max_repeats, repeats))
    try:
        engine.validate(spec)
    except engine.PlanError as exc:
        return Checked(None, (Problem("sweep", str(exc)),), sizes, workload)
    for name in names:
        a = usable(base_name(name))
        if not a.usable:
            return Checked(None, (Problem("backends", f"backend {name} is not usable here: {a.reason}"),),
                           sizes, workload)
    return Checked(spec, (), sizes, workload)


def plan(e: Experiment, usable: Callable[[str], Availability] = probe) -> engine.SweepSpec:
    """The sweep ``e`` describes; :class:`SettingsError` (its first problem) where it cannot run."""
    checked = check(e, usable)
    if checked.problems:
        raise SettingsError(checked.problems[0])
    return checked.spec


def _sizes(e: Experiment, workload: Any) -> tuple[int, ...]:
    if e.sizes is not None:
        return tuple(parse_sizes(e.sizes))
    if e.size_from or e.size_to:
        return tuple(steps(parse_int(e.size_from), parse_int(e.size_to), e.size_steps or 1))
    return tuple(workload.default_sizes)


def memory_notes(spec: engine.SweepSpec, **free: Any) -> list[str]:
    """What the sweep will meet on the device, before it starts (announced, never refused: a size
    past the cap is how the memory wall is reached on purpose). ``free``: as
    ``engine.device_memory_notes`` takes it (the driver is asked where it is not given)."""
    if spec.device_memory_limit and not any(is_gpu(b) for b in spec.backends if base_name(b) in BACKENDS):
        return ["The GPU memory cap applies to GPU backends only, and this sweep runs none."]
    return engine.device_memory_notes(spec, **free)
