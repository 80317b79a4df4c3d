"""STREAM-like measurements of the host's memory bandwidth, for the CPU's hardware limits.

Three patterns over ``nbytes`` counted (what the workloads count: each input
read once, each output written once): a copy (half read, half written), a
read (a sum) and a triad (two thirds read, one third written), because a
read-heavy kernel legitimately moves more counted bytes per second than a
copy does. Each is timed in NumPy on one thread (what a NumPy or pandas point
can reach) and, when asked to be thorough, in a Numba ``prange`` loop on every
core (what a Numba point can reach). The thorough way costs a JIT compilation,
so :mod:`workbench.measure.limits` asks for it only to confirm a figure that the quick
way says is too fast.
"""
from __future__ import annotations

import functools
import time
from typing import Callable

import numpy as np

MIN_REPEATS = 5
MIN_SECONDS = 0.01      # repeat small copies for at least this long: the best of many is the ceiling
#: A thorough measurement (a second opinion) lasts longer: on a shared VM the machine's speed
#: changes for seconds at a time, and 10 ms can fall wholly into a slow spell.
THOROUGH_SECONDS = 0.05
PATTERNS = ("copy", "read", "triad")
_ARRAYS = {"copy": 2, "read": 1, "triad": 3}     # arrays of n elements each pattern touches


def best_seconds(work: Callable[[], object], seconds: float = MIN_SECONDS) -> float:
    """The fastest of several runs of ``work`` after one warm-up (first touch, caches)."""
    work()
    best, n, t_end = float("inf"), 0, time.perf_counter() + seconds
    while n < MIN_REPEATS or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - t0)
        n += 1
    return best


@functools.cache
def _numba_kernels():
    import numba

    @numba.njit(parallel=True)
    def copy(src, dst):
        for i in numba.prange(src.size):
            dst[i] = src[i]

    @numba.njit(parallel=True, fastmath=True)
    def total(src):
        acc = 0.0
        for i in numba.prange(src.size):
            acc += src[i]
        return acc

    @numba.njit(parallel=True)
    def triad(a, b, out):
        for i in numba.prange(out.size):
            out[i] = a[i] * b[i] * b[i]

    return {"copy": copy, "read": total, "triad": triad}


def stream_seconds(nbytes: int, pattern: str = "copy", thorough: bool = False) -> float:
    """Best time of ``pattern`` over ``nbytes`` counted."""
    n = max(1, nbytes // (4 * _ARRAYS[pattern]))
    a = np.ones(n, np.float32)
    b = np.ones(n, np.float32) if pattern != "read" else None
    c = np.empty(n, np.float32) if pattern == "triad" else None
    ways = {"copy": lambda: np.copyto(b, a), "read": lambda: a.sum(),
            "triad": lambda: np.multiply(a, b, out=c)}
    chosen = [ways[pattern]]
    if thorough:
        k = _numba_kernels()[pattern]
        chosen.append({"copy": lambda: k(a, b), "read": lambda: k(a), "triad": lambda: k(a, b, c)}[pattern])
    return min(best_seconds(w, THOROUGH_SECONDS if thorough else MIN_SECONDS) for w in chosen)
