"""File > Open workload file...: a user's plug-in in the window, as ``--plugin`` is on the command line.

A file is vetted in a child process (``workbench.measure.plugins.vet``: one that crashes, hangs or
raises at import never reaches the window) off the GUI thread, then loaded here, listed in the
experiment's workload tree, handed to the engines (the next sweep starts fresh ones that load it)
and watched: saved again, it is loaded again. Nothing is loaded while a sweep runs; a change then
waits for the sweep's end. A problem is one line in the notice bar, naming the file.
"""
from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QFileSystemWatcher, QObject, QSettings, QTimer, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QStatusBar

from panels.jobs import Job
from workbench.catalog.workloads import REGISTRY, PluginError
from workbench.measure import plugins

log = logging.getLogger(__name__)
FILTER = "Workload files (*.py);;All files (*)"
SETTINGS_KEY = "workloadFiles/paths"
#: An editor's save can be several events (truncate, write; or write a copy, rename): one reload for them.
SETTLE_MS = 200


class Hosts(Protocol):
    """What the workload files need of the window (also their parent widget)."""

    busy: bool
    busyChanged: Any        # Signal(bool)
    controller: Any         # panels.worker.SweepController
    experiment: Any         # panels.experiment.ExperimentPanel
    files: Any              # panels.files.FileActions: says a problem where the user looks
    notice: Any             # panels.notice.NoticeBar
    settings: QSettings
    status: QStatusBar

    def restore_backends(self) -> None: ...


class WorkloadFiles(QObject):
    """The workload files the window has opened: loading, reloading on change, and what went wrong."""

    loaded = Signal(str, list)      # the file, the workload names it declares (tests wait on it)
    failed = Signal(str, str)       # the file, the one line said about it

    def __init__(self, window: Hosts, paths: tuple[str, ...] = ()) -> None:
        super().__init__(window)
        self.window = window
        self.names: dict[str, list[str]] = {}      # a loaded file (resolved) -> the names it declares now
        self.hidden: set[str] = set()              # names a file declared once and declares no more
        self.job = Job(self)                       # one vetting child at a time, off the GUI thread
        self.job.done.connect(self._vetted)
        self.job.failed.connect(self._vet_failed)
        self._queue: list[str] = []                # files waiting to be vetted
        self._vetting = ""
        self._changed: set[str] = set()            # changed on disk, loaded again once idle
        self._vetted_as: dict[str, plugins.Vetted] = {}    # each file as its vetting child saw it
        #: A loaded file whose workloads cannot run now (deleted, or broken since): why, in a line.
        self.broken: dict[str, str] = {}
        self._closed = False
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_changed)
        self.watcher.directoryChanged.connect(self._folder_changed)     # a deleted file coming back
        self.settle = QTimer(self, singleShot=True, interval=SETTLE_MS, objectName="workloadFileSettle")
        self.settle.timeout.connect(self._reload_changed)
        self.openAction = QAction("Open &workload file...", window, objectName="openWorkloadAction")
        self.openAction.setToolTip("Load workloads from a Python file (as gpu-workbench --plugin FILE does)")
        self.openAction.triggered.connect(self.ask_open)
        window.busyChanged.connect(self._busy_changed)
        # Last session's files, then the command line's (each once): the workload chosen then is chosen again.
        self._wanted = str(window.settings.value("experiment/workload") or "")
        remembered = window.settings.value(SETTINGS_KEY) or []
        remembered = [remembered] if isinstance(remembered, str) else list(remembered)
        for path in dict.fromkeys([*(p for p in remembered if Path(p).is_file()), *paths]):
            self.open(path)

    # --- opening -----------------------------------------------------------------------------

    @Slot()
    def ask_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open workload file", "", FILTER)
        if path:
            self.open(path)

    def open(self, path: str | Path) -> bool:
        """Vet and load ``path`` (its end is ``loaded`` or ``failed``); False, and said, while a sweep runs."""
        path = str(Path(path).expanduser().resolve())
        if self.window.busy:
            self._say(path, f"{path}: not loaded: a sweep is running; open it again when it ends")
            return False
        self._watch(path)              # a broken file is watched too: fixed and saved, it loads
        if path not in self._queue and path != self._vetting:
            self._queue.append(path)
        self._next()
        return True

    def _next(self) -> None:
        if self.job.running or not self._queue or self.window.busy or self._closed:
            return
        self._vetting = self._queue.pop(0)
        # Said while it lasts: a file whose inputs hang is checked for up to plugins.VET_TIMEOUT_S.
        self.window.status.showMessage(f"Checking {Path(self._vetting).name} in a child process...")
        self.job.start(partial(plugins.vet_contents, self._vetting))

    @Slot(object)
    def _vetted(self, vetted: plugins.Vetted) -> None:
        path, self._vetting = self._vetting, ""
        self._vetted_as[path] = vetted  # its contents, and its inputs' sizes measured in the child
        if self._closed:               # its end came after the window closed: nothing to show it in
            return
        if not vetted.digest:          # saved again while it was vetted: what loaded there is not known
            self._again(path)
            return
        if self.window.busy:           # a sweep began meanwhile: load it once that ends
            self._changed.add(path)
        else:
            self._load(path)
        self._next()

    @Slot(object)
    def _vet_failed(self, exc: BaseException) -> None:
        path, self._vetting = self._vetting, ""
        if self._closed:
            return
        self._fail(path, exc)
        self._next()

    def _again(self, path: str) -> None:
        """Vet ``path`` anew: it changed after its vetting began."""
        if path not in self._queue:
            self._queue.append(path)
        self._next()

    def _load(self, path: str) -> None:
        """Load a vetted file here, show its workloads, and hand the files to the engines."""
        try:
            vetted = self._vetted_as.get(path)
            if vetted is None or plugins.digest(path) != vetted.digest:    # saved since: never load it unvetted
                self._again(path)
                return
            names = REGISTRY.load_file(path, exclusive=True)
            plugins.seed(names, vetted.fits)
        except Exception as exc:  # noqa: BLE001 - a plug-in never takes the window down
            self._fail(path, exc)
            return
        before = self.names.get(path, [])
        self.names[path] = names
        self.broken.pop(path, None)
        self.hidden = (self.hidden | set(before)) - {n for ns in self.names.values() for n in ns}
        self.window.controller.use_plugins(tuple(self.names))      # idle here: never refused
        self._show(path, names, again=bool(before))
        self.window.settings.setValue(SETTINGS_KEY, list(self.names))

    def _show(self, path: str, names: list[str], again: bool) -> None:
        e = self.window.experiment
        origins = {n: p for p, ns in self.names.items() for n in ns}
        e.fill_workloads(frozenset(self.hidden), origins)
        if self._wanted in names:            # last session's choice, a workload of this file
            e.select_workload(self._wanted)
            self.window.restore_backends()
        elif not again or e.workload_name() is None:
            e.select_workload(names[0])      # a file just opened: its workload, ready to run
        self._wanted = "" if self._wanted in names else self._wanted
        self.window.notice.hide()
        verb = "Reloaded" if again else "Loaded"
        self.window.status.showMessage(f"{verb} {Path(path).name}: {', '.join(names)}")
        log.info("%s workload file %s: %s", verb.lower(), path, ", ".join(names))
        self.loaded.emit(path, names)

    def _fail(self, path: str, exc: BaseException) -> None:
        text = " ".join(str(exc).split()) or type(exc).__name__     # one line, whatever the plug-in raised
        if not isinstance(exc, PluginError) or path not in text:
            text = f"{path}: {text}"
        kept = ""
        if self.names.get(path):
            self.broken[path] = text
            kept = " (its workloads stay listed, and cannot run until it loads again)"
        self._say(path, f"Workload file not loaded: {text}{kept}")

    def _say(self, path: str, text: str) -> None:
        self.window.files.say_problem(text)      # the notice bar (plain text), the status bar, the log
        self.failed.emit(path, text)

    # --- watching ----------------------------------------------------------------------------

    def _watch(self, path: str) -> None:
        if path not in self.watcher.files() and Path(path).exists():
            self.watcher.addPath(path)

    @Slot(str)
    def _folder_changed(self, folder: str) -> None:
        for path in self.broken:
            if Path(path).parent == Path(folder) and Path(path).exists():
                self._watch(path)
                self._on_changed(path)

    def blocked(self, workload: str) -> str:
        """Why ``workload`` cannot run now ('' where it can): its file was deleted or broken since."""
        return next((why for path, why in self.broken.items() if workload in self.names.get(path, [])), "")

    @Slot(str)
    def _on_changed(self, path: str) -> None:
        if not self._closed:
            self._changed.add(path)
            self.settle.start()

    @Slot()
    def _reload_changed(self) -> None:
        # An editor that saves by renaming a new file over the old one ends the watch: watch it anew.
        for path in sorted(self._changed):
            self._watch(path)
            if not Path(path).exists():
                self._changed.discard(path)     # deleted: its workloads stay listed, and cannot run
                if self.names.get(path) and path not in self.broken:
                    self.broken[path] = f"{path} was deleted"
                    self.watcher.addPath(str(Path(path).parent))
                    self._say(path, f"Workload file {path} was deleted: its workloads cannot run until it is back")
        if self.window.busy:
            return                              # never a workload swapped under a running sweep
        for path in sorted(self._changed):
            if path not in self._queue and path != self._vetting:
                self._queue.append(path)
        self._changed.clear()
        self._next()

    @Slot(bool)
    def _busy_changed(self, busy: bool) -> None:
        if not busy:
            self._reload_changed()
            self._next()

    def close(self) -> None:
        """The window closes (maybe twice): no reload starts, and a vetting child in flight is waited for."""
        self._closed = True
        self.settle.stop()
        self._queue.clear()
        self.job.wait()
