"""Run and Stop: the toolbar's buttons and the Run menu's actions, enabled as the experiment and the
sweep allow, and what pressing them does (the workspace runs and stops the sweep)."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from panels.experiment import ExperimentPanel
    from panels.run_on import RunOnBox
    from panels.toolbar import RunToolBar
    from workbench.workspace import Workspace

log = logging.getLogger(__name__)


class RunControl(QObject):
    """Run, Stop and the experiment's lock while a sweep runs. ``busy`` says whether a sweep runs
    or its last points are still drawn; ``blocked`` why a workload cannot run now ("" where it can);
    ``problem`` says a refusal where the user looks."""

    idleChanged = Signal(bool)      # a lesson (or anything that sets the experiment up) may start

    def __init__(self, parent: QObject, workspace: Workspace, experiment: ExperimentPanel, run_on: RunOnBox,
                 toolbar: RunToolBar, busy: Callable[[], bool], blocked: Callable[[str], str],
                 problem: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.workspace, self.experiment, self.run_on = workspace, experiment, run_on
        self.runButton, self.stopButton = toolbar.runButton, toolbar.stopButton
        self.busy, self.blocked, self.problem = busy, blocked, problem
        self.runAction = QAction("&Run sweep", parent, objectName="runAction", shortcut=QKeySequence("Ctrl+R"))
        self.stopAction = QAction("&Stop", parent, objectName="stopAction", shortcut=QKeySequence("Esc"))
        self.stopAction.setEnabled(False)
        for trigger in (self.runButton.clicked, self.runAction.triggered):
            trigger.connect(self.run)
        for trigger in (self.stopButton.clicked, self.stopAction.triggered):
            trigger.connect(self.stop)
        experiment.validityChanged.connect(self.on_validity)

    @Slot()
    def run(self) -> None:
        if self.busy() or not self.experiment.validate():
            return
        spec = self.experiment.spec()
        if spec is None:
            return
        why = self.blocked(spec.workload)
        if why:                         # said now, not as an engine's "unknown workload" after Run
            self.problem(f"{spec.workload} cannot run: {why}")
            return
        self.workspace.run(spec)

    @Slot()
    def stop(self) -> None:
        self.workspace.stop()

    @Slot(bool, str)
    def on_validity(self, ok: bool, problem: str) -> None:
        idle = not self.busy()
        self.runButton.setEnabled(ok and idle)
        self.runAction.setEnabled(ok and idle)
        self.idleChanged.emit(idle)     # a lesson sets its own experiment up: only the busy matter
        self.runButton.setToolTip(problem or "Run the sweep (Ctrl+R)")

    def lock(self) -> None:
        """A sweep runs: the experiment is fixed (a workload switch now would be half-applied: new
        sizes and unit on screen, the old sweep's points arriving), Stop is offered."""
        self.experiment.set_locked(True)
        self.run_on.setEnabled(False)
        self.runButton.setEnabled(False)
        self.runAction.setEnabled(False)
        self.idleChanged.emit(False)
        self.set_stoppable(True)

    def unlock(self) -> None:
        """The sweep's last points are drawn: the experiment and Run again."""
        self.experiment.set_locked(False)
        self.run_on.setEnabled(True)
        self.on_validity(self.experiment.validate(), self.experiment.problem)

    def set_stoppable(self, on: bool) -> None:
        self.stopButton.setEnabled(on)
        self.stopAction.setEnabled(on)
