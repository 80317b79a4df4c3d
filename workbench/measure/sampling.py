"""How a point is sampled: the first call, then samples until the median is known well enough.

Samples are taken until the 95 % interval of the median is within ``spec.noise`` of it on either
side (``workbench.core.stats``), after at least ``spec.min_repeats`` samples and ``spec.min_time_s``,
and at most ``spec.budget_s`` (else ``converged`` is false, said in the row). On a GPU a point has
four figures, each sampled so: end to end, warm GPU time (bursts, behind a blocking kernel where the
session can: ``timed_blocked``), cold GPU time (after ``flush_l2``) and call time. A sample taken
while the GPU throttled is dropped and counted (``workbench.measure.gpu.clocks``).
See docs/ARCHITECTURE.md, "workbench/measure/sampling.py".
"""
from __future__ import annotations

import math
import os
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from workbench.core import stats
from workbench.measure.cpu import mean_stages
from workbench.catalog.workloads import Phases

#: Back-to-back device computes run in bursts of at least this much device time (at most
#: MAX_BURST calls), so the device's queue never runs dry between calls.
BURST_S = 1e-3
MAX_BURST = 64
#: Unrecorded back-to-back computes first: the device has idled through the end-to-end repeats'
#: copies and runs at lower clocks until it has worked for a while again.
WARMUP_S = 0.02
#: Shares of the point's time cap: end to end, warm, cold, call (without transfers the
#: end-to-end share goes to the warm samples).
SHARES = {"total": 0.4, "warm": 0.4, "cold": 0.1, "call": 0.1}


#: A CPU call shorter than this is timed in batches of back-to-back calls (timeit's ``number``,
#: nvbench's batch mode): reading the clock and calling through the timer cost about 0.1 µs, a
#: tenth of a 1 µs NumPy call.
CPU_BATCH_S = 20e-6
MAX_CPU_BATCH = 100


def cpu_batch(one: float) -> int:
    """How many calls a CPU sample times, from one call's time ``one``: 1 for calls of
    CPU_BATCH_S or longer (and for a clock that read 0), else enough to last CPU_BATCH_S."""
    if not one > 0 or one >= CPU_BATCH_S:
        return 1
    return int(min(MAX_CPU_BATCH, math.ceil(round(CPU_BATCH_S / one, 6))))


def clock() -> float:
    """The wall clock of budgets and first calls (tests put a synthetic one in its place)."""
    return time.perf_counter()


@dataclass
class Timings:
    first_call: float = math.nan
    h2d: list = field(default_factory=list)
    compute: list = field(default_factory=list)    # warm: the headline compute figure
    d2h: list = field(default_factory=list)
    total: list = field(default_factory=list)
    cold: list = field(default_factory=list)       # GPU: one compute after an L2 flush
    call: list = field(default_factory=list)       # GPU: one compute and the wait for it, host clock
    out: Any = None
    cancelled: bool = False
    converged: bool = True                         # every sampled figure met the noise target
    dropped: int = 0                               # samples dropped because the GPU throttled
    readings: list = field(default_factory=list)   # workbench.measure.gpu.clocks.Reading per kept GPU sample
    reasons: set = field(default_factory=set)      # throttle reasons seen during the samples
    stages: list = field(default_factory=list)     # Phases.stages() after each entry of ``compute``
    issue: list = field(default_factory=list)      # host time to issue one call, per burst sample
    batched: bool = False                          # warm samples timed behind a blocking kernel
    round_compute: list = field(default_factory=list)   # the median of each round's compute samples
    round_total: list = field(default_factory=list)     # and of its end-to-end samples
    overlapped: bool = False     # its end to end is one overlapped call (Phases.whole), not the phases in turn


#: The most host bytes a round's spacer takes (touched: pages of memory, not only addresses).
SPACER_BYTES = 2 * 1024 * 1024
#: Inputs of more bytes than this, in all, stay where the engine made them: the copy is held with
#: the originals through the round and adds to the point's host peak (at 64 MiB, matmul at 2492
#: float32 peaked at 277 MiB against the 256 MiB its footprint declares, and the memory check
#: admits sizes by that footprint); the offsets' effect was measured on cache-sized inputs.
PLACE_BYTES = 8 * 1024 * 1024
#: A placed array starts at a multiple of this (malloc's alignment, so every dtype's) within its page.
PLACE_ALIGN = 16
_PAGE = 4096
#: This process's own: two processes draw different layouts for the same round of the same point.
_SALT = int.from_bytes(os.urandom(8), "little")


def layout_rng(group: str, r: int) -> np.random.Generator:
    """Round ``r``'s layout draw for a group of points (the backends measured interleaved at one
    size): the same for each backend of the round, so that a paired comparison of two backends
    compares their code on one layout; another draw in another process, so that a rerun on
    another engine (another run, a Dask worker) draws layouts of its own."""
    return np.random.default_rng([_SALT, zlib.crc32(group.encode()), r])


@dataclass
class Layout:
    """What holds a round's layout in place: the spacer and the placed inputs' buffers."""
    inputs: Any
    held: list


def layout(inputs: Any, rng: np.random.Generator) -> Layout:
    """The round's inputs placed anew: each C-contiguous NumPy array of ``inputs`` (an array, or a
    tuple or list of them; anything else stays as it is) copied into fresh memory at a random
    offset within its page (a multiple of ``PLACE_ALIGN``), behind a touched spacer of random size
    (up to ``SPACER_BYTES``) that takes the pages the last round freed. Hold the result (its
    ``held``) until the round is measured.

    Why: where the buffers sit decides the speed of the same code. On this project's 2-core VM
    (AMD EPYC, 2026-12-04), y = x^2/2 + x at 2^16 float32 took 13.2 to 17.6 us depending only on
    the page offsets of x and out (16 layouts measured interleaved on one vCPU, each within 1 %
    from pass to pass), and 13.4 to 14.8 us on 16 sets of physical pages at one offset. The
    engine made the inputs once a point and the earlier spacer (untouched, under 64 KiB) did not
    move a buffer of 256 KiB: every round of a point had the same addresses and the same physical
    pages, its rounds agreed within 1 %, and the process's heap history (the local engine's, a
    Dask worker's) chose the layout: the same sweep ran 0.77-0.90x here against there, called
    'faster'. Placed anew each round, the layout is one more thing the rounds sample (Stabilizer's
    idea: Curtsinger and Berger, ASPLOS 2013; Mytkowicz et al., ASPLOS 2009, on the bias), their
    disagreement widens the interval, and two processes' medians agree within it."""
    spacer = np.empty(int(rng.integers(1, SPACER_BYTES // _PAGE + 1)) * _PAGE, np.uint8)
    spacer[::_PAGE] = 1                 # touched: the kernel hands it pages now
    held: list = [spacer]
    plain = isinstance(inputs, np.ndarray) or type(inputs) in (tuple, list)
    arrays = [inputs] if isinstance(inputs, np.ndarray) else list(inputs) if plain else []
    if not plain or sum(a.nbytes for a in arrays if isinstance(a, np.ndarray)) > PLACE_BYTES:
        return Layout(inputs, held)

    def place(a: Any) -> Any:
        if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or a.dtype.hasobject or a.nbytes == 0:
            return a
        raw = np.empty(a.nbytes + 2 * _PAGE, np.uint8)
        start = (-raw.ctypes.data) % _PAGE + int(rng.integers(0, _PAGE // PLACE_ALIGN)) * PLACE_ALIGN
        b = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
        b[...] = a
        b.flags.writeable = a.flags.writeable
        held.append(raw)
        return b
    placed = [place(a) for a in arrays]
    # Decoys: what the implementation allocates itself (its outputs, mostly of an input's size) comes
    # from the heap, where the last round's buffer of that size was just freed and fits exactly,
    # so it landed at the same page offset round after round (2 to 9 offsets in 24 rounds at 2^14
    # and 2^16 float32, and twin-a's out ran 13.8 or 16.5 us by its offset alone). Zero to three
    # blocks of about each input's size, held through the round and never touched (no pages),
    # take those places first: 13 to 21 offsets in 24 rounds.
    for nbytes in sorted({a.nbytes for a in arrays if isinstance(a, np.ndarray) and a.nbytes})[:2]:
        for _ in range(int(rng.integers(0, 4))):
            held.append(np.empty(max(16, nbytes + int(rng.integers(-256, 257)) * PLACE_ALIGN), np.uint8))
    return Layout(placed[0] if isinstance(inputs, np.ndarray) else type(inputs)(placed), held)


def merged(a: Timings, b: Timings) -> Timings:
    """Two rounds' timings as one: samples pooled, the first round's first call, the last's result."""
    return Timings(
        first_call=a.first_call, h2d=a.h2d + b.h2d, compute=a.compute + b.compute, d2h=a.d2h + b.d2h,
        total=a.total + b.total, cold=a.cold + b.cold, call=a.call + b.call, out=b.out,
        cancelled=b.cancelled, converged=a.converged and b.converged, dropped=a.dropped + b.dropped,
        readings=a.readings + b.readings, reasons=a.reasons | b.reasons, stages=a.stages + b.stages,
        issue=a.issue + b.issue, batched=a.batched or b.batched,
        round_compute=a.round_compute + b.round_compute, round_total=a.round_total + b.round_total,
        overlapped=a.overlapped or b.overlapped)


def interval(samples: list, round_medians: list) -> tuple[float, float]:
    """The 95 % interval of the pooled samples' median, widened by the rounds' disagreement
    (``stats.rounds_ci``): what separate rounds disagree on is what a rerun would show."""
    if not samples:
        return math.nan, math.nan
    return stats.rounds_ci(samples, round_medians)


def loop(spec: Any, cap: float, stop: Any, step: Callable[[], None], samples: list) -> tuple[bool, bool]:
    """Call ``step()`` (which appends to ``samples``, or not when it drops one) under the stopping
    rule; returns (stopped by the flag, converged).

    At least ``spec.min_repeats`` steps and ``min(spec.min_time_s, cap)`` seconds; then until the
    median's interval meets ``spec.noise``, ``cap`` seconds have passed, or ``spec.max_repeats``
    steps ran. Convergence is tested each time the samples grew by a tenth (a sort each time)."""
    t0 = clock()
    min_end, deadline = t0 + min(spec.min_time_s, cap), t0 + cap
    n, check_at = 0, 0
    while True:
        if n >= spec.min_repeats:
            now = clock()
            if spec.noise > 0 and now >= min_end and len(samples) >= check_at:
                if stats.converged(samples, spec.noise):
                    return False, True
                check_at = len(samples) + max(1, len(samples) // 10)
            if now >= deadline or n >= spec.max_repeats:
                return False, spec.noise <= 0 or stats.converged(samples, spec.noise)
        if stop.is_set():
            return True, False
        step()
        n += 1


def execute(phases: Phases, timed) -> tuple[float, float, float, Any]:
    """One execution: (h2d seconds, compute seconds, d2h seconds, host result)."""
    t_h2d = timed(phases.h2d)[0] if phases.h2d is not None else 0.0
    t_comp, out = timed(phases.compute)
    if phases.d2h is not None:
        t_d2h, out = timed(phases.d2h)
    else:
        t_d2h = 0.0
    return t_h2d, t_comp, t_d2h, out


def one_call(phases: Phases, timed) -> tuple[float, Any]:
    """One end-to-end call: (seconds, host result). An overlapped call (``phases.whole``) is one
    timed piece; otherwise the phases in turn, their times added."""
    if phases.whole is not None:
        return timed(phases.whole)
    a, b, c, out = execute(phases, timed)
    return a + b + c, out


def note_stages(phases: Phases, into: list) -> None:
    """Keep the stage times of the compute just run (a pipeline reports them; other workloads do not)."""
    if phases.stages is not None:
        into.append(dict(phases.stages()))


class _Throttle:
    """Drops a GPU sample taken while the clocks were held down (no-op without NVML)."""

    def __init__(self, clocks: Any, t: Timings) -> None:
        self.clocks, self.t = clocks, t

    def keep(self) -> bool:
        reading = self.clocks.read() if self.clocks is not None else None
        if reading is None:
            return True
        self.t.reasons.update(reading.reason_names)
        if reading.throttled(self.clocks.max_sm_mhz):
            self.t.dropped += 1
            return False
        self.t.readings.append(reading)
        return True


def repeat(phases: Phases, session: Any, spec: Any, stop: Any, clocks: Any = None,
           after_first: Callable[[], None] | None = None) -> Timings:
    """The first call on its own, then the samples (see the module's docstring). ``after_first``
    is called between them (the point reads the first call's memory there)."""
    timed = session.timed
    t = Timings(overlapped=phases.whole is not None)
    t0 = clock()
    t.out = one_call(phases, timed)[1]
    t.first_call = clock() - t0
    if after_first is not None:
        after_first()
    gpu = getattr(session, "device_kind", "cpu") == "gpu"
    transfers = phases.h2d is not None or phases.d2h is not None

    if not gpu and not transfers:
        calls = 0                 # per sample: sized by the first sample, a single call

        def run_batch() -> Any:
            fn, out = phases.compute, None
            for _ in range(calls):
                out = None        # as below: never one more result alive than the program holds
                out = fn()
            return out

        def step():
            nonlocal calls
            # Drop the last result before the next repeat: holding it would keep one more buffer
            # alive than the user's program does, and change what the allocator sees.
            t.out = None
            if calls <= 1:
                seconds, t.out = timed(phases.compute)
                calls = calls or cpu_batch(seconds)
            else:
                seconds, t.out = timed(run_batch)
                seconds /= calls
            t.compute.append(seconds)
            note_stages(phases, t.stages)
        t.cancelled, t.converged = loop(spec, spec.budget_s, stop, step, t.compute)
        t.total = list(t.compute)
        return _with_round_medians(t)

    throttle = _Throttle(clocks if gpu else None, t)
    alone: list[float] = []       # the compute of each end-to-end repeat, timed on its own
    warm_share = SHARES["warm"] if transfers else SHARES["warm"] + SHARES["total"]

    def end_to_end():
        t.out = None
        a, b, c, t.out = execute(phases, timed)
        whole = None
        if phases.whole is not None:      # the phases alone give the limit; the overlapped call its time
            t.out = None
            whole, t.out = timed(phases.whole)
        if throttle.keep():
            t.h2d.append(a)
            alone.append(b)
            t.d2h.append(c)
            t.total.append(a + b + c if whole is None else whole)
            if not gpu:        # a CPU implementation's compute is this one: its stages go with it
                note_stages(phases, t.stages)

    if transfers:
        t.cancelled, t.converged = loop(spec, spec.budget_s * (SHARES["total"] if gpu else 1.0),
                                        stop, end_to_end, t.total)
        if t.cancelled or not gpu:
            t.compute = list(alone)
            return _with_round_medians(t)
        one = float(np.median(alone)) if alone else 0.0
    else:
        one = timed(phases.compute)[0]
    # (rounded first: 1e-3 / 1e-4 must be 10 bursts, not 11 from the last bit of a float)
    length = int(min(MAX_BURST, max(1, math.ceil(round(BURST_S / one, 6))))) if one > 0 else MAX_BURST

    staged: list[dict] = []       # stage times of each compute of the burst being timed (pipelines)
    issued: list[float] = []      # the host's time to issue each burst (before the device is waited on)

    def burst_of(n: int) -> Callable[[], None]:
        def burst() -> None:
            b0 = clock()
            for _ in range(n):
                phases.compute()
                note_stages(phases, staged)
            issued.append(clock() - b0)
        return burst

    burst = burst_of(length)
    blocked = getattr(session, "timed_blocked", None)

    def timed_burst(fn: Callable[[], None]) -> float:
        """The GPU time of a burst: behind a blocking kernel where that works, else between events."""
        nonlocal blocked
        if blocked is not None:
            seconds = blocked(fn)
            if seconds is not None:
                t.batched = True
                return seconds
            blocked = None        # the work waited on the host while the stream was held: never again
        return timed(fn)[0]

    warm, bursts = 0.0, 0
    while warm < WARMUP_S and bursts < 1000 and not stop.is_set():   # a clock that reads 0 ends too
        warm += timed_burst(burst)
        bursts += 1

    def sample() -> None:
        staged.clear()
        seconds = timed_burst(burst) / length
        if throttle.keep():
            t.compute.append(seconds)
            t.issue.append(issued[-1] / length)
            if staged:     # per compute, as the sample is: their mean adds up to at most the sample
                t.stages.append(mean_stages(staged))

    t.cancelled, warm_converged = loop(spec, spec.budget_s * warm_share, stop, sample, t.compute)
    t.converged = t.converged and warm_converged
    if not transfers:
        t.total = list(t.compute)
    flush = getattr(session, "flush_l2", None)
    if not t.cancelled and flush is not None:
        once = burst_of(1)

        def cold() -> None:
            flush()
            seconds = timed_burst(once)
            if throttle.keep():
                t.cold.append(seconds)
        t.cancelled = loop(spec, spec.budget_s * SHARES["cold"], stop, cold, t.cold)[0]
    if not t.cancelled:
        def call() -> None:
            c0 = time.perf_counter()
            phases.compute()
            session.synchronize()
            seconds = time.perf_counter() - c0
            if throttle.keep():
                t.call.append(seconds)
        t.cancelled = loop(spec, spec.budget_s * SHARES["call"], stop, call, t.call)[0]
    if not t.cancelled and phases.whole is not None:
        t.out = None
        t.out = timed(phases.whole)[1]     # the overlapped call's result is the one verified
    elif not t.cancelled and phases.d2h is not None:
        t.out = None
        t.out = phases.d2h()       # the result of the last compute is the one verified
    elif not t.cancelled:
        t.out = timed(phases.compute)[1]
    return _with_round_medians(t)


def _with_round_medians(t: Timings) -> Timings:
    t.round_compute = [float(np.median(t.compute))] if t.compute else []
    t.round_total = [float(np.median(t.total))] if t.total else []
    return t
