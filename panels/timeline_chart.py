"""The timeline chart in the window: one point's call, lane by lane, drawn from the spec the export
draws (``workbench.views.spec.timeline``); each bar named in its hover."""
from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from panels import style
from panels.spec_chart import SpecChart
from panels.style import Look
from workbench.views import spec
from workbench.views.spec import ChartSpec


class TimelineChart(SpecChart):
    def __init__(self) -> None:
        super().__init__("timeline", "timelinePlot", log_axes=False)
        self.showGrid(x=True, y=False, alpha=0.25)
        # One item for every bar (a call of a thousand kernels is a thousand bars): pyqtgraph draws
        # a BarGraphItem's rectangles in one picture.
        self.bars = pg.BarGraphItem(x0=[], x1=[], y=[], height=spec.SPAN_HEIGHT, brushes=[], pen=None)
        self.addItem(self.bars)
        self.point: tuple | None = None     # (backend, size, variant, set index) drawn
        self._spans: tuple[spec.Span, ...] = ()
        self.apply_look(self.look)

    def show_point(self, sets, point: tuple | None) -> None:
        """Draw the timeline of ``point`` among ``sets`` (``workbench.views.spec.timeline.chosen``)."""
        self.point = point
        self.follow()
        self.show_spec(spec.build("timeline", sets, point=point))

    def draw_content(self, chart: ChartSpec) -> None:
        self._spans = chart.spans
        if not chart.spans:
            self.bars.setOpts(x0=[], x1=[], y=[], brushes=[])
            return
        s = chart.spans
        self.bars.setOpts(x0=np.array([a.start for a in s]), x1=np.array([a.end for a in s]),
                          y=np.array([float(a.lane) for a in s]), height=spec.SPAN_HEIGHT,
                          brushes=[pg.mkBrush(style.ink(a.color, self.look)) for a in s], pen=None)

    def span_at(self, scene_pos: QPointF) -> spec.Span | None:
        p = self.getViewBox().mapSceneToView(scene_pos)
        half = spec.SPAN_HEIGHT / 2
        # The shortest bar under the pointer: a kernel inside its host phase's span is the one meant.
        under = [a for a in self._spans if a.start <= p.x() <= a.end and abs(p.y() - a.lane) <= half]
        return min(under, key=lambda a: a.end - a.start) if under else None

    def hover_text(self, scene_pos: QPointF) -> str:
        hit = self.span_at(scene_pos)
        return escape(hit.hover) if hit is not None else ""

    def spans_drawn(self) -> list[tuple[int, float, float, str]]:
        """(lane, start, end, group) of each bar drawn: for tests."""
        opts = self.bars.opts
        if opts.get("x0") is None or not len(opts["x0"]):
            return []
        return [(int(y), float(a), float(b), s.group) for a, b, y, s in
                zip(opts["x0"], opts["x1"], opts["y"], self._spans)]

    def apply_look(self, look: Look) -> None:
        super().apply_look(look)
        if getattr(self, "spec", None) is not None and hasattr(self, "bars"):
            self.draw_content(self.spec)
