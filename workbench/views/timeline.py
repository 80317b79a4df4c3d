"""Where one call's time goes: a point's activities laid out in lanes (issue 37).

A GPU point's row carries one recorded call (``kernels``, CUPTI's records through
``workbench.measure.gpu.kernels``): each kernel, copy and memset with its start and stream, the
driver calls that launched them or waited, and the engine's phases on the host. Here they become
lanes: the host's phases, the host's API calls, then one lane per CUDA stream in the order the
streams first ran. A CPU point has no records: its stages (a pipeline's) in the order they ran,
else its one compute phase, each of its median length. A GPU row of an older file, or of a
machine without cupti-python, gets its three timed phases back to back, and says so.

No Qt and no matplotlib: the timeline chart (``workbench.views.spec.timeline``) and the Chrome
trace export (``workbench.views.trace``) both read this.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from workbench.core import units

#: What a bar stands for, which gives its colour: the transfer chart's three phases, then the rest.
GROUPS = ("h2d", "compute", "d2h", "memset", "device copy", "API call", "host phase")
HOST_PHASES = "host: phases"
HOST_CALLS = "host: API calls"


@dataclass(frozen=True)
class Span:
    """One bar: ``lane`` (index into :attr:`Timeline.lanes`), start and end in seconds from the
    call's start, its group (colour), its name, and what its hover says."""
    lane: int
    start: float
    end: float
    group: str
    name: str
    hover: str
    stream: int = -1
    correlation: int = 0
    kind: str = ""            # the record's kind: kernel, copy, memset, api, phase, stage


@dataclass(frozen=True)
class Timeline:
    """A point's call, laid out: its lanes top to bottom and its spans; ``source`` says where the
    spans come from (CUPTI's records, a CPU point's stages, or the timed phases alone)."""
    title: str
    lanes: tuple[str, ...]
    spans: tuple[Span, ...]
    source: str
    note: str = ""

    @property
    def end(self) -> float:
        return max((s.end for s in self.spans), default=0.0)


def _known(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def point_title(row: Mapping[str, Any]) -> str:
    variant = f" ({row.get('variant')})" if row.get("variant") else ""
    return (f"{row.get('workload', '')} on {row.get('backend', '')}{variant} at "
            f"{units.size(int(row.get('size', 0) or 0))}, {row.get('dtype', '')}")


def _group(kind: str, name: str) -> str:
    if kind == "kernel":
        return "compute"
    if kind == "copy":
        return "h2d" if name.startswith("htod") else "d2h" if name.startswith("dtoh") else "device copy"
    if kind == "memset":
        return "memset"
    if kind == "api":
        return "API call"
    return name if name in ("h2d", "compute", "d2h") else "host phase"


def _hover(kind: str, name: str, start: float, seconds: float, stream: int, nbytes: int = 0,
           memory: str = "", correlation: int = 0) -> str:
    where = f"stream {stream}" if stream >= 0 else "host"
    head = {"kernel": "kernel", "copy": "copy", "memset": "memset", "api": "API call",
            "phase": "phase", "stage": "stage"}.get(kind, kind)
    text = f"{head} {name}: {units.seconds(seconds)} from {units.seconds(start)} ({where})"
    if nbytes:
        rate = f", {nbytes / seconds / 1e9:.3g} GB/s" if seconds > 0 else ""
        text += f"; {units.nbytes(nbytes)}{' ' + memory if memory else ''}{rate}"
    if correlation:
        text += f"; correlation {correlation}"
    return text


def of_row(row: Mapping[str, Any]) -> Timeline:
    """The timeline of one row (see the module's docstring)."""
    from workbench.measure.gpu.kernels import decode
    title = point_title(row)
    if row.get("status") not in (None, "ok"):
        return Timeline(title, (), (), "", f"not measured ok ({row.get('status')}): nothing to lay out")
    records = [a for a in decode(row.get("kernels"))
               if math.isfinite(a.start) and math.isfinite(a.seconds) and a.seconds >= 0]
    if records:
        return _recorded(title, records)
    stages = _stages(row)
    if stages:
        return _sequence(title, "host", [(name, s, "stage") for name, s in stages],
                         "the stages of the median call, back to back (each its own median)")
    gpu = isinstance(row.get("host_memory"), str) and bool(row.get("host_memory"))
    compute = row.get("compute_median_s")
    total = row.get("total_median_s")
    from workbench.views.overlap import is_overlapped
    if gpu and is_overlapped(row) and _known(total):
        # Its phases ran at once: laid end to end they would draw a call longer than it took.
        return _sequence(title, "GPU (the overlapped call)", [("call", float(total), "phase")],
                         "the overlapped call's median, one bar: no CUPTI records in this row (cupti-python "
                         "missing where it ran, or an older file)")
    if gpu:
        parts = [(p, row.get(c)) for p, c in (("h2d", "h2d_s"), ("compute", "compute_median_s"), ("d2h", "d2h_s"))]
        parts = [(p, float(v), "phase") for p, v in parts if _known(v) and v > 0]
        return _sequence(title, "GPU (timed phases)", parts,
                         "the timed phases back to back: no CUPTI records in this row (cupti-python "
                         "missing where it ran, or an older file)")
    if _known(compute):
        return _sequence(title, "host", [("compute", float(compute), "phase")], "its one phase, the median call")
    return Timeline(title, (), (), "", "nothing measured to lay out")


def _stages(row: Mapping[str, Any]) -> list[tuple[str, float]]:
    from workbench.results.rows import decode_stages
    try:
        return [(k, float(v)) for k, v in decode_stages(row.get("stages")).items() if _known(v) and v >= 0]
    except (ValueError, TypeError):
        return []


def _sequence(title: str, lane: str, parts: Sequence[tuple[str, float, str]], source: str) -> Timeline:
    spans, t = [], 0.0
    for name, seconds, kind in parts:
        spans.append(Span(0, t, t + seconds, _group("phase", name) if kind == "phase" else "host phase", name,
                          _hover(kind, name, t, seconds, -1), kind=kind))
        t += seconds
    return Timeline(title, (lane,), tuple(spans), source)


def _recorded(title: str, records: Sequence[Any]) -> Timeline:
    phases = [a for a in records if a.kind == "phase"]
    calls = [a for a in records if a.kind == "api"]
    gpu = [a for a in records if a.kind not in ("phase", "api")]
    streams: list[int] = []
    for a in sorted(gpu, key=lambda a: a.start):
        if a.stream not in streams:
            streams.append(a.stream)
    lanes = ([HOST_PHASES] if phases else []) + ([HOST_CALLS] if calls else []) + [f"stream {s}" for s in streams]
    spans = []
    for a in records:
        if a.kind == "phase":
            lane = lanes.index(HOST_PHASES)
        elif a.kind == "api":
            lane = lanes.index(HOST_CALLS)
        else:
            lane = lanes.index(f"stream {a.stream}")
        spans.append(Span(lane, a.start, a.start + a.seconds, _group(a.kind, a.name), a.name,
                          _hover(a.kind, a.name, a.start, a.seconds, a.stream, a.nbytes, a.memory, a.correlation),
                          a.stream, a.correlation, a.kind))
    n = len(gpu)
    note = (f"{n} GPU activit{'ies' if n != 1 else 'y'} on {len(streams)} stream{'s' if len(streams) != 1 else ''}"
            + (f", {len(calls)} API calls" if calls else ""))
    return Timeline(title, tuple(lanes), tuple(sorted(spans, key=lambda s: (s.lane, s.start))),
                    "one call recorded by CUPTI, after the timed rounds", note)


def copy_seconds(timeline: Timeline, direction: str) -> float:
    """The GPU time of the copies one way (``h2d`` or ``d2h``) in a recorded timeline: what the
    row's ``h2d_s`` / ``d2h_s`` time with events, within the copies' own overheads."""
    return sum(s.end - s.start for s in timeline.spans if s.kind == "copy" and s.group == direction)


def pick(rows: Sequence[Mapping[str, Any]], backend: str | None = None, size: int | None = None,
         variant: str | None = None) -> Mapping[str, Any] | None:
    """The row a timeline is drawn for: the one named (backend, size, variant; any left out is
    free), else a GPU row where there is one, at the largest size, with the most records."""
    from workbench.measure.gpu.kernels import decode

    def fits(r: Mapping[str, Any]) -> bool:
        return ((backend is None or r.get("backend") == backend) and (size is None or int(r.get("size", -1)) == size)
                and (variant is None or (r.get("variant") or "") == variant))
    candidates = [r for r in rows if fits(r) and r.get("status") == "ok"] or [r for r in rows if fits(r)]
    if not candidates:
        return None
    if backend is not None and size is not None:
        return candidates[0]
    return max(candidates, key=lambda r: (bool(r.get("host_memory")), int(r.get("size", 0) or 0),
                                          len(decode(r.get("kernels")))))
