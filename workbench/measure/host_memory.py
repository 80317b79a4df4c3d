"""What a point allocates on the host: the kernel's peak resident set, read after every allocator
was made to give back what it keeps (docs/ARCHITECTURE.md, "Memory").

The resident set counts every allocator (NumPy, Numba's runtime, Arrow, BLAS), but pages that an
earlier point freed and the allocator kept are reused without raising it, so on its own it reads
the process's history. Before a scope, glibc's ``malloc_trim(0)`` hands the free pages of every
arena back to the system and Arrow's pool releases its cache: whatever the scope's code then
touches raises the resident set again, however the allocator places it. Transparent huge pages are
off inside the scope (``PR_SET_THP_DISABLE``), so that a touched page counts 4 KiB, not 2 MiB.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import sys
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterator

log = logging.getLogger(__name__)

_STATUS = "/proc/self/status"
_CLEAR_REFS = "/proc/self/clear_refs"
_PR_SET_THP_DISABLE, _PR_GET_THP_DISABLE = 41, 42
NAN = float("nan")


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.malloc_trim  # noqa: B018 - glibc only: musl and macOS have none
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


class _Status:
    """``/proc/self/status`` read into a buffer made once: reading it allocates no page of its own."""

    def __init__(self) -> None:
        self._buf = bytearray(8192)

    def kib(self, *keys: bytes) -> tuple[int, ...] | None:
        try:
            fd = os.open(_STATUS, os.O_RDONLY)
        except OSError:
            return None
        try:
            n = os.readv(fd, [self._buf])
        finally:
            os.close(fd)
        text = memoryview(self._buf)[:n].tobytes()
        out = []
        for key in keys:
            i = text.find(key)
            if i < 0:
                return None
            out.append(int(text[i + len(key):text.index(b"kB", i)]))
        return tuple(out)


#: glibc's mallopt parameters, and the values its dynamic threshold settles at after the first
#: large block is freed (32 MiB, the most it goes to, and twice that for the trim).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD, TRIM_THRESHOLD = 32 * 2 ** 20, 64 * 2 ** 20
_settled = False


def _settle_allocator() -> None:
    """Fix glibc's thresholds where its dynamic ones settle anyway: a block under 32 MiB freed
    inside a call then stays in the heap, resident, to the scope's end. Freed with munmap, it
    lowered the resident set at once, and the kernel's high-water mark taken then is approximate
    (its counters are per CPU): a 1 MiB array freed before the call returned read up to 200 KiB short."""
    global _settled
    if _LIBC is not None and not _settled:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        _LIBC.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    _settled = True


def release_free_memory() -> None:
    """Give the free pages that the allocators keep back to the system (glibc's arenas, Arrow's
    pool), so that the next allocation's pages are counted where they are touched."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        try:
            arrow.default_memory_pool().release_unused()
        except Exception:  # noqa: BLE001 - an Arrow without the call keeps its cache
            pass
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


#: Resident free memory left to the interpreter's own small blocks after the trim, so that its
#: bookkeeping between two readings does not read as the call's. It sets the resolution: an
#: allocation under this may be served from it and read 0 (docs/ARCHITECTURE.md, "Memory").
RESERVE_BYTES = 64 * 1024


def _reserve() -> None:
    """Touch RESERVE_BYTES of heap in blocks of a few KiB and free them: they stay resident in the
    allocator's bins for the small blocks that follow."""
    blocks = [bytearray(size) for size in (640, 1024, 2048, 4096) for _ in range(RESERVE_BYTES // 4 // size)]
    del blocks


@contextmanager
def _no_collection() -> Iterator[None]:
    """No garbage collection inside the scope: garbage of before freed inside it would leave its
    pages to the scope's allocations, unseen (cheaper than a full collection before it)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def _no_huge_pages() -> Iterator[None]:
    """Transparent huge pages off for this process inside the scope (Linux 3.15+), as they were after."""
    if _LIBC is None:
        yield
        return
    was = _LIBC.prctl(_PR_GET_THP_DISABLE, 0, 0, 0, 0)
    changed = was == 0 and _LIBC.prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
    try:
        yield
    finally:
        if changed:
            _LIBC.prctl(_PR_SET_THP_DISABLE, 0, 0, 0, 0)


class HostPeak:
    """Peak resident memory of this process during a scope, above its start, history set aside."""

    def __init__(self) -> None:
        self._status = _Status()
        self.supported = self._reset() and self._status.kib(b"VmHWM:") is not None
        if not self.supported:
            log.info("peak host memory is not measurable here (needs Linux /proc/self/clear_refs)")

    @staticmethod
    def _reset() -> bool:
        try:
            with open(_CLEAR_REFS, "w") as f:
                f.write("5")
            return True
        except OSError:
            return False

    @contextmanager
    def scope(self, collect: bool = True, alone: bool = True) -> Iterator[Callable[[], float]]:
        """Yield a function that returns the peak in bytes since the scope began (NaN if unknown).

        The allocators' free pages are given back first, whatever the arguments. ``collect``:
        collect garbage first. ``alone``: the scope is a measuring pass of its own (no timed call
        inside): huge pages stay off inside it, and the pages it touched are given back after it,
        so that the timed calls after it find the memory as they would have without it."""
        if not self.supported:
            yield lambda: NAN
            return
        if collect:
            gc.collect()
        _settle_allocator()
        with _no_huge_pages() if alone else nullcontext(), _no_collection() if alone else nullcontext():
            release_free_memory()
            _reserve()
            self._status.kib(b"VmRSS:")     # the reading's own page, touched before the base
            self._reset()
            base = self._status.kib(b"VmRSS:", b"VmHWM:")
            start, mark = base if base else (0, 0)

            def peak() -> float:
                """What is resident now above the start, or the high-water mark where it rose past
                the reset's. The reset sets the mark from the kernel's per-CPU counters, which run
                up to 32 pages a CPU ahead of the exact count: a mark that never rose past it is
                that error, not the call's (a call that allocated nothing read up to 86 KiB)."""
                now = self._status.kib(b"VmRSS:", b"VmHWM:")
                if not now:
                    return NAN
                rss, hwm = now
                return max(0, rss - start, hwm - start if hwm > mark else 0) * 1024.0
            try:
                yield peak
            finally:
                if alone:
                    release_free_memory()
