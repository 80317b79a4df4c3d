"""The cuDF session: host clock with device synchronisation, RMM statistics.

cuDF runs its work on streams of its own and does host work in between
(building the pandas frame, hashing on the host, checking results), so CUDA
events on a stream of ours would not bracket it: the honest clock is the host's,
read after the device has finished everything that was queued.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from workbench.gpu import memory


class CudfSession:
    device_kind = "gpu"

    def __init__(self, backend: Any = None) -> None:
        import cudf  # noqa: F401 - importing makes RMM the allocator of CuPy and Numba too
        import cupy as cp
        self.cp = cp
        cp.cuda.Device(0).use()
        self.device = "GPU: " + cp.cuda.runtime.getDeviceProperties(0)["name"].decode()

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
