"""One point of a sweep, measured in rounds: its implementation made anew each round, its samples
pooled, its row built from them.

The engine interleaves the rounds of the backends that share a size (round 1: a, b, c; round 2:
c, b, a; ...), so each backend's rounds are spread over the same stretch of time as the others'.
A machine whose speed changes under the sweep (another tenant on a VM's core, a clock stepping:
the same NumPy code on the same buffers ran 8.6 us for seconds, then 11.5 us, on this project's
2-core VM, with no other process running) then slows every backend's rounds alike, and two
backends' medians of the same round, measured a few milliseconds apart, can be compared as a pair
(``workbench.core.verdicts``): the drift cancels in their ratio.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
from typing import Any

import numpy as np

from workbench.catalog import backends as backends_mod
from workbench.measure import limits
from workbench.core import bounds, stats, verdicts
from workbench.measure import load as load_mod
from workbench.measure import checks, sampling, threads, untimed
from workbench.measure.sessions import open_session
from workbench.measure.gpu import cap, kernels, memory
from workbench.core import driver
from workbench.measure.gpu import clocks as clocks_mod
from workbench.measure.cpu import summarize, typical_stages
from workbench.measure.host_memory import RESERVE_BYTES, HostPeak
from workbench.catalog.workloads import Context, Phases, Workload
from workbench.results.rows import empty_row, encode_samples, encode_stages
from workbench.measure.sampling import Timings, repeat

log = logging.getLogger(__name__)

_CLOCKS = "gpu clocks"
_CANARY = "canary"


def _clocks(sessions: dict) -> clocks_mod.GpuClocks:
    """The GPU's clock reader, opened once per sweep beside the sessions (and closed with them)."""
    if _CLOCKS not in sessions:
        sessions[_CLOCKS] = clocks_mod.GpuClocks(0)
    return sessions[_CLOCKS]


def _canary(sessions: dict) -> load_mod.Canary:
    """The sweep's canary (``workbench.measure.load.Canary``): one, so its buffers stay where they are."""
    if _CANARY not in sessions:
        sessions[_CANARY] = load_mod.Canary()
    return sessions[_CANARY]


def _session(sessions: dict, backend: str) -> Any:
    """One session per backend and sweep, opened in the thread that runs the sweep."""
    if backend not in sessions:
        sessions[backend] = open_session(backend)
    return sessions[backend]


@dataclasses.dataclass(frozen=True)
class NoReference:
    """Where the point's float64 reference should be: it could not be made (the reference kernel
    raised). The points are measured all the same, and say they were not checked."""

    reason: str


class Point:
    """A point's state across its rounds; :meth:`measure_round` runs one, :meth:`row` says the result."""

    def __init__(self, index: int, workload: Workload, backend: str, base: dict, spec: Any, rounds: int,
                 group: str, sessions: dict, inputs: Any, reference: Any, host_peak: HostPeak) -> None:
        self.index, self.workload, self.backend, self.base, self.spec = index, workload, backend, base, spec
        self.rounds, self.group = rounds, group
        # A series at a set number of threads ('numba x4', --threads) runs its backend's code so.
        name, self.thread_count = backends_mod.split_threads(backend)
        self.impl = workload.implementations[name]
        self.sessions, self.inputs, self.reference, self.host_peak = sessions, inputs, reference, host_peak
        self.dtype = np.dtype(spec.dtype)
        # Each round's share of the point: its time, its samples, and a noise target sqrt(R) as loose,
        # since the median pooled over R rounds is about sqrt(R) times as precise as one round's.
        self.per_round = dataclasses.replace(spec, budget_s=spec.budget_s / rounds,
                                             min_repeats=max(1, math.ceil(spec.min_repeats / rounds)),
                                             min_time_s=spec.min_time_s / rounds,
                                             noise=spec.noise * math.sqrt(rounds))
        self.timings: Timings | None = None
        self.round_medians: dict[str, list] = {"compute": [None] * rounds, "total": [None] * rounds}
        self.error: dict | None = None         # the row, once a round failed
        self.cancelled = False                 # stopped during a round
        self.peak_host = self.peak_device = math.nan          # the measuring pass's (measure_memory)
        self.first_host = self.first_device = math.nan        # the first call's, with its setup
        self.max_error = 0.0
        self.dtype_problem = ""                # a result not of the point's dtype (right values, other work)
        self.note = ""
        self.session: Any = None
        self.load = load_mod.LoadMeter()
        self.speeds: list[float] = []
        # Each round's canary readings, before and after it: kept in the row's ``rounds`` so that a
        # round run while the machine was in another state can be told from the others.
        self.round_canary: list = [None] * rounds
        self.round_timings: list[Timings | None] = [None] * rounds
        self.canary: load_mod.Canary | None = None
        self.extra: dict = {}                  # the untimed passes' columns: kernels, energy

    def _round_spec(self) -> Any:
        """This round's sampling: once earlier rounds disagree by more than the noise target, a
        round need not pin its own median down further than that disagreement (the point's interval
        is set by it): the round stops sooner, and a noisy machine costs less time, not more."""
        done = [m for m in self.round_medians["compute"] if m]
        if len(done) < 2:
            return self.per_round
        spread = float(np.std(np.log(done), ddof=1))
        if spread <= self.per_round.noise:
            return self.per_round
        return dataclasses.replace(self.per_round, noise=spread)

    def _states(self) -> list:
        """Each complete round's machine state (``load.round_states``: 'fast', 'slow', 'changed';
        None for a round not complete): the point keeps the rounds of one state (``load.kept_rounds``).

        Why: a vCPU of the project's VM runs the same kernel 1.2-1.5x slower for seconds at a time,
        and the engine process is not pinned: a point with some of its rounds in each state has a
        median of neither (up to 1.16x off the median of its rounds in one state), while its
        canary's median reads one of them. Identical code got '1.7x slower' against a Dask worker's
        run at 2^14 that way (2026-12-04): its rounds 6.1 and 6.7 us slow, then 4.7 us as the state
        changed, its canary's median 2.41 us, the worker's 2.36 us (within ``CANARY_SPREAD``)."""
        done = [pair if m is not None else None
                for pair, m in zip(self.round_canary, self.round_medians["compute"])]
        return load_mod.round_states(done, self.canary.best if self.canary is not None else math.nan)

    @property
    def finished(self) -> bool:
        return self.error is not None or self.cancelled

    def measure_round(self, r: int, stop: Any) -> None:
        """Round ``r``: the implementation made anew on inputs placed anew (``sampling.layout``), sampled,
        verified."""
        workload, backend, base, spec = self.workload, self.backend, self.base, self.spec
        phases = None
        out_of_memory = False
        limit = spec.device_memory_limit if backends_mod.is_gpu(backend) else 0
        self.canary = canary = _canary(self.sessions)
        try:
            self.session = session = _session(self.sessions, backend)
            # Made before the memory scope (the copy is the engine's, not the implementation's) and
            # held through the round: every round another layout, drawn alike for the group's backends.
            placed = sampling.layout(self.inputs, sampling.layout_rng(self.group, r))
            before = canary.read()
            with self.load.running(), cap.capped(limit), session.activate(), \
                    threads.limited(self.impl, self.thread_count), contextlib.ExitStack() as first:
                if r == 0:      # the first call's memory (its compilation, its setup), apart from the point's
                    host_bytes = first.enter_context(self.host_peak.scope(alone=False))
                    device_bytes = first.enter_context(session.device_memory())

                    def after_first() -> None:
                        self.first_host, self.first_device = host_bytes(), device_bytes()
                        first.close()       # no memory hook stays on through the timed calls
                ctx = Context(size=base["size"], dtype=self.dtype, variant=base["variant"],
                              host_memory=base["host_memory"] or spec.host_memory, session=session)
                made = self.impl.factory(placed.inputs, ctx)
                phases = made if isinstance(made, Phases) else Phases(compute=made)
                clocks = _clocks(self.sessions) if session.device_kind == "gpu" else None
                t = repeat(phases, session, self._round_spec(), stop, clocks, after_first if r == 0 else None)
                # The result is verified only once every piece of device work is complete: a download
                # into pinned memory returns before its copy has landed.
                session.synchronize()
                if r == 0 and not t.cancelled:
                    self.note = checks.diagnose(session, phases, t)
            after = canary.read()
            self.speeds += [before, after]
            self.round_canary[r] = [before, after]
            if t.cancelled:
                self.cancelled = True
                # A round stopped with its fewest samples taken is kept, verified like any other:
                # Stop during a long point must not throw away what a complete round would hold.
                if len(t.compute) < max(1, self._round_spec().min_repeats) or t.out is None:
                    if self.timings is None:       # nothing complete to show: a cancelled row
                        self.timings = t
                    return
            if not isinstance(self.reference, NoReference):
                self.max_error = max(self.max_error, workload.relative_error(t.out, self.reference))
                self.dtype_problem = self.dtype_problem or workload.dtype_problem(t.out, self.reference, self.dtype)
            t.out = None
            self.round_timings[r] = t
            for key, values in (("compute", t.compute), ("total", t.total)):
                self.round_medians[key][r] = float(np.median(values)) if values else None
            if self.timings is None:
                self.timings = t
            else:
                first_call = self.timings.first_call       # only the very first call compiles
                self.timings = sampling.merged(self.timings, t)
                self.timings.first_call = first_call
        except Exception as exc:  # noqa: BLE001 - one failing point never ends the sweep
            log.warning("%s on %s at size %s failed: %s", workload.name, backend, base["size"], exc)
            message = f"{type(exc).__name__}: {exc}"
            if backends_mod.is_gpu(backend) and cap.is_device_oom(exc):
                # The wall: said in numbers, and the sweep goes on with the next point.
                out_of_memory = True
                what = f"{workload.name} on {backend} at size {base['size']:,} ({base['dtype']})"
                message = cap.describe(exc, what, workload.device_bytes(base["size"], self.dtype.itemsize), limit,
                                       driver.free_memory())
            self.error = empty_row(**base, device=getattr(self.session, "device", ""), status="error", message=message)
        finally:
            if phases is not None:
                _close(phases, workload, backend)
            phases = None
            if out_of_memory:
                cap.release_after_oom()
            if self.session is not None:
                try:
                    self.session.release()
                except Exception:  # noqa: BLE001 - a poisoned CUDA context fails here too: the row stands
                    log.exception("releasing %s after the point failed", backend)

    def measure_memory(self) -> None:
        """The point's memory, in an untimed pass of its own after its rounds: the implementation made
        anew and called once (with its transfers), counted from before it was made. Its first call's
        compilation and setup are behind it (``first_host``), the allocators' free pages were given
        back (``HostPeak``), and no hook slows a timed call. A small host reading is read again and
        the smaller kept: a page another thread of the process touched meanwhile is not the call's.
        Nothing when the point failed or nothing of it was kept; a pass that fails leaves the
        figures unmeasured and says why."""
        if self.error is not None or self.session is None or not any(self.round_medians["compute"]):
            return
        for _ in range(2):
            host, device = self._memory_pass()
            if math.isnan(host):            # not measured: the pass failed or cannot read
                return
            self.peak_host = host if math.isnan(self.peak_host) else min(self.peak_host, host)
            self.peak_device = memory.larger(self.peak_device, device)
            if not 0 < self.peak_host < RESERVE_BYTES:
                return

    def _memory_pass(self) -> tuple[float, float]:
        """One pass of ``measure_memory``: (host bytes, device bytes), NaN where not measured."""
        workload, backend, session = self.workload, self.backend, self.session
        limit = self.spec.device_memory_limit if backends_mod.is_gpu(backend) else 0
        phases = None
        found = (math.nan, math.nan)
        try:
            with cap.capped(limit), session.activate(), threads.limited(self.impl, self.thread_count), \
                    self.host_peak.scope(collect=False) as host_bytes, session.device_memory() as device_bytes:
                ctx = Context(size=self.base["size"], dtype=self.dtype, variant=self.base["variant"],
                              host_memory=self.base["host_memory"] or self.spec.host_memory, session=session)
                made = self.impl.factory(self.inputs, ctx)
                phases = made if isinstance(made, Phases) else Phases(compute=made)
                out = sampling.one_call(phases, session.timed)[1]
                session.synchronize()
                found = (host_bytes(), device_bytes())
                out = None  # noqa: F841 - held to the reading: the result is the call's memory too
        except Exception as exc:  # noqa: BLE001 - the figures stay unmeasured, the point stands
            log.warning("measuring the memory of %s on %s failed: %s", workload.name, backend, exc)
            self.note = "; ".join(n for n in (self.note, f"memory not measured: {type(exc).__name__}: {exc}") if n)
            out_of_memory = backends_mod.is_gpu(backend) and cap.is_device_oom(exc)
        else:
            out_of_memory = False
        finally:
            if phases is not None:
                _close(phases, workload, backend)
            phases = None
            try:
                session.release()
            except Exception:  # noqa: BLE001
                log.exception("releasing %s after its memory pass", backend)
        if out_of_memory:      # as after a round that ran out: the pool's cached blocks go back
            cap.release_after_oom()
        return found

    def _made(self) -> Phases:
        ctx = Context(size=self.base["size"], dtype=self.dtype, variant=self.base["variant"],
                      host_memory=self.base["host_memory"] or self.spec.host_memory, session=self.session)
        made = self.impl.factory(self.inputs, ctx)
        return made if isinstance(made, Phases) else Phases(compute=made)

    def _untimed(self, what: str, work: Any) -> None:
        """``work(phases)`` on the implementation made anew, in the point's session, after its
        rounds; a failure leaves the point as it is and says what was not measured."""
        limit = self.spec.device_memory_limit if backends_mod.is_gpu(self.backend) else 0
        phases = None
        out_of_memory = False
        try:
            with cap.capped(limit), self.session.activate(), threads.limited(self.impl, self.thread_count):
                phases = self._made()
                work(phases)
        except Exception as exc:  # noqa: BLE001 - the point stands without this figure
            log.warning("measuring the %s of %s on %s failed: %s", what, self.workload.name, self.backend, exc)
            self.note = "; ".join(n for n in (self.note, f"{what} not measured: {type(exc).__name__}: {exc}") if n)
            out_of_memory = backends_mod.is_gpu(self.backend) and cap.is_device_oom(exc)
        finally:
            if phases is not None:
                _close(phases, self.workload, self.backend)
            try:
                self.session.release()
            except Exception:  # noqa: BLE001
                log.exception("releasing %s after its %s pass", self.backend, what)
        if out_of_memory:
            cap.release_after_oom()

    def _kept(self) -> bool:
        return self.error is None and self.session is not None and any(self.round_medians["compute"])

    def measure_kernels(self) -> None:
        """The kernels, copies and memsets one call of a GPU point launches, each with its GPU time
        (CUPTI, ``workbench.measure.gpu.kernels``): a call to warm the implementation made anew,
        then one call recorded."""
        if not self._kept() or not backends_mod.is_gpu(self.backend):
            return
        if kernels.unavailable():         # no cupti-python here: the columns stay empty
            return

        def record(phases: Phases) -> None:
            self.extra.update(untimed.kernels_of(phases, self.session))
        self._untimed("kernels", record)

    def measure_energy(self, stop: Any = None) -> None:
        """Energy per call above the idle draw (``workbench.measure.energy``), where the sweep asks
        for it: the board's counter for a GPU point, RAPL's for a CPU point, or why none."""
        if not self.spec.energy or not self._kept():
            return
        meter = untimed.energy_meter(self.sessions, backends_mod.is_gpu(self.backend), _clocks)
        if isinstance(meter, str):
            self.extra["energy_source"] = meter
            return
        flops = self.workload.flops_and_bytes(self.base["size"], self.dtype.itemsize, self.base["variant"])[0]

        t = self.timings
        compute_s = float(np.median(t.compute)) if t is not None and t.compute else math.nan
        total_s = float(np.median(t.total)) if t is not None and t.total else math.nan

        def run(phases: Phases) -> None:
            self.extra.update(untimed.energy_of(phases, self.session, meter, flops, stop, compute_s, total_s))
        self._untimed("energy", run)

    def row(self) -> dict:
        if self.error is not None:
            return self.error
        t = self.timings
        complete = sum(m is not None for m in self.round_medians["compute"])
        speeds, state_note, noisy = self.speeds, "", ""
        states = self._states()
        done = [r for r, s in enumerate(states) if s is not None]
        kept = load_mod.kept_rounds(states, min(load_mod.MIN_STATE_ROUNDS, len(done)))
        if done and len(kept) < len(done):
            dropped = [r for r in done if r not in kept]
            times = max(max(self.round_canary[r]) for r in done) / min(min(self.round_canary[r]) for r in done)
            if kept:
                t = _pooled([self.round_timings[r] for r in kept], t)
                speeds = [v for r in kept for v in self.round_canary[r]]
                state_note = (f"{len(dropped)} of {len(done)} rounds dropped: the machine changed speed "
                              f"(a fixed kernel took {times:.2f}x as long in one round as in another)")
            else:
                noisy = (f"{verdicts.STATE_CHANGED}: a fixed kernel took {times:.2f}x "
                         f"as long in one round as in another")
        used = None
        if not backends_mod.is_gpu(self.backend):
            with threads.limited(self.impl, self.thread_count):     # what the calls ran on
                used = threads.used(self.impl)
        row = _row(self.workload, self.base, self.session, t, self.peak_host, self.peak_device,
                   self.load.read(), speeds, self.spec.noise, used)
        row.update(first_call_host_bytes=self.first_host, first_call_device_bytes=self.first_device, **self.extra)
        if used is not None:
            row["threads"] = used
        if noisy:
            row["noisy"] = "; ".join(n for n in (row["noisy"], noisy) if n)
        # Every round's median stays, with its state and the rounds the figures are drawn from: a
        # paired verdict pairs the rounds two points ran in one state, whichever (``verdicts._pairs``).
        row["rounds"] = json.dumps({"group": self.group, **self.round_medians, "canary": self.round_canary,
                                    "states": states, "kept": kept if kept else done},
                                   separators=(",", ":"))
        if complete == 0:       # stopped before one round was complete: nothing verified
            row.update(status="cancelled", message=f"stopped after {len(t.compute)} repeat(s); not verified")
            return row
        checks.verify(row, self.workload, self.base["dtype"], self.max_error, self.dtype_problem)
        notes = [n for n in (self.note, state_note) if n]
        if isinstance(self.reference, NoReference):
            row.update(verified=False, max_rel_error=float("nan"))
            notes.insert(0, f"not verified: the float64 reference could not be made ({self.reference.reason})")
        if self.cancelled:
            notes.append(f"stopped after {complete} of {self.rounds} rounds")
        if notes:      # what the session saw beside the figures (cudf.pandas: calls that fell back to the CPU)
            row["message"] = "; ".join(m for m in (row["message"], *notes) if m)
        return row


def _pooled(rounds: list, every: Timings) -> Timings:
    """The kept rounds' timings pooled (``every`` pooled them all: its first call, its flags)."""
    t = rounds[0]
    for other in rounds[1:]:
        t = sampling.merged(t, other)
    return dataclasses.replace(t, first_call=every.first_call, cancelled=every.cancelled, out=None)


def _close(phases: Phases, workload: Workload, backend: str) -> None:
    if phases.close is not None:
        try:
            phases.close()
        except Exception:  # noqa: BLE001
            log.exception("closing %s on %s failed", workload.name, backend)


def _row(workload: Workload, base: dict, session: Any, timings: Timings, peak_host: float, peak_device: float,
         machine: load_mod.Load, speeds: list[float], noise_target: float, cpu_threads: int | None = None) -> dict:
    """The row's figures from the pooled samples; its status is set by ``checks.verify`` (the limits
    check's problem, if any, waits under ``_problem``). ``cpu_threads``: the threads a CPU point
    ran on; its compute ceiling is theirs, not every core's (``limits.threads_flops_limit``)."""
    comp = timings.compute
    c = summarize(comp)
    t = summarize(timings.total)
    c_lo, c_hi = sampling.interval(comp, timings.round_compute)
    t_lo, t_hi = sampling.interval(timings.total, timings.round_total)
    size, itemsize = base["size"], np.dtype(base["dtype"]).itemsize
    seconds = t["median"] if workload.throughput_on == "total" else c["median"]
    flops, nbytes = workload.flops_and_bytes(size, itemsize, base["variant"])
    ok_time = seconds > 0 and not math.isnan(seconds)
    # The bytes the point's kernel holds, on a CPU as on a GPU: it decides the cache level whose
    # speed bounds the point (the host footprint counts the reference and temporaries too).
    verdict = limits.check(session, nbytes, flops, seconds, base["dtype"],
                           working_set=workload.working_set_bytes(size, itemsize), busy=bool(machine.noisy))
    readings = timings.readings
    noisy = [machine.noisy] if machine.noisy else []
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
        noise=stats.rel_noise(comp),
        converged=bool(timings.converged) and checks.within(c_lo, c_hi, c["median"], noise_target),
        cold_median_s=summarize(timings.cold)["median"], call_median_s=summarize(timings.call)["median"],
        others_cores=machine.others_cores,
        canary_s=float(np.median(speeds)) if speeds else math.nan,
        sm_clock_mhz=float(np.median([r.sm_mhz for r in readings])) if readings else math.nan,
        mem_clock_mhz=float(np.median([r.mem_mhz for r in readings])) if readings else math.nan,
        throttle=", ".join(sorted(timings.reasons)), dropped=timings.dropped, noisy="; ".join(noisy),
        stages=encode_stages(typical_stages(comp, timings.stages)),   # pipelines only, else ""
        samples=encode_samples(samples),
        peak_host_bytes=peak_host, peak_device_bytes=peak_device,
        gflops=flops / seconds / 1e9 if ok_time else float("nan"),
        gbps=nbytes / seconds / 1e9 if ok_time else float("nan"),
        gbps_limit=verdict.gbps_limit, gflops_limit=limits.threads_flops_limit(verdict.gflops_limit, cpu_threads),
        overlapped=bool(timings.overlapped),
    )
    copies = row["h2d_s"] + row["d2h_s"]
    # Measured from pinned memory: a pageable copy waits on the host and is its own limit.
    if copies > 0 and getattr(session, "device_kind", "cpu") == "gpu" and base["host_memory"] == "pinned":
        row["copies_together_s"] = copies * limits.limits_for(session).duplex_share
    row["bound"], row["of_bound"] = bounds.classify(row, _level_name(verdict.level, session),
                                                    end_to_end=workload.throughput_on == "total")
    row["_problem"] = verdict.problem
    return row


def _level_name(level: str, session: Any) -> str:
    """The memory level as a person names it: past every cache, the device's own memory."""
    if level == limits.MEMORY:
        return "device memory" if getattr(session, "device_kind", "cpu") == "gpu" else "main memory"
    return level
