"""STREAM-like measurements of the host's memory bandwidth, for the CPU's hardware limits.

Two ways of moving ``nbytes`` are timed, and the faster one counts: NumPy on one
thread (what a NumPy or pandas point can reach) and, when asked to be
thorough, a Numba ``prange`` loop on every core (what a Numba point can
reach). The thorough way costs a JIT compilation, so :mod:`workbench.limits`
asks for it only to confirm a figure that the quick way says is too fast.
"""
from __future__ import annotations

import functools
import time
from typing import Callable

import numpy as np

MIN_REPEATS = 5
MIN_SECONDS = 0.01      # repeat small copies for at least this long: the best of many is the ceiling


def best_seconds(work: Callable[[], object]) -> float:
    """The fastest of several runs of ``work`` after one warm-up (first touch, caches)."""
    work()
    best, n, t_end = float("inf"), 0, time.perf_counter() + MIN_SECONDS
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

    return copy, total


def copy_seconds(nbytes: int, read_only: bool = False, thorough: bool = False) -> float:
    """Best time to copy (read ``nbytes/2``, write ``nbytes/2``) or to sum (read ``nbytes``)."""
    n = max(1, nbytes // (4 if read_only else 8))
    src = np.ones(n, np.float32)
    if read_only:
        ways = [lambda: src.sum()]
    else:
        dst = np.empty_like(src)
        ways = [lambda: np.copyto(dst, src)]
    if thorough:
        copy, total = _numba_kernels()
        ways.append((lambda: total(src)) if read_only else (lambda: copy(src, dst)))
    return min(best_seconds(w) for w in ways)
