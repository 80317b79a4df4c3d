"""A live update drawn a step per timer tick, so that the GUI thread is never held for long.

Each step is a short slice (``STEP_S``) of a chart's drawing (``SpecChart.steps``: a series, a
key entry, the labels), then that chart's repaint in a tick of its own, then the legend strip,
then the summary text (docs/PERFORMANCE.md has the stalls each of these split).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Sequence

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from workbench.views.live import Prepared

log = logging.getLogger(__name__)

#: Between two steps of a live update (a chart's drawing, its repaint, the summary) in ms.
STAGGER_MS = 15

#: How long a step may draw before it leaves the rest of a chart to the next step (s).
STEP_S = 0.002

#: The steps of a panel's update after its charts'.
LEGEND, SUMMARY = "legend strip", "summary text"


class ChartDrawing(QObject):
    """Draws a ``Prepared`` on a plots panel's charts, a step per tick of ``timer``; ``done`` fires
    when nothing is left. ``pending`` and ``step`` are the seam a test drives it through."""

    done = Signal()

    def __init__(self, panel: Any) -> None:
        super().__init__(panel)
        self.panel = panel
        self.timer = QTimer(self, interval=STAGGER_MS, objectName="chartStagger")
        self.timer.timeout.connect(self.step)
        self.ready: Prepared | None = None      # what the charts still to draw draw
        self._pending: list = []
        self._held: set = set()         # charts drawn whose viewport repaints at the next step
        self._steps = None              # the drawing of the chart first in _pending, where under way

    @property
    def pending(self) -> tuple:
        """What is left: charts, ("show", chart) for a repaint, ``LEGEND``, ``SUMMARY``."""
        return tuple(self._pending)

    def active(self) -> bool:
        """Whether an update is being drawn (the table waits for it to fit its columns)."""
        return self.timer.isActive()

    def start(self, p: Prepared, items: Sequence | None = None) -> None:
        """Draw ``p``: each chart of ``items`` (every chart, by default), then the legend strip and
        the summary text, each a step of its own: the strip's relayout and the summary's rich text
        in one turn with a chart's step made 18-25 ms turns."""
        self.ready = p
        self._steps = None              # a chart half drawn from older specs: drawn anew
        if items is None:
            # The strip first, from the specs' entries: relaid out after the first charts, its new
            # height resized and repainted all five at once (two sets of 5,000 points: 200 ms).
            for kind, made in p.specs.items():
                self.panel.legendStrip.show_chart(kind, made.legend, now=False)
            items = [LEGEND, *self.panel.plots(), LEGEND, SUMMARY]
        self._pending = list(items)
        # Every chart to draw is held until its own step: one left free repainted in any pass its
        # scene or size changed in, and Qt's scenes flush the window's repaint as their changes
        # are processed, so every chart dirty was painted then, and again for its own scene.
        charts = {item for item in self._pending if not isinstance(item, (str, tuple))}
        for chart in self._held - charts:
            self._release(chart)
        for chart in charts:
            self._hold(chart)
        if not self.timer.isActive():
            self.timer.start()

    @Slot()
    def finish(self) -> None:
        """``done`` now where nothing is being drawn; else it comes as the drawing ends."""
        if not self.timer.isActive():
            self.done.emit()

    def halt(self) -> None:
        """No more steps; what is left is not drawn."""
        self.timer.stop()
        self.ready = None
        self.drop()                     # no chart stays held: one not drawn repaints as it is

    def stop(self) -> None:
        """What is being drawn is out of date: dropped, and no chart stays held."""
        self.halt()
        self._pending = []
        self.drop()

    def drop(self) -> None:
        """No chart is left half drawn or held: what comes next draws them whole."""
        self._steps = None
        for chart in list(self._held):
            self._release(chart)

    def step(self) -> None:
        """One step of the update; ``done`` where nothing was left."""
        if not self._pending:
            self.halt()
            self.done.emit()
            return
        panel, p = self.panel, self.ready
        item = self._pending.pop(0)
        if isinstance(item, tuple):        # ("show", chart): drawn a step ago, repainted now
            self._release(item[1])
        elif item is LEGEND:
            panel.legendStrip.flush()      # once every chart drew: one relayout, not one per chart
        elif item is SUMMARY:
            panel.say(p.summary if p is not None else None)
        else:
            made = p.specs.get(item.kind) if p is not None else None
            # Qt sends a scene's repaint as soon as its drawing ends: the viewport takes none until
            # the next step, so that a timer or input comes between the drawing and the repaint.
            self._hold(item)
            if made is None:
                self._steps = None
                panel.draw_chart(item, strip_now=False)
            else:
                if self._steps is None:
                    self._steps = item.steps(made)
                    panel.legendStrip.show_chart(item.kind, made.legend, now=False)
                t0 = time.perf_counter()
                for _ in self._steps:
                    if time.perf_counter() - t0 > STEP_S:     # the rest at the next step
                        self._pending.insert(0, item)
                        return
                self._steps = None
            self._pending.insert(0, ("show", item))

    def hold(self, charts: Sequence) -> None:
        """``charts`` take no repaint until the next update draws them, or ends (``halt``, ``stop``):
        what they showed stays on screen until then."""
        for chart in charts:
            self._hold(chart)

    def _hold(self, chart) -> None:
        chart.viewport().setUpdatesEnabled(False)
        self._held.add(chart)

    def _release(self, chart) -> None:
        """The chart's viewport repaints again (all of it: what was asked meanwhile was dropped)."""
        self._held.discard(chart)
        chart.viewport().setUpdatesEnabled(True)
