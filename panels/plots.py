"""The plots panel: five charts in a grid, a legend strip, the speedup baseline and a summary.

The charts live in ``panels.charts``; this panel feeds them one result table,
staggers their updates over timer ticks, applies one look (normal or
presentation, light or dark) to all of them, and shows one chart alone, large,
on a double click.
"""
from __future__ import annotations

import logging
import math

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout,
                               QWidget)

from panels import style
from panels.charts import FirstCallChart, MemoryChart, RuntimeChart, SpeedupChart
from panels.legend import LegendStrip
from panels.style import Look
from panels.transfer_chart import TransferChart
from workbench.registry import REGISTRY
from workbench.results import human_seconds
from workbench.sizes import fmt_size
from workbench.summary import summarize

log = logging.getLogger(__name__)
EMPTY_MESSAGE = "Pick a workload and press Run (Ctrl+R)"
CPU_BASELINES = ("numpy", "pandas", "numba")
MIN_SUMMARY = (150, 100)


class PlotsPanel(QWidget):
    """The five charts in a grid, the legend strip, the speedup baseline chooser and the summary.

    ``schedule`` updates one chart per timer tick, so each chart's update and repaint is its own
    short slice of the GUI thread (tens of ms) rather than one long stall for all five.
    """

    updated = Signal()     # every chart shows the last scheduled table

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style.setup_pyqtgraph()
        self.look = style.NORMAL
        self._pending: list = []
        self.stagger = QTimer(self, interval=15)
        self.stagger.timeout.connect(self._next)
        self.runtimePlot = RuntimeChart()
        self.memoryPlot = MemoryChart()
        self.transferPlot = TransferChart()
        self.speedupPlot = SpeedupChart()
        self.firstCallPlot = FirstCallChart()
        for chart in self.plots():
            chart.describe = self.describe
        self.baselineCombo = QComboBox(objectName="speedupBaseline")
        self.baselineCombo.setToolTip("The backend every speedup is measured against")
        self.baselineCombo.currentTextChanged.connect(self._baseline_changed)
        self.frame = pd.DataFrame()
        self._axis = None              # (sizes, unit) of the size axes, set per chart as it is drawn
        self.lesson_html = ""          # a lesson's statement, above the summary, until the next sweep
        self.marks: list = []          # (chart, pg.InfiniteLine): a break-even, a memory wall
        self.legendStrip = LegendStrip()
        self.summary = QLabel(EMPTY_MESSAGE, wordWrap=True, objectName="plotSummary")
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.baselineLabel = QLabel("Baseline:")

        speed = QWidget()
        sl = QVBoxLayout(speed)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.setSpacing(0)
        top = QHBoxLayout()
        top.addWidget(self.baselineLabel)
        top.addWidget(self.baselineCombo, 1)
        sl.addLayout(top)
        sl.addWidget(self.speedupPlot)
        self.solo: QWidget | None = None
        # The cell each chart sits in (the speedup chart shares its cell with the baseline chooser).
        self.cells = {self.runtimePlot: self.runtimePlot, self.speedupPlot: speed,
                      self.transferPlot: self.transferPlot, self.memoryPlot: self.memoryPlot,
                      self.firstCallPlot: self.firstCallPlot}

        outer = QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        outer.setSpacing(2)
        outer.addWidget(self.legendStrip)
        self.grid = grid = QGridLayout()
        grid.setSpacing(4)
        outer.addLayout(grid, 1)
        grid.addWidget(self.runtimePlot, 0, 0)
        grid.addWidget(speed, 0, 1)
        grid.addWidget(self.transferPlot, 0, 2)
        grid.addWidget(self.memoryPlot, 1, 0)
        grid.addWidget(self.firstCallPlot, 1, 1)
        # In a scroll area: a long summary in large text must not claim the height of a chart row.
        self.summaryScroll = QScrollArea(objectName="summaryScroll")
        self.summaryScroll.setWidget(self.summary)
        self.summaryScroll.setWidgetResizable(True)
        self.summaryScroll.setFrameShape(QFrame.Shape.NoFrame)
        self.summaryScroll.setMinimumSize(*MIN_SUMMARY)
        grid.addWidget(self.summaryScroll, 1, 2)
        for c in range(3):
            grid.setColumnStretch(c, 1)
        for r in range(2):
            grid.setRowStretch(r, 1)
        for chart in self.plots():
            chart.viewport().installEventFilter(self)
        self.apply_look(self.look)

    def plots(self) -> list[pg.PlotWidget]:
        return [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot, self.firstCallPlot]

    def clear(self) -> None:
        """A new sweep: empty every series (the items stay, for the next data)."""
        for chart in self.plots():
            chart.clear_series()
        self.frame = pd.DataFrame()
        self._axis = None
        self._pending = []
        self.stagger.stop()
        self.legendStrip.show_backends([], False, self.look)
        self.set_lesson("", ())
        self.summary.setText("Measuring the first point...")

    def schedule(self, frame: pd.DataFrame) -> None:
        """Update the charts from ``frame``, one per timer tick; ``updated`` fires when all are done."""
        self._prepare(frame)
        self._pending = [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot,
                         self.firstCallPlot, None]   # None: the summary text
        if not self.stagger.isActive():
            self.stagger.start()

    def _next(self) -> None:
        if not self._pending:
            self.stagger.stop()
            self.updated.emit()
            return
        item = self._pending.pop(0)
        if item is None:
            self._say()
        else:
            self._draw(item)

    def update_from(self, frame: pd.DataFrame) -> None:
        """Update every chart now (exports and tests; the window uses ``schedule``)."""
        self._prepare(frame)
        for chart in self.plots():
            self._draw(chart)
        self._say()

    def _prepare(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        backends = list(dict.fromkeys(frame["backend"]))
        if backends and [self.baselineCombo.itemText(i) for i in range(self.baselineCombo.count())] != backends:
            current = self.baselineCombo.currentText()
            self.baselineCombo.blockSignals(True)
            self.baselineCombo.clear()
            self.baselineCombo.addItems(backends)
            cpu = [b for b in backends if b in CPU_BASELINES]
            self.baselineCombo.setCurrentText(current if current in backends else (cpu or backends)[0])
            self.baselineCombo.blockSignals(False)
        self.speedupPlot.set_baseline(self.baselineCombo.currentText())
        if frame.empty:
            return
        try:
            unit = REGISTRY.get(str(frame["workload"].iloc[0])).size_unit
        except KeyError:           # a plug-in's workload no longer loaded: a plain name
            unit = "size"
        # Each chart's size axis is laid out in its own tick of the stagger (measuring tick labels
        # for five charts at once stalled the GUI thread for 50 ms).
        self._axis = (frame["size"].to_numpy(), unit)
        self.legendStrip.show_backends(backends, bool((frame["host_memory"] != "").any()), self.look)

    def _draw(self, chart) -> None:
        if self._axis is not None:
            chart.set_size_axis(*self._axis)
        chart.update_from(self.frame)

    def _baseline_changed(self, name: str) -> None:
        self.speedupPlot.set_baseline(name)
        if not self.frame.empty:
            self.speedupPlot.update_from(self.frame)
            self._say()

    def _say(self) -> None:
        """The summary: a lesson's statement first, where one was run, then what the points show."""
        text = summarize(self.frame, self.speedupPlot.baseline) if not self.frame.empty else ""
        self.summary.setText(self.lesson_html + ("<hr>" if self.lesson_html and text else "") + text)

    # --- a lesson's statement and its marks on the size axis ------------------------------------

    def set_lesson(self, html: str, marks) -> None:
        """Show a lesson's statement above the summary, and each (size, label) of ``marks`` as a
        labelled vertical line on the charts whose x axis is the size; empty ones take them away."""
        for chart, line in self.marks:
            chart.removeItem(line)
        self.marks = []
        self.lesson_html = html
        sizes = self.frame["size"].to_numpy(float) if not self.frame.empty else None
        for size, label in marks:
            if sizes is None or not sizes.min() <= size <= sizes.max():
                continue          # a line off the measured range would stretch the axis to reach it
            for chart in (self.runtimePlot, self.speedupPlot, self.memoryPlot, self.firstCallPlot):
                line = pg.InfiniteLine(pos=math.log10(size), angle=90, movable=False, label=label,
                                       pen=pg.mkPen(self.look.foreground, width=max(1.5, self.look.line_px / 2),
                                                    style=Qt.PenStyle.DashLine),
                                       labelOpts={"position": 0.97, "anchors": [(0, 0), (0, 0)],
                                                  "color": self.look.foreground, "fill": self.look.background})
                line.setObjectName(f"mark:{label}")
                line.setZValue(-5)
                chart.addItem(line, ignoreBounds=True)
                self.marks.append((chart, line))
        if self.lesson_html or not self.frame.empty:
            self._say()

    def mark_positions(self, chart) -> list[tuple[float, str]]:
        """The marks a chart shows, as (size, label): for tests and exports."""
        return [(10 ** line.value(), line.label.toPlainText()) for c, line in self.marks if c is chart]

    # --- what a point says when the pointer is on it -------------------------------------------

    def describe(self, row: dict) -> str:
        """Backend, size, median and quartiles, end-to-end and speedup of one point (rich text)."""
        label = row["backend"] + (f" ({row['variant']})" if row["variant"] else "")
        lines = [f"<b>{label}</b> at {fmt_size(row['size'])}",
                 f"compute median {human_seconds(row['compute_median_s'])} "
                 f"(q1 {human_seconds(row['compute_q1_s'])}, q3 {human_seconds(row['compute_q3_s'])})",
                 f"end-to-end {human_seconds(row['total_median_s'])}"]
        base = self.speedupPlot.baseline
        if base and base != row["backend"] and not self.frame.empty:
            f = self.frame
            b = f[(f["backend"] == base) & (f["size"] == row["size"]) & (f["variant"] == row["variant"])
                  & (f["status"] == "ok")]
            if len(b) and row["total_median_s"] > 0:
                lines.append(f"speedup over {base}: {b['total_median_s'].iloc[0] / row['total_median_s']:.3g}x "
                             f"end-to-end, {b['compute_median_s'].iloc[0] / row['compute_median_s']:.3g}x compute")
        return "<br>".join(lines)

    # --- how it looks -------------------------------------------------------------------------

    def apply_look(self, look: Look) -> None:
        """One font size, line width and theme for every chart, the legend and the summary."""
        self.look = look
        for chart in self.plots():
            chart.apply_look(look)
        font = QFont()
        font.setPointSize(look.font_pt)
        for w in (self.baselineLabel, self.baselineCombo):
            w.setFont(font)
        self.summary.setStyleSheet(f"font-size: {look.font_pt + 1}pt; padding: 6px; color: {look.foreground};"
                                   f"background: {look.background};")
        self.summaryScroll.setStyleSheet(f"background: {look.background};")
        self.legendStrip.apply_look(look)

    def set_mouse_zoom(self, on: bool) -> None:
        """Wheel and drag zoom on or off (off for a talk: a touchpad brush must not move a chart)."""
        for chart in self.plots():
            chart.getViewBox().setMouseEnabled(x=on, y=on)

    # --- one chart alone, large ----------------------------------------------------------------

    def toggle_solo(self, chart: QWidget) -> None:
        """Show ``chart`` alone in the panel, or, if it is alone, every chart again."""
        self.solo = None if self.solo is chart else chart
        for c, cell in self.cells.items():
            cell.setVisible(self.solo is None or c is self.solo)
        self.summaryScroll.setVisible(self.solo is None)
        # Rows and columns left empty would keep their stretch (and their share of the space).
        where = self.grid.getItemPosition(self.grid.indexOf(self.cells[chart])) if self.solo else None
        for col in range(3):
            self.grid.setColumnStretch(col, 1 if where is None or col == where[1] else 0)
        for r in range(2):
            self.grid.setRowStretch(r, 1 if where is None or r == where[0] else 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonDblClick:
            for chart in self.plots():
                if chart.viewport() is watched:
                    self.toggle_solo(chart)
                    return True
        return super().eventFilter(watched, event)
