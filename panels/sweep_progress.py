"""A sweep on screen while it runs: the buttons, the progress bar and its estimate, the table's new
rows and the charts' refreshes, coalesced by timers so that fast points never flood the GUI thread."""
from __future__ import annotations

import html
import logging
import time
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from panels.status_line import short
from workbench.core.sizes import fmt_size
from workbench.measure import engine
from workbench.workspace import RunState
from workbench.workspace import events as ev

if TYPE_CHECKING:
    from panels.plots import PlotsPanel
    from panels.table import ResultsTable
    from panels.toolbar import RunToolBar
    from PySide6.QtWidgets import QStatusBar
    from workbench.workspace import Workspace

log = logging.getLogger(__name__)

PLOT_REFRESH_MS = 150   # coalesce plot updates: a few per second however fast points arrive
TABLE_REFRESH_MS = 250  # and the table's new rows
TABLE_RETRY_MS = 20     # how soon the table tries again where the charts were being drawn


class SweepProgress(QObject):
    """A sweep's events on screen: the progress bar and its labels, the table's new rows and the
    charts' refreshes. It owns the refresh timers and the sweep's state on screen (measuring, and
    finishing: the last points still being drawn); what the rest of the window does when a sweep
    begins or ends, it leaves to whoever listens to ``began`` and ``finished``."""

    began = Signal(object)          # ev.SweepBegan: on screen now (first False: a lesson's next run)
    stoppable = Signal(bool)        # Stop may be pressed (False: stopping, or ended)
    pointAdded = Signal(object)     # a row is in the table
    finished = Signal(object)       # ev.SweepEnded: its last points are drawn
    lessonEnded = Signal(object)    # lessons.Statement of a lesson of which nothing ran here

    def __init__(self, parent: QObject, workspace: Workspace, toolbar: RunToolBar, plots: PlotsPanel,
                 table: ResultsTable, status: QStatusBar, prefix: Callable[[], str]) -> None:
        super().__init__(parent)
        self.workspace, self.plots, self.table, self.status = workspace, plots, table, status
        self.progressBar, self.progressLabel, self.etaLabel = toolbar.progressBar, toolbar.progressLabel, toolbar.etaLabel
        self.prefix = prefix            # the lesson's "Lesson X, run 1 of 2: ", or ""
        self.t_start = 0.0
        self.current = ""
        self._finishing = False         # the last points are being drawn: Run waits for them
        self._measuring = False         # the progress bar and buttons show a sweep (SweepBegan came)
        self._spec = None
        self._ended: ev.SweepEnded | None = None
        self.refresh_timer = QTimer(self, singleShot=True, interval=PLOT_REFRESH_MS, objectName="plotRefresh")
        self.refresh_timer.timeout.connect(self.refresh_plots)
        # The table shows new rows a few times a second too: a row inserted per point repainted the
        # table, every visible cell read through Python, at every point.
        self.table_timer = QTimer(self, singleShot=True, interval=TABLE_REFRESH_MS, objectName="tableRefresh")
        self.table_timer.timeout.connect(self._table_rows)
        table.wait_while = plots.drawing.active     # columns too, between chart updates
        # The next refresh waits for the charts to have drawn the last one: a refresh that came while
        # they were still drawing started them over (the summary and the last charts lagged behind)
        # and its own work landed between two of theirs, one long stall of the GUI thread.
        plots.updated.connect(self._plots_drawn)

    @property
    def finishing(self) -> bool:
        """A sweep ended and its last points are being drawn: Run waits for them."""
        return self._finishing

    def stop_timers(self) -> None:
        self.refresh_timer.stop()
        self.table_timer.stop()

    def on_sweep_began(self, e: ev.SweepBegan) -> None:
        """A sweep is handed to the engine (``first`` False: a lesson's next run, whose rows join
        the last run's)."""
        spec = e.spec
        if e.first:
            self.table.results.attach(self.workspace.rows)
            self.plots.clear(sweep=True)
            if self.workspace.compared:        # they stay on screen while the new set is measured
                self._schedule()
        self._measuring = True
        self.progressBar.setRange(0, 0)   # busy until the worker says how many points
        self.progressBar.setFormat("starting...")
        self.etaLabel.setText("")
        self.progressLabel.setText(self.prefix() + "Starting the engine...")
        self.t_start = time.perf_counter()
        log.info("sweep: %s on %s, sizes %s, %s", spec.workload, ", ".join(spec.backends),
                 list(spec.sizes), spec.dtype)
        for note in e.notes:                  # the wall, announced: the sweep still runs every size
            log.warning("%s", note)
        if e.notes:
            self.status.showMessage(short(e.notes[0]))
        self.began.emit(e)

    def on_state_changed(self, e: ev.StateChanged) -> None:
        if e.state is RunState.STOPPING:
            self.progressBar.setFormat("stopping after the current repeat...")
            self.stoppable.emit(False)

    def on_sweep_planned(self, e: ev.SweepPlanned) -> None:
        self._spec = e.spec
        # What the sweep will show is laid out now, not when its first GPU point or entry comes.
        self.plots.expect(e.spec.backends)
        self.progressBar.setRange(0, e.total)
        self.progressBar.setValue(0)
        self.progressBar.setFormat(f"0 / {e.total} points")

    def on_point_began(self, e: ev.PointBegan) -> None:
        self.current = f"{e.backend} at {fmt_size(e.size)}" + (f", {e.variant}" if e.variant else "")
        self.progressBar.setFormat(f"{e.done} / {e.total} points")
        self.progressLabel.setText(f"{self.prefix()}Measuring {self.current}")
        self.etaLabel.setText(self._eta(e.done))

    def _eta(self, done: int) -> str:
        spec = self._spec
        total = self.workspace.total
        if total == 0 or spec is None:
            return "estimating..."
        left, ceiling = engine.time_left(spec, done, total, time.perf_counter() - self.t_start)
        if done == 0:     # nothing measured yet: the stopping rule's ceiling is all there is to say
            return f"at most about {ceiling:.0f} s of samples left" if ceiling >= 1 else "estimating..."
        return f"about {left:.0f} s left" if left >= 1 else "under a second left"

    def on_point_added(self, e: ev.PointAdded) -> None:
        row = e.row
        if not self.table_timer.isActive():          # the model reads the workspace's rows in place
            self.table_timer.start(TABLE_REFRESH_MS)
        self.progressBar.setValue(e.done)
        self.progressBar.setFormat(f"{e.done} / {e.total} points")
        if row["status"] != "ok":
            self.status.showMessage(short(f"{row['backend']} at size {row['size']:,}: {row['status']}: {row['message']}"))
            log.warning("%s at size %s: %s: %s", row["backend"], row["size"], row["status"], row["message"])
        if not self.refresh_timer.isActive() and not self.plots.drawing.active():
            self.refresh_timer.start()
        self.pointAdded.emit(row)

    @Slot()
    def _table_rows(self) -> None:
        """The new rows into the table, while the charts are not being drawn: the table's layout
        and repaint (10-12 ms) in the turn of a chart's step or repaint made a 16-22 ms stall."""
        if self.table.wait_while():      # the one rule of when the table waits (set above)
            self.table_timer.start(TABLE_RETRY_MS)
            return
        self.table.take_rows()

    @Slot()
    def refresh_plots(self) -> None:
        if self.workspace.rows:
            self._schedule()

    @Slot()
    def _plots_drawn(self) -> None:
        """The charts show the last refresh: points that came meanwhile get the next one."""
        self.table.results.set_labels(list(self.plots.labels))
        if self._measuring and not self._finishing and self.workspace.table.frame_is_behind():
            self.refresh_timer.start()

    def _schedule(self) -> None:
        # The sets' parts, taken in an instant, go to the spec process, which makes the sets and
        # their charts (workbench.views.spec_process); the sets are made here only where a hover or
        # an export asks for them.
        self.plots.schedule(self.workspace.parts, sets=self.workspace.result_sets)

    def on_sweep_ended(self, e: ev.SweepEnded) -> None:
        if not self._measuring:               # a lesson of which nothing runs here: its statement only
            self.table.results.attach(self.workspace.rows)
            self.plots.clear()
            if e.lesson is not None:
                self.lessonEnded.emit(e.lesson)
            return
        self._measuring = False
        self.plots.settle()
        cancelled, elapsed = e.cancelled, e.elapsed_s
        what = f"Lesson {e.lesson.title!r}" if e.lesson is not None else "Sweep"
        self.stop_timers()
        self.table.results.appended()       # every row in the table now
        self._finishing = True
        self._ended = e
        rows = self.workspace.rows
        if rows:
            self.plots.updated.connect(self._plots_final, Qt.ConnectionType.SingleShotConnection)
            self._schedule()
        else:           # not "Measuring the first point..." over a sweep that ended without one
            self.plots.say(html.escape(f"Nothing measured: the {what[0].lower() + what[1:]} "
                                       f"{'was stopped' if cancelled else 'ended'} before its first point."))
            self._plots_final()
        failed = sum(r["status"] != "ok" for r in rows)
        troubles = e.troubles
        # Never "done" over a sweep that could not run or whose engine died: say what happened.
        word = "stopped" if cancelled else ("failed" if troubles and not rows else
                                            "done with problems" if troubles else "done")
        self.progressBar.setRange(0, max(e.total, 1))
        self.progressBar.setValue(e.done)
        self.progressBar.setFormat(f"{word}: {e.done} / {e.total} points")
        self.progressLabel.setText(f"{what} {word} in {elapsed:.1f} s" + (f"; {failed} point(s) failed" if failed else ""))
        self.etaLabel.setText("")
        self.stoppable.emit(False)
        self.table.fit_columns()

    @Slot()
    def _plots_final(self) -> None:
        """The last points are drawn: the sweep is complete for whoever watches the window."""
        self._finishing = False
        self.finished.emit(self._ended)
