"""What else the machine was doing while a point ran: the CPU time of other processes.

A benchmark cannot tell its own slowness from a neighbour's: on a 2-core machine with one other
busy process, Numba's parallel loop took 8 ms a call at every size, and a lesson explained the
plateau as the cost of waking threads. So each point records how many cores other processes kept
busy while it ran (the machine's busy time, from psutil, less this process's own CPU time), and a
point past ``BUSY_CORES`` is flagged ``noisy`` with that reason: its verdicts are left undecided.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

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
    """Started before a point's repeats, read after them."""

    def __init__(self) -> None:
        self._proc = psutil.Process(os.getpid())
        self._t0 = time.perf_counter()
        self._busy0 = _busy_seconds()
        self._own0 = _own_seconds(self._proc)

    def read(self) -> Load:
        wall = time.perf_counter() - self._t0
        busy = _busy_seconds() - self._busy0
        own = _own_seconds(self._proc) - self._own0
        # psutil's system times tick at 100 Hz: a scope of a few ticks says nothing.
        others = max(0.0, busy - own) / wall if wall >= 0.05 else 0.0
        return Load(others, os.cpu_count() or 1)
