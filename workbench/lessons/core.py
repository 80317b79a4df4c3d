"""The core every lesson shares: what a lesson declares (:class:`Lesson`, :class:`Run`), what of it
runs here (:func:`plan` gives a :class:`Plan`), and its statement from the rows measured
(:func:`explain`: the lesson's own ``explain`` plus what every lesson says alike: what failed,
what was not run and why, what a GPU would show).

Each lesson is a module of its own that declares a :class:`Lesson` (``workbench.lessons`` lists
the modules); this module knows none of them.
"""
from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from workbench.core.lazy import lazy_module

from workbench.catalog.backends import BACKENDS, is_gpu
from workbench.catalog.workloads import REGISTRY
from workbench.core.sizes import fmt_size
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, Statement, gib
from workbench.measure import engine
from workbench.results.rows import to_frame
from workbench.views.presets import KINDS as CHARTS

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

#: Samples and seconds per point a lesson takes unless it says otherwise: at least 7 samples (fewer
#: give no 95 % interval of the median, and every claim would be undecided), and at most half a
#: second, stopping earlier once the median is known to the noise target.
MIN_REPEATS = 7
BUDGET_S = 0.5
#: Sizes in tens of thousands of rows to tens of millions: the dataframe lessons' sweep.
TENS = (10_000, 100_000, 1_000_000, 10_000_000)


def pow2(lo: int, hi: int, step: int = 2) -> tuple[int, ...]:
    """Sizes 2^lo to 2^hi, every ``step``-th power."""
    return tuple(2 ** k for k in range(lo, hi + 1, step))


# Declarations ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One sweep of a lesson. A lesson that compares conditions runs one per condition."""

    label: str = ""
    dtype: str = "float32"
    host_memory: str = "pageable"


#: What a lesson's ``explain`` is: it reads the rows measured and tells ``say`` what they show.
Explain = Callable[[Measured, "Lesson", Say], None]


@dataclass(frozen=True)
class Lesson:
    """A preset sweep and the claim it puts to the test; ``explain`` reads its results."""

    name: str
    title: str
    claim: str                       # the lesson in a sentence, as LESSONS.md puts it
    workload: str
    backends: tuple[str, ...]
    sizes: tuple[int, ...]
    on_gpu: str                      # what the GPU part shows, said where no GPU backend could run
    runs: tuple[Run, ...] = (Run(),)
    variants: tuple[str, ...] = ()   # empty: every variant of the workload
    min_repeats: int = MIN_REPEATS
    budget_s: float = BUDGET_S
    baseline: str = "numpy"          # what speedups are measured against
    chart: str = "speedup"           # the chart that shows the lesson best, and carries its marks
    #: A cap on the device memory the GPU backends may use, in bytes (0: none). Data: it is handed to
    #: the sweep where the workbench has the option (``--device-memory-limit``), and said otherwise.
    device_memory_limit: int = 0
    fresh_engine: bool = False       # nothing compiled yet: the first call pays for it
    needs_gpu: bool = False          # its CPU backends alone show nothing of it: without a GPU, run none
    energy: bool = False             # its sweeps measure energy per call (workbench.measure.energy)
    order: int = 0                   # where it stands in the menu and the command line's list, lowest first
    #: Failed points that are the lesson's subject (the memory wall's out-of-memory rows).
    expected_failures: re.Pattern | None = None
    #: The lesson module's ``explain``, attached when the registry loads the module (None: a lesson
    #: that states nothing of its own, only what every lesson says).
    explain: Explain | None = field(default=None, repr=False, compare=False)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.dtype for r in self.runs))


def problems(ls: Lesson) -> list[str]:
    """What is wrong with a declaration, against the workloads and backends registered now.

    A backend the workbench does not have yet, or that the workload does not implement yet, is
    not a problem: :func:`plan` skips it with the reason.
    """
    try:
        w = REGISTRY.get(ls.workload)
    except KeyError as exc:
        return [exc.args[0]]
    out = []
    for r in ls.runs:
        if r.dtype not in w.dtypes:
            out.append(f"{ls.name}: {ls.workload} has no dtype {r.dtype}")
        if r.host_memory not in ("pageable", "pinned"):
            out.append(f"{ls.name}: host memory {r.host_memory!r}")
    out += [f"{ls.name}: {ls.workload} has no variant {v!r}" for v in ls.variants if v not in w.variants]
    if len(ls.runs) > 1 and (w.variants != ("",) or len({r.label for r in ls.runs}) < len(ls.runs)):
        out.append(f"{ls.name}: several runs need distinct labels and a workload without variants")
    if not ls.sizes or any(s <= 0 for s in ls.sizes):
        out.append(f"{ls.name}: sizes must be positive")
    if ls.chart not in CHARTS:
        out.append(f"{ls.name}: no chart {ls.chart!r}; the charts are: {', '.join(CHARTS)}")
    return out


def gpu(name: str) -> bool:
    """Whether ``name`` is a GPU backend of this workbench (a lesson may name one this build lacks)."""
    return name in BACKENDS and is_gpu(name)


# Plans --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """What of a lesson runs here: a sweep per run, and what was left out and why."""

    lesson: Lesson
    specs: tuple[engine.SweepSpec, ...]     # one per run that has a backend to run
    labels: tuple[str, ...]                 # the run label of each spec
    skipped: tuple[tuple[str, str], ...] = ()   # (backend, why)
    notes: tuple[str, ...] = ()

    def run_label(self, index: int) -> str:
        return self.labels[index] if len(self.lesson.runs) > 1 else ""


def _reason(ls: Lesson, backend: str, availability: Mapping[str, Any]) -> str:
    """Why ``backend`` cannot run this lesson here; '' when it can."""
    if backend not in BACKENDS:
        return "not a backend of this workbench yet"
    if backend not in REGISTRY.get(ls.workload).implementations:
        return f"{ls.workload} has no {backend} implementation yet"
    a = availability.get(backend)
    if a is None:
        return "not checked yet"
    return "" if a.usable else a.reason


def plan(ls: Lesson, availability: Mapping[str, Any], *, sizes: Sequence[int] | None = None,
         min_repeats: int | None = None, budget_s: float | None = None, noise: float | None = None,
         min_time_s: float | None = None, energy: bool = False) -> Plan:
    """The lesson's sweeps for this machine. ``sizes``, ``min_repeats``, ``budget_s``, ``noise`` and
    ``min_time_s`` replace the lesson's own (a quick try, a test); sizes whose host footprint would
    not fit are left out."""
    w = REGISTRY.get(ls.workload)
    skipped = [(b, why) for b in ls.backends if (why := _reason(ls, b, availability))]
    backends = tuple(b for b in ls.backends if b not in dict(skipped))
    notes = []
    if ls.needs_gpu and not any(gpu(b) for b in backends):
        if backends:    # none left at all is said already ("Nothing of this lesson can run here")
            notes.append(f"{', '.join(backends)} alone would show nothing of this lesson: not run.")
        backends = ()
    chosen = tuple(sizes) if sizes else ls.sizes
    fits = []
    for s in chosen:
        try:
            for dtype in ls.dtypes:
                engine.check_memory(w, s, dtype)
            fits.append(s)
        except engine.PlanError as exc:
            notes.append(f"Size {fmt_size(s)} left out: {exc}.")
    if ls.device_memory_limit:
        if "device_memory_limit" in {f.name for f in dataclasses.fields(engine.SweepSpec)}:
            notes.append(f"GPU backends may use {gib(ls.device_memory_limit)} of device memory.")
        else:
            notes.append(f"This workbench cannot cap device memory yet (--device-memory-limit): the lesson's "
                         f"cap of {gib(ls.device_memory_limit)} is not applied, and the GPU's whole "
                         "memory is there to fill.")
    specs, labels = [], []
    runs = ls.runs
    if not any(gpu(b) for b in backends):
        # Host memory only matters to a GPU's transfers: without one, a pinned run repeats the pageable.
        runs = tuple(r for i, r in enumerate(runs)
                     if not any(q.dtype == r.dtype for q in runs[:i]))
    for r in runs:
        if not backends or not fits:
            break
        spec = engine.SweepSpec(
            workload=ls.workload, backends=backends, sizes=tuple(fits), dtype=r.dtype, variants=ls.variants,
            host_memory=r.host_memory,
            min_repeats=min_repeats if min_repeats is not None else ls.min_repeats,
            budget_s=budget_s if budget_s is not None else ls.budget_s,
            noise=noise if noise is not None else engine.DEFAULT_NOISE,
            min_time_s=min_time_s if min_time_s is not None else engine.DEFAULT_MIN_TIME_S,
            energy=bool(energy or ls.energy))
        spec = dataclasses.replace(spec, max_repeats=max(spec.max_repeats, spec.min_repeats))
        specs.append(_with_device_limit(spec, ls.device_memory_limit))
        labels.append(r.label)
    if backends and not fits:
        notes.append("No size of this lesson fits in the memory available here.")
    return Plan(ls, tuple(specs), tuple(labels), tuple(skipped), tuple(notes))


def _with_device_limit(spec: Any, limit: int) -> Any:
    """The spec with the lesson's device-memory cap, where the sweep has such a field (given as the
    field's own kind: bytes, or text such as '1.2 GiB')."""
    if not limit:
        return spec
    fields = {f.name: f for f in dataclasses.fields(spec)}
    f = fields.get("device_memory_limit")
    if f is None:
        return spec
    text_field = "str" in str(f.type) and "int" not in str(f.type)
    return dataclasses.replace(spec, device_memory_limit=limit_text(limit) if text_field else int(limit))


def limit_text(limit: int) -> str:
    """Bytes as the command line's option reads them: 8GiB, 1280MiB, or plain bytes."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if limit % scale == 0:
            return f"{limit // scale}{unit}"
    return str(int(limit))


# Running: what the command line and the window do with each row ------------------------------------

def tag(row: Mapping[str, Any], p: Plan, run: int) -> dict:
    """The row with its run's label in its variant, for a lesson of several runs: the runs are
    separate series in every view (and the label says which sweep a row came from)."""
    out = dict(row)
    label = p.run_label(run)
    if label:
        out["variant"] = f"{out['variant']}, {label}" if out.get("variant") else label
    return out


def unexpected_failures(p: Plan, frame: pd.DataFrame) -> pd.DataFrame:
    """Rows that failed for a reason that is not the lesson's subject."""
    bad = frame[frame["status"] != "ok"]
    pattern = p.lesson.expected_failures
    if pattern is None or bad.empty:
        return bad
    return bad[~bad["message"].astype(str).str.contains(pattern)]


# The statement ------------------------------------------------------------------------------------

def explain(p: Plan, frame: pd.DataFrame, *, stopped: bool = False) -> Statement:
    """The lesson's statement from the rows of its sweeps (tagged with :func:`tag`)."""
    ls = p.lesson
    say = Say()
    m = Measured(frame if len(frame) else to_frame([]))
    if m.ok.empty:
        say.note("Nothing was measured." if p.specs else "Nothing of this lesson can run here.")
    elif ls.explain is not None:
        try:
            ls.explain(m, ls, say)
        except Exception as exc:  # noqa: BLE001 - an explain that cannot read odd rows says so; the rows stand
            log.exception("lesson %s: reading the results failed", ls.name)
            say.note(f"(These results could not be read as the lesson: {type(exc).__name__}: {exc}.)")
    gpu_declared = [b for b in ls.backends if gpu(b) or b not in BACKENDS]
    if gpu_declared and not any(gpu(b) for b in m.ok["backend"].unique()):
        say.note(f"No GPU backend could run here. On a GPU: {ls.on_gpu}")
    failed = unexpected_failures(p, frame) if len(frame) else frame
    if len(failed):
        say.note(f"{len(failed)} point(s) failed and are left out: " + "; ".join(
            f"{r.backend} at {fmt_size(r.size)}: {r.status}" for r in failed.head(3).itertuples())
            + ("; ..." if len(failed) > 3 else "") + ".")
    if stopped:
        say.note("The lesson was stopped before its end: this covers only what was measured.")
    by_reason: dict[str, list[str]] = {}
    for backend, why in p.skipped:
        by_reason.setdefault(why, []).append(backend)
    for why, names in by_reason.items():
        say.note(f"Not run: {', '.join(names)}: {why}.")
    say.sentences += list(p.notes)
    holds = all(say.checks) if say.checks else None
    return Statement(ls.name, ls.title, tuple(say.sentences), holds, tuple(say.marks), say.break_even)
