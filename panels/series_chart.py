"""A chart of series: curves, bands, rings and marks kept per series key and updated in place with
``setData`` as points arrive (pyqtgraph's PlotSpeedTest pattern), and the point under the pointer."""
from __future__ import annotations

import logging
import math
from typing import Iterator, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFont

from panels import style
from panels.dense_line import DenseCurve, prepare
from panels.marker_layer import MarkerLayer
from panels.series_markers import SeriesMarkers, style_curve
from panels.spec_chart import SpecChart
from panels.style import Look
from workbench.views import bands, spec
from workbench.views.spec import ChartSpec

log = logging.getLogger(__name__)
HOVER_PX = 14            # how close the pointer must be to a point to show its values


def positive(a) -> np.ndarray:
    """Log axes cannot show zero or NaN: such values become NaN, and are left out when drawn."""
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, a, np.nan)


def nearest(vb: pg.ViewBox, xs, ys, scene_pos: QPointF) -> tuple[int, float]:
    """The index of the point of (``xs``, ``ys``) (data units, drawn on log10 axes) nearest
    ``scene_pos`` and its distance in pixels (inf where none can be drawn); of equals, the last.
    One array expression: a loop that mapped each point into the scene took 80 ms a pointer move
    at 5,000 points (issue 38). The view's map is a scale and a shift, found from three points."""
    o, ex, ey = (vb.mapViewToScene(QPointF(*p)) for p in ((0, 0), (1, 0), (0, 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        lx, ly = np.log10(np.asarray(xs, dtype=float)), np.log10(np.asarray(ys, dtype=float))
        px = o.x() + lx * (ex.x() - o.x()) + ly * (ey.x() - o.x())
        py = o.y() + lx * (ex.y() - o.y()) + ly * (ey.y() - o.y())
        d = np.hypot(px - scene_pos.x(), py - scene_pos.y())
    d = np.where(np.isfinite(d), d, np.inf)
    if not len(d):
        return 0, math.inf
    i = len(d) - 1 - int(np.argmin(d[::-1]))
    return i, float(d[i])


class Chart(SpecChart):
    """A log-log chart of series: lines with their markers, bands, rings and marks, one item per
    series key made once and updated in place."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(kind, name, log_axes=True)
        self.series: dict = {}          # key -> the series' curve
        self.meta: dict = {}            # key -> the spec.Series it last drew (its style)
        self.band_items: dict = {}      # key -> the filled outline of a series' band
        self.bands: dict = {}           # key -> the workbench.views.bands.Band it draws: for tests
        self._band_specs: dict = {}     # key -> what of the spec its band was drawn from
        # The grey rings around each series' points within the noise, one layer for every series
        # (keyed as the series), under the lines (z 0) and over the bands (z -1): it never hides a line.
        self.rings = MarkerLayer()
        self.rings.setObjectName("within-noise")
        self.rings.setZValue(-0.5)
        self.addItem(self.rings)
        self.markers = SeriesMarkers(self, log_axes=True)     # a dense series' markers (its curve draws none)
        self.mark_items: dict = {}      # (kind, name) -> the line of a mark (a wall, a lesson's, 1x)
        self.marks_shown: dict = {}     # (kind, name) -> the spec.Mark it draws now
        self.apply_look(self.look)

    # --- drawing -----------------------------------------------------------------------------

    def draw_content(self, chart: ChartSpec) -> None:
        for _ in self.draw_steps(chart):
            pass

    def draw_steps(self, chart: ChartSpec) -> Iterator[None]:
        """One series a step (its curve, band and rings), then what is no longer drawn."""
        drawn = set()
        for s in chart.series:
            changed = self._curve(s)
            drawn.add(s.key)
            band_key = (f"band-{s.role}",) + s.key[1:]
            if s.band is not None:
                changed = self._band(band_key, s) or changed
                drawn.add(band_key)
            self._ring(s)
            if changed:
                yield
        for key in self.series:
            if key not in drawn:
                self.series[key].setData([], [])
                self.meta.pop(key, None)
        for key in self.band_items:
            if key not in drawn:
                self.band_items[key].setData([], [])
                self.bands.pop(key, None)
        for key in [k for k in self.rings.stamps if k not in drawn]:
            self.rings.drop(key)
        self.markers.keep(drawn)
        self._marks(chart.marks)

    def _curve(self, s: spec.Series) -> bool:
        item = self.series.get(s.key)
        if item is None:
            item = DenseCurve()     # its wide unsmoothed line in 1 px passes (panels.dense_line)
            self.addItem(item)
            # pyqtgraph re-makes a curve's markers at each change of the y range, to clip values far
            # outside it: on a log10 view with the spec's range nothing is that far.
            item.setDynamicRangeLimit(None)
            self.series[s.key] = item
        styled = self.meta.get(s.key)
        if styled == s and item.xData is not None:     # a live sweep's new point is in one series:
            return False                               # the others are as they were drawn
        self.meta[s.key] = s
        if styled is None or (styled.color, styled.marker, styled.line, styled.filled, styled.dense) != \
                (s.color, s.marker, s.line, s.filled, s.dense):
            self._style_curve(s.key)
        connect = "all"
        if s.breaks:
            connect = np.ones(len(s.xs), dtype=bool)
            connect[list(s.breaks)] = False
        item.setData(np.asarray(s.xs, dtype=float), np.asarray(s.ys, dtype=float), connect=connect)
        prepare(item)
        item.setObjectName(f"{s.role}:{s.name}")     # what the export's id names: the same series
        self.markers.show(s, self.look)
        return True

    def _style_curve(self, key) -> None:
        style_curve(self.series[key], self.meta[key], self.look)

    def _band(self, key, s: spec.Series) -> bool:
        """A series' band as one closed outline, filled (pyqtgraph's 'enclosed' fill level), under
        the lines; the item is made once and its data set in place."""
        item = self.band_items.get(key)
        if item is None:
            item = pg.PlotDataItem([], [], pen=None, fillLevel="enclosed")
            item.setDynamicRangeLimit(None)       # as the curves' (_curve)
            item.setZValue(-1)
            self.addItem(item)
            self.band_items[key] = item
        if key in self.bands and self._band_specs.get(key) == (s.band, s.color, s.name, s.dense):
            return False                               # as drawn
        item.opts["antialias"] = not s.dense           # as its line's (series_markers.style_curve)
        b = bands.Band(np.asarray(s.band.xs, dtype=float), np.asarray(s.band.lo, dtype=float),
                       np.asarray(s.band.hi, dtype=float), s.band.label)
        item.setFillBrush(self._band_brush(s.color))
        item.setData(*b.polygon())
        prepare(item)
        item.setObjectName(f"band-{s.role}:{s.name}")
        self.bands[key] = b
        self._band_specs[key] = (s.band, s.color, s.name, s.dense)
        return True

    def _band_brush(self, colour: str) -> QColor:
        c = QColor(style.ink(colour, self.look))
        c.setAlphaF(bands.ALPHA)
        return c

    def _ring(self, s: spec.Series) -> None:
        """A grey ring around each point the noise cannot tell from the baseline's."""
        ringed = np.asarray(s.ringed, dtype=bool)
        if not ringed.any():
            self.rings.drop(s.key)
            return
        x, y = np.asarray(s.xs, dtype=float)[ringed], np.asarray(s.ys, dtype=float)[ringed]
        # The view is log-log: rings, unlike a curve, are placed in the view's coordinates.
        self.rings.set(s.key, np.log10(x), np.log10(y), "o", self.look.marker_px * spec.RING_SCALE,
                       pg.mkPen(spec.RING_COLOR, width=max(1.0, self.look.line_px / 3)),
                       name=f"within-noise-{s.role}:{s.name}")

    def markers_drawn(self) -> dict:
        """{key: (x, y)} of the points drawn with a marker, in data units (``SeriesMarkers.drawn``)."""
        return self.markers.drawn(self.series, self.meta)

    def rings_drawn(self) -> dict:
        """{key: (x, y)} of the rings shown, in data units."""
        return {key: tuple(10 ** v for v in self.rings.points(key)) for key in self.rings.stamps}

    def _marks(self, marks: Sequence[spec.Mark]) -> None:
        """Each mark's line, made once per (kind, name) and moved; those not in the spec hidden."""
        wanted = {}
        for m in marks:
            wanted[(m.kind, m.name or f"{m.at:g}")] = m
        for key, line in self.mark_items.items():
            line.setVisible(key in wanted)
        self.marks_shown = wanted
        for key, m in wanted.items():
            line = self.mark_items.get(key)
            if line is None:
                line = pg.InfiniteLine(angle=90 if m.vertical else 0, movable=False, label="")
                line.setObjectName(f"mark:{m.kind}:{key[1]}")
                self.addItem(line, ignoreBounds=True)
                self.mark_items[key] = line
            line.setValue(math.log10(m.at) if m.at > 0 else 0.0)   # the view's coordinates are log10
            self._style_mark(key)

    def _style_mark(self, key) -> None:
        m, line, look = self.marks_shown.get(key), self.mark_items[key], self.look
        if m is None:
            return
        width = look.line_px if m.kind == "wall" else max(1.5, look.line_px / 2) if m.kind == "lesson" else 1
        colour = look.muted if m.kind == "reference" else style.ink(m.color, look)
        line.setPen(style.pen(colour, look, m.line, width))
        line.setZValue(-5 if m.kind == "lesson" else 0)
        line.label.setVisible(bool(m.label))
        if m.label:
            font = QFont()
            font.setPointSize(max(6, look.font_pt - 1))
            right = self._right_half(m.at)
            if m.kind == "lesson":    # upright along the line, left of it, from the top (as exported)
                line.label.setAngle(90)
                line.label.setPosition(0.99)
                line.label.anchors = [(1, 1), (1, 1)]
                line.label.fill = pg.mkBrush(look.background)
            else:     # a wall's label reads away from the nearer edge, its row below the last one's
                line.label.setPosition(0.94 - 0.08 * m.row)
                line.label.anchors = [(1, 0.5), (1, 0.5)] if right else [(0, 0.5), (0, 0.5)]
            line.label.setFormat(m.label)
            line.label.setColor(style.ink(m.label_color, look))
            line.label.setFont(font)
            line.label.updatePosition()

    def _right_half(self, x: float) -> bool:
        a = self.spec.x if self.spec is not None else None
        if a is None or a.range is None or x <= 0:
            return False
        lo, hi = a.range
        return math.log(x / lo) > 0.5 * math.log(hi / lo)

    def marks_drawn(self, kind: str) -> list[tuple[float, str]]:
        """(x, label) of the marks of ``kind`` shown ("wall", "lesson", "reference"): for tests."""
        return [(10 ** line.value(), m.label) for (k, _), m in self.marks_shown.items()
                if k == kind for line in [self.mark_items[(k, _)]] if line.isVisible()]

    def walls_drawn(self) -> dict:
        """{series: size} of the memory walls shown."""
        return {name: round(10 ** self.mark_items[(k, name)].value())
                for (k, name) in self.marks_shown if k == "wall"}

    def clear_series(self) -> None:
        """A new sweep: every series, band, ring and mark emptied (the items stay, for the next data)."""
        for item in (*self.series.values(), *self.band_items.values()):
            item.setData([], [])
        self.rings.clear()
        self.markers.clear()
        self.meta.clear()
        self.bands.clear()
        self._marks(())
        self.follow()

    def points(self) -> dict:
        """What each series draws: {key: (x, y)}, for tests and exports."""
        out = {}
        for key, item in self.series.items():
            x, y = item.xData, item.yData      # as given, before the log transform
            out[key] = (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))
        return out

    # --- the look -----------------------------------------------------------------------------

    def apply_look(self, look: Look) -> None:
        super().apply_look(look)
        for key in getattr(self, "meta", {}):         # none yet in the constructor
            self._style_curve(key)
        if hasattr(self, "markers"):
            self.markers.restyle(look)
        for key, item in getattr(self, "band_items", {}).items():
            if key in self.bands:
                s = self.meta.get(("compute" if key[0] == "band-compute" else "total",) + key[1:])
                item.setFillBrush(self._band_brush(s.color if s is not None else spec.INK))
        for key in getattr(self, "mark_items", {}):
            self._style_mark(key)
        if hasattr(self, "rings"):
            self.rings.resize(look.marker_px * spec.RING_SCALE)

    # --- hover --------------------------------------------------------------------------------

    def point_at(self, scene_pos: QPointF) -> tuple | None:
        """(backend, variant, size, set index) of the point nearest the pointer, within HOVER_PX."""
        vb = self.getViewBox()
        best, best_d = None, float(HOVER_PX)
        for key, item in self.series.items():
            if item.xData is None or not item.isVisible() or key not in self.meta:
                continue
            i, d = nearest(vb, item.xData, item.yData, scene_pos)
            if d <= best_d:
                best, best_d = (key, item.xData[i], i), d
        if best is None:
            return None
        key, x, i = best
        s = self.meta[key]
        size = s.sizes[i] if i < len(s.sizes) else x
        return s.backend, s.variant, size, s.set_index

    def hover_text(self, scene_pos: QPointF) -> str:
        """The values of the point nearest the pointer, if one is within HOVER_PX."""
        hit = self.point_at(scene_pos)
        if hit is None:
            return ""
        backend, variant, size, set_index = hit
        row = self.row_at(backend, variant, size, set_index)
        return self.describe(row, set_index) if row is not None else ""
