"""The kernels one call launches, each with its name and GPU time, from CUPTI's activity records
through NVIDIA's ``cupti-python`` (issue 29).

Why CUPTI: it is what Nsight Systems and the frameworks' profilers read; a kernel record carries
the name the library gave the kernel and its start and end on the GPU's clock, whichever library
launched it (CuPy, Numba CUDA, cuDF, cuBLAS, CUB). No other source in a Python process sees all of
them. Recording serialises nothing (``CONCURRENT_KERNEL``), but it costs launch time, so it runs
in an untimed pass of its own after the point's rounds, never around a timed call.
"""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

log = logging.getLogger(__name__)

#: Longest kernel name kept: C++ templates (CUB, cuBLAS) run to hundreds of characters.
NAME_CHARS = 96


@dataclass(frozen=True)
class Activity:
    """One record: a kernel, a copy or a memset, and its GPU time."""
    kind: str        # "kernel", "copy" or "memset"
    name: str
    seconds: float


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


@contextmanager
def recording() -> Iterator[list]:
    """Records the GPU activity inside the block; the list it yields is filled on exit (the caller
    synchronises its device work before leaving the block)."""
    cupti = _cupti()
    kinds = {cupti.ActivityKind.CONCURRENT_KERNEL: "kernel", cupti.ActivityKind.MEMCPY: "copy",
             cupti.ActivityKind.MEMSET: "memset"}
    found: list[Activity] = []
    _register(cupti)
    cupti.activity_flush_all(1)          # what an earlier block left is not this one's
    with _lock:
        _records.clear()
    enabled = []
    try:
        for kind in kinds:
            cupti.activity_enable(kind)
            enabled.append(kind)
        yield found
        cupti.activity_flush_all(1)
    finally:
        for kind in enabled:
            cupti.activity_disable(kind)
    with _lock:
        records, _records[:] = list(_records), []
    for r in sorted(records, key=lambda r: getattr(r, "start", 0)):
        what = kinds.get(r.kind)
        if what is None:
            continue
        name = r.name if what == "kernel" else (
            cupti.ActivityMemcpyKind(r.copy_kind).name.lower() if what == "copy" else "memset")
        found.append(Activity(what, _short(name), (r.end - r.start) * 1e-9))


def encode(activities: list[Activity]) -> str:
    """The row's ``kernels`` cell: [[kind, name, seconds], ...] in launch order, compact JSON."""
    import json
    return json.dumps([[a.kind, a.name, a.seconds] for a in activities], separators=(",", ":"))


def decode(cell: Any) -> list[Activity]:
    """The activities of a row's ``kernels`` cell; [] for an empty or unreadable one (an older file)."""
    import json
    if not isinstance(cell, str) or not cell.startswith("["):
        return []
    try:
        return [Activity(str(k), str(n), float(s)) for k, n, s in json.loads(cell)]
    except (ValueError, TypeError):
        return []


def summary(activities: list[Activity], limit: int = 4) -> str:
    """'3 kernels (12.1 µs): cupy_multiply 5.0 µs, cupy_power 4.1 µs, ...; 1 copy' for hover and lessons."""
    from workbench.core.units import seconds as fmt_time
    kernels = [a for a in activities if a.kind == "kernel"]
    others = [a for a in activities if a.kind != "kernel"]
    if not kernels and not others:
        return ""
    total = sum(a.seconds for a in kernels)
    head = f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''} ({fmt_time(total)})"
    named = ", ".join(f"{a.name} {fmt_time(a.seconds)}" for a in kernels[:limit])
    more = f", {len(kernels) - limit} more" if len(kernels) > limit else ""
    rest = f"; {len(others)} cop{'ies' if len(others) != 1 else 'y'}/memsets" if others else ""
    return head + (f": {named}{more}" if named else "") + rest
