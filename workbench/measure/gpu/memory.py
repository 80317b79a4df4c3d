"""Peak device memory, read the way each allocator allows.

* CuPy: a thread-local :class:`cupy.cuda.MemoryHook` counts what the memory
  pool hands out and takes back, so the peak is the bytes in use, not the bytes
  the pool happens to cache.
* RMM: once cuDF is imported, RMM's statistics (a frame pushed per point) see
  what goes through RMM. Whether CuPy's and Numba's allocations do depends on
  what set their allocators (``cudf.pandas.install()`` does, importing cuDF does
  not), so with RMM imported a point reads both RMM's peak and its library's own
  count and keeps the larger: one of them saw the point's buffers, and neither
  counts the other's. Reading RMM's alone gave a peak of 0 bytes for CuPy and
  Numba CUDA points measured after a cuDF test in one process (H200, 2026-12-04).
* Numba CUDA: the context's ``memalloc`` (every device array of Numba goes
  through it, whatever memory manager serves it) is wrapped for the scope and
  counts what it hands out; a buffer counts as freed when Numba lets go of it,
  not when its deferred free reaches the driver. cuMemGetInfo would read the
  driver's 2 MiB granules and other processes' use.
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
