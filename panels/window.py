"""The workbench window: the experiment panel, live plots, results, environment and log.

The window shows a workspace (``workbench.workspace.Workspace``) and sends it commands: the
session itself (the sweep's settings and rows, the sets compared, the journal, the run state,
a lesson in progress) is held there, without Qt, as the command line holds its own. The sweep
runs in the worker thread of ``panels.worker``; its messages arrive here as signals carrying
plain data and go to the workspace, whose events the window's parts turn into what is on screen.

The window builds its widgets, owns its parts as objects (napari's viewer owns its Qt widgets
the same way) and wires them in one place, ``_wire``: the menus (``panels.window_menus``), run
control (``panels.run_control``), a sweep's progress (``panels.sweep_progress``), the sets on
screen and the timeline (``panels.shown_sets``), the lessons (``panels.lesson_view``), the File
menu's actions (``panels.files``, ``panels.workload_files``, ``panels.try_drop_ins``), the
settings (``panels.window_settings``) and a killed session's restore (``panels.session_restore``).
No part holds another; docs/ARCHITECTURE.md draws them.
"""
from __future__ import annotations

import logging
import sys
from functools import partial
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal, Slot
from PySide6.QtWidgets import (QApplication, QDockWidget, QMainWindow, QMessageBox, QScrollArea, QTabWidget,
                               QVBoxLayout, QWidget)

from panels import first_frame, heap
from panels.experiment import ExperimentPanel
from panels.files import FileActions
from panels.engine_status import EngineStatus
from panels.info import EnvironmentPanel, LogPanel, QtLogHandler
from panels.lesson_view import LessonView, lesson_prefix
from panels.notice import NoticeBar
from panels.plots import PlotsPanel
from panels.presentation import Presentation
from panels.restore import RestoreBar
from panels.run_control import RunControl
from panels.run_on import RunOnBox
from panels.session_restore import SessionRestore
from panels.shown_sets import ShownSets
from panels.status_line import STATUS_CHARS, short  # noqa: F401 - their old home: callers import them here
from panels.sweep_progress import SweepProgress
from panels.table import ResultsTable
from panels.toolbar import RunToolBar
from panels.try_drop_ins import DropInChoice
from panels.window_menus import Menus
from panels.window_settings import WindowSettings
from panels.worker import SweepController
from panels.workload_files import WorkloadFiles
from workbench.catalog.backends import probe_all
from workbench.cli import display
from workbench.measure import protocol
from workbench.results import journal
from workbench.results.files import ResultSet
from workbench.views import provenance
from workbench.workspace import Workspace
from workbench.workspace import events as ev

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """The window: its widgets, the parts that drive them (objects it owns), and their wiring."""

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
        self._build_widgets()
        self._make_parts()
        self._wire()
        # A quick probe (no child process) fills the backend list at once; the worker's deep probe
        # (a tiny computation per GPU library) then corrects it.
        self.experiment.set_availability(probe_all(deep=False))
        self.window_settings.restore()
        self.session_restore.offer_next()
        # The deep probe starts an engine process and imports the GPU libraries in it: it waits for
        # the first frame: started during construction, it took the GIL and the second of this
        # machine's two cores from the window being built (panels.first_frame).
        self.firstFrame = first_frame.after_first_frame(self, self.controller.probe)
        self.firstFrame.painted.connect(heap.settle)       # the modules of the first frame, out of the GC's scans

    def _build_widgets(self) -> None:
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
        self.status = self.statusBar()

        self.log_handler = QtLogHandler()
        self.log_handler.emitter.message.connect(self.logPanel.append_line)
        logging.getLogger().addHandler(self.log_handler)
        if logging.getLogger().level > logging.INFO or logging.getLogger().level == logging.NOTSET:
            logging.getLogger().setLevel(logging.INFO)
        for note in self.workspace.notes:     # found before this log existed: journals not read or kept
            log.warning("%s", note)

    def _make_parts(self) -> None:
        """The window's parts, each given the widgets and the calls it uses (never the other parts)."""
        ws, busy = self.workspace, self._is_busy
        self.presentation = Presentation(self, (self.experimentDock, self.resultsDock), self.plots, self.toolbar)
        self.progress = SweepProgress(self, ws, self.toolbar, self.plots, self.resultsTable, self.status,
                                      prefix=partial(lesson_prefix, ws))
        self.sets = ShownSets(self, ws, self.plots, self.resultsTable, self.environment, self.toolbar,
                              self.presentation)
        self.window_settings = WindowSettings(self, self.settings, self.experiment, self.runOn, self.presentation,
                                              self.resultsDock, self.experimentDock)
        self.engine_status = EngineStatus(self, self.controller, self.experiment, self.runOn, self.environment,
                                          self.plots, self.status, self.notice,
                                          restore_backends=self.window_settings.restore_backends)
        # The file parts take the window through the small protocols they state (panels.files.Shows):
        # what is on screen, the bars that say problems, the settings.
        self.files = FileActions(self)
        self.workloadFiles = WorkloadFiles(self, self.controller.worker.plugins)    # --plugin's files too
        self.dropIns = DropInChoice(self, self.workloadFiles)
        self.run_control = RunControl(self, ws, self.experiment, self.runOn, self.toolbar, busy,
                                      blocked=self.workloadFiles.blocked, problem=self.files.say_problem)
        self.lessons = LessonView(self, ws, self.experiment, self.plots, self.status, self.files.job, busy,
                                  renew_engine=self._renew_engine)
        self.session_restore = SessionRestore(self, ws, self.restoreBar, self.experiment, self.status, busy)
        self.menus = Menus(self, self.run_control, self.presentation, self.plots,
                           file_groups=[*self.files.menu_groups(), [self.workloadFiles.openAction]],
                           run_extras=[self.dropIns.action], docks=(self.experimentDock, self.resultsDock))

    def _wire(self) -> None:
        """Every signal and call between the parts, the workspace and the worker, in one place."""
        # Worker -> workspace: one signal of protocol messages, to a bound slot (never a lambda).
        self.controller.worker.message.connect(self.on_message)
        # Workspace -> parts: what it makes of the messages comes back as its events, one table.
        p, sets, e = self.progress, self.sets, self.engine_status
        self.handlers = {
            ev.SweepBegan: p.on_sweep_began, ev.SweepPlanned: p.on_sweep_planned,
            ev.PointBegan: p.on_point_began, ev.PointAdded: p.on_point_added,
            ev.SweepEnded: p.on_sweep_ended, ev.StateChanged: p.on_state_changed,
            ev.SetsShown: sets.on_sets_shown, ev.Trouble: e.on_trouble,
            ev.EnvironmentRead: e.on_environment, protocol.LogLine: e.on_log_line,
            protocol.ProbeResults: e.on_backends_probed,
        }
        self.workspace.listen(self.on_event)
        self.resultsTable.results.attach(self.workspace.rows)
        e.ready.connect(self.menus.add_lessons)     # before the window says ready: a test looks them up then
        e.ready.connect(self.ready)
        # A sweep's progress -> run control, lessons and the window's own signals.
        p.began.connect(self._sweep_began)
        p.stoppable.connect(self.run_control.set_stoppable)
        p.pointAdded.connect(self.pointAdded)
        p.finished.connect(self._sweep_finished)
        p.lessonEnded.connect(self.lessons.show_statement)
        self.run_control.idleChanged.connect(self.menus.lessonsMenu.setEnabled)
        # Menus -> lessons; lessons -> menus and the window's signal.
        self.menus.lessonChosen.connect(self.lessons.run_lesson)
        self.menus.exportLessonAsked.connect(self.lessons.ask_export_lesson)
        self.lessons.exportable.connect(self.menus.exportLessonAction.setEnabled)
        self.lessons.completed.connect(self.lessonCompleted)
        # The sets on screen -> the file actions; a killed session's restore -> the window's signal.
        sets.shown.connect(self.files.update_enabled)
        sets.shown.connect(heap.settle)     # pandas and what the first file opened imported
        sets.timelineExportAsked.connect(self.files.ask_export_timeline)
        self.session_restore.restored.connect(self.restored)
        self.busyChanged.connect(self.files.update_enabled)

    # --- a sweep begins and ends: what the parts other than its progress do -------------------------

    @Slot(object)
    def _sweep_began(self, e: ev.SweepBegan) -> None:
        if e.first:
            self.menus.exportLessonAction.setEnabled(False)
            self.sets.forget_timeline()
            self.window_settings.save()
            self.restoreBar.hide()             # a new sweep: the old session's points are not this one's
            self.notice.hide()
            self.sets.show_environments(self.compared, provenance.labels(self.result_sets())[1:])
        else:                                  # a lesson's next run: its settings on screen
            self.experiment.dtypeCombo.setCurrentText(e.spec.dtype)
            self.experiment.hostMemoryCombo.setCurrentText(e.spec.host_memory)
        self.run_control.lock()
        if e.first:
            self.busyChanged.emit(True)

    @Slot(object)
    def _sweep_finished(self, ended: ev.SweepEnded) -> None:
        """The last points are drawn: the sweep is complete for whoever watches the window."""
        self.run_control.unlock()
        heap.settle()                   # pandas and what the first sweep imported
        if ended.lesson is not None:
            self.lessons.show_statement(ended.lesson)
        self.busyChanged.emit(False)
        self.sweepCompleted.emit(ended.cancelled)

    # --- the workspace and the engine ---------------------------------------------------------------

    def _is_busy(self) -> bool:
        return self.workspace.busy or self.progress.finishing

    @property
    def busy(self) -> bool:
        """A sweep runs, or its last points are still being drawn: Run waits for both."""
        return self._is_busy()

    def _start_engine(self, spec) -> None:
        """The workspace starts a sweep: the worker's thread runs it."""
        self.controller.start(spec)

    def _stop_engine(self) -> None:
        self.controller.stop()

    def _renew_engine(self) -> None:
        """A lesson that wants a cold engine: the one in use starts afresh."""
        self.controller.worker.engine.renew()

    @Slot(object)
    def on_message(self, message) -> None:
        """Every message of the worker, to the workspace (its events come back to on_event)."""
        self.workspace.handle(message)

    def on_event(self, event) -> None:
        protocol.dispatch(self.handlers, event)

    # --- what is on screen (panels.files.Shows and the window's callers) ----------------------------

    def result_sets(self) -> list[ResultSet]:
        """Every set on screen, the main one first: what the plots, the table and every export show."""
        return self.workspace.result_sets()

    def show_sets(self, sets: list[ResultSet], rows: list | None = None) -> None:
        """Show result sets as if they had just been measured: the first is the main set (its rows in
        the table and the plots as a sweep's), the others compared with it. ``rows``: the main set's,
        made off the GUI thread (``Workspace.show_sets``)."""
        if self.busy or not sets:
            return
        self.workspace.show_sets(sets, rows)

    def show_session(self, experiment: dict, sets: list[ResultSet], view: dict, rows: list | None = None) -> list[str]:
        """A saved session as it was: the experiment's settings, its sets, the baseline; what could not
        be chosen here (a backend not usable on this machine), in words. ``rows``: as ``show_sets``."""
        unmet = self.experiment.apply_settings(experiment)
        if isinstance(experiment.get("backends"), list):
            self.window_settings.wanted_backends = list(experiment["backends"])
        if sets:
            self.show_sets(sets, rows)
            index = self.plots.baselineCombo.findData(view.get("baseline", ""))
            if index >= 0:
                self.plots.baselineCombo.setCurrentIndex(index)
        return unmet

    def restore_backends(self) -> None:
        """The backends last chosen, ticked again (a probe or a workload file changed the list)."""
        self.window_settings.restore_backends()

    # What the workspace holds, by the names this window's callers know.
    rows = property(lambda self: self.workspace.rows, doc="The main set's rows: the workspace's list, read in place.")
    compared = property(lambda self: self.workspace.compared)
    sweep_settings = property(lambda self: self.workspace.settings)
    total = property(lambda self: self.workspace.total)
    journal = property(lambda self: self.workspace.journal)
    lesson_statement = property(lambda self: self.workspace.statement)

    # The parts' names that tests, benchmarks and scripts reach through the window.
    runAction = property(lambda self: self.run_control.runAction)
    stopAction = property(lambda self: self.run_control.stopAction)
    presentationAction = property(lambda self: self.menus.presentationAction)
    darkAction = property(lambda self: self.menus.darkAction)
    zoomAction = property(lambda self: self.menus.zoomAction)
    exportLessonAction = property(lambda self: self.menus.exportLessonAction)
    timeline = property(lambda self: self.sets.timeline)

    @property
    def lesson_overrides(self) -> dict:
        """Instead of a lesson's own sizes, repeats or budget (a quick try, a test): plan()'s keywords."""
        return self.lessons.overrides

    @lesson_overrides.setter
    def lesson_overrides(self, value: dict) -> None:
        self.lessons.overrides = value

    def run(self) -> None:
        self.run_control.run()

    def stop(self) -> None:
        self.run_control.stop()

    def run_lesson(self, name: str) -> bool:
        return self.lessons.run_lesson(name)

    def export_lesson(self, folder: str | Path) -> list[Path]:
        return self.lessons.export_lesson(folder)

    def show_timeline(self, point: tuple):
        return self.sets.show_timeline(point)

    def restore_interrupted(self) -> None:
        self.session_restore.restore()

    def save_settings(self) -> None:
        self.window_settings.save()

    # --- showing and closing -------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.window_settings.shown()

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
        self.window_settings.save()
        self.progress.stop_timers()
        self.plots.shutdown()              # its spec thread ends (a job in flight finishes first)
        self.sets.close()
        self.resultsTable.stop_fitting()
        self.files.job.wait()              # an export being written finishes first
        self.workloadFiles.close()
        self.controller.shutdown()
        logging.getLogger().removeHandler(self.log_handler)
        super().closeEvent(event)


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
