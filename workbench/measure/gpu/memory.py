"""Peak device memory, read the way each allocator allows.

CuPy: a thread-local memory hook counts what the pool hands out, not what it caches (``cupy_scope``).
RMM, once cuDF is imported: a statistics frame per point (``rmm_scope``); a point then also keeps
its library's own count and reads the larger (``larger``), because whether CuPy's and Numba's
allocations go through RMM depends on what set their allocators. Numba CUDA: the context's
``memalloc`` wrapped for the scope (``numba_scope``), not cuMemGetInfo, which reads the driver's
2 MiB granules and other processes' use.
See docs/ARCHITECTURE.md, "workbench/measure/gpu/memory.py".
"""
from __future__ import annotations

import logging
import sys
import weakref
from contextlib import contextmanager
from typing import Callable, Iterator

log = logging.getLogger(__name__)
NAN = float("nan")


def rmm_active() -> bool:
    """True once RMM is imported (importing cuDF does that and takes over the allocators)."""
    return "rmm" in sys.modules


class RmmScope:
    """Push an RMM statistics frame; ``peak()`` reads it; ``close()`` pops it."""

    def __init__(self) -> None:
        import rmm.statistics as stats
        self._stats = stats
        stats.enable_statistics()
        stats.push_statistics()

    def peak(self) -> float:
        s = self._stats.get_statistics()
        return float(s.peak_bytes) if s is not None else NAN

    def close(self) -> None:
        self._stats.pop_statistics()


@contextmanager
def rmm_scope() -> Iterator[Callable[[], float]]:
    try:
        scope = RmmScope()
    except Exception as exc:  # noqa: BLE001
        log.info("RMM statistics unavailable: %s", exc)
        yield lambda: NAN
        return
    try:
        yield scope.peak
    finally:
        scope.close()


def cupy_peak_hook():
    """A CuPy memory hook that tracks bytes in use and their peak."""
    import cupy

    class PeakHook(cupy.cuda.MemoryHook):
        name = "gpu-workbench-peak"

        def __init__(self) -> None:
            self.used = 0
            self.peak = 0

        def malloc_postprocess(self, **kw) -> None:
            self.used += kw["mem_size"]
            self.peak = max(self.peak, self.used)

        def free_postprocess(self, **kw) -> None:
            self.used -= kw["mem_size"]

    return PeakHook()


@contextmanager
def cupy_scope() -> Iterator[Callable[[], float]]:
    hook = cupy_peak_hook()
    with hook:
        if not rmm_active():
            yield lambda: float(hook.peak)
            return
        with rmm_scope() as rmm_peak:
            yield lambda: larger(rmm_peak(), float(hook.peak))


def larger(a: float, b: float) -> float:
    """The larger of two peaks, either of which may be NaN (not read)."""
    if a != a:
        return b
    return a if b != b else max(a, b)


class AllocationCount:
    """Bytes in use and their peak, counted allocation by allocation (a CuPy hook, a Numba wrap)."""

    def __init__(self) -> None:
        self.used = 0
        self.peak = 0

    def took(self, nbytes: int) -> None:
        self.used += nbytes
        self.peak = max(self.peak, self.used)

    def gave(self, nbytes: int) -> None:
        self.used -= nbytes


@contextmanager
def numba_scope(context) -> Iterator[Callable[[], float]]:
    """Count what Numba's ``context.memalloc`` hands out while the scope is open (its peak in use)."""
    count = AllocationCount()
    plain = context.memalloc

    def memalloc(nbytes: int, *args, **kwargs):
        pointer = plain(nbytes, *args, **kwargs)
        count.took(int(nbytes))
        try:
            weakref.finalize(pointer, count.gave, int(nbytes))
        except TypeError:      # a pointer type without weak references: counted as held to the end
            pass
        return pointer

    context.memalloc = memalloc
    try:
        if not rmm_active():
            yield lambda: float(count.peak)
            return
        # RMM imported is not RMM allocating for Numba (see above): the larger of the two.
        with rmm_scope() as rmm_peak:
            yield lambda: larger(rmm_peak(), float(count.peak))
    finally:
        del context.memalloc      # the class's method again
