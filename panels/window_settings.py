"""The window's settings and geometry: kept in ``QSettings``, and fitted to the screen it opens on."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from workbench.results.session_file import EXPERIMENT_FIELDS

#: The window's size at a first start, where the screen has room for it.
FIRST_SIZE = (1600, 1000)
RESULTS_SHARE = 0.24       # of the window's height, at a first start
EXPERIMENT_SHARE = 0.25    # of its width


class WindowSettings:
    """``MainWindow``'s settings and geometry (a part of the window)."""

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
