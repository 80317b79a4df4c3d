"""An interrupted session offered back: the points a killed window journalled, restored or discarded."""
from __future__ import annotations

from PySide6.QtCore import Slot


class SessionRestore:
    """``MainWindow``'s offer of a killed session's points (a part of the window)."""

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
