"""A point's timeline as a Chrome trace (the Trace Event Format), which chrome://tracing, Perfetto
(ui.perfetto.dev and its trace processor) and Speedscope open.

One process for the point, one thread (track) per lane of ``workbench.views.timeline``, each bar
a complete event (``"ph": "X"``, microseconds from the call's start) with its stream, bytes and
CUPTI correlation id in ``args``; each API call that launched GPU work is tied to that work by
a flow (``"s"`` and ``"f"`` events with the correlation id), as Nsight Systems draws its arrows.
Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from workbench.views import timeline as layout

PID = 1


def chrome_trace(row: Mapping[str, Any], source: str = "") -> dict:
    """The trace of one row's timeline, as a dict ready for ``json.dump``."""
    tl = layout.of_row(row)
    if not tl.spans:
        raise ValueError(f"{tl.title}: {tl.note or 'nothing to lay out'}")
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
                           "args": {"name": tl.title}}]
    for i, lane in enumerate(tl.lanes):
        events.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": i, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": i, "args": {"sort_index": i}})
    launched: dict[int, Any] = {}
    for s in tl.spans:
        if s.kind in ("kernel", "copy", "memset") and s.correlation:
            launched.setdefault(s.correlation, s)
    for s in tl.spans:
        args: dict[str, Any] = {"what": s.hover}
        if s.stream >= 0:
            args["stream"] = s.stream
        if s.correlation:
            args["correlation"] = s.correlation
        events.append({"name": s.name, "cat": s.group, "ph": "X", "pid": PID, "tid": s.lane,
                       "ts": s.start * 1e6, "dur": max(s.end - s.start, 0.0) * 1e6, "args": args})
        work = launched.get(s.correlation) if s.kind == "api" else None
        if work is not None:
            flow = {"name": "launch", "cat": "correlation", "id": s.correlation, "pid": PID}
            events.append({**flow, "ph": "s", "tid": s.lane, "ts": s.start * 1e6})
            events.append({**flow, "ph": "f", "bp": "e", "tid": work.lane, "ts": work.start * 1e6})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"producer": "GPU Workbench", "point": tl.title, "source": tl.source, "results": source}}


def write(row: Mapping[str, Any], path: Any, source: str = "") -> None:
    """The trace of ``row`` written to ``path`` whole or not at all (``workbench.core.atomic``)."""
    from workbench.core import atomic
    data = json.dumps(chrome_trace(row, source), indent=None, separators=(",", ":"), allow_nan=False).encode()
    with atomic.replacing(path) as f:
        f.write(data)
