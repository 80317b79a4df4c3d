"""The CuPy session: a stream of this thread's own, CUDA-event timing, pool hygiene."""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from workbench.gpu import memory

log = logging.getLogger(__name__)


class CupySession:
    """Per-thread CuPy objects.

    CuPy keeps the current device, the current stream and the cuBLAS/cuFFT
    handles per thread, so the session is opened in the thread that runs the
    sweep, and the stream it creates becomes that thread's current stream:
    every CuPy call of the implementations runs on it, and the CUDA events that
    time the phases are recorded on it.
    """

    device_kind = "gpu"

    def __init__(self, backend: Any = None) -> None:
        import cupy as cp
        self.cp = cp
        cp.cuda.Device(0).use()
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.stream.use()
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.device = "GPU: " + props["name"].decode()
        self._start = cp.cuda.Event()
        self._end = cp.cuda.Event()

    def timed(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        """GPU time of ``fn``'s work on this stream, between two events, read after the end event completes."""
        self._start.record(self.stream)
        value = fn()
        self._end.record(self.stream)
        self._end.synchronize()
        return self.cp.cuda.get_elapsed_time(self._start, self._end) * 1e-3, value

    @contextmanager
    def device_memory(self) -> Iterator[Callable[[], float]]:
        with memory.cupy_scope() as peak:
            yield peak

    # Helpers the implementations use for their transfer phases -----------------------------------

    def host_buffer(self, array: np.ndarray, pinned: bool) -> np.ndarray:
        """A host copy of ``array`` in page-locked memory (pinned) or the array itself (pageable)."""
        if not pinned:
            return array
        import cupyx
        buf = cupyx.empty_pinned(array.shape, array.dtype)
        buf[...] = array
        return buf

    def empty_host(self, shape: Any, dtype: Any, pinned: bool) -> np.ndarray:
        if pinned:
            import cupyx
            return cupyx.empty_pinned(shape, dtype)
        return np.empty(shape, dtype)

    def empty_device(self, shape: Any, dtype: Any) -> Any:
        return self.cp.empty(shape, dtype)

    def upload(self, host: np.ndarray, device: Any = None) -> Any:
        """Copy ``host`` to the device on this stream (asynchronous when ``host`` is pinned)."""
        if device is None:
            device = self.cp.empty(host.shape, host.dtype)
        device.set(host, stream=self.stream)
        return device

    def download(self, device: Any, out: np.ndarray | None = None) -> np.ndarray:
        return device.get(stream=self.stream, out=out)

    def release(self) -> None:
        """Give the point's device and pinned memory back, so the next point starts clean."""
        self.stream.synchronize()
        self.cp.fft.config.get_plan_cache().clear()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def close(self) -> None:
        self.release()
        self.cp.cuda.Stream.null.use()
