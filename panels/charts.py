"""The five charts: runtime, speedup, transfer split, memory and first call against size.

Every chart is fed the same result sets (``workbench.views.compare.Overlay``: one live sweep,
or several sets compared) and keeps one item per series, updated in place with
``setData`` as points arrive (pyqtgraph's PlotSpeedTest pattern); nothing is cleared
and redrawn. A series is keyed ``(role, backend, variant)``, and, when sets are
compared, ``(role, backend, variant, set_index)``; compared sets keep the backends'
colours and take a marker each, as in the exported charts. Titles are short so a
chart can shrink with the window; what solid and dashed mean is in each chart's
legend, and which backend is which in the panel's legend strip.
"""
from __future__ import annotations

import logging
import math
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics

from panels import axes, style
from panels.style import Look
from workbench.views import bands
from workbench.views.compare import WITHIN_NOISE, Baseline, Overlay, Series, is_baseline, speedups, within_noise
from workbench.results.rows import memory_walls

log = logging.getLogger(__name__)
HOVER_PX = 14            # how close the pointer must be to a point to show its values
MIN_CHART = (150, 120)   # charts shrink to this, so the window fits a 1280x720 projector


def positive(a) -> np.ndarray:
    """Log axes cannot show zero or NaN: such values become NaN, and are left out when drawn."""
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, a, np.nan)


class Titled:
    """Titles that fit, axis labels in the look's font, values on hover: for every chart."""

    def _labels(self) -> None:
        look = self.look
        self._fit_title()
        label_style = {"color": look.foreground, "font-size": f"{look.font_pt}pt"}
        self.setLabel("left", self.left_text, **label_style)
        self.setLabel("bottom", self.bottom_text, **label_style)
        self._fit_minimum()

    def _fit_title(self) -> None:
        """The title, or its first word where the chart is too narrow for it; never a minimum
        width: pyqtgraph makes a title's width the chart's minimum, and a chart that cannot
        shrink is cropped (the large sizes, where the GPU wins, were cut off)."""
        font = QFont()
        font.setPointSizeF(self.look.font_pt * 1.15)
        text = self.title_text
        # The title is centred over the plot area, not over the axis: that is the room it has.
        room = self.width() - self.getAxis("left").width() - 24
        if QFontMetrics(font).horizontalAdvance(text) > room:
            text = text.split()[0]
        label = self.getPlotItem().titleLabel
        if text != self._shown_title or label.opts.get("color") != self.look.foreground \
                or label.opts.get("size") != f"{font.pointSizeF():g}pt":
            self.setTitle(text, color=self.look.foreground, size=f"{font.pointSizeF():g}pt")
            self._shown_title = text
        label.setMinimumWidth(0)

    def _fit_minimum(self) -> None:
        """Never smaller than what the chart's title, axes and key need: below that pyqtgraph
        lays the chart out larger than the view and the view crops it."""
        item = self.getPlotItem()
        item.layout.invalidate()     # the labels just changed: measure them anew, not from a cache
        item.layout.activate()
        need = item.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        frame = self.frameWidth() * 2
        self.setMinimumSize(max(MIN_CHART[0], math.ceil(need.width()) + frame),
                            max(MIN_CHART[1], math.ceil(need.height()) + frame))

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        if not hasattr(self, "look"):     # still in pyqtgraph's constructor
            return
        self._fit_title()
        # The layout's minimum can exceed its estimate by a few pixels (text metrics): if the
        # chart came out larger than its view, ask for that much, so that nothing is cropped.
        geo = self.getPlotItem().geometry()
        if geo.height() > self.viewport().height() + 0.5 or geo.width() > self.viewport().width() + 0.5:
            frame = self.frameWidth() * 2
            self.setMinimumSize(max(self.minimumWidth(), math.ceil(geo.width()) + frame),
                                max(self.minimumHeight(), math.ceil(geo.height()) + frame))

    def _mouse_moved(self, scene_pos) -> None:
        from PySide6.QtWidgets import QToolTip
        text = self.hover_text(scene_pos)
        if text:
            QToolTip.showText(self.mapToGlobal(self.mapFromScene(scene_pos)), text, self)
        else:
            QToolTip.hideText()


class Chart(Titled, pg.PlotWidget):
    """A log-log chart whose series are created once per key and updated in place."""

    shows_walls = False        # the runtime and memory charts mark where a backend ran out of memory

    def __init__(self, name: str, title: str, left: str, left_format: Callable[[float], str], left_base: int,
                 solid: str, dashed: str) -> None:
        super().__init__(axisItems={"left": axes.ReadableAxis("left", left_format, left_base),
                                    "bottom": axes.ReadableAxis("bottom", axes.fmt_power_of_two, 2)})
        self.setObjectName(name)    # PlotWidget passes unknown keywords on to PlotItem.plot()
        self.setMinimumSize(*MIN_CHART)
        self.title_text, self.left_text, self.bottom_text = title, left, "size"
        self._shown_title = ""
        self.look = style.NORMAL
        self.setLogMode(True, True)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.getPlotItem().hideButtons()       # the "A" button overlaps the axis on a small chart
        # The key to the line styles sits under the x axis, in the chart's own layout: inside the
        # plot area it covered points on a small chart.
        self.legend = pg.LegendItem(colCount=2, horSpacing=16, verSpacing=-4)
        # It spans the axis column too, and claims no minimum width: a chart must shrink, not crop.
        self.getPlotItem().layout.addItem(self.legend, 4, 0, 1, 3, alignment=Qt.AlignmentFlag.AlignHCenter)
        self.legend.setMinimumWidth(0)
        self.line_keys = {"solid": pg.PlotDataItem(), "dashed": pg.PlotDataItem()}
        self.legend.addItem(self.line_keys["solid"], solid)
        self.legend.addItem(self.line_keys["dashed"], dashed)
        self.series: dict = {}          # key -> item
        self.meta: dict = {}            # key -> (backend, dashed, dotted)
        self.rows: dict = {}            # key -> the rows behind the drawn points, in order
        self.describe: Callable[[dict, int], str] = lambda row, set_index: ""
        self.kind = ""                  # its name among workbench.views.presets.KINDS
        self._drawn: set = set()        # the keys the last update drew
        self.walls: dict = {}           # (backend, variant) -> the vertical line at its memory wall
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.apply_look(self.look)

    # --- drawing -----------------------------------------------------------------------------

    def update_from(self, overlay: Overlay) -> None:
        """Draw every series of ``overlay``; series drawn before and not now are emptied (kept for later)."""
        self._drawn = set()
        self.draw_all(overlay)
        for key in self.series:
            if key not in self._drawn:
                self._empty(key)
        if self.shows_walls and overlay.sets:     # the main set's: where this sweep ran out of memory
            self.mark_walls(overlay.sets[0].frame)

    def draw_all(self, overlay: Overlay) -> None:
        raise NotImplementedError

    @staticmethod
    def key(role: str, s: Series, overlay: Overlay) -> tuple:
        return (role, s.backend, s.variant) + ((s.set_index,) if overlay.compare else ())

    def draw(self, key, s: Series, g: pd.DataFrame, y, dashed: bool = False) -> None:
        """Set a series' points, leaving out those a log axis cannot show (zero, negative, NaN).

        pyqtgraph computes bounds with NumPy inside Qt's paint callbacks, where a warning
        about NaN becomes an exception that PySide cannot carry: better never to hand it one.
        """
        x, y = g["size"].to_numpy(float), np.asarray(y, float)
        keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
        set_index = s.set_index if len(key) > 3 else None
        self.curve(key, s.backend, dashed, s.variant in style.VARIANT_DOTTED, set_index).setData(x[keep], y[keep])
        self.rows[key] = (g, keep)      # rows made into dicts only when hovered: to_dict is slow
        self._drawn.add(key)

    def curve(self, key, backend: str, dashed: bool = False, dotted: bool = False,
              set_index: int | None = None) -> pg.PlotDataItem:
        item = self.series.get(key)
        if item is None:
            item = self.plot([], [])
            self.series[key] = item
            self.meta[key] = (backend, dashed, dotted, set_index)
            self._style_curve(key)
        return item

    def _style_curve(self, key) -> None:
        backend, dashed, dotted, set_index = self.meta[key]
        c = style.color(backend, self.look)
        self.series[key].setPen(style.pen(backend, self.look, dashed, dotted))
        # Hollow markers on dashed lines: the two series of a backend stay apart where they touch.
        self.series[key].setSymbol(style.marker(backend) if set_index is None else style.set_symbol(set_index))
        self.series[key].setSymbolSize(self.look.marker_px)
        self.series[key].setSymbolPen(pg.mkPen(c, width=max(1.5, self.look.line_px / 2)))
        self.series[key].setSymbolBrush(None if dashed else pg.mkBrush(c))

    def _empty(self, key) -> None:
        self.series[key].setData([], [])
        self.rows.pop(key, None)

    def clear_series(self) -> None:
        for key in self.series:
            self._empty(key)
        self._hide_walls()

    def _hide_walls(self) -> None:
        for line in self.walls.values():
            line.hide()

    def mark_walls(self, frame: pd.DataFrame) -> None:
        """A dashed vertical line in the series' colour at each series' first out-of-memory size
        (the memory wall), labelled at the top; one item per series, moved, never re-made."""
        walls = memory_walls(frame)
        for key, line in self.walls.items():
            line.setVisible(key in walls)
        for key, size in walls.items():
            line = self.walls.get(key)
            if line is None:
                backend, variant = key
                name = f"{backend} ({variant})" if variant else backend
                line = pg.InfiniteLine(angle=90, movable=False, label=f"{name}: out of memory",
                                       labelOpts={"position": 0.92 - 0.08 * (len(self.walls) % 4),
                                                  "anchors": [(0, 0.5), (0, 0.5)]})
                self.addItem(line)
                self.walls[key] = line
                self._style_wall(key)
            line.setValue(math.log10(size))       # the view's coordinates are log10 of the values

    def walls_drawn(self) -> dict:
        """{(backend, variant): size} of the walls shown, for tests."""
        return {key: round(10 ** line.value()) for key, line in self.walls.items() if line.isVisible()}

    def _style_wall(self, key) -> None:
        line, c = self.walls[key], style.color(key[0], self.look)
        line.setPen(pg.mkPen(c, width=self.look.line_px, style=Qt.PenStyle.DashLine))
        font = QFont()
        font.setPointSize(max(6, self.look.font_pt - 1))
        line.label.setColor(c)
        line.label.setFont(font)

    def points(self) -> dict:
        """What each series draws: {key: (x, y)}, for tests and exports."""
        out = {}
        for key, item in self.series.items():
            if isinstance(item, pg.PlotDataItem):   # xData/yData: as given, before the log transform
                x, y = item.xData, item.yData
                out[key] = (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))
        return out

    def set_size_axis(self, sizes, unit: str) -> None:
        """Name the x axis by the workload's unit and label it as its sizes are spaced."""
        text = unit.split(" (")[0] or "size"    # "grid side n (n x n cells)" -> "grid side n"
        self.getAxis("bottom").set_format(*axes.size_format(sizes, unit))
        if text != self.bottom_text:           # relabelling costs a layout pass: only on a change
            self.bottom_text = text
            self._labels()

    # --- the look -----------------------------------------------------------------------------

    def apply_look(self, look: Look) -> None:
        self.look = look
        fg, font = look.foreground, QFont()
        font.setPointSize(look.font_pt)
        self.setBackground(look.background)
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(fg)
            axis.setTextPen(fg)
            axis.setTickFont(font)
        self._labels()
        self.legend.setLabelTextSize(f"{look.font_pt}pt")
        self.legend.setLabelTextColor(fg)
        for _, label in self.legend.items:     # the setters above reach only labels made later
            label.setText(label.text, color=fg, size=f"{look.font_pt}pt")
        self.line_keys["solid"].setPen(pg.mkPen(fg, width=look.line_px))
        self.line_keys["dashed"].setPen(pg.mkPen(fg, width=look.line_px, style=Qt.PenStyle.DashLine))
        for key in self.series:
            if key in self.meta:
                self._style_curve(key)
        for key in self.walls:
            self._style_wall(key)

    # --- hover --------------------------------------------------------------------------------

    def hover_text(self, scene_pos: QPointF) -> str:
        """The values of the point nearest the pointer, if one is within HOVER_PX."""
        vb = self.getViewBox()
        best, best_d = None, float(HOVER_PX)
        for key, (g, keep) in self.rows.items():
            item = self.series[key]
            if item.xData is None or not item.isVisible():
                continue
            for i, (x, y) in enumerate(zip(item.xData, item.yData)):
                p = vb.mapViewToScene(QPointF(np.log10(x), np.log10(y)))
                d = float(np.hypot(p.x() - scene_pos.x(), p.y() - scene_pos.y()))
                if d <= best_d:
                    best, best_d = (key, g, keep, i), d
        if best is None:
            return ""
        key, g, keep, i = best
        return self.describe(g[keep].iloc[i].to_dict(), key[3] if len(key) > 3 else 0)


class RuntimeChart(Chart):
    """Each series' median, and around it the band ``workbench.views.bands`` describes (the exported
    chart draws the same one): a filled outline per series, updated in place like the lines. What
    the band is, the panel's legend strip says (``band_labels``)."""

    def __init__(self) -> None:
        super().__init__("runtimePlot", "Runtime", "time", axes.fmt_time, 10,
                         "compute", "end-to-end")
        self.kind = "runtime"
        self.shows_walls = True
        self.band_items: dict = {}      # key -> the filled outline of a series' band
        self.bands: dict = {}           # key -> the workbench.views.bands.Band it draws: for tests and exports

    def draw_all(self, overlay: Overlay) -> None:
        for s in overlay.series:
            g = s.rows
            self.draw(self.key("compute", s, overlay), s, g, positive(g["compute_median_s"]))
            for which in ("compute", "total") if s.moves_data else ("compute",):
                self._band(self.key(f"band-{which}", s, overlay), s.backend, bands.band(g, which))
            if s.moves_data:   # a device backend: transfers make end-to-end differ
                self.draw(self.key("total", s, overlay), s, g, positive(g["total_median_s"]), dashed=True)

    def update_from(self, overlay: Overlay) -> None:
        super().update_from(overlay)
        for key in self.band_items:
            if key not in self._drawn:
                self._empty_band(key)

    def _band(self, key, backend: str, band: bands.Band) -> None:
        """A series' band as one closed outline, filled (pyqtgraph's 'enclosed' fill level), under
        the lines; the item is made once and its data set in place."""
        item = self.band_items.get(key)
        if item is None:
            item = pg.PlotDataItem([], [], pen=None, fillLevel="enclosed")
            item.setZValue(-1)
            self.addItem(item)
            self.band_items[key] = item
        item.setFillBrush(self._band_brush(backend))
        item.setData(*band.polygon())
        self.bands[key] = band
        self._drawn.add(key)

    def band_labels(self) -> list[str]:
        """What the bands drawn are, for the legend strip: the interval, or an old file's quartiles."""
        return bands.labels(self.bands.values())

    def _band_brush(self, backend: str) -> QColor:
        c = QColor(style.color(backend, self.look))
        c.setAlphaF(bands.ALPHA)
        return c

    def _empty_band(self, key) -> None:
        self.band_items[key].setData([], [])
        self.bands.pop(key, None)

    def clear_series(self) -> None:
        super().clear_series()
        for key in self.band_items:
            self._empty_band(key)

    def apply_look(self, look: Look) -> None:
        super().apply_look(look)
        for key, item in getattr(self, "band_items", {}).items():   # none yet in the constructor
            item.setFillBrush(self._band_brush(key[1]))


class MemoryChart(Chart):
    def __init__(self) -> None:
        super().__init__("memoryPlot", "Peak memory", "memory", axes.fmt_bytes, 2, "host", "device")
        self.kind = "memory"
        self.shows_walls = True

    def draw_all(self, overlay: Overlay) -> None:
        for s in overlay.series:
            self.draw(self.key("host", s, overlay), s, s.rows, positive(s.rows["peak_host_bytes"]))
            dev = positive(s.rows["peak_device_bytes"])
            if np.isfinite(dev).any():
                self.draw(self.key("device", s, overlay), s, s.rows, dev, dashed=True)


class SpeedupChart(Chart):
    """Each backend's speedup over the baseline, compute solid and end-to-end dashed; a grey ring
    around each point whose verdict against the baseline is ``same`` or ``undecided``
    (``workbench.views.compare.within_noise``), as in the exported chart: a ratio of 1.04 drawn alone
    reads as a win the measurement does not support."""

    RING = "#888"     # workbench.views.matplotlib_charts.RING_COLOR: the exported chart's rings

    def __init__(self) -> None:
        super().__init__("speedupPlot", "Speedup", "times faster", axes.fmt_ratio, 10, "compute", "end-to-end")
        self.kind = "speedup"
        self.choice = Baseline("")
        self.ref_line = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#888", width=1, style=Qt.PenStyle.DotLine))
        self.addItem(self.ref_line)   # speedup 1 (log10 1 = 0)
        self.rings: dict = {}         # key -> the rings around that series' points within the noise
        self.ring_key = pg.ScatterPlotItem(symbol="o", brush=None, pen=pg.mkPen(self.RING, width=1.5))
        self._ring_key_shown = False

    @property
    def baseline(self) -> str:
        """The baseline's backend."""
        return self.choice.backend

    def set_baseline(self, choice: Baseline, labels: Sequence[str] = ()) -> None:
        """Divide by ``choice``: a backend of each set's own, or of one set (``set_index``)."""
        title = f"Speedup over {choice.describe(list(labels) or [''])}" if choice.backend else "Speedup"
        self.choice = choice
        if title == self.title_text and self._shown_title:
            return
        self.title_text = title
        self._labels()

    def draw_all(self, overlay: Overlay) -> None:
        if not self.choice.backend:
            return
        for s, g in speedups(overlay.sets, self.choice, overlay.labels, overlay.series):
            # On a CPU backend compute is end-to-end: one line (the exported chart draws one too).
            for figure, role, dashed in (("compute", "compute", False), ("total", "total", True))[:1 + s.moves_data]:
                y = positive(g[f"{figure}_median_s_base"].to_numpy() / g[f"{figure}_median_s"].to_numpy())
                key = self.key(role, s, overlay)
                self.draw(key, s, g, y, dashed=dashed)
                if not is_baseline(s, self.choice):     # the baseline is the line at 1, not a verdict
                    self._ring(key, g["size"].to_numpy(float), y, within_noise(g, figure))

    def update_from(self, overlay: Overlay) -> None:
        super().update_from(overlay)
        for key, item in self.rings.items():
            if key not in self._drawn:
                item.setData([], [])
        shown = any(len(item.data) for item in self.rings.values())
        if shown != self._ring_key_shown:        # the key names the ring only while one is drawn
            if shown:
                self.legend.addItem(self.ring_key, WITHIN_NOISE)
            else:
                self.legend.removeItem(self.ring_key)
            self._ring_key_shown = shown

    def _ring(self, key, x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> None:
        keep = mask & np.isfinite(y) & (x > 0)
        item = self.rings.get(key)
        if item is None:
            item = pg.ScatterPlotItem(symbol="o", brush=None)
            item.setZValue(5)
            self.addItem(item)
            self.rings[key] = item
        # The view is log-log: a scatter item, unlike a curve, is placed in the view's coordinates.
        item.setData(np.log10(x[keep]), np.log10(y[keep]), size=self.look.marker_px * 2.2,
                     pen=pg.mkPen(self.RING, width=max(1.5, self.look.line_px / 2)), brush=None)

    def rings_drawn(self) -> dict:
        """{key: (x, y)} of the rings shown, in data units: for tests and the parity with exports."""
        return {key: (10 ** np.asarray(item.data["x"]), 10 ** np.asarray(item.data["y"]))
                for key, item in self.rings.items() if len(item.data)}

    def clear_series(self) -> None:
        super().clear_series()
        for item in self.rings.values():
            item.setData([], [])


class FirstCallChart(Chart):
    def __init__(self) -> None:
        super().__init__("firstCallPlot", "First call", "time", axes.fmt_time, 10, "steady call", "first call")
        self.kind = "first-call"

    def draw_all(self, overlay: Overlay) -> None:
        for s in overlay.series:
            self.draw(self.key("steady", s, overlay), s, s.rows, positive(s.rows["total_median_s"]))
            self.draw(self.key("first", s, overlay), s, s.rows, positive(s.rows["first_call_s"]), dashed=True)
