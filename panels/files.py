"""The File menu: open results, compare sets, export charts, reports and results, sessions.

Every file is read and written by the core (``workbench.results.files``, ``session_file``, ``charts``,
``report``): this module adds the dialogs, the refusals (a sweep running, more sets than a chart
tells apart), and where a problem is said: the notice bar and the status bar, never a dialog that
blocks, never silence. Exports and sessions are written by a ``panels.jobs.Job``, off the GUI thread:
the GUI thread only takes the workspace's parts (an instant); the job's thread makes the sets of them
and its child process writes the file (results at 5,000 points stalled the window 1.2 s when written
here, issue 38). Files are read by the same job's child, the job makes the main set's rows; the GUI
thread only shows what it gives, and only the latest open (a compare joins what is shown).
"""
from __future__ import annotations

import dataclasses
import logging
from functools import partial
from pathlib import Path
from typing import Any, Protocol, Sequence

from PySide6.QtCore import QObject, QSettings, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QStatusBar

from panels.chart_export import ChartExport, ChartExportDialog
from panels.jobs import Job
from workbench.results import files as result_files
from workbench.results import session_file
from workbench.core import writable
from workbench.measure.offload import Offload
from workbench.results.files import ResultSet, ResultsFileError
from workbench.results.sets import CHUNK_ROWS, PackedParts, SetParts
from workbench.results.table import RowTable
from workbench.views.palette import MOST_SETS
from workbench.views.presets import output_paths, preset as make_preset


log = logging.getLogger(__name__)
# matplotlib's PDF backend subsets fonts with fontTools, which logs a line per font table at INFO:
# dozens of lines in the log panel for every PDF.
logging.getLogger("fontTools").setLevel(logging.WARNING)
RESULT_FILTER = "Results (*.csv *.json);;All files (*)"
BUSY = "a sweep is running: wait until it ends, or press Stop (Esc)"
OPEN_FEWER, CLOSE_COMPARED = "Open fewer at a time.", "Close the compared results first (File menu)."


class Shows(Protocol):
    """What the file actions need of the window that shows the result sets (it is also their parent
    widget). Stated here, so that this module depends on what it uses rather than on the window."""

    busy: bool
    compared: list[ResultSet]
    experiment: Any         # panels.experiment: its settings(), saved in a session
    notice: Any             # panels.notice.NoticeBar
    plots: Any              # panels.plots.PlotsPanel: chosen_baseline()
    settings: QSettings
    status: QStatusBar
    workspace: Any          # workbench.workspace: parts(), what the sets on screen are made of

    def result_sets(self) -> list[ResultSet]: ...
    def show_sets(self, sets: list[ResultSet], rows: list | None = None) -> None: ...
    def show_session(self, experiment: dict, sets: list[ResultSet], view: dict,
                     rows: list | None = None) -> list[str]: ...


class FileActions(QObject):
    """The File menu's actions and what they do; the window holds what is on screen."""

    exported = Signal(list)     # the files an export (or a session saved) wrote
    opened = Signal(list)       # the sets of the files (or the session) read, now on screen
    problem = Signal(str)       # a problem just shown to the user

    def __init__(self, window: Shows) -> None:
        super().__init__(window)
        self.window = window
        self.job = Job(self)
        self.job.done.connect(self._written)
        self.job.failed.connect(self._write_failed)
        self._writing = ""          # what the job in flight writes, for its messages
        self.job.readDone.connect(self._answered)
        self.job.readFailed.connect(self._not_read)
        self._asked: dict = {}      # each read in flight (the job's task): the files' names, for its messages

        def action(text: str, slot, shortcut=None, name: str = "") -> QAction:
            a = QAction(text, window, objectName=name)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            a.triggered.connect(slot)
            return a

        self.openAction = action("&Open results...", self.ask_open_results, QKeySequence.StandardKey.Open,
                                 "openResultsAction")
        self.compareAction = action("&Compare with results...", self.ask_compare, "Ctrl+Shift+O", "compareAction")
        self.closeCompareAction = action("C&lose compared results", self.close_compared, None,
                                         "closeCompareAction")
        self.exportChartAction = action("&Export chart...", self.ask_export_chart, "Ctrl+E", "exportChartAction")
        self.exportReportAction = action("Export re&port...", self.ask_export_report, None, "exportReportAction")
        self.exportResultsAction = action("Export &results...", self.ask_export_results, "Ctrl+Shift+E",
                                          "exportResultsAction")
        self.saveSessionAction = action("&Save session...", self.ask_save_session, QKeySequence.StandardKey.Save,
                                        "saveSessionAction")
        self.openSessionAction = action("Open sess&ion...", self.ask_open_session, None, "openSessionAction")
        self.openAction.setToolTip("Open results written by this window or by gpu-workbench run --out")
        self.compareAction.setToolTip("Overlay other result sets on the plots, each labelled by what differs")
        # Each chart's right-click menu: ours in place of pyqtgraph's "Export...", whose SVG fails here.
        self.chartActions = {}
        for chart in window.plots.plots():
            a = QAction("Export this chart...", chart, objectName=f"exportThisChart-{chart.kind}")
            a.triggered.connect(partial(self.ask_export_chart, chart.kind))
            chart.scene().contextMenu = [a]
            self.chartActions[chart.kind] = a
        self.dialog: ChartExportDialog | None = None
        self.update_enabled()

    def menu_groups(self) -> list[list[QAction]]:
        """The actions in the File menu's order, one list between separators."""
        return [[self.openAction, self.compareAction, self.closeCompareAction],
                [self.exportChartAction, self.exportReportAction, self.exportResultsAction],
                [self.saveSessionAction, self.openSessionAction]]

    @Slot()
    def update_enabled(self) -> None:
        """Nothing opens or is written while a sweep runs; one file written at a time."""
        idle = not self.window.busy
        for a in (self.openAction, self.compareAction, self.openSessionAction):
            a.setEnabled(idle)
        self.closeCompareAction.setEnabled(idle and bool(self.window.compared))
        for a in (self.exportChartAction, self.exportReportAction, self.exportResultsAction, self.saveSessionAction,
                  *self.chartActions.values()):
            a.setEnabled(idle and not self.job.running)

    # --- saying what went wrong --------------------------------------------------------------

    def say_problem(self, text: str) -> None:
        """Where the user looks: the notice bar and the status bar; and the log."""
        log.warning("%s", text)
        self.window.notice.show_problem(text)
        self.window.status.showMessage(text)
        self.problem.emit(text)

    def _refused(self, what: str) -> bool:
        """True (and said) when ``what`` cannot happen now."""
        if self.window.busy:
            self.say_problem(f"Cannot {what}: {BUSY}.")
            return True
        return False

    def _too_many(self, n: int, names: str, then: str) -> bool:
        """True (and said) where ``n`` sets would be more than a chart tells apart (each its marker)."""
        if n > MOST_SETS:
            self.say_problem(f"Did not show {names}: a chart tells at most {MOST_SETS} result sets apart (each "
                             f"its own marker), and that would be {n}. {then}")
        return n > MOST_SETS

    def _nothing_shown(self, what: str) -> bool:
        if not _any_set(self._shown()):
            self.say_problem(f"Nothing to {what} yet: run a sweep (Ctrl+R) or open results (Ctrl+O).")
            return True
        return False

    def _unwritable(self, path: Path) -> bool:
        why = writable.problem(path)
        if why:
            self.say_problem(f"Cannot write {path}: {why}. Choose another folder or name.")
        return bool(why)

    # --- opening -----------------------------------------------------------------------------

    def ask_open_results(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Open results", "", RESULT_FILTER)
        if paths:
            self.open_results(paths)

    def ask_compare(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Compare with results", "", RESULT_FILTER)
        if paths:
            self.compare_with(paths)

    def open_results(self, paths: Sequence[str | Path]) -> bool:
        """Show result files as a sweep's results; several: the first, compared with the others. The
        job reads them and ``opened`` fires once they are shown; a file that cannot be read is said
        and changes nothing on screen. A later open wins over one still being read. False: refused."""
        if self._refused("open results") or not paths or self._too_many(len(paths), _names(paths), OPEN_FEWER):
            return False
        return self._ask(partial(_read_sets, "open", list(map(Path, paths)), True, via=self.job.child), _names(paths),
                         replace=True)

    def compare_with(self, paths: Sequence[str | Path]) -> bool:
        """Overlay result files on what is on screen once they are read (``opened``), each set
        labelled by what differs. False: refused, and said."""
        parts = self.window.workspace.parts()       # the sets on screen counted, not made (GUI thread)
        if self._refused("compare results") or not paths or \
                self._too_many(_any_set(parts) + len(self.window.compared) + len(paths), _names(paths), CLOSE_COMPARED):
            return False
        # Nothing on screen, nor being read: the first file becomes the main set, its rows made by the job too.
        main = not _any_set(parts) and not self.job.reading
        # The set on screen is shown again with these: its table made by the job too, a chunk per
        # call, where it is not made already (after a sweep of 5,000 points: 136 ms of the GUI thread).
        shown = None if main else self.window.workspace.table
        return self._ask(partial(_read_sets, "compare", list(map(Path, paths)), main, shown, via=self.job.child),
                         _names(paths), replace=False)

    def _ask(self, fn, names: str, replace: bool) -> bool:
        """``fn`` read by the job; ``_answered`` shows what it gives."""
        if replace:
            self._asked.clear()         # the job drops them: their answers never come
        self._asked[self.job.read(fn, replace=replace)] = names
        self.window.status.showMessage(f"Reading {names}...")
        return True

    @Slot(object, object)
    def _answered(self, task, read: Read) -> None:
        names = self._asked.pop(task, "")
        if self.window.busy:            # a sweep began while the file was read: its rows stay on screen
            self.say_problem(f"Did not show {names}: a sweep began while it was read. Open it again when "
                             f"the sweep ends.")
            return
        if read.session is not None:
            self._show_session(read, names)
            return
        shown = self.window.result_sets() if read.kind == "compare" else []
        if self._too_many(len(shown) + len(read.sets), names, CLOSE_COMPARED if shown else OPEN_FEWER):
            return                      # two compares asked at once, each within the bound
        self.window.show_sets(shown + read.sets, read.rows if not shown else None)
        self._opened(read.sets, "Comparing with" if read.kind == "compare" else "Opened")
        self.opened.emit(read.sets)

    @Slot(object, object)
    def _not_read(self, task, exc: BaseException) -> None:
        names = self._asked.pop(task, "the file")
        if isinstance(exc, ResultsFileError):
            self.say_problem(f"{exc}. Nothing on screen has changed.")
        else:                           # not one of the reader's refusals: a bug, or the machine's trouble
            self.say_problem(f"Could not read {names}: {type(exc).__name__}: {exc}. Nothing on screen has changed.")

    @Slot()
    def close_compared(self) -> None:
        if self._refused("close the compared results") or not self.window.compared:
            return
        self.window.show_sets(self.window.result_sets()[:1])
        self.window.status.showMessage("Closed the compared results")

    def _opened(self, sets: list[ResultSet], verb: str) -> None:
        points = sum(len(rs.frame) for rs in sets)
        names = ", ".join(Path(rs.source).name for rs in sets)
        self.window.notice.hide()
        self.window.status.showMessage(f"{verb} {names}: {points} point(s)")
        log.info("%s %s: %d point(s)", verb.lower(), names, points)
        self.update_enabled()

    # --- charts and reports, drawn off the GUI thread ----------------------------------------------

    def ask_export_timeline(self, point: tuple | None) -> ChartExportDialog | None:
        """The export dialog for the timeline of ``point`` (the timeline window's Export...)."""
        return self.ask_export_chart("timeline", point=point)

    def ask_export_chart(self, kind: str = "all", *_, point: tuple | None = None) -> ChartExportDialog | None:
        """The export dialog, for one chart or every one; it exports when its file can be written."""
        if not isinstance(kind, str):       # QAction.triggered passes its checked state
            kind = "all"
        if self._refused("export charts") or self._nothing_shown("export"):
            return None
        if self.dialog is not None:         # one at a time: the last one asked goes
            self.dialog.close()
            self.dialog.setParent(None)
            self.dialog.deleteLater()
        self.dialog = ChartExportDialog(self.window, self.window.settings, kind, point)
        self.dialog.exportRequested.connect(self._chart_requested)
        self.dialog.open()
        return self.dialog

    @Slot(object)
    def _chart_requested(self, req: ChartExport) -> None:
        self.export_chart(req.path, req.kind, req.preset, req.stamp, req.point)

    def export_chart(self, path: str | Path, kind: str = "all", preset: str = "slide", stamp: bool = True,
                     point: tuple | None = None) -> bool:
        """Draw one chart (``kind``) or all of them from the sets on screen into ``path`` (.png, .svg,
        .pdf; the timeline also .json, a Chrome trace), at the preset's size; ``point``: the
        timeline's. ``exported`` fires with the files written. False: refused, and said."""
        if self._refused("export charts") or self._nothing_shown("export") or self._in_flight():
            return False
        if Path(path).is_dir() and self._unwritable(Path(path)):     # a folder: say so, not "no suffix"
            return False
        try:
            p = make_preset(preset)
            out = output_paths(path, kind)
        except ValueError as exc:
            self.say_problem(f"Cannot export the chart: {exc}.")
            return False
        if any(self._unwritable(o) for o in out):
            return False
        return self._start(partial(_draw_charts, self.job.child, self._shown(), Path(path), kind, p, stamp,
                                   self._baseline(), point),
                           f"{kind} chart" if kind != "all" else "the charts")

    def ask_export_report(self) -> None:
        if self._refused("export a report") or self._nothing_shown("report"):
            return
        path, chosen = QFileDialog.getSaveFileName(self.window, "Export report", "report.html",
                                                   "Self-contained HTML (*.html);;PDF (*.pdf)")
        if path:
            if Path(path).suffix.lower() not in (".html", ".pdf"):
                path += ".pdf" if "pdf" in chosen.lower() else ".html"
            self.export_report(path)

    def export_report(self, path: str | Path, stamp: bool = True) -> bool:
        """The one-file report (HTML, or PDF) of the sets on screen; ``exported`` fires when written."""
        path = Path(path)
        if not self._may_write(path, "export a report", "report", (".html", ".pdf"), "a report"):
            return False
        return self._start(partial(_write_report, self.job.child, self._shown(), path, stamp, self._baseline()),
                           "the report")

    def _baseline(self) -> str | None:
        """The window's speedup baseline, as the exports read it ("numpy", "numpy@2"): the chooser's
        choice, read without making the sets (the panel's ``baseline_choice`` makes them)."""
        return self.window.plots.chosen_baseline() or None

    def _shown(self) -> SetParts:
        """The sets on screen, unmade, taken in an instant: the main set's rows copied (a list of
        references), so that a sweep begun while the job writes cannot change what it writes."""
        parts = self.window.workspace.parts()
        return dataclasses.replace(parts, rows=tuple(parts.rows[:parts.count]))

    def _may_write(self, path: Path, action: str, topic: str, suffixes: tuple[str, str], kind: str) -> bool:
        """Whether the job may write ``path`` now (``suffixes`` its two endings); where not, why is said."""
        if self._refused(action) or self._nothing_shown(topic) or self._in_flight():
            return False
        if path.suffix.lower() not in suffixes:
            self.say_problem(f"Cannot write {path.name}: {kind} must end in {suffixes[0]} or {suffixes[1]}.")
            return False
        return not self._unwritable(path)

    def _in_flight(self) -> bool:
        if self.job.running:
            self.say_problem(f"Still writing {self._writing}: wait until it is written.")
        return self.job.running

    def _start(self, fn, what: str) -> bool:
        self._writing = what
        self.job.start(fn)
        self.window.status.showMessage(f"Writing {what}...")
        self.update_enabled()
        return True

    @Slot(object)
    def _written(self, paths: list[Path]) -> None:
        self.update_enabled()
        names = ", ".join(p.name for p in paths)
        folder = paths[0].parent if paths else ""
        self.window.status.showMessage(f"Wrote {names} in {folder}")
        log.info("wrote %s", ", ".join(map(str, paths)))
        self.exported.emit(list(paths))

    @Slot(object)
    def _write_failed(self, exc: BaseException) -> None:
        self.update_enabled()
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        self.say_problem(f"Could not write {self._writing}: {type(exc).__name__}: {text}{where}.")

    # --- results and sessions: written off the GUI thread too ------------------------------------

    def ask_export_results(self) -> None:
        if self._refused("export results") or self._nothing_shown("export"):
            return
        path, chosen = QFileDialog.getSaveFileName(self.window, "Export results", "results.csv",
                                                   "CSV, with a .meta.json beside it (*.csv);;JSON (*.json)")
        if path:
            if Path(path).suffix.lower() not in (".csv", ".json"):
                path += ".json" if "json" in chosen.lower() else ".csv"
            self.export_results(path)

    def export_results(self, path: str | Path) -> bool:
        """The main set (the sweep's, or the file opened) as CSV (and its sidecar) or JSON, written
        by the job; ``exported`` fires with the files written. False: refused, and said."""
        path = Path(path)
        if not self._may_write(path, "export results", "export", (".csv", ".json"), "results"):
            return False
        return self._start(partial(_write_results, self.job.child, self._shown(), path), "the results")

    def ask_save_session(self) -> None:
        if self._refused("save the session"):
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session", "session.json", "Session (*.json)")
        if path:
            self.save_session(path if path.lower().endswith(".json") else path + ".json")

    def save_session(self, path: str | Path) -> bool:
        """The experiment's settings, every set on screen and the baseline chosen, in one JSON file
        written by the job; ``exported`` fires with it. False: refused, and said."""
        path = Path(path)
        if self._refused("save the session") or self._in_flight() or self._unwritable(path):
            return False
        view = {"baseline": self._baseline() or ""}
        return self._start(partial(_save_session, self.job.child, self._shown(), path,
                                   self.window.experiment.settings(), view), "the session")

    def ask_open_session(self) -> None:
        if self._refused("open a session"):
            return
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", "", "Session (*.json);;All files (*)")
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Restore a saved session once the job has read it (``opened`` fires then): the
        experiment's settings, its sets, its baseline. False: refused, and said."""
        if self._refused("open a session"):
            return False
        return self._ask(partial(_read_session, Path(path), self.job.child), Path(path).name, replace=True)

    def _show_session(self, read: Read, name: str) -> None:
        saved = read.session
        if self._too_many(len(saved.sets), f"the session {name}", "Open its sets' files a few at a time."):
            return
        unmet = self.window.show_session(saved.experiment, list(saved.sets), saved.view, read.rows)
        self.window.status.showMessage(f"Opened the session {name}: {len(saved.sets)} result set(s)")
        if unmet:
            self.say_problem(f"The session {name} is open, but not all of its experiment could be "
                             f"chosen here: {'; '.join(unmet)}.")
        self.update_enabled()
        self.opened.emit(list(saved.sets))


# What the job runs, in its thread: the sets made of the parts taken, then written by its child process
# (matplotlib, pandas' CSV and the JSON encoder never hold the window's GIL, and never load in it).

@dataclasses.dataclass(frozen=True)
class Read:
    """What a read gives the GUI thread: the sets, and the main set's rows where they replace the ones
    on screen (made by the job: in the GUI thread, 0.7 s at 5,000 rows); or a saved session."""

    kind: str                           # "open", "compare" or "session"
    sets: list[ResultSet]
    rows: list | None = None
    session: session_file.SavedSession | None = None


def _read_sets(kind: str, paths: list[Path], main: bool, shown: RowTable | None = None,
               via: Offload | None = None) -> Read:
    """Every file read (ResultsFileError names the first that cannot be), ``via`` a child process
    (``open_results``); ``main``: the first will be the main set, its rows made too; ``shown``:
    the table of the set on screen, made here too."""
    from workbench.workspace.session import rows_of     # with the workspace: not at the window's start
    sets = [result_files.open_results(p, via=via) for p in paths]
    if shown is not None:
        shown.frame(chunk=CHUNK_ROWS)
    return Read(kind, sets, rows_of(sets[0].frame) if main else None)


def _read_session(path: Path, via: Offload | None = None) -> Read:
    from workbench.workspace.session import rows_of
    saved = session_file.load(path, via=via)
    return Read("session", list(saved.sets), rows_of(saved.sets[0].frame) if saved.sets else None, saved)


def _names(paths: Sequence[str | Path]) -> str:
    return ", ".join(Path(p).name for p in paths)


def _any_set(parts: SetParts) -> bool:
    """Whether ``parts`` make any set (``sets_of`` makes none of them otherwise)."""
    return bool(parts.count or parts.origin is not None or parts.compared)


def _packed(parts: SetParts, one: bool = False) -> PackedParts:
    """The sets of ``parts`` (``one``: the main set alone) for the child, which makes their tables:
    the rows go as they are, 500 a pickle (``workbench.results.sets.PackedParts``)."""
    return PackedParts.of(parts, one=one)


def _draw_charts(child: Offload, parts: SetParts, path: Path, kind: str, preset, stamp: bool,
                 baseline: str | None, point: tuple | None = None) -> list[Path]:
    return child.run("workbench.views.matplotlib_charts:export", _packed(parts), path, kind, preset, stamp=stamp,
                     baseline_name=baseline, point=point)


def _write_report(child: Offload, parts: SetParts, path: Path, stamp: bool,
                  baseline: str | None) -> list[Path]:
    return [child.run("workbench.views.report:write", _packed(parts), path, stamp=stamp, baseline_name=baseline)]


def _write_results(child: Offload, parts: SetParts, path: Path) -> list[Path]:
    """The main set's file, and the sidecar written with a CSV (the core writes each whole, or not at all)."""
    out = child.run("workbench.results.files:write", _packed(parts, one=True), path)
    return [out, result_files.sidecar_path(out)] if out.suffix.lower() == ".csv" else [out]


def _save_session(child: Offload, parts: SetParts, path: Path, experiment: dict, view: dict) -> list[Path]:
    return [child.run("workbench.results.session_file:save", path, experiment, _packed(parts), view)]
