"""The markers of a chart's dense series: a curve draws its line through every point and no
marker, and one layer draws the markers each series' spec keeps
(``workbench.views.spec.density``), as the exported chart's ``markevery`` does.

At 10 series x 500 sizes, a marker on every point cost most of a chart's repaint (issue 38) and
showed nothing a reader could tell apart; the curve keeps every point, so the hover still finds
each one (``panels.series_chart.Chart.point_at`` reads the curves).
"""
from __future__ import annotations

import logging

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from panels import style
from panels.marker_layer import MarkerLayer
from panels.style import Look
from workbench.views import spec

log = logging.getLogger(__name__)


def marker_pen(colour: QColor | str, look: Look):
    """The outline of a series' markers, as wide for every chart and look."""
    return pg.mkPen(colour, width=max(1.5, look.line_px / 2))


def style_curve(item: pg.PlotDataItem, s: spec.Series, look: Look) -> None:
    """A curve's line and markers in the series' style: hollow markers on dashed lines (the two
    series of a backend stay apart where they touch); none on a dense series' curve (its markers
    are ``SeriesMarkers``'), nor on a roof of the roofline chart."""
    c = style.ink(s.color, look)
    # A dense line turns every pixel or two: smoothed, its edges took two thirds of a repaint
    # (docs/PERFORMANCE.md, issue 38) and read no better. setPen hands the option on.
    item.opts["antialias"] = not s.dense
    item.setPen(style.pen(s.color, look, s.line))
    item.setSymbol(None if s.dense else s.marker or None)
    item.setSymbolSize(look.marker_px)
    item.setSymbolPen(marker_pen(c, look))
    item.setSymbolBrush(pg.mkBrush(c) if s.filled else None)


class SeriesMarkers:
    """The markers of ``chart``'s dense series, every one in one ``MarkerLayer`` (made at the first
    dense spec); a series no longer dense is dropped from it. ``log``: the chart's axes are log10
    (markers, unlike a curve, are placed in the view's coordinates)."""

    def __init__(self, chart: pg.PlotWidget, log_axes: bool) -> None:
        self.chart, self.log_axes = chart, log_axes
        self.layer: MarkerLayer | None = None
        self.shown: dict = {}        # series key -> the dense spec.Series its markers draw

    def show(self, s: spec.Series, look: Look) -> None:
        """The markers ``s`` keeps, where it is dense; none of its own where it is not."""
        if not s.dense:
            if self.shown.pop(s.key, None) is not None:
                self.layer.drop(s.key)
            return
        if self.layer is None:
            self.layer = MarkerLayer()
            self.layer.setObjectName("markers")
            # Over every line: a marker tells its set apart, and a line of another set drawn
            # after it would cut it.
            self.layer.setZValue(0.5)
            self.chart.addItem(self.layer)
        at = np.asarray(s.marked, dtype=int)
        x, y = np.asarray(s.xs, dtype=float)[at], np.asarray(s.ys, dtype=float)[at]
        if self.log_axes:
            with np.errstate(divide="ignore", invalid="ignore"):
                x, y = np.log10(x), np.log10(y)
        c = style.ink(s.color, look)
        self.layer.set(s.key, x, y, s.marker, look.marker_px, marker_pen(c, look),
                       pg.mkBrush(c) if s.filled else None, name=f"markers-{s.role}:{s.name}")
        self.shown[s.key] = s

    def restyle(self, look: Look) -> None:
        """Each series' markers in ``look`` (its colours and sizes)."""
        for s in list(self.shown.values()):
            self.show(s, look)

    def keep(self, keys) -> None:
        """Only the markers of the series ``keys``: the others dropped."""
        for key in [k for k in self.shown if k not in keys]:
            self.layer.drop(key)
            del self.shown[key]

    def clear(self) -> None:
        self.keep(())

    def drawn(self, curves: dict, meta: dict) -> dict:
        """{key: (x, y)} of the points drawn with a marker, in data units: a dense series' kept
        ones, every point of another (of a curve that has markers)."""
        out = {}
        for key, curve in curves.items():
            s = meta.get(key)
            if s is None or curve.xData is None or not len(curve.xData):
                continue
            if key in self.shown:
                x, y = self.layer.points(key)
                out[key] = (10 ** x, 10 ** y) if self.log_axes else (x, y)
            elif curve.opts["symbol"] is not None:
                out[key] = (np.asarray(curve.xData, dtype=float), np.asarray(curve.yData, dtype=float))
        return out
