"""The workbench window: the experiment panel, live plots, results, environment and log.

The window shows a workspace (``workbench.workspace.Workspace``) and sends it commands: the
session itself (the sweep's settings and rows, the sets compared, the journal, the run state,
a lesson in progress) is held there, without Qt, as the command line holds its own. The sweep
runs in the worker thread of ``panels.worker``; its messages arrive here as signals carrying
plain data and go to the workspace, whose events this window turns into what is on screen.
Plot updates are coalesced by a timer so that fast points never flood the GUI thread.

Plots, table and every export read ``result_sets()``; the File menu (``panels.files``) opens
and writes them.
"""
from __future__ import annotations

import gc
import logging
import sys
import time
from html import escape
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QMainWindow, QMessageBox, QScrollArea,
                               QTabWidget, QVBoxLayout, QWidget)

from panels.experiment import ExperimentPanel
from panels.files import FileActions
from panels.notice import NoticeBar
from panels.restore import RestoreBar
from panels.run_on import RunOnBox
from panels.info import EnvironmentPanel, LogPanel, QtLogHandler
from panels.plots import PlotsPanel
from panels.presentation import Presentation
from panels.toolbar import RunToolBar
from panels.table import ResultsTable
from panels.worker import SweepController
from panels.workload_files import WorkloadFiles
from workbench.cli import display
from workbench.core import atomic
from workbench.measure import engine
from workbench.results import journal
from workbench import lessons
from workbench.measure import protocol
from workbench.views import provenance
from workbench.results import files as result_files
from workbench.catalog.backends import is_gpu, probe_all
from workbench.results.files import ResultSet
from workbench.results.session_file import EXPERIMENT_FIELDS
from workbench.core.sizes import fmt_bytes_exact, fmt_size
from workbench.workspace import RunState, Workspace
from workbench.workspace import events as ev

log = logging.getLogger(__name__)
PLOT_REFRESH_MS = 150   # coalesce plot updates: a few per second however fast points arrive
TABLE_REFRESH_MS = 250  # and the table's new rows
TABLE_RETRY_MS = 20     # how soon the table tries again where the charts were being drawn


class MainWindow(QMainWindow):
    # Emitted in the GUI thread, after the window has taken the worker's news in (tests wait on these).
    ready = Signal()                  # availability probed and environment read
    pointAdded = Signal(object)       # a row is in the table
    sweepCompleted = Signal(bool)     # cancelled?
    restored = Signal(int)            # an interrupted session's points are shown again (how many)
    lessonCompleted = Signal(object)  # a lesson's statement (lessons.Statement) is shown
    busyChanged = Signal(bool)        # a sweep began (True) or its last points are drawn (False)

    def __init__(self, settings: QSettings | None = None, plugins: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.setWindowTitle("GPU Workbench")
        self.settings = settings or QSettings("GPU Workbench", "gpu-workbench")
        # Every finished point goes to this window's journal (beside the settings) before it is
        # shown: after a kill, the next start offers it back. What killed sessions left is read
        # before this one's journal exists; another window's live journal is locked and left alone.
        folder = Path(self.settings.fileName()).parent
        # The session: held by the workspace, which this window shows and sends commands to. The
        # engine is started and stopped through the controller below (the worker's thread).
        self.workspace = Workspace(
            start=self._start_engine, stop=self._stop_engine,
            journals=journal.Journals(folder / "journals",
                                      legacy=(folder / "journal.jsonl", folder / "journal.previous.jsonl")))
        self.confirm_close = self._ask_to_stop      # tests put an answer in its place
        # The worker's supervisor journals every point (in the worker's thread) before it is shown.
        self.controller = SweepController(self, plugins, self.workspace.journal)   # the engine loads the plug-ins too
        self._wanted_backends: list[str] = []   # ticked again once the deep probe says which can run
        self._ready = False
        self.t_start = 0.0
        self.current = ""
        self._finishing = False         # the last points are being drawn: Run waits for them
        self._measuring = False         # the progress bar and buttons show a sweep (SweepBegan came)
        self._spec = None
        #: Instead of a lesson's own sizes, repeats or budget (a quick try, a test): plan()'s keywords.
        self.lesson_overrides: dict = {}

        # Widgets -----------------------------------------------------------------------------------
        self.experiment = ExperimentPanel()
        self.toolbar = RunToolBar(self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.toolbar)
        self.runButton = self.toolbar.runButton
        self.stopButton = self.toolbar.stopButton
        self.progressBar = self.toolbar.progressBar
        self.progressLabel = self.toolbar.progressLabel
        self.etaLabel = self.toolbar.etaLabel
        self.restoreBar = RestoreBar(self)
        self.addToolBarBreak()
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.restoreBar)
        self.notice = NoticeBar(self)
        self.addToolBarBreak()
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.notice)
        self.restoreBar.restoreRequested.connect(self.restore_interrupted)
        self.restoreBar.discardRequested.connect(self.discard_interrupted)

        scroll = QScrollArea()
        scroll.setWidget(self.experiment)
        scroll.setWidgetResizable(True)
        scroll.setMinimumWidth(300)
        self.runOn = RunOnBox()          # this machine, a local Dask cluster, a lab's scheduler
        dock = QWidget(objectName="experimentDockContents")
        dock_layout = QVBoxLayout(dock)
        dock_layout.setContentsMargins(0, 0, 0, 0)
        dock_layout.addWidget(scroll, 1)
        dock_layout.addWidget(self.runOn)
        self.experimentDock = QDockWidget("Experiment", self, objectName="experimentDock")
        self.experimentDock.setWidget(dock)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.experimentDock)

        self.plots = PlotsPanel()
        self.setCentralWidget(self.plots)
        self.runtimePlot = self.plots.runtimePlot
        self.memoryPlot = self.plots.memoryPlot
        self.transferPlot = self.plots.transferPlot
        self.speedupPlot = self.plots.speedupPlot
        self.firstCallPlot = self.plots.firstCallPlot

        self.resultsTable = ResultsTable()
        self.environment = EnvironmentPanel()
        self.logPanel = LogPanel()
        tabs = QTabWidget(objectName="bottomTabs")
        tabs.addTab(self.resultsTable, "Results")
        tabs.addTab(self.environment, "Device and environment")
        tabs.addTab(self.logPanel, "Log")
        self.resultsDock = QDockWidget("Results", self, objectName="resultsDock")
        self.resultsDock.setWidget(tabs)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.resultsDock)
        for dock in (self.experimentDock, self.resultsDock):
            dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                             | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.presentation = Presentation(self, (self.experimentDock, self.resultsDock))
        self.status = self.statusBar()

        self.log_handler = QtLogHandler()
        self.log_handler.emitter.message.connect(self.logPanel.append_line)
        logging.getLogger().addHandler(self.log_handler)
        if logging.getLogger().level > logging.INFO or logging.getLogger().level == logging.NOTSET:
            logging.getLogger().setLevel(logging.INFO)
        for note in self.workspace.notes:     # found before this log existed: journals not read or kept
            log.warning("%s", note)

        self.refresh_timer = QTimer(self, singleShot=True, interval=PLOT_REFRESH_MS, objectName="plotRefresh")
        self.refresh_timer.timeout.connect(self.refresh_plots)
        # The table shows new rows a few times a second too: a row inserted per point repainted the
        # table (every visible cell read through Python) at every point, 3 to 5 ms each (issue 19).
        self.table_timer = QTimer(self, singleShot=True, interval=TABLE_REFRESH_MS, objectName="tableRefresh")
        self.table_timer.timeout.connect(self._table_rows)
        self.resultsTable.wait_while = self.plots.drawing.active     # columns too, between chart updates
        # The next refresh waits for the charts to have drawn the last one: a refresh that came while
        # they were still drawing started them over (the summary and the last charts lagged behind)
        # and its own work landed between two of theirs, one long stall of the GUI thread.
        self.plots.updated.connect(self._plots_drawn)

        self._make_actions()

        # Signals: worker -> bound slots of this GUI-thread object (never lambdas) ------------------
        # Everything the worker reports is one signal of protocol messages, handed to the workspace;
        # what it makes of them (and the messages it keeps nothing of) comes back as its events,
        # dispatched by this one table.
        self.handlers = {
            ev.SweepBegan: self.on_sweep_began, ev.SweepPlanned: self.on_sweep_planned,
            ev.PointBegan: self.on_point_began, ev.PointAdded: self.on_point_added,
            ev.SweepEnded: self.on_sweep_ended, ev.StateChanged: self.on_state_changed,
            ev.Trouble: self.on_trouble, ev.SetsShown: self.on_sets_shown,
            ev.EnvironmentRead: self.on_environment, protocol.LogLine: self.on_log_line,
            protocol.ProbeResults: self.on_backends_probed,
        }
        self.workspace.listen(self.on_event)
        self.resultsTable.results.attach(self.workspace.rows)
        self.controller.worker.message.connect(self.on_message)
        self.runButton.clicked.connect(self.run)
        self.stopButton.clicked.connect(self.stop)
        self.experiment.validityChanged.connect(self.on_validity)
        self.runOn.targetChanged.connect(self.on_run_on)

        # A quick probe (no child process) fills the backend list at once; the worker's deep probe
        # (a tiny computation per GPU library) then corrects it.
        self.experiment.set_availability(probe_all(deep=False))
        self.restore_settings()
        self._offer_next()
        self.controller.probe()

    # --- actions and menus ------------------------------------------------------------------------

    def _make_actions(self) -> None:
        def action(text, slot, shortcut=None, name=None):
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if name:
                a.setObjectName(name)
            a.triggered.connect(slot)
            return a

        self.runAction = action("&Run sweep", self.run, "Ctrl+R", "runAction")
        self.stopAction = action("&Stop", self.stop, "Esc", "stopAction")
        self.stopAction.setEnabled(False)
        quit_action = action("&Quit", self.close, QKeySequence.StandardKey.Quit, "quitAction")
        full = action("&Full screen", self.toggle_full_screen, "F11", "fullScreenAction")
        about = action("&About", self.about)
        p = self.presentation
        self.presentationAction = action("&Presentation mode", p.set_presenting, "F5", "presentationAction")
        self.darkAction = action("&Dark theme", p.set_dark, "Ctrl+Shift+D", "darkAction")
        self.zoomAction = action("Mouse-wheel &zoom", p.set_mouse_zoom, None, "zoomAction")
        for a in (self.presentationAction, self.darkAction, self.zoomAction):
            a.setCheckable(True)
        self.zoomAction.setChecked(True)
        larger = action("&Larger text", p.larger, QKeySequence.StandardKey.ZoomIn, "largerTextAction")
        smaller = action("&Smaller text", p.smaller, QKeySequence.StandardKey.ZoomOut, "smallerTextAction")

        self.files = FileActions(self)
        self.busyChanged.connect(self.files.update_enabled)
        file_menu = self.menuBar().addMenu("&File")
        self.workloadFiles = WorkloadFiles(self, self.controller.worker.plugins)    # --plugin's files too
        for group in [*self.files.menu_groups(), [self.workloadFiles.openAction]]:
            file_menu.addActions(group)
            file_menu.addSeparator()
        file_menu.addAction(quit_action)
        run_menu = self.menuBar().addMenu("&Run")
        run_menu.addActions([self.runAction, self.stopAction])
        view = self.menuBar().addMenu("&View")
        view.addActions([self.experimentDock.toggleViewAction(), self.resultsDock.toggleViewAction()])
        view.addSeparator()
        view.addActions([self.presentationAction, self.darkAction, larger, smaller, self.zoomAction])
        view.addActions([self.plots.keysAction, self.plots.captionsAction, self.plots.rooflineAction,
                         self.plots.energyAction])
        view.addSeparator()
        view.addAction(full)
        # Lessons: one click sets up the experiment and runs it; the statement follows the sweep.
        self.lessonsMenu = self.menuBar().addMenu("&Lessons")
        self.lessonsMenu.setObjectName("lessonsMenu")
        self.lessonsMenu.setToolTipsVisible(True)
        for ls in lessons.LESSONS.values():
            a = QAction(ls.title, self)
            a.setObjectName(f"lesson:{ls.name}")
            a.setData(ls.name)
            a.setToolTip(ls.claim)
            a.setStatusTip(ls.claim)
            self.lessonsMenu.addAction(a)
        self.lessonsMenu.addSeparator()
        # Its data stays empty: on_lesson_chosen runs only the actions that name a lesson.
        self.exportLessonAction = action("&Export the lesson's chart and text...", self.ask_export_lesson,
                                         None, "exportLessonAction")
        self.exportLessonAction.setEnabled(False)
        self.lessonsMenu.addAction(self.exportLessonAction)
        self.lessonsMenu.triggered.connect(self.on_lesson_chosen)
        self.menuBar().addMenu("&Help").addAction(about)

    def toggle_full_screen(self) -> None:
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    def about(self) -> None:
        QMessageBox.about(self, "GPU Workbench", "GPU Workbench: see what a GPU does for your Python code.")

    # --- running -----------------------------------------------------------------------------------

    @Slot(bool, str)
    def on_validity(self, ok: bool, problem: str) -> None:
        idle = not self.busy
        self.runButton.setEnabled(ok and idle)
        self.runAction.setEnabled(ok and idle)
        self.lessonsMenu.setEnabled(idle)       # a lesson sets its own experiment up: only the busy matter
        self.runButton.setToolTip(problem or "Run the sweep (Ctrl+R)")

    @property
    def rows(self) -> list:
        """The main set's rows (the live sweep's, or the file opened): the workspace's list, the one
        place they live; the table's model reads it in place."""
        return self.workspace.rows

    # What the workspace holds, by the names this window's callers know.
    @property
    def origin(self) -> ResultSet | None:
        return self.workspace.origin

    @property
    def compared(self) -> list[ResultSet]:
        return self.workspace.compared

    @property
    def sweep_settings(self) -> dict:
        return self.workspace.settings

    @property
    def total(self) -> int:
        return self.workspace.total

    @property
    def journal(self):
        return self.workspace.journal

    @property
    def journals(self):
        return self.workspace.journals

    @property
    def _orphans(self) -> list:
        return self.workspace.orphans

    @property
    def _cancelled(self) -> bool:
        return self.workspace.cancelled

    @property
    def lesson_statement(self) -> lessons.Statement | None:
        return self.workspace.statement

    @property
    def busy(self) -> bool:
        """A sweep runs, or its last points are still being drawn: Run waits for both."""
        return self.workspace.busy or self._finishing

    @Slot()
    def run(self) -> None:
        if self.busy or not self.experiment.validate():
            return
        spec = self.experiment.spec()
        if spec is None:
            return
        self.workspace.run(spec)

    def _start_engine(self, spec) -> None:
        """The workspace starts a sweep: the worker's thread runs it."""
        self.controller.start(spec)

    def _stop_engine(self) -> None:
        self.controller.stop()

    @Slot(object)
    def on_message(self, message) -> None:
        """Every message of the worker, to the workspace (its events come back to on_event)."""
        self.workspace.handle(message)

    def on_event(self, event) -> None:
        protocol.dispatch(self.handlers, event)

    def on_sweep_began(self, e: ev.SweepBegan) -> None:
        """A sweep is handed to the engine (``first`` False: a lesson's next run, whose rows join
        the last run's)."""
        spec = e.spec
        if e.first:
            self.exportLessonAction.setEnabled(False)
            self.resultsTable.results.attach(self.workspace.rows)
            self.plots.clear(sweep=True)
            if self.compared:                  # they stay on screen while the new set is measured
                self._schedule()
            self.save_settings()
            self.restoreBar.hide()             # a new sweep: the old session's points are not this one's
            self.notice.hide()
            self._show_environments(self.compared, provenance.labels(self.result_sets())[1:])
        else:
            self.experiment.dtypeCombo.setCurrentText(spec.dtype)
            self.experiment.hostMemoryCombo.setCurrentText(spec.host_memory)
        self._measuring = True
        # The experiment is fixed while it runs: a workload switch now would be half-applied
        # (new sizes and unit on screen, the old sweep's points arriving), so it is refused.
        self.experiment.set_locked(True)
        self.runOn.setEnabled(False)
        self.runButton.setEnabled(False)
        self.runAction.setEnabled(False)
        self.lessonsMenu.setEnabled(False)
        self.stopButton.setEnabled(True)
        self.stopAction.setEnabled(True)
        self.progressBar.setRange(0, 0)   # busy until the worker says how many points
        self.progressBar.setFormat("starting...")
        self.etaLabel.setText("")
        self.progressLabel.setText(self._lesson_prefix() + "Starting the engine...")
        self.t_start = time.perf_counter()
        log.info("sweep: %s on %s, sizes %s, %s", spec.workload, ", ".join(spec.backends),
                 list(spec.sizes), spec.dtype)
        for note in e.notes:                  # the wall, announced: the sweep still runs every size
            log.warning("%s", note)
        if e.notes:
            self.status.showMessage(short(e.notes[0]))
        if e.first:
            self.busyChanged.emit(True)

    # --- lessons -----------------------------------------------------------------------------------

    @Slot(QAction)
    def on_lesson_chosen(self, action: QAction) -> None:
        if action.data():
            self.run_lesson(str(action.data()))

    def run_lesson(self, name: str) -> bool:
        """Set the experiment up as the lesson declares it and run its sweeps; when they end, the
        statement is shown (and ``lessonCompleted`` fires). False when a sweep is running."""
        if self.busy:
            return False
        ls = lessons.get(name)
        availability = self.experiment.availability or probe_all(deep=False)
        plan = lessons.plan(ls, availability, **self.lesson_overrides)
        self._show_plan(plan)
        log.info("lesson %s: %d sweep(s)%s", name, len(plan.specs),
                 "".join(f"; {b} not run: {why}" for b, why in plan.skipped))
        if ls.fresh_engine and plan.specs:
            self.controller.worker.engine.renew()
        # Nothing of it runs here: the workspace ends it at once, with what a GPU would show.
        self.workspace.run_lesson(plan)
        return True

    def _show_plan(self, plan: lessons.Plan) -> None:
        """The experiment panel shows the lesson's (first) sweep: what is about to run."""
        e = self.experiment
        e.select_workload(plan.lesson.workload)
        spec = plan.specs[0] if plan.specs else None
        sizes = spec.sizes if spec else plan.lesson.sizes
        e.sizeFrom.setText(fmt_size(sizes[0]))
        e.sizeTo.setText(fmt_size(sizes[-1]))
        e.sizeSteps.setValue(len(sizes))
        if spec is not None:
            e.set_checked_backends(list(spec.backends))
            e.dtypeCombo.setCurrentText(spec.dtype)
            e.hostMemoryCombo.setCurrentText(spec.host_memory)
            e.repeatsSpin.setValue(spec.min_repeats)
            e.budgetSpin.setValue(spec.budget_s)
            e.noiseSpin.setValue(100 * spec.noise)
            e.deviceMemoryLimit.setText(fmt_bytes_exact(spec.device_memory_limit) if spec.device_memory_limit else "")

    def _lesson_prefix(self) -> str:
        lesson = self.workspace.lesson
        if lesson is None:
            return ""
        p, run = lesson.plan, lesson.run
        label = p.run_label(run)
        return f"Lesson {p.lesson.title}" + (f", run {run + 1} of {len(p.specs)} ({label})"
                                             if label else "") + ": "

    def _show_statement(self, statement: lessons.Statement) -> None:
        """The lesson's statement, with the numbers just measured, above the summary; its marks on
        the plots; ``lessonCompleted`` for whoever waits on it."""
        verdict = {True: "#1b7a1b", False: "#b00020"}.get(statement.holds, "#666")
        html = (f"<b>Lesson: {escape(statement.title)}</b><br><span style='color: {verdict}'><b>"
                f"{escape(statement.verdict)}</b></span><br>"
                + "<br>".join(escape(s) for s in statement.sentences))
        self.plots.set_lesson(html, statement.marks)
        self.status.showMessage(f"Lesson {statement.title}: {statement.verdict}")
        log.info("lesson %s: %s %s", statement.lesson, statement.verdict, statement.text)
        self.exportLessonAction.setEnabled(bool(self.rows))
        self.lessonCompleted.emit(statement)

    @Slot()
    def stop(self) -> None:
        self.workspace.stop()

    def on_state_changed(self, e: ev.StateChanged) -> None:
        if e.state is RunState.STOPPING:
            self.progressBar.setFormat("stopping after the current repeat...")
            self.stopButton.setEnabled(False)
            self.stopAction.setEnabled(False)

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
        self.progressLabel.setText(f"{self._lesson_prefix()}Measuring {self.current}")
        self.etaLabel.setText(self._eta(e.done))

    def _eta(self, done: int) -> str:
        spec = self._spec
        if self.total == 0 or spec is None:
            return "estimating..."
        left, ceiling = engine.time_left(spec, done, self.total, time.perf_counter() - self.t_start)
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
        if self.resultsTable.wait_while():      # the one rule of when the table waits (set above)
            self.table_timer.start(TABLE_RETRY_MS)
            return
        self.resultsTable.take_rows()

    @Slot()
    def refresh_plots(self) -> None:
        if self.rows:
            self._schedule()

    @Slot()
    def _plots_drawn(self) -> None:
        """The charts show the last refresh: points that came meanwhile get the next one."""
        self.resultsTable.results.set_labels(list(self.plots.labels))
        if self._measuring and not self._finishing and self.workspace.table.frame_is_behind():
            self.refresh_timer.start()

    def _schedule(self) -> None:
        # The sets' parts, taken in an instant, go to the spec process, which makes the sets and
        # their charts (workbench.views.spec_process); the sets are made here only where a hover or
        # an export asks for them.
        self.plots.schedule(self.workspace.parts, sets=self.workspace.result_sets)

    def on_sweep_ended(self, e: ev.SweepEnded) -> None:
        if not self._measuring:               # a lesson of which nothing runs here: its statement only
            self.resultsTable.results.attach(self.workspace.rows)
            self.plots.clear()
            if e.lesson is not None:
                self._show_statement(e.lesson)
            return
        self._measuring = False
        self.plots.settle()
        cancelled, elapsed = e.cancelled, e.elapsed_s
        what = f"Lesson {e.lesson.title!r}" if e.lesson is not None else "Sweep"
        self.refresh_timer.stop()
        self.table_timer.stop()
        self.resultsTable.results.appended()       # every row in the table now
        self._finishing = True
        self._ended = e
        if self.rows:
            self.plots.updated.connect(self._plots_final, Qt.ConnectionType.SingleShotConnection)
            self._schedule()
        else:
            self._plots_final()
        failed = sum(r["status"] != "ok" for r in self.rows)
        troubles = e.troubles
        # Never "done" over a sweep that could not run or whose engine died: say what happened.
        word = "stopped" if cancelled else ("failed" if troubles and not self.rows else
                                            "done with problems" if troubles else "done")
        self.progressBar.setRange(0, max(e.total, 1))
        self.progressBar.setValue(e.done)
        self.progressBar.setFormat(f"{word}: {e.done} / {e.total} points")
        self.progressLabel.setText(f"{what} {word} in {elapsed:.1f} s" + (f"; {failed} point(s) failed" if failed else ""))
        self.etaLabel.setText("")
        self.stopButton.setEnabled(False)
        self.stopAction.setEnabled(False)
        self.resultsTable.fit_columns()

    @Slot()
    def _plots_final(self) -> None:
        """The last points are drawn: the sweep is complete for whoever watches the window."""
        self._finishing = False
        self.experiment.set_locked(False)
        self.runOn.setEnabled(True)
        self.on_validity(self.experiment.validate(), self.experiment.problem)
        ended = self._ended
        if ended.lesson is not None:
            self._show_statement(ended.lesson)
        self.busyChanged.emit(False)
        self.sweepCompleted.emit(ended.cancelled)

    def on_trouble(self, e: ev.Trouble) -> None:
        """A sweep the engine refused, an engine that died, a request that failed in it, a Dask
        scheduler lost (said where the user looks too; the points measured before are on screen
        and journalled)."""
        self.status.showMessage(short(e.text))
        if e.traceback:
            log.error("%s\n%s", e.text, e.traceback)
        else:
            log.error("%s", e.text)
        if e.what == "lost":
            self.notice.show_problem(e.text)

    @Slot()
    def on_run_on(self) -> None:
        """Run on another machine (or this one again): the backend list becomes what it can run."""
        if self.controller.use(self.runOn.target()):
            self.status.showMessage("Asking the cluster which backends its workers can run..."
                                    if self.runOn.target() is not None else "Running on this machine")
            self.controller.probe()

    def on_log_line(self, message: protocol.LogLine) -> None:
        logging.getLogger("engine").log(logging.getLevelName(message.level), message.text)

    def on_environment(self, e: ev.EnvironmentRead) -> None:
        # The workspace merged it (a sweep with cudf-pandas ends in its own engine, whose record
        # lacks the limits the shared engine measured for the other backends' points).
        self.environment.show_record(e.record)
        if self._ready:
            return                      # the record again after a sweep, with the limits it measured
        self._ready = True
        # The window, Qt's wrappers, pandas and pyqtgraph are built now and live as long as the
        # window: out of the collector's way, so that a full collection during a sweep walks only
        # what the sweep made (it walked everything, 60 ms on the GUI thread, a dropped frame).
        gc.freeze()
        self.plots.warm()
        self.ready.emit()

    def on_backends_probed(self, message: protocol.ProbeResults) -> None:
        availability = message.availability
        self.experiment.set_availability(availability)
        self.restore_backends()
        bad = [n for n, a in availability.items() if not a.usable and is_gpu(n)]
        for n in bad:                  # the reasons go to the log; the status line stays one sentence
            log.info("%s not usable here: %s", n, availability[n].reason)
        if not bad:
            self.status.showMessage("All backends usable")
        elif len(bad) == sum(is_gpu(n) for n in availability):
            self.status.showMessage("CPU backends ready; the GPU backends need a CUDA GPU and its libraries "
                                    "(why each is off: the Log tab)")
        else:
            self.status.showMessage(short(f"{len(bad)} GPU backend(s) not usable here: {', '.join(bad)} "
                                          "(why: the Log tab)"))

    # --- what is on screen ------------------------------------------------------------------

    def result_sets(self) -> list[ResultSet]:
        """Every set on screen, the main one first: what the plots, the table and every export show."""
        return self.workspace.result_sets()

    def show_sets(self, sets: list[ResultSet]) -> None:
        """Show result sets as if they had just been measured: the first is the main set (its rows in
        the table and the plots as a sweep's), the others compared with it."""
        if self.busy or not sets:
            return
        self.workspace.show_sets(sets)

    def on_sets_shown(self, e: ev.SetsShown) -> None:
        sets = self.result_sets()
        if e.restored:              # the interrupted session's points, beside the sets compared
            self.resultsTable.results.attach(self.workspace.rows)
            self.plots.update_from(sets)
            return
        main = sets[0]
        self.plots.clear()
        self.plots.update_from(sets)
        labels = list(self.plots.overlay.labels)
        self.resultsTable.results.show_sets(self.workspace.rows,
                                            [rs.frame.to_dict("records") for rs in self.compared], labels)
        self.resultsTable.fit_columns()
        self._show_environments(sets, labels)
        self.progressBar.setRange(0, 1)
        self.progressBar.setValue(1 if self.rows else 0)
        self.progressBar.setFormat(f"{len(self.rows)} points shown")
        self.progressLabel.setText(f"Showing {_where(main)}" + (f" and {len(self.compared)} compared set(s)"
                                                                   if self.compared else ""))
        self.etaLabel.setText("")
        self.files.update_enabled()

    def _show_environments(self, sets: list[ResultSet], labels: list[str]) -> None:
        """The records the sets were measured with, where they are not this machine's."""
        self.environment.show_sources([(f"{label or 'Results'} ({_where(rs)})", rs.environment)
                                       for rs, label in zip(sets, labels)
                                       if rs.environment != self.workspace.environment])

    def show_session(self, experiment: dict, sets: list[ResultSet], view: dict) -> list[str]:
        """A saved session as it was: the experiment's settings, its sets, the baseline; what could not
        be chosen here (a backend not usable on this machine), in words."""
        unmet = self.experiment.apply_settings(experiment)
        if isinstance(experiment.get("backends"), list):
            self._wanted_backends = list(experiment["backends"])
        if sets:
            self.show_sets(sets)
            index = self.plots.baselineCombo.findData(view.get("baseline", ""))
            if index >= 0:
                self.plots.baselineCombo.setCurrentIndex(index)
        return unmet

    def ask_export_lesson(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export the lesson to")
        if folder:
            try:
                self.export_lesson(folder)
            except OSError as exc:          # a folder we may not write in: said where the user looks
                self.status.showMessage(f"Could not export the lesson to {folder}: {exc.strerror or exc}")

    def export_lesson(self, folder: str | Path) -> list[Path]:
        """The lesson's statement as text, and its chart with the statement as caption and the
        break-even marked (matplotlib, in the exports' child process: the same figure
        ``gpu-workbench lesson --chart`` writes)."""
        st, folder = self.lesson_statement, Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        text = folder / "lesson.txt"
        atomic.write_text(text, f"{st.caption()}\n")
        ls = lessons.get(st.lesson)
        rs = result_files.live(self.workspace.table.frame(), self.workspace.environment, {"lesson": st.as_settings()})
        measured = set(rs.frame.loc[rs.frame["status"] == "ok", "backend"])
        baseline = ls.baseline if ls.baseline in measured else None
        chart = self.files.job.child.run("workbench.views.matplotlib_charts:export", [rs], folder / "lesson.png", ls.chart,
                                         baseline_name=baseline)
        return [text, *chart]

    # --- settings ----------------------------------------------------------------------------------

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState())
        for key, value in self.experiment.settings().items():
            s.setValue(f"experiment/{key}", ",".join(value) if key == "backends" else value)
        s.setValue("runOn/scheduler", self.runOn.address.text())     # the address; each start runs here
        self.presentation.save(s)
        s.sync()

    def restore_settings(self) -> None:
        s = self.settings
        if s.value("geometry") is not None:
            self.restoreGeometry(s.value("geometry"))
            self.restoreState(s.value("state"))
        else:
            self.resize(*FIRST_SIZE)
            self._first_start = True
        self._fit_screen()
        stored = {key: s.value(f"experiment/{key}") for key in EXPERIMENT_FIELDS
                  if s.value(f"experiment/{key}") is not None}
        self.experiment.apply_settings(stored)
        if self.experiment.workload_name() is None:      # a first start, or a plug-in's workload gone
            self.experiment.select_workload("source_terms")
        backends = stored.get("backends") or ""
        self._wanted_backends = backends.split(",") if isinstance(backends, str) else list(backends)
        self.presentation.restore(s)
        self.runOn.apply_settings({"scheduler": s.value("runOn/scheduler") or ""})
        self.restore_backends()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not getattr(self, "_fitted", False):    # once the frame's margins are known
            self._fitted = True
            self._fit_screen()
            if getattr(self, "_first_start", False):
                self._share_space()

    def _share_space(self) -> None:
        """A first start gives the charts most of the window: on a 1280x720 screen the docks'
        natural sizes (a form, a table) would take half its height and a third of its width."""
        self.resizeDocks([self.resultsDock], [max(140, int(self.height() * RESULTS_SHARE))],
                         Qt.Orientation.Vertical)
        self.resizeDocks([self.experimentDock], [max(300, int(self.width() * EXPERIMENT_SHARE))],
                         Qt.Orientation.Horizontal)

    def _fit_screen(self) -> None:
        """Within the screen's available area: a first start on a 1280x720 projector, or a window
        last closed on a larger screen, opened at 1600x1000 and cropped its charts until resized."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        # The frame (title bar, borders) is known once shown; before, the margins read as 0.
        dw = self.frameGeometry().width() - self.width()
        dh = self.frameGeometry().height() - self.height()
        width, height = min(self.width(), area.width() - dw), min(self.height(), area.height() - dh)
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        frame = self.frameGeometry()
        if not area.contains(frame):
            self.move(max(area.left(), min(frame.left(), area.right() - frame.width() + 1)),
                      max(area.top(), min(frame.top(), area.bottom() - frame.height() + 1)))

    def restore_backends(self) -> None:
        if any(self._wanted_backends):
            self.experiment.set_checked_backends(self._wanted_backends)

    @property
    def _restorable(self) -> tuple[dict, list[dict]] | None:
        """(settings, rows) of the killed session on offer, or None."""
        orphans = self.workspace.orphans
        return (orphans[0].settings, orphans[0].rows) if orphans else None

    def _offer_next(self) -> None:
        if self._restorable is not None:
            self.restoreBar.offer(*self._restorable)
        else:
            self.restoreBar.hide()

    @Slot()
    def restore_interrupted(self) -> None:
        """Show the interrupted session's points as if its sweep had just ended (the workspace puts
        them into this session's journal first, so that a kill now loses them no more than before)."""
        if self._restorable is None or self.busy:
            return
        settings, _ = self._restorable
        if settings.get("workload"):
            self.experiment.select_workload(str(settings["workload"]))
        n = self.workspace.restore()
        self._offer_next()
        self.status.showMessage(f"Restored {n} point(s) of the interrupted session")
        self.restored.emit(n)

    @Slot()
    def discard_interrupted(self) -> None:
        self.workspace.discard()
        self._offer_next()

    def _ask_to_stop(self) -> bool:
        answer = QMessageBox.question(
            self, "A sweep is running",
            "A sweep is running. Stop it and close the window?\n\n"
            "The points measured so far are in this session's journal; the point in progress is lost.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def closeEvent(self, event) -> None:
        if self.busy and not self.confirm_close():
            event.ignore()                 # the sweep goes on; nothing was stopped or saved
            return
        self.workspace.close()             # ended normally: nothing to offer next time
        self.save_settings()
        self.refresh_timer.stop()
        self.table_timer.stop()
        self.plots.shutdown()              # its spec thread ends (a job in flight finishes first)
        self.resultsTable.stop_fitting()
        self.files.job.wait()              # an export being written finishes first
        self.workloadFiles.close()
        self.controller.shutdown()
        logging.getLogger().removeHandler(self.log_handler)
        super().closeEvent(event)


#: The longest status line: one short sentence; the whole text goes to the Log tab.
STATUS_CHARS = 120


def short(text: str) -> str:
    """``text`` as one status line: its first line, cut at a word within STATUS_CHARS, and a
    pointer to the Log tab where it was cut (every caller logs the whole text)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) <= STATUS_CHARS and line == text.strip():
        return line
    cut = line[:STATUS_CHARS - 30].rsplit(" ", 1)[0] if len(line) > STATUS_CHARS - 30 else line
    return f"{cut.rstrip(' ,;:')}... (the Log tab has it all)"


#: The window's size at a first start, where the screen has room for it.
FIRST_SIZE = (1600, 1000)
RESULTS_SHARE = 0.24       # of the window's height, at a first start
EXPERIMENT_SHARE = 0.25    # of its width


def _where(rs: ResultSet) -> str:
    """Where a set comes from, in a few words: its file, else its host and date."""
    if rs.source:
        return Path(rs.source).name
    return ", ".join(x for x in (rs.host, rs.written[:10]) if x) or "this sweep"


def main(argv: list[str] | None = None, plugins: tuple[str, ...] = ()) -> int:
    if QApplication.instance() is None:
        # Qt aborts with a paragraph when it cannot open a window: say why in one line instead.
        why = display.problem()
        if why:
            print(f"gpu-workbench: {why}", file=sys.stderr)
            return 2
    app = QApplication.instance() or QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName("GPU Workbench")
    window = MainWindow(plugins=plugins)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
