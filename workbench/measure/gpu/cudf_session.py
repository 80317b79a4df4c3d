"""The cuDF session: host clock with device synchronisation, RMM statistics.

cuDF runs its work on streams of its own and does host work in between
(building the pandas frame, hashing on the host, checking results), so CUDA
events on a stream of ours would not bracket it: the honest clock is the host's,
read after the device has finished everything that was queued.
"""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

from workbench.measure.gpu import blocking, cupy_session
from workbench.core import driver
from workbench.measure.gpu import memory


class CudfSession:
    device_kind = "gpu"

    def __init__(self, backend: Any = None) -> None:
        import cudf  # noqa: F401 - importing makes RMM the allocator of CuPy and Numba too
        import cupy as cp
        self.cp = cp
        cp.cuda.Device(0).use()
        self.device = "GPU: " + cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        p = driver.properties(0)
        self.device_id = p.identity if p else self.device
        # Twice the L2, written before a cold sample (nvbench's flush); cuDF synchronises inside its
        # calls, so no blocking kernel here: its times are the host's, between synchronisations.
        self._flush = blocking.L2Flush(cp, p.l2_bytes if p else 0)

    def activate(self):
        return nullcontext()     # cuDF picks its own streams; the clock below waits for all of them

    def flush_l2(self) -> None:
        self._flush.flush()

    def synchronize(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def stream_seconds(self, nbytes: int, pattern: str = "copy", thorough: bool = False) -> float | None:
        """Best time of ``pattern`` over ``nbytes``, measured by CuPy (which cuDF brings) as a CuPy
        session measures it: the device's ceiling, whichever backend asked first
        (``cupy_session.ladder_seconds``)."""
        return cupy_session.ladder_seconds(nbytes, pattern, thorough)

    def timed(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        sync = self.cp.cuda.runtime.deviceSynchronize
        sync()
        t0 = time.perf_counter()
        value = fn()
        sync()
        return time.perf_counter() - t0, value

    @contextmanager
    def device_memory(self) -> Iterator[Callable[[], float]]:
        with memory.rmm_scope() as peak:
            yield peak

    def release(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def close(self) -> None:
        self.release()
        self._flush.close()
