"""The window's roofline chart: the spec's points and roofs drawn as the other log-log charts
draw their series, plus the roofs' names on their lines; a point's hover names its size (x is
its arithmetic intensity here, not its size) and its intensity and GFLOP/s."""
from __future__ import annotations

import logging
import math
from html import escape
from typing import Iterator

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QFont

from panels import style
from panels.series_chart import HOVER_PX, Chart, nearest
from workbench.views import point_text
from workbench.views.spec import ChartSpec

log = logging.getLogger(__name__)


class RooflineChart(Chart):
    def __init__(self) -> None:
        self.label_items: list[pg.TextItem] = []    # the roofs' names, reused from one spec to the next
        super().__init__("roofline", "rooflinePlot")

    def draw_steps(self, chart: ChartSpec) -> Iterator[None]:
        yield from super().draw_steps(chart)
        self._draw_labels(chart)

    def _draw_labels(self, chart: ChartSpec) -> None:
        while len(self.label_items) < len(chart.labels):
            item = pg.TextItem("")
            self.addItem(item, ignoreBounds=True)
            self.label_items.append(item)
        font = QFont()
        font.setPointSize(max(6, self.look.font_pt - 2))
        for item, t in zip(self.label_items, chart.labels):
            item.setText(t.text, color=style.ink(t.color, self.look))
            item.setFont(font)
            item.setAnchor((0 if t.align == "left" else 1, 1 if t.above else 0))
            item.setPos(math.log10(t.x), math.log10(t.y))     # the view's coordinates are log10
            item.setVisible(True)
        for item in self.label_items[len(chart.labels):]:
            item.setVisible(False)

    def labels_drawn(self) -> list[str]:
        """The roofs' names shown (tests compare them with the export's)."""
        return [item.toPlainText() for item in self.label_items if item.isVisible()]

    def clear_series(self) -> None:
        super().clear_series()
        for item in self.label_items:
            item.setVisible(False)

    def apply_look(self, look) -> None:
        super().apply_look(look)
        if self.spec is not None:
            self._draw_labels(self.spec)

    def point_at(self, scene_pos: QPointF) -> tuple | None:
        """(backend, variant, size, set index) of the nearest point; the roofs are no points."""
        vb = self.getViewBox()
        best, best_d = None, float(HOVER_PX)
        for key, item in self.series.items():
            s = self.meta.get(key)
            if s is None or s.role == "roof" or item.xData is None or not item.isVisible():
                continue
            n = min(len(item.xData), len(s.sizes))     # a point beyond the sizes names none
            i, d = nearest(vb, item.xData[:n], item.yData[:n], scene_pos)
            if d <= best_d:
                best, best_d = (s, s.sizes[i]), d
        if best is None:
            return None
        s, size = best
        return s.backend, s.variant, size, s.set_index

    def hover_text(self, scene_pos: QPointF) -> str:
        """The nearest point's row, as every chart's hover says it, after its intensity and GFLOP/s."""
        hit = self.point_at(scene_pos)
        if hit is None:
            return ""
        backend, variant, size, set_index = hit
        row = self.row_at(backend, variant, size, set_index)
        if row is None:
            return ""
        return escape(point_text.roofline_text(row)) + "<br>" + self.describe(row, set_index)
