"""The plots panel: five charts in a grid (the roofline alone, on demand), a legend strip, the speedup baseline and a summary.

The charts live in ``panels.charts``; this panel feeds them one result table (a
live sweep) or several result sets overlaid (``workbench.views.compare``),
staggers their updates over timer ticks, applies one look (normal or
presentation, light or dark) to all of them, and shows one chart alone, large,
on a double click. Each chart draws its kind's spec (``workbench.views.spec``), which the
exports draw too; the legend strip shows the series, phases and band those specs name, and the
captions (a lesson's statement above the summary, the charts' notes) can be hidden.

While a sweep runs, what the charts draw is worked out away from the GUI thread: ``schedule``
hands the workspace's parts to the spec thread, which sends what changed to the spec process
(``workbench.views.spec_process``): it makes the result sets' series, the five specs and the
summary (plain data, ``workbench.views.live``, no Qt) in one go, in an interpreter of its own, so
that the GUI thread never waits for the GIL. The GUI thread then only draws them, a step of a
couple of milliseconds per timer tick (a series, a key entry, the labels), each chart repainted
in a tick after its last step (issue 19).
"""
from __future__ import annotations

import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from html import escape
from typing import Any, Callable, Mapping, Sequence

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout,
                               QWidget)

from panels import style
from panels.charts import EnergyChart, FirstCallChart, MemoryChart, RuntimeChart, SpeedupChart
from panels.legend import BAND_PREFIX, LegendStrip
from panels.roofline_chart import RooflineChart
from panels.style import Look
from panels.transfer_chart import TransferChart
from workbench.views import compare, spec
from workbench.views import overlay_verdicts, point_text
from workbench.core import stats
from workbench.core import verdicts
from workbench.views.compare import Baseline, Overlay
from workbench.results.files import ResultSet
from workbench.results.rows import caution, human_seconds, interval_text
from workbench.core.sizes import fmt_size
from workbench.results.rows import to_frame
from workbench.results.sets import SetParts, sets_of
from workbench.views import spec_process
from workbench.views.live import EMPTY_MESSAGE, Prepared, prepare, summary_text
from workbench.views.bands import INTERVAL
from workbench.views.palette import PHASE_LABELS
from workbench.catalog.backends import is_gpu

log = logging.getLogger(__name__)
CAUTION_COLOR = "#8a5a00"      # amber, as the experiment panel's notes: read with care, not an error
MIN_SUMMARY = (150, 100)

#: Between two steps of a live update (a chart's drawing, its repaint, the summary) in ms.
STAGGER_MS = 15

#: Between two turns of ``PlotsPanel._in_turns`` (ms): not 0, which Qt posts as an event, sent in
#: the same pass over the posted events as the one before (a timer comes between turns).
TURN_MS = 1

#: How long a step may draw before it leaves the rest of a chart to the next step (s).
STEP_S = 0.002

#: The steps of a panel's update after its charts' (``PlotsPanel._next``).
LEGEND, SUMMARY = "legend strip", "summary text"

#: How long the spec thread may hold the GIL while the GUI thread waits for it (seconds).
SWITCH_S = 0.0005


class PlotsPanel(QWidget):
    """The five charts in a grid, the legend strip, the speedup baseline chooser and the summary.

    ``schedule`` has the specs made in the spec process (or the spec thread), then draws them a
    step per timer tick and repaints each chart in a tick of its own, so that each is a short
    slice of the GUI thread (a few ms) rather than one long stall for all five.
    """

    updated = Signal()     # every chart shows the last scheduled table
    _prepared = Signal(object)     # a Prepared, from the spec thread (queued to the GUI thread)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style.setup_pyqtgraph()
        self.look = style.NORMAL
        self._pending: list = []
        # One step per tick: a chart's drawing, then its repaint, each in a turn of its own.
        self.stagger = QTimer(self, interval=STAGGER_MS, objectName="chartStagger")
        self.stagger.timeout.connect(self._next)
        self._held: set = set()         # charts drawn whose viewport repaints at the next step
        self._steps = None              # the drawing of the chart first in _pending, where under way
        self._turns: list = []          # what _in_turns has left to do
        self._generation = 0            # bumped by whatever makes a job in flight out of date
        self._specs_thread: ThreadPoolExecutor | None = None   # made at the first schedule
        self._job = None                # the spec thread's Future in flight
        self._job_data = None           # what it was given
        self._wanted: tuple | None = None   # (data, ) scheduled while a job was in flight
        self._ready: Prepared | None = None  # what the charts being drawn one by one draw
        self._prepared.connect(self._on_prepared)
        self.runtimePlot = RuntimeChart()
        self.memoryPlot = MemoryChart()
        self.transferPlot = TransferChart()
        self.speedupPlot = SpeedupChart()
        self.firstCallPlot = FirstCallChart()
        self.rooflinePlot = RooflineChart()
        self.energyPlot = EnergyChart()
        for chart in self.plots():
            chart.describe = self.describe
            chart.overlay_of = lambda: self.overlay    # its points' rows, for the hover
        self.baselineCombo = QComboBox(objectName="speedupBaseline")
        self.baselineCombo.setToolTip("The backend every speedup is measured against; when sets are "
                                      "compared, each set's own or one set's for all")
        self.baselineCombo.currentIndexChanged.connect(self._baseline_changed)
        self._overlay: Overlay | None = Overlay.of([])
        self._overlay_sets: Callable[[], Sequence[ResultSet]] | None = None   # makes it, where None
        self._labels: tuple[str, ...] = ()
        self._client: spec_process.SpecClient | None = None    # the spec process's, at the first parts
        self._job_sets = None           # what makes the sets of the job in flight (its overlay)
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
        # A sixth chart in the grid would not fit 1280x720: the roofline is shown alone, on demand.
        self.rooflineAction = QAction("&Roofline chart", self, objectName="rooflineAction", checkable=True,
                                      shortcut="Ctrl+Shift+R", toolTip="The roofline chart alone, in the charts' "
                                      "place (double click it, or this again, for every chart)")
        self.rooflineAction.toggled.connect(self.show_roofline)
        self.energyAction = QAction("&Energy chart", self, objectName="energyAction", checkable=True,
                                    shortcut="Ctrl+Shift+E", toolTip="The energy chart alone, in the charts' "
                                    "place (a sweep measures energy with Energy per call ticked)")
        self.energyAction.toggled.connect(self.show_energy)
        #: The charts shown only alone, on demand (a seventh cell would not fit 1280x720), with their actions.
        self.alone = {self.rooflinePlot: self.rooflineAction, self.energyPlot: self.energyAction}
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
                      self.firstCallPlot: self.firstCallPlot, self.rooflinePlot: self.rooflinePlot,
                      self.energyPlot: self.energyPlot}

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
        for chart in self.alone:                # only alone (show_roofline, show_energy)
            grid.addWidget(chart, 0, 0, 2, 3)
            chart.setVisible(False)
        self._transfers_shown = True      # the grid above; _arrange gives the cell away without a GPU series
        self._expect_transfers = False    # a sweep under way has GPU backends: the transfer chart stays
        self._stretch()
        self._arrange(False)              # nothing measured yet: nothing moved between host and device
        for chart in self.plots():
            chart.viewport().installEventFilter(self)
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

    @property
    def labels(self) -> tuple[str, ...]:
        """Each set's label, as the charts shown name them (cheap: the overlay is not made for it)."""
        return self._labels

    def plots(self) -> list[pg.PlotWidget]:
        return [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot, self.firstCallPlot,
                self.rooflinePlot, self.energyPlot]

    def clear(self, sweep: bool = False) -> None:
        """Empty every series (the items stay, for the next data); ``sweep``: a sweep begins, and
        :meth:`expect` reserves the legend strip's room anew (dropped here, then reserved a turn
        later, the room would relay every chart out twice); else the strip fits its data again."""
        for chart in self.plots():
            chart.clear_series()
        for chart in self.plots():
            chart.follow()
        self.overlay = Overlay.of([])
        self._context = None
        self.verdicts = []
        self._forget_jobs()
        self._expect_transfers = False
        if not sweep:
            self.legendStrip.reserve(None)
        self.legendStrip.clear()
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
        # In turns of their own (3 and 10 ms on a 2-core VM), and the panel repainted after the
        # last (6-9 ms): all at once, with the repaint, the sweep's start was a 34 ms stall.
        self._in_turns([lambda: self._arrange(self._expect_transfers or self._transfers_shown
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
        if self._job is not None:
            self._wanted = (data, sets)
            return
        self._submit(data, sets)

    def warm(self) -> None:
        """Start the spec process now, in the spec thread: at a sweep's first update, its start
        (a fork, pandas imported) slowed the GUI thread's first repaints of the sweep."""
        self._thread().submit(_warm, self._client)

    def _thread(self) -> ThreadPoolExecutor:
        if self._specs_thread is None:      # one thread, one job at a time: the latest data's
            self._specs_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chart-specs")
            # The GUI thread takes the GIL back from the spec thread within SWITCH_S, not Python's
            # 5 ms: where the specs are made in this thread, a repaint waited that long for each item.
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_S))
            self._client = spec_process.SpecClient()
        return self._specs_thread

    def _submit(self, data, sets=None) -> None:
        self._wanted = None
        marks = self.runtimePlot.lesson_marks
        job = self._thread().submit(_make, self._client, self._generation, data,
                                        self.baselineCombo.currentData(), None if marks is None else list(marks))
        self._job, self._job_data, self._job_sets = job, data, sets
        job.add_done_callback(self._job_done)

    def _job_done(self, job) -> None:
        """In the spec thread: hand what it made to the GUI thread (a queued signal)."""
        try:
            result = job.result()
        except BaseException as e:          # noqa: BLE001 - shown in the GUI thread, with its text
            result = e
        try:
            self._prepared.emit((job, result))
        except RuntimeError:                # the panel is gone (a test's window closed meanwhile)
            pass

    @Slot(object)
    def _on_prepared(self, message) -> None:
        job, result = message
        if job is not self._job:            # forgotten (the panel was cleared or drawn anew)
            return
        self._job = None
        if isinstance(result, BaseException):
            log.error("the charts could not be made: %s", result, exc_info=result)
            result = None
        elif result.generation != self._generation and self._wanted is None:
            self._submit(self._job_data, self._job_sets)    # made with a lesson's old marks: made again
            return
        if self._wanted is not None:        # newer data came meanwhile: make those, draw these not
            self._submit(*self._wanted)
            return
        if result is None:
            self._finished()
            return
        self._take(result)
        self._drop_steps()                  # a chart half drawn from older specs: drawn anew
        # Then the legend strip and the summary text, each a step of its own: the strip's relayout,
        # the summary's rich text laid out (3-4 ms) and its repaint in one turn, after a chart's
        # step, made 18-25 ms turns at a sweep's start (issue 19).
        self._pending = [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot,
                         self.firstCallPlot, self.rooflinePlot, self.energyPlot, LEGEND, SUMMARY]
        if not self.stagger.isActive():
            self.stagger.start()

    def _take(self, p: Prepared) -> None:
        """What the spec thread made becomes what the panel shows (cheap: the chooser, the grid)."""
        if p.overlay is not None:
            self.overlay = p.overlay
        else:                       # made in the spec process: the sets are made here if asked for
            self._overlay, self._labels = None, p.labels
            self._overlay_sets = self._job_sets or _sets_maker(self._job_data)
        self.verdicts = p.verdicts
        self._context = p.context
        self._ready = p
        self._offer_baselines(p.choices, p.baseline_text)
        if (self.baselineCombo.currentData() or "") != p.baseline_text:   # chosen meanwhile: made anew
            p.specs.pop("speedup", None)
            p.summary = None
            self.speedupPlot.set_baseline(self.baseline_choice(), p.labels)
        else:
            self.speedupPlot.set_baseline(p.baseline, p.labels)
        self._arrange(p.transfers or self._expect_transfers)

    def _next(self) -> None:
        if not self._pending:
            self._finished()
            return
        item = self._pending.pop(0)
        p = self._ready
        if isinstance(item, tuple):        # ("show", chart): drawn a step ago, repainted now
            self._release(item[1])
        elif item is LEGEND:
            self.legendStrip.flush()       # once every chart drew: one relayout, not one per chart
        elif item is SUMMARY:
            self._say(p.summary if p is not None else None)
        else:
            made = p.specs.get(item.kind) if p is not None else None
            # The chart's scene asks for its repaint as soon as the drawing ends, and Qt sends the
            # window's pending repaints right away: drawn (5-8 ms on a 2-core VM) and repainted
            # (8-9 ms) back to back, a live chart held the GUI thread 16-19 ms. Its viewport takes
            # no repaint until the next step, so a timer or input comes between (issue 19).
            self._hold(item)
            if made is None:
                self._steps = None
                self._draw(item, strip_now=False)
            else:
                if self._steps is None:
                    self._steps = item.steps(made)
                    self.legendStrip.show_chart(item.kind, made.legend, now=False)
                t0 = time.perf_counter()
                for _ in self._steps:
                    if time.perf_counter() - t0 > STEP_S:     # the rest at the next step
                        self._pending.insert(0, item)
                        return
                self._steps = None
            self._pending.insert(0, ("show", item))

    def _hold(self, chart) -> None:
        chart.viewport().setUpdatesEnabled(False)
        self._held.add(chart)

    def _release(self, chart) -> None:
        """The chart's viewport repaints again (all of it: what was asked meanwhile was dropped)."""
        self._held.discard(chart)
        chart.viewport().setUpdatesEnabled(True)

    def _finished(self) -> None:
        """Nothing in flight, nothing left to draw: the charts show the last data scheduled."""
        self.stagger.stop()
        self._ready = None
        if self._job is None and self._wanted is None:
            self.updated.emit()

    def _forget_jobs(self) -> None:
        """What is being made or drawn is out of date: dropped (a job in flight is let finish)."""
        self._generation += 1
        self._job = None
        self._wanted = None
        self._ready = None
        self._pending = []
        self.stagger.stop()
        self._drop_steps()

    def _drop_steps(self) -> None:
        """No chart is left half drawn or held: what comes next draws them whole."""
        self._steps = None
        for chart in list(self._held):
            self._release(chart)

    def shutdown(self) -> None:
        """Nothing more is drawn, and the spec thread ends (the window closes)."""
        self._turns = []
        self._forget_jobs()
        if self._client is not None:
            self._client.closed.set()       # a request waiting for the process stops waiting
        if self._specs_thread is not None:
            self._specs_thread.shutdown(wait=True, cancel_futures=True)
            self._specs_thread = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def update_from(self, data: pd.DataFrame | Sequence[ResultSet]) -> None:
        """Update every chart now (opened files, exports and tests; a live sweep uses ``schedule``)."""
        self._forget_jobs()
        self._prepare(data)
        for chart in self.plots():
            self._draw(chart, strip_now=False)
        self.legendStrip.flush()
        self._say()

    def _prepare(self, data: pd.DataFrame | Sequence[ResultSet]) -> None:
        sets = [ResultSet(data)] if isinstance(data, pd.DataFrame) else list(data)
        self.overlay = o = Overlay.of(sets)
        self._context = None
        # Each later set against the first, decided once per update: the summary and the hover read it.
        self.verdicts = overlay_verdicts.of_sets(o.sets, o.labels) if o.compare else []
        self._offer_baselines()
        self.speedupPlot.set_baseline(self.baseline_choice(), o.labels)
        frames = [rs.frame for rs in sets if not rs.frame.empty]
        self._arrange(any((f["host_memory"] != "").any() for f in frames))

    def _offer_baselines(self, items: list[tuple[str, str]] | None = None, default: str | None = None) -> None:
        """The chooser lists every baseline the sets allow; the one chosen stays chosen while it is there.
        ``items`` and ``default``: the chooser's (shown, text) items and the default text, where the
        spec thread made them."""
        if items is None:
            o = self.overlay
            items = [(b.describe(o.labels), b.text) for b in compare.baseline_choices(o.sets, o.labels)]
        combo = self.baselineCombo
        if not items or items == [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]:
            return
        current = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        for shown, text in items:
            combo.addItem(shown, text)
        texts = [text for _, text in items]
        if current not in texts and default is None:
            default = compare.baseline(self.overlay.sets, labels=self.overlay.labels).text
        combo.setCurrentIndex(texts.index(current) if current in texts else texts.index(default))
        combo.blockSignals(False)

    def baseline_choice(self) -> Baseline:
        """The chosen speedup baseline (as ``workbench.views.compare.baseline`` reads it: the exports use it too)."""
        text = self.baselineCombo.currentData()
        if not text:
            return Baseline("")
        try:
            return compare.baseline(self.overlay.sets, text, self.overlay.labels)
        except ValueError:          # the sets changed under the chooser: the default until it is rebuilt
            return compare.baseline(self.overlay.sets, labels=self.overlay.labels)

    def _draw(self, chart, strip_now: bool = True) -> None:
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
        self.speedupPlot.set_baseline(self.baseline_choice(), self.overlay.labels)
        if self._ready is not None:          # the charts still to draw: their speedup spec is the old baseline's
            self._ready.specs.pop("speedup", None)
            self._ready.summary = None
        if self.overlay.sets:
            self._draw(self.speedupPlot)
            self._say()

    def _summary(self) -> str:
        """The summary of each set against the baseline (its own, where a set lacks that backend);
        when sets are compared, each later set's verdicts against the first after them."""
        return summary_text(self.overlay, self.speedupPlot.baseline, self.verdicts)

    def _say(self, text: str | None = None) -> None:
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
        self._generation += 1               # a job in flight has the old marks: it is made again
        if self._ready is not None:         # and the charts still to draw are drawn here, with the new
            self._ready.specs.clear()
        if self.overlay.sets:
            for chart in self.plots():
                self._draw(chart)
        if self.lesson_html or self.overlay.sets:
            self._say()

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
            self._say()

    # --- what a point says when the pointer is on it -------------------------------------------

    def describe(self, row: dict, set_index: int = 0) -> str:
        """Backend, size, median with its 95 % interval and sample count, end-to-end, speedup; a
        caution where the machine or the noise asks for one; when sets are compared, the verdict
        against the first. Rich text: every name in it is escaped (a backend may be ``numba<!--``)."""
        label = row["backend"] + (f" ({row['variant']})" if row["variant"] else "")
        o = self.overlay
        where = f" ({escape(o.labels[set_index])})" if o.compare and set_index < len(o.labels) else ""
        gpu = bool(row.get("host_memory"))
        lines = [f"<b>{escape(label)}</b>{where} at {fmt_size(row['size'])}",
                 f"compute median {human_seconds(row['compute_median_s'])}, {spread_text(row, 'compute')}",
                 f"end-to-end {human_seconds(row['total_median_s'])}"
                 + (f", {spread_text(row, 'total')}" if gpu else "")]
        b = self.speedupPlot.choice
        ref = compare.baseline_rows(o.sets, b, set_index) if b.backend and o.sets else None
        if ref is not None and not (row["backend"] == b.backend and b.set_index in (None, set_index)):
            r = ref[(ref["size"] == row["size"]) & (ref["variant"] == row["variant"])]
            if len(r) and row["total_median_s"] > 0:
                base = r.iloc[0].to_dict()
                said = stats.describe(verdicts.compare_rows(row, base, "total_median_s"))
                lines.append(f"speedup over {escape(b.describe(o.labels))}: "
                             f"{base['total_median_s'] / row['total_median_s']:.3g}x "
                             f"end-to-end, {base['compute_median_s'] / row['compute_median_s']:.3g}x compute; "
                             f"end-to-end {escape(said)}")
        said = overlay_verdicts.point(self.verdicts, row, set_index) if set_index else None
        if said is not None:
            lines.append(f"end-to-end against {escape(o.labels[0])}: <b>{escape(said['described'])}</b>")
        for extra in (point_text.bound_text(row), point_text.memory_text(row), point_text.kernels_text(row),
                      point_text.energy_text(row)):
            if extra:
                lines.append(escape(extra))
        careful = caution(row)
        if careful:
            lines.append(f"<span style='color: {CAUTION_COLOR}'>{escape(careful)}</span>")
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
            cell.setVisible((self.solo is None or c is self.solo) and (c is not self.transferPlot
                                                                        or self._transfers_shown)
                            and (c not in self.alone or self.solo is c))
        for chart, action in self.alone.items():
            if action.isChecked() != (self.solo is chart):
                action.setChecked(self.solo is chart)
        self.summaryScroll.setVisible(self.solo is None)
        # Rows and columns left empty would keep their stretch (and their share of the space).
        where = self.grid.getItemPosition(self.grid.indexOf(self.cells[chart])) if self.solo else None
        self._stretch(where)

    def show_roofline(self, on: bool) -> None:
        """The roofline chart alone in the charts' place, or every other chart again."""
        self._show_alone(self.rooflinePlot, on)

    def show_energy(self, on: bool) -> None:
        """The energy chart alone in the charts' place, or every other chart again."""
        self._show_alone(self.energyPlot, on)

    def _show_alone(self, chart: QWidget, on: bool) -> None:
        if bool(on) != (self.solo is chart):
            self.toggle_solo(chart if on or self.solo is None else self.solo)

    def _stretch(self, where: tuple | None = None) -> None:
        """Each chart's column and row an equal share; the summary's column, without the transfer
        chart, a smaller one; only the solo chart's row and column where one is shown alone."""
        shares = (1, 1, 1) if self._transfers_shown else (2, 2, 1)
        for col, share in enumerate(shares):
            self.grid.setColumnStretch(col, share if where is None or col == where[1] else 0)
        for r in range(2):
            self.grid.setRowStretch(r, 1 if where is None or r == where[0] else 0)

    def _arrange(self, transfers: bool) -> None:
        """The transfer chart only where some series moves data between host and device: on a CPU
        sweep it would stay empty, so its cell goes to the other charts (two columns of two) and
        the summary takes the third column whole."""
        if transfers == self._transfers_shown:
            return
        if self.solo is not None:                   # a new arrangement: every chart again
            self.toggle_solo(self.solo)
        self._transfers_shown = transfers
        g, speed = self.grid, self.cells[self.speedupPlot]
        for w in (self.runtimePlot, speed, self.transferPlot, self.memoryPlot, self.firstCallPlot,
                  self.summaryScroll):
            g.removeWidget(w)
        g.addWidget(self.runtimePlot, 0, 0)
        g.addWidget(speed, 0, 1)
        g.addWidget(self.memoryPlot, 1, 0)
        g.addWidget(self.firstCallPlot, 1, 1)
        if transfers:
            g.addWidget(self.transferPlot, 0, 2)
            g.addWidget(self.summaryScroll, 1, 2)
        else:
            g.addWidget(self.summaryScroll, 0, 2, 2, 1)
        self.transferPlot.setVisible(transfers)
        self._stretch()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonDblClick:
            for chart in self.plots():
                if chart.viewport() is watched:
                    self.toggle_solo(chart)
                    return True
        return super().eventFilter(watched, event)


def _make(client: spec_process.SpecClient | None, generation: int, data, baseline_text: str | None,
          marks) -> Prepared:
    """In the spec thread: what ``data`` (as ``PlotsPanel.schedule`` takes it) shows. Parts go to
    the spec process; sets, and parts where that process cannot run, are made here."""
    if callable(data):
        data = data()
    if isinstance(data, SetParts):
        if client is not None:
            made = _in_process(lambda: client.prepare(generation, data, baseline_text, marks))
            if made is not _NOT_THERE:
                return made
        data = _parts_sets(data)
    return prepare(generation, data, baseline_text, marks)


def _warm(client: spec_process.SpecClient) -> None:
    """In the spec thread: the spec process started, where it can be."""
    _in_process(client.warm)


_NOT_THERE = object()      # what _in_process returns where no spec process can run


def _in_process(call: Callable[[], Any]) -> Any:
    """``call()``, a request to the spec process; ``_NOT_THERE`` where none can run: said once,
    and the spec thread makes the specs itself from then on."""
    if not spec_process.usable():
        return _NOT_THERE
    try:
        return call()
    except spec_process.Unavailable as e:
        log.warning("%s: the charts are made in the window's process", e)
        spec_process.give_up()
        return _NOT_THERE


def _parts_sets(parts: SetParts) -> list[ResultSet]:
    return sets_of(to_frame(parts.rows[:parts.count]), parts.origin, parts.compared, parts.environment,
                   parts.settings)


def _sets_maker(data) -> Callable[[], list[ResultSet]]:
    """What makes the sets of ``data`` (as ``schedule`` takes it), in the GUI thread."""
    def made() -> list[ResultSet]:
        d = data() if callable(data) else data
        if isinstance(d, SetParts):
            return _parts_sets(d)
        return [ResultSet(d)] if isinstance(d, pd.DataFrame) else list(d)
    return made


def spread_text(row: Mapping[str, Any], figure: str) -> str:
    """'95 % interval 1.2 ms-1.3 ms, n = 40' for ``figure`` ("compute" or "total") of a row; a file
    from before the intervals were kept gives its quartiles instead, and says so."""
    interval = interval_text(row.get(f"{figure}_ci_lo_s"), row.get(f"{figure}_ci_hi_s"))
    if interval != "-":
        return f"95 % interval {interval}, n = {int(row.get('repeats') or 0)}"
    return (f"q1 {human_seconds(row.get(f'{figure}_q1_s'))}, q3 {human_seconds(row.get(f'{figure}_q3_s'))} "
            f"(no interval in the file)")


