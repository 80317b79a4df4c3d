"""What else the machine was doing while a point ran: the CPU time of other processes, and how
fast the machine itself ran (a canary).

A benchmark cannot tell its own slowness from a neighbour's: on a 2-core machine with one other
busy process, Numba's parallel loop took 8 ms a call at every size, and a lesson explained the
plateau as the cost of waking threads. So each point records how many cores other processes kept
busy while it ran (the machine's busy time, from psutil, less this process's own CPU time), and a
point past ``BUSY_CORES``, on a machine whose cores it and the others then fill, is flagged
``noisy`` with that reason: its verdicts are left undecided.
"""
from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
import psutil

#: Other processes keeping this much of a core busy make a point noisy: half a core is a
#: compiler, a browser tab or a second benchmark, not the background hum of an idle system.
BUSY_CORES = 0.5


def _busy_seconds() -> float:
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def _own_seconds(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)


#: Cores the point and the other processes may use together before they compete for one: a
#: core's worth less than the machine has (the kernel's own threads, interrupts).
FREE_CORES = 0.5


@dataclass(frozen=True)
class Load:
    others_cores: float          # cores other processes kept busy, on average, over the scope
    cores: int
    own_cores: float = 1.0       # cores the point's own process kept busy over the scope

    @property
    def noisy(self) -> str:
        """Why this load makes the point untrustworthy ('' when it does not): other processes kept
        ``BUSY_CORES`` or more busy, and with the point's own they wanted the machine's cores. On
        the 2-core VM one core of a NumPy point and half a core of others is already that; on the
        H200's 16-core host the window drawing a live sweep (0.7 of a core) left 14 cores idle and
        still flagged every GPU point busy, so no verdict was drawn at 2^26 between Numba's 7.7 ms
        and cupy-fused's 77 ms. A neighbour on another core that slows the memory the point uses is
        what the canary (below) is for."""
        if self.others_cores >= BUSY_CORES and self.others_cores + self.own_cores >= self.cores - FREE_CORES:
            return f"other processes kept {self.others_cores:.1f} of {self.cores} cores busy"
        return ""


class LoadMeter:
    """The other processes' CPU time over the scopes a point's rounds ran in (``running``), or from
    its creation to ``read`` when no scope was entered."""

    def __init__(self) -> None:
        self._proc = psutil.Process(os.getpid())
        self._wall = self._busy = self._own = 0.0
        self._scoped = False
        self._t0, self._busy0, self._own0 = time.perf_counter(), _busy_seconds(), _own_seconds(self._proc)

    @contextmanager
    def running(self) -> Iterator[None]:
        self._scoped = True
        t0, busy0, own0 = time.perf_counter(), _busy_seconds(), _own_seconds(self._proc)
        try:
            yield
        finally:
            self._wall += time.perf_counter() - t0
            self._busy += _busy_seconds() - busy0
            self._own += _own_seconds(self._proc) - own0

    def read(self) -> Load:
        if self._scoped:
            wall, busy, own = self._wall, self._busy, self._own
        else:
            wall = time.perf_counter() - self._t0
            busy, own = _busy_seconds() - self._busy0, _own_seconds(self._proc) - self._own0
        # psutil's system times tick at 100 Hz: a scope of a few ticks says nothing.
        others = max(0.0, busy - own) / wall if wall >= 0.05 else 0.0
        mine = own / wall if wall >= 0.05 else 1.0
        return Load(others, os.cpu_count() or 1, mine)




class Canary:
    """A fixed small NumPy kernel, timed before and after every round of every point.

    psutil sees other processes, not the machine under this one: on a shared VM the same kernel on
    the same buffers ran 8.6 us for seconds, then 11.5 us, then 8.6 again (another tenant on the
    core, a clock changing), with no other process running here. The canary's median is kept with
    the point: two points whose canaries disagree were measured on a machine running at different
    speeds, and no unpaired verdict is drawn between them.
    """

    SAMPLES = 21

    def __init__(self) -> None:
        self._x = np.random.default_rng(0).random(2048)
        self._out = np.empty_like(self._x)
        self._work()            # first touch, outside any reading
        self.best = math.inf    # the fastest reading of this sweep: the machine's fast state

    def _work(self) -> None:
        np.multiply(self._x, self._x, out=self._out)
        np.add(self._out, self._x, out=self._out)

    def close(self) -> None:
        """Kept beside the sweep's sessions, closed with them: nothing to free."""

    def read(self) -> float:
        """The median of a few timed calls (about 50 us in all): the machine's speed now. The
        fastest reading so far is kept as ``best``."""
        reading = self._timed()
        self.best = min(self.best, reading)
        return reading

    def _timed(self) -> float:
        times = []
        for _ in range(self.SAMPLES):
            t0 = time.perf_counter()
            self._work()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))


#: A canary reading above this many times the sweep's fastest reading was taken with the machine in
#: its slow state: the readings fall in two groups with nothing between 1.2x and 1.3x
#: (docs/PERFORMANCE.md, "Figures behind the code's choices").
SLOW_STATE = 1.25
#: Fewer rounds than this (or than the point has) in one state: the point is noisy (a median of one
#: or two rounds has not sampled the layouts a rerun draws; ``stats.rounds_ci`` needs their spread).
MIN_STATE_ROUNDS = 3


def round_states(readings: Sequence, best: float, factor: float = SLOW_STATE) -> list:
    """Each round's machine state from its canary readings (before and after it), against ``best``
    (the sweep's fastest reading): 'fast' (both within ``factor`` of it), 'slow' (both beyond),
    'changed' (one of each: the state switched during the round), None (no readings: the round
    failed or never ran).

    Why: each vCPU of the project's VM switches between a fast and a slow state every few seconds,
    by itself (the canary 1.5-1.7 us or 2.2-2.9 us; y = x^2/2 + x at 2^14 float32 5.4 or 7.8 us a
    round, at 2^16 13.9 or 18.8, at 2^18 59 or 73: 2026-12-04), and the engine process is not pinned.
    The workload does not slow in proportion to the canary (x1.23-1.46 against x1.6-1.7, less for
    larger sizes), so a round's median cannot be corrected by its canary: :func:`kept_rounds`
    keeps the rounds of one state, as nvbench drops the samples of a throttled GPU."""
    states = []
    for pair in readings:
        if not pair or not (math.isfinite(best) and best > 0):
            states.append(None if not pair else "fast")
            continue
        slow = [v > factor * best for v in pair]
        states.append("slow" if all(slow) else "changed" if any(slow) else "fast")
    return states


def kept_rounds(states: Sequence, need: int = MIN_STATE_ROUNDS) -> list[int]:
    """The rounds a point's figures are drawn from: those of the state most of its rounds ran in
    ('fast' on a tie), if at least ``need`` did; else none (the point is noisy: the machine
    changed speed under it). Rounds that ran in the other state, or while it changed, are dropped:
    a median of rounds in two states is neither state's, and its canary's median can read either.
    The kept state is the point's ``canary_s``: an unpaired verdict against a point kept in the
    other state is refused (``verdicts.CANARY_SPREAD``)."""
    fast = [r for r, s in enumerate(states) if s == "fast"]
    slow = [r for r, s in enumerate(states) if s == "slow"]
    kept = fast if len(fast) >= len(slow) else slow
    return kept if len(kept) >= need else []
