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

import dataclasses
import logging
import math
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import psutil

from workbench import backends as backends_mod
from workbench import limits
from workbench.gpu import cap, driver
from workbench import load as load_mod
from workbench import stats
from workbench.gpu import clocks as clocks_mod
from workbench.measure import HostPeak, summarize, typical_stages
from workbench import sampling
from workbench.sampling import Timings, repeat
from workbench.protocol import PointFinished, PointStarted, SweepError, SweepFinished, SweepStarted
from workbench.registry import REGISTRY, Context, Phases, Workload, shown
from workbench.results import empty_row, encode_samples, encode_stages

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
    device_memory_limit: int = 0            # bytes the GPU backends may use (0: no cap): workbench.gpu.cap
    noise: float = DEFAULT_NOISE             # target half-width of the median's interval, relative (0: to the cap)
    rounds: int = DEFAULT_ROUNDS             # each point measured in this many rounds, made anew each time
    min_time_s: float = DEFAULT_MIN_TIME_S   # the fewest seconds of samples (at most budget_s)


def _same(inputs: Any) -> Any:
    return inputs


#: What the float64 reference is computed from: the inputs themselves, except in an engine process
#: whose library is replaced under the workloads (cudf.pandas), whose preparation sets it so that the
#: reference stays the real library's (``workbench.gpu.cudf_pandas.real_pandas``).
reference_inputs: Callable[[Any], Any] = _same


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
    for name in spec.backends:
        if name not in backends_mod.BACKENDS:
            raise PlanError(f"unknown backend {shown(name)}; valid: {', '.join(backends_mod.BACKENDS)}")
        if name not in workload.implementations:
            raise PlanError(f"{spec.workload} has no {name} implementation; "
                            f"it runs on: {', '.join(workload.backends)}")
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
    need = workload.footprint(size, np.dtype(dtype).itemsize)
    avail = psutil.virtual_memory().available
    if need > MEMORY_SHARE * avail:
        raise PlanError(f"{workload.name} at size {size} ({dtype}) needs about {_gib(need)} of host memory; "
                        f"{_gib(avail)} is available")


_ASK = object()


def device_memory_notes(spec: SweepSpec, workload: Workload | None = None, free: Any = _ASK) -> list[str]:
    """The sizes whose estimated device footprint passes the sweep's device memory cap, or the
    device memory free now (``free``: bytes, None where unknown; asked of the driver by default),
    one line per reason. Said before the sweep, never refused: the user may want to see the wall."""
    workload = workload or REGISTRY.get(spec.workload)
    if not any(backends_mod.is_gpu(b) for b in spec.backends if b in backends_mod.BACKENDS):
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
    from workbench.results import human_bytes
    from workbench.sizes import fmt_size

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


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n < 2**40 else f"{n / 2**40:.2f} TiB"


# The sweep --------------------------------------------------------------------------------------

def plan(spec: SweepSpec, workload: Workload) -> list[tuple[int, str, str]]:
    """The sweep's points in the order they run: (size, variant, backend); a point's index is its
    place here, the same in every process that plans the same spec."""
    variants = spec.variants or workload.variants
    return [(size, variant, backend) for size in spec.sizes for variant in variants for backend in spec.backends]


def run_sweep(spec: SweepSpec, stop: StopFlag | None = None, first: int = 0, last: int | None = None,
              unavailable: str = "") -> Iterator[Any]:
    """Run the points of ``spec`` with index in [``first``, ``last``), yielding protocol messages;
    never raises for a failing point. (A supervisor resumes a sweep at ``first`` after its engine
    died, and gives an engine of its own the points of a backend that needs one.) ``unavailable``:
    why this process cannot run them (its preparation failed): each point becomes an error row."""
    stop = stop or StopFlag()
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
    inputs = reference = None
    made_for = None
    try:
        for index, (size, variant, backend) in enumerate(points):
            if index < first or (last is not None and index >= last):
                continue
            if stop.is_set():
                cancelled = True
                break
            if unavailable:
                setup_error = unavailable
            elif made_for != (size, variant):
                inputs = reference = None          # free the last inputs before making the next
                made_for = (size, variant)
                rng = np.random.default_rng(spec.seed)
                try:
                    inputs = workload.make_inputs(size, dtype, variant, rng)
                    reference = workload.reference(reference_inputs(inputs))
                except Exception as exc:  # noqa: BLE001 - e.g. MemoryError: the sweep goes on
                    inputs = reference = None
                    setup_error = f"could not make inputs: {type(exc).__name__}: {exc}"
                else:
                    setup_error = ""
                if stop.is_set():                  # making inputs can take long: look again
                    cancelled = True
                    break
            yield PointStarted(index, total, backend, size, variant)
            base = dict(workload=workload.name, backend=backend, size=size, dtype=spec.dtype,
                        variant=variant, host_memory=spec.host_memory if backends_mod.is_gpu(backend) else "")
            if setup_error:
                row = empty_row(**base, device="", status="error", message=setup_error)
            else:
                row = _measure_point(workload, backend, sessions, inputs, reference, base,
                                     dtype, spec, stop, host_peak)
            cancelled = row["status"] == "cancelled"
            yield PointFinished(index, total, row)
            done += 1
            if cancelled:
                break
    finally:
        inputs = reference = None
        for session in sessions.values():
            try:
                session.close()
            except Exception:  # noqa: BLE001 - closing must not hide the sweep's outcome
                log.exception("closing a session failed")
    yield SweepFinished(cancelled, time.perf_counter() - t_sweep, done)


_CLOCKS = "gpu clocks"


def _clocks(sessions: dict) -> clocks_mod.GpuClocks:
    """The GPU's clock reader, opened once per sweep beside the sessions (and closed with them)."""
    if _CLOCKS not in sessions:
        sessions[_CLOCKS] = clocks_mod.GpuClocks(0)
    return sessions[_CLOCKS]


_CANARY = "canary"


def _canary(sessions: dict) -> load_mod.Canary:
    """The sweep's canary (``workbench.load.Canary``): one, so its buffers stay where they are."""
    if _CANARY not in sessions:
        sessions[_CANARY] = load_mod.Canary()
    return sessions[_CANARY]


def _session(sessions: dict, backend: str) -> Any:
    """One session per backend and sweep, opened in the thread that runs the sweep."""
    if backend not in sessions:
        sessions[backend] = backends_mod.open_session(backend)
    return sessions[backend]


def _measure_point(workload: Workload, backend: str, sessions: dict, inputs: Any, reference: Any,
                   base: dict, dtype: np.dtype, spec: SweepSpec, stop: StopFlag,
                   host_peak: HostPeak) -> dict:
    phases = None
    session = None
    out_of_memory = False
    # The cap holds for the point's own work only, not for the device limits measured in _row.
    limit = spec.device_memory_limit if backends_mod.is_gpu(backend) else 0
    try:
        session = _session(sessions, backend)
        # Everything the point does runs with its own session current (its stream, for CuPy),
        # whatever other sessions of the sweep were opened before or after it.
        with cap.capped(limit), session.activate(), host_peak.scope() as host_bytes, \
                session.device_memory() as device_bytes:
            ctx = Context(size=base["size"], dtype=dtype, variant=base["variant"],
                          host_memory=spec.host_memory, session=session)
            factory = workload.implementations[backend].factory
            clocks = _clocks(sessions) if session.device_kind == "gpu" else None
            meter = load_mod.LoadMeter()
            dropped = 0
            # Rounds, each with the implementation made anew: where its buffers land in memory changes
            # its speed (two allocations of the same NumPy code ran 9.5 and 13.3 us at 2^14 here, in
            # turn), and only a fresh allocation shows what a rerun would; the rounds' disagreement
            # then widens the interval (sampling.merged).
            timings = None
            rounds = min(spec.rounds, spec.min_repeats)     # a round gives one sample at least
            per_round = dataclasses.replace(spec, budget_s=spec.budget_s / rounds,
                                            min_repeats=max(1, math.ceil(spec.min_repeats / rounds)),
                                            min_time_s=spec.min_time_s / rounds)
            shuffle = np.random.default_rng([spec.seed, base["size"], len(backend)])
            canary = _canary(sessions)
            speeds: list[float] = []
            before = canary.read()
            kept = attempts = 0
            first_call = math.nan
            # A round during which the machine ran below the best speed the canary has seen in this
            # sweep is dropped and run again (nvbench drops a throttled GPU's samples the same way),
            # up to twice the rounds asked for; past that the point keeps what it has, flagged noisy.
            while kept < rounds:
                attempts += 1
                if phases is not None:
                    _close(phases, workload, backend)
                    phases = None
                    session.release()     # the last round's device memory back before the next one's
                spacer = sampling.spacer(shuffle)     # held through the round: see sampling.spacer
                made = factory(inputs, ctx)
                phases = made if isinstance(made, Phases) else Phases(compute=made)
                t = repeat(phases, session, per_round, stop, clocks)
                del spacer
                after = canary.read()
                if attempts == 1:
                    first_call = t.first_call          # only the very first call compiles
                slow = canary.behind(before, after)
                if slow and not t.cancelled and attempts < 2 * rounds - (rounds - kept) + 1:
                    dropped += len(t.compute) + len(t.total)
                    before = after
                    continue
                timings = t if timings is None else sampling.merged(timings, t)
                speeds += [before, after]
                kept += 1
                before = after
                if t.cancelled:
                    break
            timings.first_call = first_call
            timings.dropped += dropped
            machine = dataclasses.replace(meter.read(), canary_s=float(np.median(speeds)),
                                          canary_note=load_mod.canary_note(speeds))
            # The result is verified only once every piece of device work is complete: a download
            # into pinned memory returns before its copy has landed.
            session.synchronize()
            peak_host, peak_device = host_bytes(), device_bytes()
            note = _diagnose(session, phases, timings)
        row = _row(workload, base, session, reference, timings, peak_host, peak_device, machine, spec.noise)
        if note:       # what the session saw beside the figures (cudf.pandas: calls that fell back to the CPU)
            row["message"] = "; ".join(m for m in (row["message"], note) if m)
        return row
    except Exception as exc:  # noqa: BLE001 - one failing point never ends the sweep
        log.warning("%s on %s at size %s failed: %s", workload.name, backend, base["size"], exc)
        message = f"{type(exc).__name__}: {exc}"
        if backends_mod.is_gpu(backend) and cap.is_device_oom(exc):
            # The wall: said in numbers, and the sweep goes on with the next point.
            out_of_memory = True
            what = f"{workload.name} on {backend} at size {base['size']:,} ({base['dtype']})"
            message = cap.describe(exc, what, workload.device_bytes(base["size"], dtype.itemsize), limit,
                                   driver.free_memory())
        return empty_row(**base, device=getattr(session, "device", ""), status="error", message=message)
    finally:
        if phases is not None:
            _close(phases, workload, backend)
        phases = None
        if out_of_memory:
            cap.release_after_oom()
        if session is not None:
            try:
                session.release()
            except Exception:  # noqa: BLE001 - a poisoned CUDA context fails here too: the row stands
                log.exception("releasing %s after the point failed", backend)


def _close(phases: Phases, workload: Workload, backend: str) -> None:
    if phases.close is not None:
        try:
            phases.close()
        except Exception:  # noqa: BLE001
            log.exception("closing %s on %s failed", workload.name, backend)


def _diagnose(session: Any, phases: Phases, timings: Timings) -> str:
    """A session's note on the point it just measured (``Session.diagnose``), '' if it has none."""
    diagnose = getattr(session, "diagnose", None)
    if diagnose is None or timings.cancelled:
        return ""
    try:
        return str(diagnose(phases.compute))
    except Exception as exc:  # noqa: BLE001 - a note is never worth the point
        log.warning("diagnosing the point failed: %s", exc)
        return ""


def _within(lo: float, hi: float, median: float, target: float) -> bool:
    """The interval meets the noise target (a target of 0 asks for none)."""
    return target <= 0 or (median > 0 and math.isfinite(lo) and math.isfinite(hi) and (hi - lo) / 2 / median <= target)


def _row(workload: Workload, base: dict, session: Any, reference: Any, timings: Timings,
         peak_host: float, peak_device: float, machine: load_mod.Load | None = None,
         noise_target: float = 0.0) -> dict:
    comp = timings.compute
    c = summarize(comp)
    t = summarize(timings.total)
    c_lo, c_hi = sampling.interval(comp, timings.round_compute)
    t_lo, t_hi = sampling.interval(timings.total, timings.round_total)
    size, itemsize = base["size"], np.dtype(base["dtype"]).itemsize
    seconds = t["median"] if workload.throughput_on == "total" else c["median"]
    flops, nbytes = workload.flops_and_bytes(size, itemsize, base["variant"])
    ok_time = seconds > 0 and not math.isnan(seconds)
    verdict = limits.check(session, nbytes, flops, seconds, base["dtype"],
                           working_set=workload.device_bytes(size, itemsize) if session.device_kind == "gpu"
                           else workload.footprint(size, itemsize))
    readings = timings.readings
    noisy = [n for n in (machine.noisy, machine.canary_note) if n] if machine is not None else []
    if timings.reasons - {"power cap"}:
        noisy.append("the GPU throttled (" + ", ".join(sorted(timings.reasons)) + ")")
    samples = {k: v for k, v in (("compute", comp), ("total", timings.total if timings.total is not comp else []),
                                 ("h2d", timings.h2d), ("d2h", timings.d2h), ("cold", timings.cold),
                                 ("call", timings.call)) if v}
    row = empty_row(
        **base, device=session.device, repeats=len(comp), first_call_s=timings.first_call,
        compute_median_s=c["median"], compute_min_s=c["min"], compute_max_s=c["max"],
        compute_q1_s=c["q1"], compute_q3_s=c["q3"],
        host_issue_s=summarize(timings.issue)["median"],
        h2d_s=summarize(timings.h2d)["median"] if timings.h2d else 0.0,
        d2h_s=summarize(timings.d2h)["median"] if timings.d2h else 0.0,
        total_median_s=t["median"], total_q1_s=t["q1"], total_q3_s=t["q3"],
        compute_ci_lo_s=c_lo, compute_ci_hi_s=c_hi, total_ci_lo_s=t_lo, total_ci_hi_s=t_hi,
        noise=stats.rel_noise(comp), converged=bool(timings.converged) and _within(c_lo, c_hi, c["median"], noise_target),
        cold_median_s=summarize(timings.cold)["median"], call_median_s=summarize(timings.call)["median"],
        others_cores=machine.others_cores if machine is not None else math.nan,
        canary_s=machine.canary_s if machine is not None else math.nan,
        sm_clock_mhz=float(np.median([r.sm_mhz for r in readings])) if readings else math.nan,
        mem_clock_mhz=float(np.median([r.mem_mhz for r in readings])) if readings else math.nan,
        throttle=", ".join(sorted(timings.reasons)), dropped=timings.dropped, noisy="; ".join(noisy),
        stages=encode_stages(typical_stages(comp, timings.stages)),   # pipelines only, else ""
        samples=encode_samples(samples),
        peak_host_bytes=peak_host, peak_device_bytes=peak_device,
        gflops=flops / seconds / 1e9 if ok_time else float("nan"),
        gbps=nbytes / seconds / 1e9 if ok_time else float("nan"),
        gbps_limit=verdict.gbps_limit, gflops_limit=verdict.gflops_limit,
    )
    if timings.cancelled:
        row.update(status="cancelled", message=f"stopped after {len(comp)} repeat(s); not verified")
        return row
    err = workload.relative_error(timings.out, reference)
    tol = workload.tolerance[base["dtype"]]
    row.update(max_rel_error=err, verified=bool(err <= tol))
    wrong = "" if err <= tol else (f"result differs from the float64 reference: max relative error "
                                   f"{err:.3g} exceeds the {base['dtype']} tolerance {tol:.1g}")
    if verdict.problem:
        # A timing the hardware cannot produce is no result, whatever the verification says.
        row.update(status="implausible", message=verdict.problem + (f"; the {wrong}" if wrong else ""))
    elif wrong:
        row.update(status="wrong", message=wrong)
    else:
        row.update(status="ok")
    return row
