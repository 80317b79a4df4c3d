"""The device memory cap: a memory wall a talk can reach in seconds on a large GPU.

A sweep may cap the device memory its GPU backends use (``SweepSpec.device_memory_limit``). The cap
is applied around each point's work only (:func:`capped`), never around the harness's own
measurements, in each library's own way (CuPy's pool limit, RMM's ``LimitingResourceAdaptor``, Numba
CUDA's allocations counted against :func:`check`), importing no library not loaded already. A point
out of device memory becomes an ``error`` row whose message starts with :data:`OUT_OF_DEVICE_MEMORY`
(:func:`describe`); charts find the wall by that prefix (``workbench.results.rows.memory_walls``).
See docs/ARCHITECTURE.md, "workbench/measure/gpu/cap.py".
"""
from __future__ import annotations

import gc
import logging
import sys
from contextlib import contextmanager
from typing import Iterator

from workbench.results.rows import OUT_OF_DEVICE_MEMORY, human_bytes  # the rows name the wall; the cap raises it

log = logging.getLogger(__name__)

_limit = 0                       # the cap now in force in this process (0: none)
_rmm: tuple | None = None        # (our adaptor, its upstream) while RMM is capped


class DeviceMemoryExceeded(MemoryError):
    """An allocation the cap refuses, for a library that has no cap of its own (Numba)."""


def limit() -> int:
    """The cap in force now, in bytes (0: none)."""
    return _limit


def check(held: int, nbytes: int, what: str = "") -> None:
    """Refuse an allocation of ``nbytes`` on top of ``held`` bytes that would pass the cap."""
    if _limit and held + nbytes > _limit:
        raise DeviceMemoryExceeded(
            f"{what + ': ' if what else ''}allocating {human_bytes(nbytes)} with {human_bytes(held)} "
            f"already held would pass the {human_bytes(_limit)} cap")


@contextmanager
def capped(nbytes: int) -> Iterator[None]:
    """The cap in force for the duration of a point (no cap when ``nbytes`` is 0)."""
    if not nbytes:
        yield
        return
    _apply(int(nbytes))
    try:
        yield
    finally:
        _apply(0)


def _apply(nbytes: int) -> None:
    global _limit
    _limit = nbytes
    if "cupy" in sys.modules:
        try:
            sys.modules["cupy"].get_default_memory_pool().set_limit(size=nbytes)   # 0: no limit
        except Exception as exc:  # noqa: BLE001 - a CuPy that imports but has no pool: say so once
            log.warning("could not set CuPy's memory pool limit: %s", exc)
    if "rmm" in sys.modules:
        _apply_rmm(nbytes)


def _apply_rmm(nbytes: int) -> None:
    """Put a limiting adaptor over the current resource (or take ours away), keeping RMM's
    statistics adaptor, if there is one, on top, where ``rmm.statistics`` looks for it."""
    global _rmm
    import rmm.mr as mr
    current = mr.get_current_device_resource()
    stats = isinstance(current, mr.StatisticsResourceAdaptor)
    inner = current.get_upstream() if stats else current
    base = _rmm[1] if _rmm is not None and inner is _rmm[0] else inner
    if _rmm is not None and inner is not _rmm[0]:
        log.warning("RMM's device resource was replaced under the memory cap; capping the new one")
    _rmm = None
    resource = base
    if nbytes:
        resource = mr.LimitingResourceAdaptor(base, allocation_limit=nbytes)
        _rmm = (resource, base)
    if resource is not inner:
        mr.set_current_device_resource(mr.StatisticsResourceAdaptor(resource) if stats else resource)


# Telling a point that ran out of device memory from one that failed otherwise --------------------

_DEVICE_LIBRARIES = ("cupy", "cupy_backends", "rmm", "cudf", "pylibcudf", "numba", "numba_cuda")
#: Words only a device allocator says, whoever raised them (RMM's bad_alloc, CUDA's error names).
_DEVICE_OOM_WORDS = ("out_of_memory", "cudaerrormemoryallocation", "cuda_error_out_of_memory")


def is_device_oom(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a device allocation that failed: CuPy's
    OutOfMemoryError, RMM's bad_alloc, Numba's CUDA_ERROR_OUT_OF_MEMORY, the cap's own refusal;
    not NumPy's MemoryError for host memory."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, DeviceMemoryExceeded):
            return True
        module = type(exc).__module__.split(".")[0]
        text = str(exc).lower()
        if any(w in text for w in _DEVICE_OOM_WORDS):
            return True          # RMM's bad_alloc surfaces as a plain MemoryError, or wrapped by cuDF
        if module in _DEVICE_LIBRARIES and (isinstance(exc, MemoryError) or "out of memory" in text):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def describe(exc: BaseException, what: str, need: float, cap: int, free: int | None) -> str:
    """The message of a point that ran out of device memory: what was asked, against what."""
    against = [f"the cap is {human_bytes(cap)}"] if cap else []
    if free is not None:
        against.append(f"{human_bytes(free)} free on the device now")
    words = " ".join(str(exc).split())
    if len(words) > 300:
        words = words[:300] + "..."
    return (f"{OUT_OF_DEVICE_MEMORY}: {what} needs about {human_bytes(need)} on the device"
            + (f"; {', '.join(against)}" if against else "") + f" ({type(exc).__name__}: {words})")


def release_after_oom() -> None:
    """Collect what a failed allocation left reachable only from cycles (a traceback's frames
    holding the point's arrays), so the session's release gives it back to the device."""
    gc.collect()

