"""What a backend's session offers the engine and the workloads (``ctx.session``).

A session holds one backend's per-thread objects (a CUDA stream, events, a
library handle) for the length of a sweep. The CPU, CuPy, Numba CUDA and cuDF
sessions each implement :class:`Session`; the GPU ones add the transfer
helpers of :class:`DeviceSession` that the workloads' upload/compute/download
phases call.

Several sessions live side by side in one sweep (``cupy``, ``cupy-fused`` and
``cupy-raw`` are three CuPy sessions, each with its own stream), so a session
never changes what another one sees: whatever it makes current (CuPy's current
stream) it makes current only inside :meth:`Session.activate`, which the
engine enters around every piece of the point's work and which restores what
was current before.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Session(Protocol):
    device_kind: str            # "cpu" or "gpu"
    device: str                 # "CPU: <model>" or "GPU: <name>", as the result rows name it
    device_id: str              # what identifies this very device (hardware limits are cached by it)

    def activate(self) -> AbstractContextManager[Any]:
        """Make this session's objects (its stream) current in this thread; restore on exit."""

    def timed(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        """Run ``fn`` and return (seconds its work took on this session's clock, its value).

        The seconds are read only once the work is complete on the device."""

    def synchronize(self) -> None:
        """Wait until every piece of work queued on the device is complete (before a result is read)."""

    def device_memory(self) -> AbstractContextManager[Callable[[], float]]:
        """A scope yielding a function that returns the peak device bytes in use since it began."""

    def stream_seconds(self, nbytes: int, pattern: str = "copy", thorough: bool = False) -> float | None:
        """Best time of a STREAM-like ``pattern`` ("copy", "read" or "triad") over ``nbytes``
        counted in this device's memory, or None where the session cannot run that pattern: the
        measurement behind the bandwidth ceiling of :mod:`workbench.limits`. ``thorough`` adds
        ways that cost more to set up (a JIT-compiled parallel loop on the CPU)."""

    def release(self) -> None:
        """Give back what the finished point held, so the next point starts clean."""

    def close(self) -> None:
        """End the session (the sweep is over)."""

    # Optional: ``diagnose(compute) -> str``, a note on the point just measured that goes into its
    # row's message, made after the timing (it may rerun ``compute`` under a slow tracer): the
    # cudf.pandas session says how many calls fell back to the CPU. The engine asks with getattr.


@runtime_checkable
class DeviceSession(Session, Protocol):
    """A GPU session: the helpers the workloads' transfer phases use, all on the session's stream."""

    stream: Any

    def host_buffer(self, array: np.ndarray, pinned: bool) -> np.ndarray:
        """``array`` itself (pageable) or a page-locked copy of it (pinned)."""

    def empty_host(self, shape: Any, dtype: Any, pinned: bool) -> np.ndarray: ...

    def empty_device(self, shape: Any, dtype: Any) -> Any: ...

    def upload(self, host: np.ndarray, device: Any = None) -> Any: ...

    def download(self, device: Any, out: np.ndarray | None = None) -> np.ndarray: ...
