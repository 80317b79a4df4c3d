"""The CuPy session: a stream of its own, CUDA-event timing, pool hygiene."""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from workbench.measure.gpu import blocking, duplex, stream
from workbench.core import driver
from workbench.measure.gpu import memory

log = logging.getLogger(__name__)


class CupySession:
    """Per-thread CuPy objects: a non-blocking stream and two timing events.

    CuPy runs every call on the thread's *current* stream. Three CuPy backends
    (``cupy``, ``cupy-fused``, ``cupy-raw``) are three sessions in one sweep,
    each with its own stream, so none of them may leave its stream current:
    that made one backend's kernels run on another's stream while its events,
    synchronisation and downloads stayed on its own, and the events bracketed
    nothing (kernels "ran" at 20 times the memory bandwidth; downloads overtook
    the kernels writing their data). The stream is current only inside
    :meth:`activate`, which the engine enters around all of a point's work, and
    :meth:`timed` enters it again, so a phase timed here always runs, and is
    timed, on this session's stream.
    """

    device_kind = "gpu"

    def __init__(self, backend: Any = None, flush_l2: bool = True) -> None:
        """``flush_l2``: hold a buffer of twice the L2 for cold samples (the ladder's own session,
        which takes no cold samples, does without those 100 MB on an H100)."""
        import cupy as cp
        self.cp = cp
        cp.cuda.Device(0).use()
        self.stream = cp.cuda.Stream(non_blocking=True)
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.device = "GPU: " + props["name"].decode()
        p = driver.properties(0)
        self.device_id = p.identity if p else self.device
        self._start = cp.cuda.Event()
        self._end = cp.cuda.Event()
        try:
            self._blocker = blocking.StreamBlocker(cp, self.stream, p.l2_bytes if p and flush_l2 else 0)
        except Exception as exc:  # noqa: BLE001 - no blocking kernel: warm times keep their launch gaps
            log.warning("no blocking kernel for CuPy (%s): warm GPU times include launch gaps", exc)
            self._blocker = None

    def activate(self):
        """This session's stream as the thread's current stream; the previous one comes back on exit."""
        return self.stream

    def timed(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        """GPU time of ``fn``'s work on this stream, between two events, read after the end event completes."""
        with self.stream:
            self._start.record(self.stream)
            value = fn()
            self._end.record(self.stream)
        self._end.synchronize()
        return self.cp.cuda.get_elapsed_time(self._start, self._end) * 1e-3, value

    def timed_blocked(self, fn: Callable[[], Any]) -> float | None:
        """GPU time of ``fn``'s work with the launch gaps hidden (``workbench.measure.gpu.blocking``)."""
        return self._blocker.timed(fn) if self._blocker is not None else None

    def flush_l2(self) -> None:
        if self._blocker is not None:
            self._blocker.flush_l2()

    def synchronize(self) -> None:
        # The whole device, not only this stream: a library may queue work on a stream of its own.
        self.cp.cuda.runtime.deviceSynchronize()

    @contextmanager
    def device_memory(self) -> Iterator[Callable[[], float]]:
        with memory.cupy_scope() as peak:
            yield peak

    def stream_seconds(self, nbytes: int, pattern: str = "copy", thorough: bool = False) -> float:
        """Best time of a device copy, sum or triad counting ``nbytes`` in all, timed as points are
        (``workbench.measure.gpu.stream``)."""
        cp = self.cp
        arrays = {"copy": 2, "read": 1, "triad": 3}[pattern]
        with self.stream:
            a = cp.ones(max(1, nbytes // (4 * arrays)), np.float32)
            b = cp.empty_like(a) if pattern != "read" else None
            c = cp.empty_like(a) if pattern == "triad" else None
            work = {"copy": lambda: b.data.copy_from_device_async(a.data, a.nbytes, self.stream),
                    "read": a.sum, "triad": lambda: cp.multiply(a, b, out=c)}[pattern]
            best = stream.best_seconds(self, work)
            a = b = c = None
        self.release()
        return best

    def duplex_seconds(self, nbytes: int) -> tuple[float, float, float]:
        """Pinned copies of ``nbytes`` in alone, out alone, both at once (``gpu.duplex``)."""
        import cupyx
        cp, n = self.cp, max(1, nbytes // 4)
        up_host, down_host = cupyx.empty_pinned(n, np.float32), cupyx.empty_pinned(n, np.float32)
        up_host[...] = 1.0
        other = cp.cuda.Stream(non_blocking=True)
        with self.stream:
            up_dev, down_dev = cp.empty(n, cp.float32), cp.zeros(n, cp.float32)
        try:
            return duplex.seconds(lambda: up_dev.set(up_host, stream=self.stream),
                                  lambda: down_dev.get(stream=other, out=down_host, blocking=False),
                                  self.synchronize)
        finally:
            up_dev = down_dev = up_host = down_host = None
            self.release()

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
        with self.stream:          # the pool hands out memory per stream: allocate on the one that uses it
            return self.cp.empty(shape, dtype)

    def upload(self, host: np.ndarray, device: Any = None) -> Any:
        """Copy ``host`` to the device on this stream (asynchronous when ``host`` is pinned)."""
        if device is None:
            device = self.empty_device(host.shape, host.dtype)
        device.set(host, stream=self.stream)
        return device

    def download(self, device: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Copy to the host on this stream; asynchronous into pinned memory, so read it only after
        :meth:`timed` or :meth:`synchronize` has returned."""
        return device.get(stream=self.stream, out=out)

    def release(self) -> None:
        """Give the point's device and pinned memory back, so the next point starts clean."""
        self.stream.synchronize()
        self.cp.fft.config.get_plan_cache().clear()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def close(self) -> None:
        self.release()
        if self._blocker is not None:
            self._blocker.close()


_LADDER = threading.local()


def ladder_session() -> CupySession | None:
    """This thread's CuPy session for a device's bandwidth ladder, whichever backend's session asks
    (made at first use, without the L2 flush's buffer), or None without a working CuPy."""
    if not hasattr(_LADDER, "session"):
        try:
            _LADDER.session = CupySession(flush_l2=False)
        except Exception:  # noqa: BLE001 - no CuPy (a Numba-only install), or it cannot start here
            _LADDER.session = None
    return _LADDER.session


def ladder_seconds(nbytes: int, pattern: str, thorough: bool) -> float | None:
    """``pattern``'s time over ``nbytes`` as a CuPy session measures it; None without CuPy."""
    session = ladder_session()
    return None if session is None else session.stream_seconds(nbytes, pattern, thorough)
