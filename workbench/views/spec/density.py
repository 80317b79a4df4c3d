"""Which points of a dense series keep their marker: decided once, in the spec, so that the window
and the export draw the same markers (issue 38: 5,000 points).

Ten series of 500 sizes put a marker every pixel or so of a window's chart: markers a reader
cannot tell apart, which only hid the lines and cost most of each repaint. A series whose markers
would touch is said ``dense``: both renderers draw its line through every point (the line and
the hover keep all the data) and a marker only on the points of ``marked``: as many as a reader
can tell apart, plus every point a reader needs to find, which is never thinned away:

- the first and last point of each run of the line (where a point was left out, the line stops:
  an isolated point has no line to show it);
- each point ringed as within the noise of the baseline;
- each outlier: a point that stands off the line of its neighbours by more than a marker's room.

Distances are taken on the axes' own scales, in the pixels of a small window's plot
(``PLOT_PX``): the choice is the same at any size the chart is drawn (an export, larger, shows
its markers further apart), and markers that a reader can tell apart there are so everywhere.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from workbench.views.spec.model import Axis, ChartSpec, Series

#: The plot area of a chart of the window's grid at 1280x720 (width, height in pixels): the
#: smallest a chart is read at.
PLOT_PX = (300.0, 180.0)
#: Markers (7 px) closer than this, in those pixels, run together.
SPACING = 9.0
#: A point further than this (pixels) above or below the median of its neighbours is an outlier.
OUTLIER = 1.5 * SPACING
#: The neighbours on each side an outlier is told from.
NEIGHBOURS = 2


def thinned(chart: ChartSpec) -> ChartSpec:
    """``chart`` with each series whose markers would overlap said ``dense``, with its ``marked``
    points; the spec as it was where no series is dense."""
    if not chart.series or chart.x.range is None or chart.y.range is None:
        return chart
    series = tuple(thin(s, chart.x, chart.y) for s in chart.series)
    if all(a is b for a, b in zip(series, chart.series)):
        return chart
    return replace(chart, series=series)


def thin(s: Series, x: Axis, y: Axis) -> Series:
    """The series, ``dense`` with the points that keep a marker where some would overlap; as it
    was where none would (every point keeps its marker) or it has no markers (a roof)."""
    n = len(s.xs)
    if not s.marker or n < 3:
        return s
    u, v = share(x, s.xs) * PLOT_PX[0], share(y, s.ys) * PLOT_PX[1]
    must = np.zeros(n, dtype=bool)
    must[[0, n - 1]] = True
    for b in s.breaks:                     # the line stops after b: both ends of the gap
        must[b] = True
        if b + 1 < n:
            must[b + 1] = True
    if len(s.ringed) == n:
        must |= np.asarray(s.ringed, dtype=bool)
    must |= outliers(v)
    keep = spaced(u.tolist(), v.tolist(), must.tolist())
    if len(keep) == n:
        return s
    return replace(s, dense=True, marked=tuple(keep))


def share(a: Axis, values) -> np.ndarray:
    """Where each value lies across the axis: 0 at its low end, 1 at its high end."""
    values = np.asarray(values, dtype=float)
    lo, hi = a.range
    if a.log:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.log(values) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def outliers(v: np.ndarray) -> np.ndarray:
    """The points further than OUTLIER off the median of their NEIGHBOURS on each side (``v``:
    heights in pixels)."""
    k, n = NEIGHBOURS, len(v)
    if n < 2 * k + 1:
        return np.zeros(n, dtype=bool)
    windows = sliding_window_view(np.pad(v, k, mode="edge"), 2 * k + 1)
    around = np.median(np.delete(windows, k, axis=1), axis=1)
    with np.errstate(invalid="ignore"):
        return np.abs(v - around) > OUTLIER


def spaced(u: list[float], v: list[float], must: list[bool]) -> list[int]:
    """The points kept in order: each that must be, and each at least SPACING from the last kept."""
    keep: list[int] = []
    lu = lv = math.inf
    for i, (a, b, needed) in enumerate(zip(u, v, must)):
        if needed or math.hypot(a - lu, b - lv) >= SPACING:
            keep.append(i)
            lu, lv = a, b
    return keep
