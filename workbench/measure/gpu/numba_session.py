"""The Numba CUDA session: a stream of this thread's own and CUDA-event timing."""
from __future__ import annotations

import logging
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

import numpy as np

from workbench.measure.gpu import blocking, cap, cupy_session, duplex, stream
from workbench.core import driver
from workbench.measure.gpu import memory

log = logging.getLogger(__name__)


class NumbaCudaSession:
    """Per-thread Numba CUDA objects: the context made current here, a stream, two events.

    Numba has no "current stream": every launch and copy of the implementations names
    ``self.stream``, so there is nothing to make current and :meth:`activate` does nothing.
    """

    device_kind = "gpu"

    def __init__(self, backend: Any = None) -> None:
        from numba import config, cuda
        # A sweep runs small sizes on purpose: Numba's "low occupancy" warning is expected there.
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
        self.cuda = cuda
        self.context = cuda.current_context()   # makes the primary context current in this thread
        self.stream = cuda.stream()
        self.device = "GPU: " + _name(getattr(getattr(self.context, "device", None), "name", "CUDA device"))
        p = driver.properties(0)
        self.device_id = p.identity if p else self.device
        self._start = cuda.event(timing=True)
        self._end = cuda.event(timing=True)
        self._held = 0           # device bytes the helpers handed out since the last release
        self._blocker = _blocker_for(self.stream, p.l2_bytes if p else 0)

    def activate(self):
        return nullcontext()

    def timed(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        self._start.record(self.stream)
        value = fn()
        self._end.record(self.stream)
        self._end.synchronize()
        return self.cuda.event_elapsed_time(self._start, self._end) * 1e-3, value

    def timed_blocked(self, fn: Callable[[], Any]) -> float | None:
        """GPU time of ``fn``'s work with the launch gaps hidden, where CuPy is there to hold the
        stream (``workbench.measure.gpu.blocking``); None otherwise, and the engine times it unblocked."""
        return self._blocker.timed(fn) if self._blocker is not None else None

    def flush_l2(self) -> None:
        if self._blocker is not None:
            self._blocker.flush_l2()

    def synchronize(self) -> None:
        self.cuda.synchronize()

    def stream_seconds(self, nbytes: int, pattern: str = "copy", thorough: bool = False) -> float | None:
        """Best time of ``pattern`` over ``nbytes``, measured by CuPy where it is installed, so the
        device's ceiling does not depend on which backend measured it first
        (``cupy_session.ladder_seconds``); else Numba's own device copies (it has no one-line sum or
        triad: None for those)."""
        seconds = cupy_session.ladder_seconds(nbytes, pattern, thorough)
        if seconds is not None or cupy_session.ladder_session() is not None or pattern != "copy":
            return seconds
        src = self.cuda.device_array(max(1, nbytes // 8), np.float32, stream=self.stream)
        dst = self.cuda.device_array_like(src, stream=self.stream)
        best = stream.best_seconds(self, lambda: dst.copy_to_device(src, stream=self.stream))
        src = dst = None
        self.release()
        return best

    def duplex_seconds(self, nbytes: int) -> tuple[float, float, float]:
        """Pinned copies of ``nbytes`` in alone, out alone, both at once (``gpu.duplex``)."""
        cuda, n = self.cuda, max(1, nbytes // 4)
        up_host, down_host = cuda.pinned_array(n, np.float32), cuda.pinned_array(n, np.float32)
        up_host[:] = 1.0
        other = cuda.stream()
        up_dev = cuda.device_array(n, np.float32, stream=self.stream)
        down_dev = cuda.device_array(n, np.float32, stream=self.stream)
        try:
            return duplex.seconds(lambda: up_dev.copy_to_device(up_host, stream=self.stream),
                                  lambda: down_dev.copy_to_host(down_host, stream=other), self.synchronize)
        finally:
            up_dev = down_dev = up_host = down_host = None
            self.release()

    @contextmanager
    def device_memory(self) -> Iterator[Callable[[], float]]:
        with memory.numba_scope(self.context) as peak:
            yield peak

    def host_buffer(self, array: np.ndarray, pinned: bool) -> np.ndarray:
        if not pinned:
            return array
        buf = self.cuda.pinned_array(array.shape, array.dtype)
        buf[...] = array
        return buf

    def empty_host(self, shape: Any, dtype: Any, pinned: bool) -> np.ndarray:
        return self.cuda.pinned_array(shape, dtype) if pinned else np.empty(shape, dtype)

    def _allocating(self, nbytes: int) -> None:
        """Numba has no pool to cap: the device memory cap (workbench.measure.gpu.cap) is checked here, against
        what the helpers handed out during the point (never less than what it holds: a buffer freed
        early still counts, as the workloads allocate once and reuse)."""
        cap.check(self._held, nbytes, "numba-cuda")
        self._held += nbytes

    def empty_device(self, shape: Any, dtype: Any) -> Any:
        self._allocating(int(np.prod(shape)) * np.dtype(dtype).itemsize)
        return self.cuda.device_array(shape, dtype, stream=self.stream)

    def upload(self, host: np.ndarray, device: Any = None) -> Any:
        if device is None:
            self._allocating(host.nbytes)
            return self.cuda.to_device(host, stream=self.stream)
        device.copy_to_device(host, stream=self.stream)
        return device

    def download(self, device: Any, out: np.ndarray | None = None) -> np.ndarray:
        return device.copy_to_host(out, stream=self.stream)

    def release(self) -> None:
        self._held = 0
        self.stream.synchronize()
        self.context.deallocations.clear()   # Numba defers frees; flush them between points

    def close(self) -> None:
        self.release()
        if self._blocker is not None:
            self._blocker.close()


def _stream_pointer(stream: Any) -> int:
    """The CUstream of a Numba stream as an integer, with the ctypes or the NVIDIA bindings."""
    handle = stream.handle
    value = getattr(handle, "value", None)
    return int(value) if value is not None else int(handle)


def _blocker_for(stream: Any, l2_bytes: int) -> Any:
    """A CuPy stream blocker on the Numba stream, or None without CuPy (Numba alone has no
    global timer to bound the spin with)."""
    try:
        import cupy as cp
        return blocking.StreamBlocker(cp, cp.cuda.ExternalStream(_stream_pointer(stream)), l2_bytes)
    except Exception as exc:  # noqa: BLE001 - no CuPy, or another CUDA runtime: time without it
        log.info("no blocking kernel for Numba CUDA (%s): warm times include launch gaps", exc)
        return None


def _name(name: Any) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)
