"""Time queued GPU work without the host's launch gaps: nvbench's blocking kernel, for CuPy streams.

An event pair around a burst of launches times whatever the device did between them, and when a
Python call takes longer to dispatch than its kernel takes to run, that is mostly waiting for the
host. nvbench holds the stream with a kernel that spins on a flag in host memory, queues the start
event, the work and the end event behind it, and only then releases the flag: the events then
bracket the device's work back to back. The spinning kernel gives up after ``TIMEOUT_NS`` and says
so, because work that waits on the host (a library that synchronises inside the call) would
otherwise wait for the flag for ever; such a sample is discarded and the caller stops blocking.

The L2 flush is nvbench's too: writing a buffer twice the size of the L2 cache evicts whatever the
last call left there, so the next call's inputs come from memory (a cold sample).
"""
from __future__ import annotations

import ctypes
import logging
from typing import Any, Callable

import numpy as np

log = logging.getLogger(__name__)

#: How long the stream is held at most: far more than queuing a burst of 64 launches takes.
TIMEOUT_NS = 200_000_000

_SOURCE = r"""
extern "C" __global__ void hold_stream(const volatile int* release, volatile int* timed_out,
                                       unsigned long long timeout_ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (!*release) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) { *timed_out = 1; return; }
    }
}
"""


class StreamBlocker:
    """A blocking kernel and its two flags in mapped host memory, for one CuPy stream."""

    def __init__(self, cp: Any, stream: Any, l2_bytes: int = 0) -> None:
        self.cp = cp
        self.stream = stream
        self._kernel = cp.RawKernel(_SOURCE, "hold_stream")
        # Mapped pinned memory: the device reads the flag the host writes, while the kernel runs.
        runtime = cp.cuda.runtime
        self._flags = cp.cuda.PinnedMemory(8, getattr(runtime, "hostAllocMapped", 2))   # cudaHostAllocMapped
        self._release = ctypes.c_int.from_address(self._flags.ptr)
        self._timed_out = ctypes.c_int.from_address(self._flags.ptr + 4)
        # The device's address of the flags (the host's own under unified addressing).
        get = getattr(runtime, "hostGetDevicePointer", None)
        self._device_ptr = int(get(self._flags.ptr, 0)) if get is not None else self._flags.ptr
        self._start, self._end = cp.cuda.Event(), cp.cuda.Event()
        self._flush = L2Flush(cp, l2_bytes)

    def timed(self, fn: Callable[[], Any]) -> float | None:
        """GPU seconds of the work ``fn`` queues on the stream, its launch gaps hidden; None when the
        stream could not be held (the work waited for the host, or the device is not free)."""
        cp, s = self.cp, self.stream
        self._release.value = 0
        self._timed_out.value = 0
        with s:
            self._kernel((1,), (1,), (np.uint64(self._device_ptr), np.uint64(self._device_ptr + 4),
                                      np.uint64(TIMEOUT_NS)), stream=s)
            self._start.record(s)
            fn()
            self._end.record(s)
        self._release.value = 1
        self._end.synchronize()
        if self._timed_out.value:
            log.info("the blocking kernel timed out: this work waits for the host; timing it unblocked")
            return None
        return cp.cuda.get_elapsed_time(self._start, self._end) * 1e-3

    def flush_l2(self) -> None:
        self._flush.flush(self.stream)

    def close(self) -> None:
        self._flush.close()


class L2Flush:
    """A buffer of twice the L2 cache, written before a cold sample (nvbench's flush).

    Allocated with cudaMalloc, outside CuPy's pool and RMM: a point's device memory statistics and
    cap, and the pool's emptiness between points, are the point's own."""

    def __init__(self, cp: Any, l2_bytes: int) -> None:
        self._runtime = cp.cuda.runtime
        self.nbytes = max(2 * l2_bytes, 1 << 20) if l2_bytes else 0
        self._ptr = self._runtime.malloc(self.nbytes) if self.nbytes else 0

    def flush(self, stream: Any = None) -> None:
        if self._ptr:
            self._runtime.memsetAsync(self._ptr, 0, self.nbytes, stream.ptr if stream is not None else 0)

    def close(self) -> None:
        if self._ptr:
            self._runtime.free(self._ptr)
            self._ptr = 0
