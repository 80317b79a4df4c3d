"""The timeline chart: where one point's call spends its time, lane by lane (``workbench.views.timeline``).

One point of the sets, chosen by ``Context.point`` (backend, size, variant) or, left open, the
one ``timeline.pick`` takes. Lanes top to bottom: the host's phases, the host's API calls,
then each CUDA stream; time runs in seconds from the call's start. Bars are coloured as the
transfer chart colours h2d, compute and d2h, and named in their hover (the window) and in the
legend's groups (both renderers).
"""
from __future__ import annotations

from workbench.core import units
from workbench.views import palette
from workbench.views import timeline as layout
from workbench.views.chart_kinds import chart_kind
from workbench.views.spec import ticks
from workbench.views.spec.kinds import Context
from workbench.views.spec.model import Axis, ChartSpec, LegendEntry, Span

TITLE = "Timeline"


def chosen(sets, point: tuple | None):
    """The row a timeline of ``sets`` is drawn for, with its set's index; (None, -1) where none fits.
    ``point``: (backend, size, variant[, set index]), any of them None for "any"."""
    backend, size, variant, only = (tuple(point) + (None,) * 4)[:4] if point is not None else (None,) * 4
    for i, rs in enumerate(sets):
        if only is not None and i != only:
            continue
        row = layout.pick(rs.frame.to_dict("records"), backend, size, variant)
        if row is not None:
            return row, i
    return None, -1


@chart_kind("timeline", short_title="Timeline", short_y="lane", order=8)
def timeline(c: Context) -> ChartSpec:
    row, _ = chosen(c.sets, c.point)
    if row is None:
        wanted = "" if c.point is None else " for " + ", ".join(str(v) for v in c.point[:3] if v is not None)
        return ChartSpec("timeline", TITLE, Axis("time from the call's start", "seconds", "linear"),
                         Axis("", "category", "category"), caption=c.caption,
                         empty=f"No point to lay out{wanted}: choose one of the results (a backend and a size).")
    tl = layout.of_row(row)
    n = len(tl.lanes)
    spans = tuple(Span(n - 1 - s.lane, s.start, s.end, palette.TIMELINE_COLORS[s.group], s.group, s.hover)
                  for s in tl.spans)
    groups = [g for g in layout.GROUPS if any(s.group == g for s in tl.spans)]
    legend = tuple(LegendEntry(palette.TIMELINE_LABELS[g], "phase", palette.TIMELINE_COLORS[g], "", patch=True)
                   for g in groups)
    # What was recorded goes under the chart with its source, not in a corner of the plot: a
    # corner note stood over the last stream's bars.
    said = "; ".join(t for t in (tl.source, tl.note) if t)
    variant = f" ({row.get('variant')})" if row.get("variant") else ""
    title = f"{TITLE}: {row.get('backend', '')}{variant} at {units.size(int(row.get('size', 0) or 0))}"
    return ChartSpec("timeline", title, ticks.time_axis("time from the call's start", tl.end),
                     ticks.lane_axis("", list(tl.lanes)), legend=legend, caption=c.caption or said,
                     spans=spans,
                     empty="" if spans else "Nothing measured to lay out for this point.")
