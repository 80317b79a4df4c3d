"""The transfer chart, "Where GPU end-to-end time goes": how each GPU series' call splits into
host to device, compute and device to host.

A few series are stacked bars, one per series at each size: every phase's share is read off
its bar. Past :data:`MOST_BARS` series they are lines instead: seven backends at nine sizes
were 63 bars in a third of a 1280x720 window, which no one at the back of a room could read
(issue 38). Each series then draws the share in copies (both ways, solid) and the share from
host to device alone (dashed): device to host is the gap between them, compute what is left
above the solid line. Both forms share the category size axis and the 0-100 % axis.
"""
from __future__ import annotations

import numpy as np

from workbench.views import palette
from workbench.views.chart_kinds import chart_kind
from workbench.views.spec import ticks
from workbench.views.spec.kinds import KEY_COLOR, Context
from workbench.views.spec.model import DASHED, INK, SOLID, Axis, Bars, ChartSpec, LegendEntry, Series

PHASES = ("h2d", "compute", "d2h")
PHASE_COLUMNS = {"h2d": "h2d_s", "compute": "compute_median_s", "d2h": "d2h_s"}
#: The most series drawn as bars; more are drawn as lines of their shares.
MOST_BARS = 2
#: What the two lines of a series stand for (the key to their styles).
COPIES, H2D_ALONE = "copies (the rest: compute)", "host to device"


def shares(s, c: Context) -> tuple:
    """The rows of ``s`` with all three phases measured, and each phase's share of their sum, in %."""
    columns = list(PHASE_COLUMNS.values())
    r = s.rows[np.isfinite(s.rows[columns].to_numpy(float)).all(axis=1)]
    parts = {p: r[PHASE_COLUMNS[p]].to_numpy(float) for p in PHASES}
    total = sum(parts.values())
    total = np.where(total > 0, total, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        return r, {p: np.nan_to_num(100 * parts[p] / total) for p in PHASES}


@chart_kind("transfer", short_title="Where GPU time goes", short_y="%", order=3)
def transfer(c: Context) -> ChartSpec:
    """Per size, each GPU series' end-to-end time split into h2d, compute, d2h, in %: bars for a
    few series, lines for more (:data:`MOST_BARS`)."""
    label, in_bytes = c.size_label
    title, y_label = "Where GPU end-to-end time goes", "share of end-to-end (%)"
    columns = list(PHASE_COLUMNS.values())
    drawn = [s for s in c.series
             if c.moves(s) and np.isfinite(s.rows[columns].to_numpy(float)).all(axis=1).any()]
    if not drawn:
        return ChartSpec("transfer", title, Axis(label, "category", "category"), Axis(y_label, "percent", "linear"),
                         caption=c.caption, footnote=c.left_out,
                         empty="No GPU backend in these results:\nCPU backends move no data, all their time is compute.")
    sizes = sorted({int(v) for s in drawn for v in s.rows["size"]})
    if len(drawn) > MOST_BARS:
        return _lines(c, drawn, sizes, title, y_label)
    width = 0.84 / len(drawn)
    bars = []
    for j, s in enumerate(drawn):
        r, share = shares(s, c)
        x = np.array([sizes.index(int(v)) for v in r["size"]]) - 0.42 + width * (j + 0.5)
        bars.append(Bars(c.key("bars", s), s.label, s.backend, s.set_index, tuple(x.tolist()), width * 0.92,
                         tuple((p, tuple(share[p].tolist())) for p in PHASES), palette.color(s.backend, INK),
                         s.set_index if c.compare else 0, tuple(r["size"].to_numpy(float).tolist())))
    legend = [LegendEntry(palette.PHASE_LABELS[p], "phase", palette.PHASE_COLORS[p], "", patch=True) for p in PHASES]
    if c.compare:      # each backend's outline and each set's pattern, as the lines' legend does
        legend += [LegendEntry(b, "series", INK, "", patch=True, outline=palette.color(b, INK))
                   for b in dict.fromkeys(s.backend for s in drawn)]
        legend += [LegendEntry(c.labels[i] or f"set {i + 1}", "series", INK, "", patch=True, outline=INK, pattern=i)
                   for i in sorted({s.set_index for s in drawn})]
    else:
        legend += [LegendEntry(s.label, "series", INK, "", patch=True, outline=palette.color(s.backend, INK))
                   for s in drawn]
    x = ticks.category_axis(f"{label}; one bar per GPU backend, outlined in its colour", sizes, in_bytes)
    return ChartSpec("transfer", title, x, ticks.percent_axis(y_label), bars=tuple(bars), legend=tuple(legend),
                     caption=c.caption, footnote=c.left_out)


def _lines(c: Context, drawn: list, sizes: list[int], title: str, y_label: str) -> ChartSpec:
    """Many series: each one's share in copies (solid) and from host to device alone (dashed),
    in its own colour and marker, at the sizes of the category axis."""
    label, in_bytes = c.size_label
    series = []
    for s in drawn:
        r, share = shares(s, c)
        x = np.array([sizes.index(int(v)) for v in r["size"]], dtype=float)
        size = tuple(r["size"].to_numpy(float).tolist())
        for role, y, dashed in (("copies", share["h2d"] + share["d2h"], False), ("h2d", share["h2d"], True)):
            series.append(Series(c.key(role, s), s.label, role, s.backend, s.variant, s.set_index,
                                 tuple(x.tolist()), tuple(np.asarray(y, float).tolist()),
                                 palette.color(s.backend, INK), c.marker(s), c.line_style(s, dashed),
                                 not dashed, sizes=size))
    legend = c.identities(drawn) + [LegendEntry(COPIES, "key", KEY_COLOR, SOLID),
                                    LegendEntry(H2D_ALONE, "key", KEY_COLOR, DASHED, "o", filled=False)]
    x = ticks.category_axis(label, sizes, in_bytes)
    return ChartSpec("transfer", title, x, ticks.percent_axis(y_label), series=tuple(series), legend=tuple(legend),
                     caption=c.caption, footnote=c.left_out)
