"""The kernels one call launches, each with its name and GPU time, from CUPTI's activity records
through NVIDIA's ``cupti-python`` (issue 29).

Why CUPTI: it is what Nsight Systems and the frameworks' profilers read; a kernel record carries
the name the library gave the kernel and its start and end on the GPU's clock, whichever library
launched it (CuPy, Numba CUDA, cuDF, cuBLAS, CUB). No other source in a Python process sees all of
them. Recording serialises nothing (``CONCURRENT_KERNEL``), but it costs launch time, so it runs
in an untimed pass of its own after the point's rounds, never around a timed call.

The same records, with their starts, streams and correlation ids, are the point's timeline
(issue 37): one lane per stream, and the host's lanes with the engine's phases and the API calls
that launched the work or waited for it (CUPTI's ``RUNTIME`` and ``DRIVER`` records: CuPy copies
through the runtime and launches kernels through the driver, Numba does everything through the
driver). The bars and the
kernel count are one list, so the timeline cannot show other kernels than the count counts.
"""
from __future__ import annotations

import logging
import math
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

log = logging.getLogger(__name__)

#: Longest kernel name kept: C++ templates (CUB, cuBLAS) run to hundreds of characters.
NAME_CHARS = 96


@dataclass(frozen=True)
class Activity:
    """One record of a call: a kernel, a copy or a memset with its GPU time; in a call's timeline
    also the host's side, a runtime or driver call that launched GPU work or waited for it (``api``) and the
    phases the engine ran (``phase``). ``start`` is in seconds from the call's start (NaN in a
    record of an older file), ``stream`` CUDA's stream id (-1: the host), ``correlation`` CUPTI's
    id shared by a launch and the work it launched."""
    kind: str        # "kernel", "copy", "memset", "api" or "phase"
    name: str
    seconds: float
    start: float = math.nan
    stream: int = -1
    correlation: int = 0
    nbytes: int = 0
    memory: str = ""     # a copy's host memory: "pinned" or "pageable" ("device" for a device copy)

    @property
    def on_gpu(self) -> bool:
        return self.kind in GPU_KINDS


#: The kinds that run on the GPU (the kernel records proper); ``api`` and ``phase`` are the host's.
GPU_KINDS = ("kernel", "copy", "memset")
#: At most this many host API records are kept per call (a call of a thousand launches has as many).
API_RECORDS = 2000


_lock = threading.Lock()
_records: list = []
_registered = False


def _cupti() -> Any:
    from cupti import cupti   # NVIDIA's cupti-python: the optional ``kernels`` extra
    return cupti


def unavailable() -> str:
    """'' where kernels can be recorded, else why not (said in the row instead of a count)."""
    try:
        _cupti()
    except Exception as exc:  # noqa: BLE001 - ImportError, or its CUPTI library missing
        return f"kernels not recorded: cupti-python cannot be loaded ({type(exc).__name__}: {exc})"
    return ""


def _register(cupti: Any) -> None:
    """The buffer callbacks, once per process (CUPTI keeps one pair)."""
    global _registered
    if _registered:
        return

    def requested() -> tuple[int, int]:
        return 4 * 1024 * 1024, 0

    def completed(activities: list) -> None:
        with _lock:
            _records.extend(activities)

    cupti.activity_register_callbacks(requested, completed)
    _registered = True


def _short(name: Any) -> str:
    text = str(name or "?")
    return text if len(text) <= NAME_CHARS else text[:NAME_CHARS - 1] + "…"


class Recording:
    """What :func:`recording` yields: ``phase(name, fn)`` runs ``fn`` as a named span of the host
    lane; ``activities`` is filled when the block ends, every start from :meth:`begin`'s moment."""

    def __init__(self, cupti: Any) -> None:
        self._cupti = cupti
        self.t0: int | None = None
        self.phases: list[tuple[str, int, int]] = []
        self.activities: list[Activity] = []

    def begin(self) -> None:
        """The call starts now: time 0 of its timeline."""
        self.t0 = self._cupti.get_timestamp()

    def phase(self, name: str, fn: Any) -> Any:
        if self.t0 is None:
            self.begin()
        a = self._cupti.get_timestamp()
        value = fn()
        self.phases.append((name, a, self._cupti.get_timestamp()))
        return value


def _api_name(cupti: Any, record: Any) -> str:
    runtime = record.kind == cupti.ActivityKind.RUNTIME
    domain = cupti.CallbackDomain.RUNTIME_API if runtime else cupti.CallbackDomain.DRIVER_API
    try:
        name = str(cupti.get_callback_name(domain, record.cbid))
    except Exception:  # noqa: BLE001 - an id this CUPTI cannot name
        return f"{'runtime' if runtime else 'driver'} call {record.cbid}"
    return re.sub(r"_v\d+$", "", name)


def _activity(cupti: Any, what: str, r: Any, t0: int) -> Activity:
    nbytes, memory = 0, ""
    if what == "kernel":
        name = r.name
    elif what == "copy":
        kind = cupti.ActivityMemcpyKind(r.copy_kind).name.lower()
        name, nbytes = kind, int(r.bytes)
        host = r.src_kind if kind.startswith("htod") else r.dst_kind if kind.startswith("dtoh") else None
        memory = cupti.ActivityMemoryKind(host).name.lower() if host is not None else "device"
    else:
        name, nbytes = "memset", int(getattr(r, "bytes", 0))
    return Activity(what, _short(name), (r.end - r.start) * 1e-9, (r.start - t0) * 1e-9,
                    int(getattr(r, "stream_id", -1)), int(getattr(r, "correlation_id", 0)), nbytes, memory)


@contextmanager
def recording(api: bool = True) -> Iterator[Recording]:
    """Records the GPU activity inside the block, and with ``api`` the runtime and driver calls that
    launched it or waited for it; the :class:`Recording` it yields is filled on exit (the caller
    synchronises its device work before leaving the block)."""
    cupti = _cupti()
    kinds = {cupti.ActivityKind.CONCURRENT_KERNEL: "kernel", cupti.ActivityKind.MEMCPY: "copy",
             cupti.ActivityKind.MEMSET: "memset"}
    if api:
        # Both APIs: CuPy launches kernels through the driver (cuLaunchKernel) but copies through
        # the runtime (cudaMemcpyAsync), and a copy's record carries the runtime call's id. On the
        # H200 the records cost 0.87 µs a launch for the GPU's, 0.25 µs more for the runtime's and
        # 0.19 µs more for the driver's (2000 small CuPy launches: 16.2 ms bare, 18.8 ms with all).
        kinds[cupti.ActivityKind.RUNTIME] = "api"
        kinds[cupti.ActivityKind.DRIVER] = "api"
    rec = Recording(cupti)
    _register(cupti)
    cupti.activity_flush_all(1)          # what an earlier block left is not this one's
    with _lock:
        _records.clear()
    enabled = []
    try:
        for kind in kinds:
            cupti.activity_enable(kind)
            enabled.append(kind)
        yield rec
        cupti.activity_flush_all(1)
    finally:
        for kind in enabled:
            cupti.activity_disable(kind)
    with _lock:
        records, _records[:] = list(_records), []
    t0 = rec.t0 if rec.t0 is not None else min((r.start for r in records), default=0)
    gpu, calls = [], []
    for r in sorted(records, key=lambda r: getattr(r, "start", 0)):
        what = kinds.get(r.kind)
        if what == "api":
            calls.append(r)
        elif what is not None:
            gpu.append(_activity(cupti, what, r, t0))
    rec.activities.extend(gpu)
    # The host lane keeps the API calls that launched the GPU work recorded, and the waits: the
    # runtime and the driver record hundreds of other calls (context queries) that say nothing.
    launched = {a.correlation for a in gpu}
    kept = 0
    for r in calls:
        name = _api_name(cupti, r)
        if (r.correlation_id in launched or "Synchronize" in name) and kept < API_RECORDS:
            rec.activities.append(Activity("api", name, (r.end - r.start) * 1e-9, (r.start - t0) * 1e-9,
                                           -1, int(r.correlation_id)))
            kept += 1
    rec.activities.extend(Activity("phase", name, (b - a) * 1e-9, (a - t0) * 1e-9) for name, a, b in rec.phases)


def encode(activities: list[Activity]) -> str:
    """The row's ``kernels`` cell, compact JSON in launch order: [kind, name, seconds] for a record
    without its place in time, and [kind, name, seconds, start, stream, correlation, bytes, memory]
    for one of a timeline."""
    import json

    def entry(a: Activity) -> list:
        head = [a.kind, a.name, a.seconds]
        return head if math.isnan(a.start) else head + [a.start, a.stream, a.correlation, a.nbytes, a.memory]
    return json.dumps([entry(a) for a in activities], separators=(",", ":"))


def decode(cell: Any) -> list[Activity]:
    """The activities of a row's ``kernels`` cell; [] for an empty or unreadable one (an older file)."""
    import json
    if not isinstance(cell, str) or not cell.startswith("["):
        return []
    try:
        out = []
        for e in json.loads(cell):
            if len(e) == 3:
                out.append(Activity(str(e[0]), str(e[1]), float(e[2])))
            else:
                k, n, s, t, stream, corr, nbytes, memory = e
                out.append(Activity(str(k), str(n), float(s), float(t), int(stream), int(corr), int(nbytes),
                                    str(memory)))
        return out
    except (ValueError, TypeError):
        return []


def summary(activities: list[Activity], limit: int = 4) -> str:
    """'3 kernels (12.1 µs): cupy_multiply 5.0 µs, cupy_power 4.1 µs, ...; 1 copy' for hover and lessons."""
    from workbench.core.units import seconds as fmt_time
    kernels = [a for a in activities if a.kind == "kernel"]
    others = [a for a in activities if a.kind in ("copy", "memset")]
    if not kernels and not others:
        return ""
    total = sum(a.seconds for a in kernels)
    head = f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''} ({fmt_time(total)})"
    named = ", ".join(f"{a.name} {fmt_time(a.seconds)}" for a in kernels[:limit])
    more = f", {len(kernels) - limit} more" if len(kernels) > limit else ""
    rest = f"; {len(others)} cop{'ies' if len(others) != 1 else 'y'}/memsets" if others else ""
    return head + (f": {named}{more}" if named else "") + rest
