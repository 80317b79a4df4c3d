"""An interrupted session offered back: the points a killed window journalled, restored or discarded."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal, Slot

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar
    from panels.experiment import ExperimentPanel
    from panels.restore import RestoreBar
    from workbench.workspace import Workspace


class SessionRestore(QObject):
    """The restore bar's offer of the workspace's orphans (a killed session's points), and what its
    buttons do; ``busy`` says whether a sweep runs (nothing is restored meanwhile)."""

    restored = Signal(int)          # an interrupted session's points are shown again (how many)

    def __init__(self, parent: QObject, workspace: Workspace, bar: RestoreBar, experiment: ExperimentPanel,
                 status: QStatusBar, busy: Callable[[], bool]) -> None:
        super().__init__(parent)
        self.workspace, self.bar, self.experiment, self.status, self.busy = workspace, bar, experiment, status, busy
        bar.restoreRequested.connect(self.restore)
        bar.discardRequested.connect(self.discard)

    @property
    def restorable(self) -> tuple[dict, list[dict]] | None:
        """(settings, rows) of the killed session on offer, or None."""
        orphans = self.workspace.orphans
        return (orphans[0].settings, orphans[0].rows) if orphans else None

    def offer_next(self) -> None:
        if self.restorable is not None:
            self.bar.offer(*self.restorable)
        else:
            self.bar.hide()

    @Slot()
    def restore(self) -> None:
        """Show the interrupted session's points as if its sweep had just ended (the workspace puts
        them into this session's journal first, so that a kill now loses them no more than before)."""
        if self.restorable is None or self.busy():
            return
        settings, _ = self.restorable
        if settings.get("workload"):
            self.experiment.select_workload(str(settings["workload"]))
        n = self.workspace.restore()
        self.offer_next()
        self.status.showMessage(f"Restored {n} point(s) of the interrupted session")
        self.restored.emit(n)

    @Slot()
    def discard(self) -> None:
        self.workspace.discard()
        self.offer_next()
