"""The workbench window: the experiment panel, live plots, results, environment and log.

The window shows a workspace (``workbench.workspace.Workspace``) and sends it commands: the
session itself (the sweep's settings and rows, the sets compared, the journal, the run state,
a lesson in progress) is held there, without Qt, as the command line holds its own. The sweep
runs in the worker thread of ``panels.worker``; its messages arrive here as signals carrying
plain data and go to the workspace, whose events this window turns into what is on screen
(a sweep's in ``panels.sweep_progress``, which coalesces the plots' updates by a timer).

Plots, table and every export read ``result_sets()``; the File menu (``panels.files``) opens
and writes them.
"""
from __future__ import annotations

import gc
import logging
import sys
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (QApplication, QDockWidget, QMainWindow, QMessageBox, QScrollArea, QTabWidget,
                               QVBoxLayout, QWidget)

from panels import first_frame
from panels.experiment import ExperimentPanel
from panels.info import EnvironmentPanel, LogPanel, QtLogHandler
from panels.lesson_view import LessonView
from panels.notice import NoticeBar
from panels.plots import PlotsPanel
from panels.presentation import Presentation
from panels.restore import RestoreBar
from panels.run_on import RunOnBox
from panels.session_restore import SessionRestore
from panels.status_line import STATUS_CHARS, short  # noqa: F401 - their old home: callers import them here
from panels.sweep_progress import PLOT_REFRESH_MS, TABLE_REFRESH_MS, SweepProgress
from panels.table import ResultsTable
from panels.toolbar import RunToolBar
from panels.window_menus import WindowMenus
from panels.window_settings import WindowSettings
from panels.worker import SweepController
from workbench import lessons
from workbench.catalog.backends import is_gpu, probe_all
from workbench.cli import display
from workbench.measure import protocol
from workbench.results import journal
from workbench.results.files import ResultSet
from workbench.workspace import Workspace
from workbench.workspace import events as ev

log = logging.getLogger(__name__)


class MainWindow(WindowMenus, LessonView, SweepProgress, WindowSettings, SessionRestore, QMainWindow):
    """The window; its menus, lessons, a sweep's progress, its settings and a killed session's
    restore are parts of it in modules of their own (the classes it is made of)."""

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
        # table, every visible cell read through Python, at every point.
        self.table_timer = QTimer(self, singleShot=True, interval=TABLE_REFRESH_MS, objectName="tableRefresh")
        self.table_timer.timeout.connect(self._table_rows)
        self.resultsTable.wait_while = self.plots.drawing.active     # columns too, between chart updates
        # The next refresh waits for the charts to have drawn the last one: a refresh that came while
        # they were still drawing started them over (the summary and the last charts lagged behind)
        # and its own work landed between two of theirs, one long stall of the GUI thread.
        self.plots.updated.connect(self._plots_drawn)
        # A point clicked in any chart, or a row of the table: its timeline, in a window of its own
        # made at the first click (no start-up cost for a part most sessions never open).
        self.timeline = None             # a panels.timeline_view.TimelineView, once asked for
        self.plots.pointClicked.connect(self.show_timeline)
        self.resultsTable.pointClicked.connect(self.show_timeline)

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
        # The deep probe starts an engine process and imports the GPU libraries in it: it waits for
        # the first frame, which it slowed by a third on a 2-core machine (panels.first_frame).
        self.firstFrame = first_frame.after_first_frame(self, self.controller.probe)

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
        why = self.workloadFiles.blocked(spec.workload)
        if why:                         # said now, not as an engine's "unknown workload" after Run
            self.files.say_problem(f"{spec.workload} cannot run: {why}")
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

    @Slot()
    def stop(self) -> None:
        self.workspace.stop()

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

    def show_timeline(self, point: tuple) -> "TimelineView":
        """The timeline of ``point`` (backend, variant, size, set index), in its window."""
        if self.timeline is None:
            from panels.timeline_view import TimelineView
            self.timeline = TimelineView(self)
            self.timeline.apply_look(self.plots.look)     # the look of now; Presentation passes later ones
            self.timeline.exportAsked.connect(self.files.ask_export_timeline)
        self.timeline.show_point(self.result_sets(), point)
        return self.timeline

    def forget_timeline(self) -> None:
        """Other sets on screen: the timeline shown was of a point of the ones before (its Export
        would find another file's point at its set's index), so it goes."""
        if self.timeline is not None:
            self.timeline.hide()

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
        self.forget_timeline()
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

    # --- closing -----------------------------------------------------------------------------------

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
        if self.timeline is not None:
            self.timeline.close()
        self.resultsTable.stop_fitting()
        self.files.job.wait()              # an export being written finishes first
        self.workloadFiles.close()
        self.controller.shutdown()
        logging.getLogger().removeHandler(self.log_handler)
        super().closeEvent(event)


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
    first_frame.report_if_asked(window)     # a launch timed from outside (benchmarks/gui_responsiveness.py)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
