"""Where GPU end-to-end time goes: for each size and GPU series, h2d / compute / d2h in %.

It draws the transfer chart's spec (``workbench.views.spec.transfer``), as the export does: the
sizes side by side at 0, 1, 2, ... labelled as the size axes label them. For a few series, one bar
per GPU series (and compared set) outlined in its colour (a compared set's outline in a line
style of its own, where the export hatches), the phases filled with colours no backend uses
(their key is in the panel's legend strip); for more, each series' shares as lines in its colour.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QGraphicsItem

from panels import style
from panels.dense_line import DenseCurve, prepare
from panels.series_chart import HOVER_PX
from panels.series_markers import SeriesMarkers, style_curve
from panels.spec_chart import SpecChart
from panels.style import Look
from workbench.results.rows import human_seconds
from workbench.core.sizes import fmt_size
from workbench.views.spec import ChartSpec

PHASES = ("h2d", "compute", "d2h")
PHASE_COLUMNS = ("h2d_s", "compute_median_s", "d2h_s")


class TransferChart(SpecChart):
    def __init__(self) -> None:
        super().__init__("transfer", "transferPlot", log_axes=False)
        self.showGrid(x=False, y=True, alpha=0.25)
        self.bars = {}
        for phase in PHASES:
            item = pg.BarGraphItem(x=[], height=[], width=0.2, brush=style.PHASE_COLORS[phase], pen=None)
            self.addItem(item)
            self.bars[phase] = item
        self.outline = pg.BarGraphItem(x=[], height=[], width=0.2, brush=None, pen=pg.mkPen("#222", width=0.5))
        self.addItem(self.outline)
        # Each bar item kept as a picture of the view, made again only when its bars or the view
        # change: played back at each repaint, thousands of bars (7,500 at 5,000 points) took
        # 30-50 ms of every repaint of the chart, three of them as a sweep ends (issue 38).
        for item in (*self.bars.values(), self.outline):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._x = np.array([])
        self._width = 0.0
        self._who: list[tuple] = []         # per bar: (series, backend, variant, size, set_index)
        self.series: dict = {}              # key -> the curve of a share, where the spec has lines
        self.meta: dict = {}                # key -> the spec.Series it draws
        self.markers = SeriesMarkers(self, log_axes=False)   # a dense series' markers (its curve draws none)
        self.apply_look(self.look)

    def draw_content(self, chart: ChartSpec) -> None:
        for _ in self.draw_steps(chart):
            pass

    def draw_steps(self, chart: ChartSpec) -> Iterator[None]:
        """One line of shares a step, then the bars: all at once, twenty series of 500 sizes were
        76 ms of the GUI thread in one call (issue 38)."""
        yield from self._line_steps(chart.series)
        self._bars(chart)
        yield

    def _bars(self, chart: ChartSpec) -> None:
        if not chart.bars:
            self._clear_bars()
            return
        x = np.concatenate([np.asarray(b.positions, dtype=float) for b in chart.bars])
        width = min(b.width for b in chart.bars)
        base = np.zeros(len(x))
        for phase in PHASES:
            share = np.concatenate([np.asarray(dict(b.segments)[phase], dtype=float) for b in chart.bars])
            self.bars[phase].setOpts(x=x, height=share, y0=base, width=width)
            base = base + share
        pens = [pg.mkPen(style.ink(b.outline, self.look), width=self.look.line_px,
                         style=style.SET_LINES[b.pattern % len(style.SET_LINES)])
                for b in chart.bars for _ in b.positions]
        self.outline.setOpts(x=x, height=base, y0=np.zeros(len(x)), width=width, pens=pens)
        self._x, self._width = x, width
        self._who = [(b.name, b.backend, b.key[2], size, b.set_index) for b in chart.bars for size in b.sizes]

    def bars_drawn(self) -> dict:
        """{series: [(size, x, h2d %, compute %, d2h %), ...]} of the bars shown: for tests."""
        out: dict = {}
        if not len(self._x):
            return out
        heights = {p: self.bars[p].opts["height"] for p in PHASES}
        for i, who in enumerate(self._who):
            out.setdefault(who[0], []).append((who[3], float(self._x[i]), *(float(heights[p][i]) for p in PHASES)))
        return out

    def _lines(self, drawn) -> None:
        for _ in self._line_steps(drawn):
            pass

    def _line_steps(self, drawn) -> Iterator[None]:
        """The spec's lines of shares (many series), one curve per key, its data set in place."""
        for s in drawn:
            item = self.series.get(s.key)
            if item is None:
                item = DenseCurve()     # its wide unsmoothed line in 1 px passes (panels.dense_line)
                self.addItem(item)
                self.series[s.key] = item
            self.meta[s.key] = s
            self._style_line(s)
            item.setData(np.asarray(s.xs, dtype=float), np.asarray(s.ys, dtype=float))
            prepare(item)
            item.setObjectName(f"{s.role}:{s.name}")     # what the export's id names: the same series
            yield
        keys = {s.key for s in drawn}
        self.markers.keep(keys)
        for key, item in self.series.items():
            if key not in keys:
                item.setData([], [])
                self.meta.pop(key, None)

    def _style_line(self, s) -> None:
        style_curve(self.series[s.key], s, self.look)
        self.markers.show(s, self.look)

    def markers_drawn(self) -> dict:
        """{key: (x, y)} of the points drawn with a marker (``SeriesMarkers.drawn``)."""
        return self.markers.drawn(self.series, self.meta)

    def clear_series(self) -> None:
        self._lines(())
        self._clear_bars()

    def _clear_bars(self) -> None:
        # Every per-bar option at once: a y0 (or pens) left from more bars breaks the next layout.
        for item in self.bars.values():
            item.setOpts(x=[], height=[], y0=[])
        self.outline.setOpts(x=[], height=[], y0=[], pens=None)
        self._x, self._who = np.array([]), []

    def point_at(self, scene_pos: QPointF) -> tuple | None:
        """(backend, variant, size, set index) of the bar under the pointer, or of the point of a
        line nearest it (within HOVER_PX)."""
        if self.meta:
            return self._line_point_at(scene_pos)
        if not len(self._x):
            return None
        p = self.getViewBox().mapSceneToView(scene_pos)
        hit = np.flatnonzero((np.abs(self._x - p.x()) <= self._width * 0.5) & (p.y() >= 0) & (p.y() <= 100))
        if not len(hit):
            return None
        _, backend, variant, size, set_index = self._who[int(hit[0])]
        return backend, variant, size, set_index

    def _line_point_at(self, scene_pos: QPointF) -> tuple | None:
        vb, best, best_d = self.getViewBox(), None, float(HOVER_PX)
        for key, s in self.meta.items():
            for x, y, size in zip(s.xs, s.ys, s.sizes):
                p = vb.mapViewToScene(QPointF(x, y))
                d = float(np.hypot(p.x() - scene_pos.x(), p.y() - scene_pos.y()))
                if d <= best_d:
                    best, best_d = (s.backend, s.variant, size, s.set_index), d
        return best

    def hover_text(self, scene_pos: QPointF) -> str:
        """The phases of the bar under the pointer."""
        hit = self.point_at(scene_pos)
        if hit is None:
            return ""
        backend, variant, size, set_index = hit
        r = self.row_at(backend, variant, size, set_index)
        if r is None:
            return ""
        total = sum(r[c] for c in PHASE_COLUMNS)
        shares = ", ".join(f"{style.PHASE_LABELS[ph]} {100 * r[c] / total:.0f} % ({human_seconds(r[c])})"
                           for ph, c in zip(PHASES, PHASE_COLUMNS))
        return f"<b>{backend}</b> at {fmt_size(r['size'])}: {shares}<br>{self.describe(r, set_index)}"

    def bar_position(self, backend: str, size: float) -> QPointF:
        """The middle of a bar, in the view's coordinates (tests hover it)."""
        for x, (_, b, _v, s, _i) in zip(self._x, self._who):
            if b == backend and s == size:
                return QPointF(float(x), 50.0)
        raise KeyError((backend, size))

    def apply_look(self, look: Look) -> None:
        super().apply_look(look)
        if getattr(self, "spec", None) is not None and hasattr(self, "meta"):
            self.draw_content(self.spec)
