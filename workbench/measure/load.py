"""What else the machine was doing while a point ran: the CPU time of other processes, and how
fast the machine itself ran (a canary).

A benchmark cannot tell its own slowness from a neighbour's: on a 2-core machine with one other
busy process, Numba's parallel loop took 8 ms a call at every size, and a lesson explained the
plateau as the cost of waking threads. So each point records how many cores other processes kept
busy while it ran (the machine's busy time, from psutil, less this process's own CPU time), and a
point past ``BUSY_CORES`` is flagged ``noisy`` with that reason: its verdicts are left undecided.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

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


@dataclass(frozen=True)
class Load:
    others_cores: float          # cores other processes kept busy, on average, over the scope
    cores: int

    @property
    def noisy(self) -> str:
        """Why this load makes the point untrustworthy ('' when it does not)."""
        if self.others_cores >= BUSY_CORES:
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
        return Load(others, os.cpu_count() or 1)




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

    def _work(self) -> None:
        np.multiply(self._x, self._x, out=self._out)
        np.add(self._out, self._x, out=self._out)

    def close(self) -> None:
        """Kept beside the sweep's sessions, closed with them: nothing to free."""

    def read(self) -> float:
        """The median of a few timed calls (about 50 us in all): the machine's speed now."""
        times = []
        for _ in range(self.SAMPLES):
            t0 = time.perf_counter()
            self._work()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))
