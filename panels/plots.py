"""The plots panel: five charts in a grid (the roofline alone, on demand), a legend strip, the speedup baseline and a summary.

The charts (``panels.charts``) are fed one result table (a live sweep) or several sets overlaid
(``workbench.views.compare``), each drawing its kind's spec (``workbench.views.spec``), which the exports
draw too; a double click shows one alone. The specs are made off the GUI thread (``panels.spec_pipeline``)
and drawn a step per timer tick (``panels.chart_drawing``); a point's hover text is ``panels.point_hover``.
"""
from __future__ import annotations

import logging
from html import escape
from typing import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from panels import point_hover, style
from panels.baseline_chooser import BaselineChooser
from panels.chart_grid import ChartGrid
from panels.chart_drawing import LEGEND, SUMMARY, ChartDrawing  # noqa: F401 - the steps' names, for tests
from panels.charts import Chart, EnergyChart, FirstCallChart, MemoryChart, RuntimeChart, SpeedupChart
from panels.legend import BAND_PREFIX, LegendStrip
from panels.roofline_chart import RooflineChart
from panels.spec_pipeline import SpecPipeline
from panels.style import Look
from panels.transfer_chart import TransferChart
from workbench.catalog.backends import is_gpu
from workbench.core.lazy import lazy_module
from workbench.results.files import ResultSet
from workbench.results.sets import SetParts
from workbench.views import chart_kinds, compare, overlay_verdicts, spec
from workbench.views.bands import INTERVAL
from workbench.views.compare import Baseline, Overlay
from workbench.views.live import EMPTY_MESSAGE, Prepared, summary_text
from workbench.views.palette import PHASE_LABELS

pd = lazy_module("pandas")      # imported at first use: not needed to show the window
log = logging.getLogger(__name__)
MIN_SUMMARY = (150, 100)

#: Between two turns of ``PlotsPanel._in_turns`` (ms): not 0, which Qt sends in the same pass as the last.
TURN_MS = 1


class PlotsPanel(QWidget):
    """The five charts in a grid, the legend strip, the speedup baseline chooser and the summary.
    ``schedule`` has the specs made off the GUI thread (``specs``), then draws them a step per timer
    tick (``drawing``): each a short slice of the GUI thread rather than one long stall for all five."""

    updated = Signal()     # every chart shows the last scheduled table
    pointClicked = Signal(object)   # a chart's point clicked: (backend, variant, size, set index)
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style.setup_pyqtgraph()
        self.look = style.NORMAL
        self.specs = SpecPipeline(self._spec_inputs, self)
        self.specs.made.connect(self.draw)
        self.specs.failed.connect(self._finished)
        self.drawing = ChartDrawing(self)
        self.drawing.done.connect(self._finished)
        self.specs.unchanged.connect(self.drawing.finish)      # the data drawn already: nothing to draw
        self._turns: list = []          # what _in_turns has left to do
        self.runtimePlot = RuntimeChart()
        self.memoryPlot = MemoryChart()
        self.transferPlot = TransferChart()
        self.speedupPlot = SpeedupChart()
        self.firstCallPlot = FirstCallChart()
        self.rooflinePlot = RooflineChart()
        self.energyPlot = EnergyChart()
        self.baselineCombo = BaselineChooser()
        self.baselineCombo.currentIndexChanged.connect(self._baseline_changed)
        self._overlay: Overlay | None = Overlay.of([])
        self._overlay_sets: Callable[[], Sequence[ResultSet]] | None = None   # makes it, where None
        self._labels: tuple[str, ...] = ()
        self.verdicts: list[overlay_verdicts.SetVerdicts] = []    # each later set's against the first
        self.lesson_html = ""          # a lesson's statement, above the summary, until the next sweep
        self._context = None           # workbench.views.spec.context of the sets shown
        self.captions_shown = True     # the lesson's statement and the charts' notes
        self.captionsAction = QAction("Chart &captions", self, objectName="captionsAction", checkable=True,
                                      checked=True, toolTip="A lesson's statement above the summary, and the "
                                      "charts' notes: off, the charts keep the room")
        self.captionsAction.toggled.connect(self.show_captions)
        self.keysAction = QAction("Chart &keys", self, objectName="keysAction", checkable=True, checked=True,
                                  toolTip="Each chart's key to its line styles (solid, dashed, rings): off, "
                                  "a small chart keeps the room for its plot")
        self.keysAction.toggled.connect(self.show_keys)
        # A sixth chart in the grid would not fit 1280x720: these are shown alone, on demand, as is
        # any kind another package declares (workbench.views.chart_kinds), drawn from its spec.
        self.rooflineAction = self._alone_action(self.rooflinePlot, "&Roofline chart", "Ctrl+Shift+R",
                                                 "The roofline chart alone, in the charts' place (double "
                                                 "click it, or this again, for every chart)")
        self.energyAction = self._alone_action(self.energyPlot, "&Energy chart", "Ctrl+Shift+E",
                                               "The energy chart alone, in the charts' place (a sweep "
                                               "measures energy with Energy per call ticked)")
        self.alone = {self.rooflinePlot: self.rooflineAction, self.energyPlot: self.energyAction}
        #: The charts of kinds declared elsewhere (another package's entry point), in their order.
        self.added: list[Chart] = []
        # The timeline is of one point: it opens in a window of its own (panels.timeline_view).
        own = {chart.kind for chart in self.plots()} | {"timeline"}
        for kind in chart_kinds.declared():
            if kind.name not in own:
                chart = Chart(kind.name, f"{kind.name}Plot")
                self.added.append(chart)
                self.alone[chart] = self._alone_action(chart, f"{kind.short_title.replace('&', '&&')} chart", "",
                                                       f"The {kind.name} chart alone, in the charts' place")
        self.hover = point_hover.HoverRows(self._shown_parts, lambda: self.overlay.sets)
        for chart in self.plots():
            chart.pointClicked.connect(self.pointClicked)
            chart.describe = self.describe
            chart.rows_of = self.hover.rows            # its points' rows, for the hover
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
        # The cell each chart sits in (the speedup chart shares its cell with the baseline chooser).
        cells = {self.runtimePlot: self.runtimePlot, self.speedupPlot: speed,
                 self.transferPlot: self.transferPlot, self.memoryPlot: self.memoryPlot,
                 self.firstCallPlot: self.firstCallPlot, self.rooflinePlot: self.rooflinePlot,
                 self.energyPlot: self.energyPlot, **{chart: chart for chart in self.added}}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        outer.setSpacing(2)
        outer.addWidget(self.legendStrip)
        # In a scroll area: a long summary in large text must not claim the height of a chart row.
        self.summaryScroll = QScrollArea(objectName="summaryScroll")
        self.summaryScroll.setWidget(self.summary)
        self.summaryScroll.setWidgetResizable(True)
        self.summaryScroll.setFrameShape(QFrame.Shape.NoFrame)
        self.summaryScroll.setMinimumSize(*MIN_SUMMARY)
        self.grid = ChartGrid(cells, self.summaryScroll, self.transferPlot, self.alone)
        outer.addLayout(self.grid, 1)
        self._expect_transfers = False    # a sweep under way has GPU backends: the transfer chart stays
        self.grid.arrange(False)          # nothing measured yet: nothing moved between host and device
        self.apply_look(self.look)

    @property
    def overlay(self) -> Overlay:
        """The sets shown. Where the spec process made the specs, it kept the sets' tables: they
        are made here again only when something asks (a hover, a baseline chosen, an export)."""
        if self._overlay is None:
            self._overlay = Overlay.of(list(self._overlay_sets()) if self._overlay_sets is not None else [])
        return self._overlay

    @overlay.setter
    def overlay(self, overlay: Overlay) -> None:
        self._overlay, self._overlay_sets = overlay, None
        self._labels = tuple(overlay.labels)
        self.hover.forget()

    def _shown_parts(self):
        shown = self.specs.shown
        return shown() if self._overlay is None and callable(shown) else None

    def describe(self, row: dict, set_index: int = 0) -> str:
        """A point's hover text, against the baseline chosen (``panels.point_hover``)."""
        return point_hover.describe(row, set_index, self.labels, self.speedupPlot.choice, self.verdicts,
                                    self.hover.rows())

    @property
    def sets_made(self) -> bool:
        """Whether the sets shown are made in this process (not yet, after a live update, until asked)."""
        return self._overlay is not None

    @property
    def laying_out(self) -> bool:
        """Whether ``expect``'s layout turns are still under way."""
        return bool(self._turns)

    @property
    def labels(self) -> tuple[str, ...]:
        """Each set's label, as the charts shown name them (cheap: the overlay is not made for it)."""
        return self._labels

    def plots(self) -> list[pg.PlotWidget]:
        return [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot, self.firstCallPlot,
                self.rooflinePlot, self.energyPlot, *self.added]

    def _alone_action(self, chart, text: str, shortcut: str, tip: str) -> QAction:
        """A View menu action that shows ``chart`` alone in the charts' place, and every chart again."""
        action = QAction(text, self, objectName=f"{chart.objectName().removesuffix('Plot')}Action",
                         checkable=True, shortcut=shortcut, toolTip=tip)
        action.toggled.connect(lambda on: self.grid.show_alone(chart, on))
        return action

    def clear(self, sweep: bool = False, held: bool = False) -> None:
        """Empty every series (the items stay); ``sweep``: a sweep begins, and :meth:`expect`
        reserves the legend strip's room anew. ``held``: sets are scheduled next, each chart held
        until its own step (five empty repaints in one pass were 185 ms at 2 x 5,000 points)."""
        for chart in self.plots():
            chart.clear_series()
        for chart in self.plots():
            chart.follow()
        self.overlay = Overlay.of([])
        self._context = None
        self.verdicts = []
        self._forget_jobs()
        if held:
            self.drawing.hold(self.plots())     # until the next drawing's steps, or its end
        self._expect_transfers = False
        if not sweep:
            self.legendStrip.reserve(None)
        # Held, the strip keeps its entries until the new ones come (emptied, every chart resized twice).
        self.legendStrip.forget() if held else self.legendStrip.clear()
        self.set_lesson("", None)
        self.summary.setText("Measuring the first point...")

    def expect(self, backends: Sequence[str]) -> None:
        """A sweep of ``backends`` begins: lay out now what it will show, so that nothing is laid out
        anew while its points arrive (every chart resized and repainted at once, 40-90 ms): the
        transfer chart where a backend is a GPU's, and the legend strip as high as its entries will
        need (each backend, the phases, the band)."""
        self._expect_transfers = any(is_gpu(b) for b in backends)
        phases = [PHASE_LABELS[p] for p in ("h2d", "compute", "d2h")] if self._expect_transfers else []
        labels = [*backends, *phases, f"{BAND_PREFIX}{INTERVAL}"]
        # In turns of their own, the panel repainted after the last: all at once they stalled the
        # GUI thread at a sweep's start (docs/PERFORMANCE.md, "Figures behind the code's choices").
        self._in_turns([lambda: self.grid.arrange(self._expect_transfers or self.grid.transfers_shown
                                              and bool(self.overlay.sets)),
                        lambda: self.legendStrip.reserve(labels)])

    def settle(self) -> None:
        """The sweep ended: the next update lays the panel out from its data alone. The legend
        strip keeps its room until the panel is cleared: given back now, it relaid every chart out
        and repainted all five in one turn as the sweep's last update came (47 ms, issue 19)."""
        self._finish_turns()
        self._expect_transfers = False

    def _in_turns(self, steps: Sequence[Callable[[], None]]) -> None:
        """Each of ``steps`` in a turn of the event loop of its own, the panel repainted only
        after the last."""
        self._finish_turns()
        self.setUpdatesEnabled(False)
        self._turns = [*steps, lambda: self.setUpdatesEnabled(True)]
        QTimer.singleShot(TURN_MS, self, self._turn)

    @Slot()
    def _turn(self) -> None:
        if self._turns:
            self._turns.pop(0)()
        if self._turns:
            QTimer.singleShot(TURN_MS, self, self._turn)

    def _finish_turns(self) -> None:
        """What is left of ``_in_turns``, done now."""
        while self._turns:
            self._turns.pop(0)()

    def schedule(self, data: pd.DataFrame | Sequence[ResultSet] | Callable[[], Sequence[ResultSet] | SetParts],
                 sets: Callable[[], Sequence[ResultSet]] | None = None) -> None:
        """Update the charts from ``data`` (a result table, result sets to overlay, or a function
        that returns them or their parts, called in the spec thread): the specs are made in the
        spec process (parts) or the spec thread, then drawn one chart per timer tick; ``updated``
        fires when the last data scheduled are drawn. Data scheduled while a job is in flight wait
        for it; only the latest is made. ``sets``: what makes the sets of parts, where the panel
        needs them (``overlay``)."""
        self.specs.schedule(data, sets)

    def show_sets(self, parts: Callable[[], SetParts], sets: Callable[[], Sequence[ResultSet]]) -> None:
        """Sets opened, restored or compared, drawn as a live update is (``schedule``; ``updated``
        once drawn; at once, 2 x 5,000 points held the GUI thread 5-6 s). Until they are drawn,
        what asks for the sets shown (an export's baseline) gets these."""
        self._overlay, self._overlay_sets = None, sets
        self.hover.forget()
        self.schedule(parts, sets)

    def offer_baselines(self, sets: Sequence[ResultSet], labels: Sequence[str]) -> None:
        """The chooser lists ``sets``' baselines (``labels``: each set's) before their charts are drawn (a
        saved session chooses its own right after showing them)."""
        self.baselineCombo.offer_for(sets, labels)

    def warm(self) -> None:
        """Start the spec process now (the window calls it when it is ready), not at a sweep's first update."""
        self.specs.warm()

    def _spec_inputs(self) -> tuple[str | None, list | None]:
        """What the specs depend on besides the data: the baseline chosen and a lesson's marks."""
        marks = self.runtimePlot.lesson_marks
        return self.baselineCombo.currentData(), None if marks is None else list(marks)

    @Slot(object, object)
    def draw(self, p: Prepared, sets: Callable[[], Sequence[ResultSet]] | None = None,
             items: Sequence | None = None) -> None:
        """What the spec pipeline made: the chooser and grid now, then the charts of ``items`` (all),
        the legend strip and the summary, a step per tick; ``sets``: what makes ``p``'s sets."""
        self._take(p, sets)
        self.drawing.start(p, items)

    def _take(self, p: Prepared, sets) -> None:
        """What the spec thread made becomes what the panel shows (cheap: the chooser, the grid)."""
        if p.overlay is not None:
            self.overlay = p.overlay
        else:                       # made in the spec process: the sets are made here if asked for
            self._overlay, self._labels = None, p.labels
            self._overlay_sets = sets
            self.hover.forget()
        self.verdicts = p.verdicts
        self._context = p.context
        self._offer_baselines(p.choices, p.baseline_text)
        if (self.baselineCombo.currentData() or "") != p.baseline_text:   # chosen meanwhile: made anew
            p.specs.pop("speedup", None)
            p.summary = None
            self.speedupPlot.set_baseline(self.baseline_choice(), p.labels)
        else:
            self.speedupPlot.set_baseline(p.baseline, p.labels)
        self.grid.arrange(p.transfers or self._expect_transfers)

    @Slot()
    def _finished(self) -> None:
        """Nothing in flight, nothing left to draw: the charts show the last data scheduled."""
        self.drawing.halt()
        self.legendStrip.flush()        # what the charts say now, drawn or not (no specs made)
        if not self.specs.busy:
            self.updated.emit()
        self.hover.catch_up()           # the rows new since the last update, not 5,000 at a hover

    def _forget_jobs(self) -> None:
        """What is being made or drawn is out of date: dropped (a job in flight is let finish)."""
        self.specs.forget()
        self.drawing.stop()

    def shutdown(self) -> None:
        """Nothing more is drawn, and the spec thread ends (the window closes)."""
        self._turns = []
        self.drawing.stop()
        self.specs.shutdown()

    def update_from(self, data: pd.DataFrame | Sequence[ResultSet]) -> None:
        """Update every chart now (opened files, exports and tests; a live sweep uses ``schedule``)."""
        self._forget_jobs()
        self._prepare(data)
        for chart in self.plots():
            self.draw_chart(chart, strip_now=False)
        self.legendStrip.flush()
        self.say()

    def _prepare(self, data: pd.DataFrame | Sequence[ResultSet]) -> None:
        sets = [ResultSet(data)] if isinstance(data, pd.DataFrame) else list(data)
        self.overlay = o = Overlay.of(sets)
        self._context = None
        # Each later set against the first, decided once per update: the summary and the hover read it.
        self.verdicts = overlay_verdicts.of_sets(o.sets, o.labels) if o.compare else []
        self._offer_baselines()
        self.speedupPlot.set_baseline(self.baseline_choice(), o.labels)
        self.grid.arrange(any((rs.frame["host_memory"] != "").any() for rs in sets if not rs.frame.empty))

    def _offer_baselines(self, items: list[tuple[str, str]] | None = None, default: str | None = None) -> None:
        """The chooser lists every baseline the sets allow. ``items`` and ``default``: the chooser's
        (shown, text) items and the default text, where the spec thread made them."""
        if items is None:
            o = self.overlay
            items = [(b.describe(o.labels), b.text) for b in compare.baseline_choices(o.sets, o.labels)]
        # The sets read only where the default is made: each live update made them here (issue 38).
        self.baselineCombo.offer(items, default if default is not None else
                                 lambda: compare.baseline(self.overlay.sets, labels=self.labels).text)

    def baseline_choice(self) -> Baseline:
        """The chosen speedup baseline of the sets shown (the exports use it too)."""
        return self.baselineCombo.choice(self.overlay.sets, self.overlay.labels)

    def draw_chart(self, chart, strip_now: bool = True) -> None:
        chart.update_from(self.overlay, self._shared())
        self.legendStrip.show_chart(chart.kind, chart.spec.legend, now=strip_now)

    def _shared(self):
        """What the five charts' specs share (their series, walls, a lesson's marks), worked out
        once per update rather than once per chart."""
        if self._context is None:
            o = self.overlay
            self._context = spec.context(o.sets, labels=o.labels, marks=self.runtimePlot.lesson_marks,
                                         series=o.series)
        return self._context

    def _baseline_changed(self, _index: int) -> None:
        if self.specs.busy:
            # A job in flight read the chooser before this choice: made again with it, off the GUI thread.
            self.specs.invalidate()
            return
        if self.specs.shown is not None:
            # The pipeline's specs are shown: it makes them anew with this baseline (it reads the
            # chooser), off the GUI thread (made here: 0.6-1.5 s at 5,000 points, issue 38).
            self.specs.schedule(self.specs.shown, self._overlay_sets)
            return
        self.speedupPlot.set_baseline(self.baseline_choice(), self.overlay.labels)
        ready = self.drawing.ready
        if ready is not None:                # the charts still to draw: their speedup spec is the old baseline's
            ready.specs.pop("speedup", None)
            ready.summary = None
        if self.overlay.sets:
            self.draw_chart(self.speedupPlot)
            self.say()

    def _summary(self) -> str:
        """The summary against the baseline, and each later set's verdicts against the first."""
        return summary_text(self.overlay, self.speedupPlot.baseline, self.verdicts)

    def say(self, text: str | None = None) -> None:
        """The summary: a lesson's statement first, where one was run, then what the points show
        (``text``, where the spec thread made it)."""
        if text is None:
            text = self._summary() if self.overlay.sets else ""
        head = self._caption_html() if self.captions_shown else ""
        self.summary.setText(head + ("<hr>" if head and text else "") + text)

    def _caption_html(self) -> str:
        """A lesson's statement: as the window said it when the lesson ran, else the caption the
        charts' specs carry (a lesson's result file opened), the exports' caption."""
        if self.lesson_html:
            return self.lesson_html
        caption = self.runtimePlot.spec.caption if self.runtimePlot.spec is not None else ""
        return escape(caption)

    # --- a lesson's statement and its marks on the size axis ------------------------------------

    def set_lesson(self, html: str, marks) -> None:
        """Show a lesson's statement above the summary, and each (size, label) of ``marks`` as a
        labelled vertical line on the charts whose x axis is the size (within the sizes measured:
        a line off them would stretch the axis); ``marks`` None: those the sets carry (a lesson's
        file opened), as the exports read them."""
        self.lesson_html = html
        for chart in self.plots():
            chart.lesson_marks = None if marks is None else [(float(size), str(label)) for size, label in marks]
        self._context = None
        self.specs.invalidate()             # a job in flight has the old marks: it is made again
        if self.drawing.ready is not None:  # and the charts still to draw are drawn here, with the new
            self.drawing.ready.specs.clear()
        if self.overlay.sets:
            for chart in self.plots():
                self.draw_chart(chart)
        if self.lesson_html or self.overlay.sets:
            self.say()

    @property
    def marks(self) -> list:
        """(chart, line) of each lesson mark drawn: a break-even, a wall a lesson names."""
        return [(chart, chart.mark_items[key]) for chart in self.plots() if hasattr(chart, "marks_shown")
                for key in chart.marks_shown if key[0] == "lesson"]

    def mark_positions(self, chart) -> list[tuple[float, str]]:
        """The lesson marks a chart shows, as (size, label): for tests and exports."""
        return chart.marks_drawn("lesson") if hasattr(chart, "marks_drawn") else []

    def show_keys(self, on: bool) -> None:
        """Each chart's key to its line styles shown or hidden (the legend strip stays)."""
        if self.keysAction.isChecked() != bool(on):
            self.keysAction.setChecked(bool(on))
        for chart in self.plots():
            chart.show_key(on)

    def show_captions(self, on: bool) -> None:
        """The lesson's statement above the summary and the charts' notes, shown or hidden: at
        1280x720 a six-line statement takes the summary's room, a note a small chart's corner."""
        self.captions_shown = bool(on)
        if self.captionsAction.isChecked() != self.captions_shown:
            self.captionsAction.setChecked(self.captions_shown)
        for chart in self.plots():
            chart.show_notes(self.captions_shown)
        if self.overlay.sets or self.lesson_html:
            self.say()

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
        self.grid.toggle_solo(chart)

    def chosen_baseline(self) -> str:   # "numpy", "numpy@2", "" (the default): read without making the sets
        return self.baselineCombo.chosen()
