"""The sweep engine: runs points, measures them honestly, yields plain-data events.

A point is (workload, backend, size, dtype, variant).  For each point the
engine prepares the implementation (not timed), runs it once and records that
first execution on its own as ``first_call_s`` (it carries JIT compilation,
CUDA context, cuBLAS/cuFFT plans), then repeats it until both a minimum count
and a time budget are reached.  Each repeat times its phases separately:
host-to-device, compute, device-to-host, with the backend session's clock
(CUDA events on GPU backends).  The last repeat's result is checked against the
workload's float64 reference.

The engine imports no Qt: the command line, the tests and the GUI's worker
thread all consume the same generator of events.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import psutil

from workbench.catalog import backends as backends_mod
from workbench.core import driver, units
from workbench.core.sizes import fmt_size
from workbench.measure import threads
from workbench.measure.protocol import (MakingInputs, MeasuringLimits, PointFinished, PointStarted, SweepError, SweepFinished,
                                       SweepStarted)
from workbench.catalog.workloads import REGISTRY, Workload, shown
from workbench.results.rows import empty_row, human_bytes

log = logging.getLogger(__name__)

# A sweep launches small grids on purpose (that is where the GPU loses): Numba CUDA's warning about
# their occupancy, once per launch on stderr, would bury the table and the lesson's statement.
warnings.filterwarnings("ignore", message=r".*Grid size \d+ will likely result in GPU under-utilization")

#: A point is sampled until the 95 % interval of its median is within DEFAULT_NOISE of it on either
#: side (nvbench stops at 0.5 % relative noise of its samples, perfplot after about a second),
#: after at least DEFAULT_MIN_REPEATS samples (6 is the fewest whose [min, max] covers the median
#: with 95 %) and DEFAULT_MIN_TIME_S, and at most DEFAULT_BUDGET_S: a point that reaches that cap
#: unconverged says so (``converged`` false).
DEFAULT_NOISE = 0.01
DEFAULT_MIN_REPEATS = 7
DEFAULT_MIN_TIME_S = 0.02
DEFAULT_BUDGET_S = 1.0
DEFAULT_MAX_REPEATS = 100_000
#: Rounds per point (asv runs its benchmarks in rounds too): see _measure_point.
DEFAULT_ROUNDS = 5
MAX_ROUNDS = 100
#: What a sweep may ask for at most: beyond these a point would run for hours, which is a typo.
MAX_MIN_REPEATS = 100_000
MAX_BUDGET_S = 3600.0
MAX_SIZE = 2 ** 53
#: A point may use at most this share of the memory available when it is planned.
MEMORY_SHARE = 0.8

@dataclass(frozen=True)
class SweepSpec:
    workload: str
    backends: tuple[str, ...]
    sizes: tuple[int, ...]
    dtype: str = "float32"
    variants: tuple[str, ...] = ()          # empty: every variant the workload declares
    host_memory: str = "pageable"           # or "pinned", for the GPU backends' transfers
    min_repeats: int = DEFAULT_MIN_REPEATS
    budget_s: float = DEFAULT_BUDGET_S      # the most seconds of samples a point may take
    max_repeats: int = DEFAULT_MAX_REPEATS
    seed: int = 0
    device_memory_limit: int = 0            # bytes the GPU backends may use (0: no cap): workbench.measure.gpu.cap
    noise: float = DEFAULT_NOISE             # target half-width of the median's interval, relative (0: to the cap)
    rounds: int = DEFAULT_ROUNDS             # each point measured in this many rounds, made anew each time
    min_time_s: float = DEFAULT_MIN_TIME_S   # the fewest seconds of samples (at most budget_s)
    energy: bool = False                     # energy per call in a pass of its own (workbench.measure.energy)


def _same(inputs: Any) -> Any:
    return inputs



def settings_of(spec: SweepSpec) -> dict:
    """A sweep's settings as result files and the journal keep them: plain values, tuples as lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(spec).items()}


class StopFlag:
    """Asks a running sweep to stop; honoured between repeats.

    Wraps a threading.Event, or a multiprocessing.Event when the sweep runs in another process.
    """

    def __init__(self, event: Any = None) -> None:
        self._event = event if event is not None else threading.Event()

    def stop(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


# Checks made before anything is allocated --------------------------------------------------------

class PlanError(ValueError):
    """A sweep that cannot run as asked; the message is one line for the user."""


def validate(spec: SweepSpec) -> Workload:
    """Refuse a sweep that cannot run, before any input is allocated."""
    try:
        workload = REGISTRY.get(spec.workload)
    except KeyError as exc:
        raise PlanError(exc.args[0]) from None
    if not spec.backends:
        raise PlanError("no backend chosen")
    for series in spec.backends:
        name, count = backends_mod.split_threads(series)
        if name not in backends_mod.BACKENDS:
            raise PlanError(f"unknown backend {shown(name)}; valid: {', '.join(backends_mod.BACKENDS)}")
        if name not in workload.implementations:
            raise PlanError(f"{spec.workload} has no {name} implementation; "
                            f"it runs on: {', '.join(workload.backends)}")
        if count and not threads.settable(workload.implementations[name]):
            raise PlanError(f"{shown(series)}: {name} runs on {threads.fixed_text(workload.implementations[name])}; "
                            f"its threads cannot be set")
    if spec.dtype not in workload.dtypes:
        raise PlanError(f"{spec.workload} does not support dtype {spec.dtype!r}; use one of: {', '.join(workload.dtypes)}")
    if not spec.sizes:
        raise PlanError("no size given")
    for size in spec.sizes:
        if not isinstance(size, int) or size <= 0:
            raise PlanError(f"size {size} must be a positive integer")
        if size > MAX_SIZE:
            raise PlanError(f"size {size:.3g} is too large (at most 2^53)")
    for v in spec.variants:
        if v not in workload.variants:
            raise PlanError(f"{spec.workload} has no variant {v!r}; valid: {', '.join(workload.variants)}")
    if spec.host_memory not in ("pageable", "pinned"):
        raise PlanError(f"host memory must be 'pageable' or 'pinned', not {spec.host_memory!r}")
    if not 1 <= spec.min_repeats <= MAX_MIN_REPEATS:
        raise PlanError(f"repeats must be between 1 and {MAX_MIN_REPEATS:,}, not {spec.min_repeats:,}")
    if not 0 <= spec.budget_s <= MAX_BUDGET_S:     # also refuses NaN
        raise PlanError(f"the budget must be between 0 and {MAX_BUDGET_S:.0f} seconds per point, not {spec.budget_s}")
    if not isinstance(spec.rounds, int) or not 1 <= spec.rounds <= MAX_ROUNDS:
        raise PlanError(f"rounds must be a whole number from 1 to {MAX_ROUNDS}, not {spec.rounds!r}")
    if not 0 <= spec.noise < 1:
        raise PlanError(f"the noise target must be a fraction between 0 and 1 (0.01 for 1 %), not {spec.noise}")
    if not 0 <= spec.min_time_s <= MAX_BUDGET_S:
        raise PlanError(f"the minimum time must be between 0 and {MAX_BUDGET_S:.0f} seconds, not {spec.min_time_s}")
    if spec.max_repeats < spec.min_repeats:
        raise PlanError("the repeat cap must not be below the minimum repeats")
    for what, names in (("backend", spec.backends), ("variant", spec.variants)):
        twice = sorted({str(n) for n in names if list(names).count(n) > 1})
        if twice:     # a second run of the same point would only double the sweep's time
            raise PlanError(f"{what} {', '.join(twice)} is named twice")
    if not isinstance(spec.device_memory_limit, int) or spec.device_memory_limit < 0:
        raise PlanError(f"the device memory limit must be a number of bytes, not {spec.device_memory_limit!r}")
    check_memory(workload, max(spec.sizes), spec.dtype)
    return workload


def check_memory(workload: Workload, size: int, dtype: str) -> None:
    """Refuse a size whose host footprint would not fit in the memory available now."""
    need = workload.footprint(size, np.dtype(dtype).itemsize)      # NaN where not known: no refusal
    avail = psutil.virtual_memory().available
    if need > MEMORY_SHARE * avail:
        raise PlanError(f"{workload.name} at size {size} ({dtype}) needs about {units.nbytes(need)} of host memory; "
                        f"{units.nbytes(avail)} is available")


_ASK = object()


def device_memory_notes(spec: SweepSpec, workload: Workload | None = None, free: Any = _ASK) -> list[str]:
    """The sizes whose estimated device footprint passes the sweep's device memory cap, or the
    device memory free now (``free``: bytes, None where unknown; asked of the driver by default),
    one line per reason. Said before the sweep, never refused: the user may want to see the wall."""
    workload = workload or REGISTRY.get(spec.workload)
    if not any(backends_mod.is_gpu(b) for b in spec.backends if backends_mod.base_name(b) in backends_mod.BACKENDS):
        return []
    if free is _ASK:
        free = driver.free_memory()
    itemsize = np.dtype(spec.dtype).itemsize
    over_cap, over_free = [], []
    for size in sorted(set(spec.sizes)):
        need = workload.device_bytes(size, itemsize)
        if spec.device_memory_limit and need > spec.device_memory_limit:
            over_cap.append((size, need))
        elif free is not None and need > free:
            over_free.append((size, need))

    def line(points: list, against: str) -> str:
        where = ", ".join(f"{fmt_size(size)} (about {human_bytes(need)})" for size, need in points)
        sizes = "sizes" if len(points) > 1 else "size"
        return (f"{workload.name} in {spec.dtype} at {sizes} {where} needs more device memory than {against}: "
                "expect out-of-memory rows there (the memory wall)")
    notes = []
    if over_cap:
        notes.append(line(over_cap, f"the {human_bytes(spec.device_memory_limit)} cap"))
    if over_free:
        notes.append(line(over_free, f"the {human_bytes(free)} free on the device now"))
    return notes


# The sweep --------------------------------------------------------------------------------------

def plan(spec: SweepSpec, workload: Workload) -> list[tuple[int, str, str]]:
    """The sweep's points in the order they run: (size, variant, backend); a point's index is its
    place here, the same in every process that plans the same spec."""
    variants = spec.variants or workload.variants
    return [(size, variant, backend) for size in spec.sizes for variant in variants for backend in spec.backends]


def run_sweep(spec: SweepSpec, stop: StopFlag | None = None, first: int = 0, last: int | None = None,
              unavailable: str = "", skip: Iterable[int] = (),
              reference_inputs: Callable[[Any], Any] | None = None) -> Iterator[Any]:
    """Run the points of ``spec`` with index in [``first``, ``last``) and not in ``skip``, yielding
    protocol messages; never raises for a failing point. (A supervisor resumes a sweep at ``first``
    after its engine died, skipping the point that took it down, and gives an engine of its own the
    points of a backend that needs one.) ``unavailable``: why this process cannot run them (its
    preparation failed): each point becomes an error row. ``reference_inputs``: what the float64
    reference is computed from, where the process's preparation replaced the workloads' library
    under them (cudf.pandas): the real library's objects, so the reference stays the real library's.

    The points of one size (and variant) run their rounds interleaved (``workbench.measure.point``): a
    ``PointStarted`` before each round of each, their ``PointFinished`` once the size is done."""
    # What measures is imported here, where a sweep runs (the worker's thread, an engine process):
    # the window imports this module for the spec, its checks and its plan, and its first frame
    # paid about 60 ms for the point, the limits and the kernel records it never draws.
    from workbench.measure import limits
    from workbench.measure.host_memory import HostPeak
    from workbench.measure.point import NoReference, Point

    stop = stop or StopFlag()
    reference_inputs = reference_inputs or _same
    t_sweep = time.perf_counter()
    try:
        workload = validate(spec)
    except PlanError as exc:
        yield SweepError(str(exc))
        yield SweepFinished(False, 0.0)
        return
    dtype = np.dtype(spec.dtype)
    points = plan(spec, workload)
    total = len(points)
    yield SweepStarted(total, spec)
    sessions: dict[str, Any] = {}
    host_peak = HostPeak()
    done = 0
    cancelled = False
    skip = frozenset(skip)
    todo = [(i, p) for i, p in enumerate(points)
            if i >= first and (last is None or i < last) and i not in skip]
    sweep_id = uuid.uuid4().hex[:12]
    rounds = min(spec.rounds, spec.min_repeats)       # a round gives one sample at least
    inputs = reference = None
    try:
        for g, ((size, variant), members) in enumerate(itertools.groupby(todo, key=lambda ip: ip[1][:2])):
            members = list(members)
            if stop.is_set():
                cancelled = True
                break
            inputs = reference = None              # free the last inputs before making the next
            setup_error = unavailable
            if not setup_error:
                yield MakingInputs(size, variant)
                try:
                    inputs = workload.make_inputs(size, dtype, variant, np.random.default_rng(spec.seed))
                except Exception as exc:  # noqa: BLE001 - e.g. MemoryError: the sweep goes on
                    inputs = None
                    setup_error = f"could not make inputs: {type(exc).__name__}: {exc}"
                else:
                    try:        # a reference kernel that fails fails its own points, not the others'
                        reference = workload.reference_at(reference_inputs(inputs), size)
                    except Exception as exc:  # noqa: BLE001
                        reference = NoReference(f"{type(exc).__name__}: {exc}")
            if stop.is_set():                      # making inputs can take long: look again
                cancelled = True
                break
            group = [Point(index, workload, backend, _base(workload, spec, size, variant, backend), spec,
                           rounds, f"{sweep_id}:{g}", sessions, inputs, reference, host_peak)
                     for index, (_, _, backend) in members]
            if setup_error:
                for p in group:
                    yield PointStarted(p.index, total, p.backend, size, variant)
                    p.error = empty_row(**p.base, device="", status="error", message=setup_error)
            for r in range(rounds):
                # Each round in the other order: no backend always runs first after another's round.
                for p in (group if r % 2 == 0 else group[::-1]):
                    if p.finished:
                        continue
                    if stop.is_set():
                        cancelled = True
                        break
                    yield PointStarted(p.index, total, p.backend, size, variant)
                    p.measure_round(r, stop)
                    cancelled = cancelled or p.cancelled
                if cancelled:
                    break
            started = [p for p in group if p.timings is not None or p.error is not None]
            for p in started:
                if not stop.is_set():       # untimed passes after the rounds: never after Stop
                    p.measure_memory()
                    p.measure_kernels()
                    p.measure_energy(stop)
                if p.error is None and p.session is not None and not limits.known(p.session.device_id):
                    yield MeasuringLimits(p.session.device)      # the row checks the point against them
                    try:
                        limits.limits_for(p.session)
                    except Exception:  # noqa: BLE001 - the row says what its check met
                        log.exception("measuring the limits of %s", p.session.device)
                row = p.row()
                yield PointFinished(p.index, total, row)
                done += 1
            if cancelled:
                break
    finally:
        inputs = reference = None
        for session in sessions.values():
            try:
                if hasattr(session, "close"):       # a meter or a reason kept beside the sessions has none
                    session.close()
            except Exception:  # noqa: BLE001 - closing must not hide the sweep's outcome
                log.exception("closing a session failed")
    yield SweepFinished(cancelled, time.perf_counter() - t_sweep, done)


def time_left(spec: SweepSpec, done: int, total: int, elapsed: float) -> tuple[float, float]:
    """(an estimate, a ceiling) of the seconds a sweep has left, from the stopping rule: a point stops
    at its noise target, or at ``budget_s`` of samples (first calls aside); the estimate scales the
    time the points done so far took, never past the ceiling."""
    left = max(0, total - done)
    ceiling = left * spec.budget_s
    if done == 0:
        return ceiling, ceiling
    return min(elapsed / done * left, ceiling) if ceiling > 0 else elapsed / done * left, ceiling


def host_memory(workload: Workload, spec: SweepSpec, variant: str, backend: str) -> str:
    """The row's host memory: '' on a CPU backend; the variant's where it names one (overlap's
    'pinned 4 streams'), else the sweep's choice."""
    if not backends_mod.is_gpu(backend):
        return ""
    if workload.host_memory_of is not None:
        return workload.host_memory_of(variant) or spec.host_memory
    return spec.host_memory


def _base(workload: Workload, spec: SweepSpec, size: int, variant: str, backend: str) -> dict:
    return dict(workload=workload.name, backend=backend, size=size, dtype=spec.dtype, variant=variant,
                host_memory=host_memory(workload, spec, variant, backend))
