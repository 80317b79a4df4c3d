"""A stand-in for NVIDIA's ``cupti-python`` (``from cupti import cupti``), enough of it for
``workbench.measure.gpu.kernels.recording``: the buffer callbacks, enabling kinds, the clock, the
names of API calls, and the record fields the recorder reads. A test queues records with
:func:`emit` while recording; the flush hands them to the completed-buffer callback."""
from __future__ import annotations

import enum
import itertools
import types

_now = itertools.count(1_000_000, 1000)     # ns, advancing on every read


class ActivityKind(enum.IntEnum):
    MEMCPY = 1
    MEMSET = 2
    RUNTIME = 4
    DRIVER = 5
    CONCURRENT_KERNEL = 10


class ActivityMemcpyKind(enum.IntEnum):
    UNKNOWN = 0
    HTOD = 1
    DTOH = 2
    DTOD = 8


class ActivityMemoryKind(enum.IntEnum):
    UNKNOWN = 0
    PAGEABLE = 1
    PINNED = 2
    DEVICE = 3


class CallbackDomain(enum.IntEnum):
    DRIVER_API = 1
    RUNTIME_API = 2


NAMES = {(CallbackDomain.DRIVER_API, 1): "cuLaunchKernel", (CallbackDomain.DRIVER_API, 2): "cuCtxGetCurrent",
         (CallbackDomain.DRIVER_API, 3): "cuStreamSynchronize",
         (CallbackDomain.RUNTIME_API, 1): "cudaMemcpyAsync_v3020", (CallbackDomain.RUNTIME_API, 2): "cudaGetDevice"}

state = types.SimpleNamespace(callbacks=None, enabled=set(), pending=[], registrations=0)


def reset() -> None:
    state.callbacks, state.enabled, state.pending, state.registrations = None, set(), [], 0


def activity_register_callbacks(requested, completed) -> None:
    state.callbacks = (requested, completed)
    state.registrations += 1


def activity_enable(kind) -> None:
    state.enabled.add(ActivityKind(kind))


def activity_disable(kind) -> None:
    state.enabled.discard(ActivityKind(kind))


def activity_flush_all(flag) -> None:
    if state.pending and state.callbacks is not None:
        records, state.pending = state.pending, []
        state.callbacks[1](records)


def get_timestamp() -> int:
    return next(_now)


def get_callback_name(domain, cbid) -> str:
    return NAMES[(CallbackDomain(domain), cbid)]


def emit(kind: ActivityKind, seconds: float, **fields) -> None:
    """A record of ``kind`` lasting ``seconds`` from now, kept only where its kind is enabled."""
    if kind not in state.enabled:
        return
    start = get_timestamp()
    end = start + int(seconds * 1e9)
    for _ in range(int(seconds * 1e6)):        # the clock moves on past the record's end
        get_timestamp()
    state.pending.append(types.SimpleNamespace(kind=int(kind), start=start, end=end, **fields))
