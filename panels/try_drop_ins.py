"""Run > Try it on every backend: a workload file's NumPy function, unchanged, on each drop-in
(``workbench.catalog.dropin``), as ``run --drop-in`` on the command line.

The drop-ins are declared here and, through a file of this object's own that the engines load
after the workload files, in every engine; a workload file loaded again (an edit) gets its
drop-ins again. Those that can run here are ticked; each that cannot says why in its tooltip and
in the line below the backends, as every backend does.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction

from workbench.catalog import dropin
from workbench.catalog.backends import availability_among
from workbench.catalog.workloads import REGISTRY

log = logging.getLogger(__name__)


class Tries(Protocol):
    """What the drop-ins need of the window (also their parent): stated here, as ``panels.files.Shows``
    states the file actions' needs, so that this module depends on what it uses."""

    busy: bool
    busyChanged: Any        # Signal(bool)
    controller: Any         # panels.worker.SweepController: the engines get the drop-ins' file
    experiment: Any         # panels.experiment.ExperimentPanel
    files: Any              # panels.files.FileActions: says a problem where the user looks
    status: Any             # QStatusBar


class DropInChoice(QObject):
    """The window's drop-ins: the workloads tried on every backend, and the file telling the engines."""

    tried = Signal(str, list)       # the workload, the drop-ins ticked (tests wait on it)

    def __init__(self, window: Tries, files: Any) -> None:
        super().__init__(window)
        self.window, self.files = window, files      # files: panels.workload_files.WorkloadFiles
        self.names: list[str] = []                   # the workloads tried, in order
        self._folder = tempfile.TemporaryDirectory(prefix="workbench-dropins-")
        self.path = Path(self._folder.name) / "drop_ins.py"
        self.action = QAction("&Try it on every backend", window, objectName="tryDropInsAction")
        self.action.setToolTip("Your workload's NumPy function, unchanged, on Numba (njit, parallel) and on CuPy "
                               "through NumPy's dispatch, ticked where they can run here (run --drop-in)")
        self.action.triggered.connect(self.try_current)
        window.busyChanged.connect(self._busy_changed)
        files.loaded.connect(self._loaded)
        self.destroyed.connect(self._folder.cleanup)

    @Slot()
    def try_current(self) -> bool:
        """The chosen workload on every drop-in; False, and said in one line, where it cannot be."""
        name = self.window.experiment.workload_name()
        if not name or self.window.busy:
            return False
        try:
            dropin.land(name)
        except (KeyError, ValueError) as exc:   # a built-in workload, a NumPy backend made by a factory, gone
            self.window.files.say_problem(f"Try it on every backend: {exc}")
            return False
        if name not in self.names:
            self.names.append(name)
        self._tell_engines()
        e = self.window.experiment
        e.set_availability(e.availability)            # the list again, with the drop-ins in it
        usable = [b for b in dropin.NAMES if (a := availability_among(b, e.availability)) is not None and a.usable]
        e.set_checked_backends(sorted({*e.checked_backends(), "numpy", *usable}))
        self.window.status.showMessage(f"{name} on every backend: {', '.join(usable) or 'no drop-in can run here'}")
        self.tried.emit(name, usable)
        return True

    def _tell_engines(self) -> None:
        # A workload whose file no longer declares it is forgotten here, and passed over in an
        # engine that loads a file edited since: either way not a failure to load every file.
        self.names = [n for n in self.names if n in self._declared()]
        self.path.write_text("from workbench.catalog.dropin import land\n"
                             + "".join(f"land({n!r}, missing_ok=True)\n" for n in self.names), encoding="utf-8")
        self.window.controller.use_plugins((*self.files.names, str(self.path)))

    def _declared(self) -> set[str]:
        """The workloads the loaded files declare now (the registry keeps one a file no longer declares)."""
        return {n for names in self.files.names.values() for n in names} & set(REGISTRY.names())

    @Slot(str, list)
    def _loaded(self, path: str, names: list) -> None:
        """A workload file loaded again declares its workloads anew, without their drop-ins."""
        again = [n for n in names if n in self.names]
        gone = [n for n in self.names if n not in self._declared()]     # edited out of its file
        for n in again:
            try:
                dropin.land(n)
            except ValueError as exc:      # its NumPy function is no kernel any more
                self.names.remove(n)
                self.window.files.say_problem(f"Try it on every backend: {exc}")
        if self.names or gone:
            self._tell_engines()
        if again:
            self.window.experiment.set_availability(self.window.experiment.availability)

    @Slot(bool)
    def _busy_changed(self, busy: bool) -> None:
        self.action.setEnabled(not busy)
