"""The window's settings and geometry: kept in ``QSettings``, and fitted to the screen it opens on."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Qt
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow

from workbench.results.session_file import EXPERIMENT_FIELDS

if TYPE_CHECKING:
    from panels.experiment import ExperimentPanel
    from panels.presentation import Presentation
    from panels.run_on import RunOnBox

#: The window's size at a first start, where the screen has room for it.
FIRST_SIZE = (1600, 1000)
RESULTS_SHARE = 0.24       # of the window's height, at a first start
EXPERIMENT_SHARE = 0.25    # of its width


class WindowSettings(QObject):
    """What the window keeps between starts: its geometry and docks (``window``, the window it
    saves), the experiment's last choices, the Run-on address and the look; and the backends
    wanted, ticked again once a probe says which can run."""

    def __init__(self, window: QMainWindow, settings: QSettings, experiment: ExperimentPanel, run_on: RunOnBox,
                 presentation: Presentation, results_dock: QDockWidget, experiment_dock: QDockWidget) -> None:
        super().__init__(window)
        self.window, self.settings, self.experiment, self.run_on = window, settings, experiment, run_on
        self.presentation, self.results_dock, self.experiment_dock = presentation, results_dock, experiment_dock
        self.wanted_backends: list[str] = []   # ticked again once the deep probe says which can run
        self._first_start = False
        self._fitted = False

    def save(self) -> None:
        s, w = self.settings, self.window
        s.setValue("geometry", w.saveGeometry())
        s.setValue("state", w.saveState())
        for key, value in self.experiment.settings().items():
            s.setValue(f"experiment/{key}", ",".join(value) if key == "backends" else value)
        s.setValue("runOn/scheduler", self.run_on.address.text())     # the address; each start runs here
        self.presentation.save(s)
        s.sync()

    def restore(self) -> None:
        s, w = self.settings, self.window
        if s.value("geometry") is not None:
            w.restoreGeometry(s.value("geometry"))
            w.restoreState(s.value("state"))
        else:
            w.resize(*FIRST_SIZE)
            self._first_start = True
        self._fit_screen()
        stored = {key: s.value(f"experiment/{key}") for key in EXPERIMENT_FIELDS
                  if s.value(f"experiment/{key}") is not None}
        self.experiment.apply_settings(stored)
        if self.experiment.workload_name() is None:      # a first start, or a plug-in's workload gone
            self.experiment.select_workload("source_terms")
        backends = stored.get("backends") or ""
        self.wanted_backends = backends.split(",") if isinstance(backends, str) else list(backends)
        self.presentation.restore(s)
        self.run_on.apply_settings({"scheduler": s.value("runOn/scheduler") or ""})
        self.restore_backends()

    def shown(self) -> None:
        """The window is shown: fitted once the frame's margins are known."""
        if not self._fitted:
            self._fitted = True
            self._fit_screen()
            if self._first_start:
                self._share_space()

    def _share_space(self) -> None:
        """A first start gives the charts most of the window: on a 1280x720 screen the docks'
        natural sizes (a form, a table) would take half its height and a third of its width."""
        w = self.window
        w.resizeDocks([self.results_dock], [max(140, int(w.height() * RESULTS_SHARE))], Qt.Orientation.Vertical)
        w.resizeDocks([self.experiment_dock], [max(300, int(w.width() * EXPERIMENT_SHARE))],
                      Qt.Orientation.Horizontal)

    def _fit_screen(self) -> None:
        """Within the screen's available area: a first start on a 1280x720 projector, or a window
        last closed on a larger screen, opened at 1600x1000 and cropped its charts until resized."""
        w = self.window
        screen = w.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        # The frame (title bar, borders) is known once shown; before, the margins read as 0.
        dw = w.frameGeometry().width() - w.width()
        dh = w.frameGeometry().height() - w.height()
        width, height = min(w.width(), area.width() - dw), min(w.height(), area.height() - dh)
        if (width, height) != (w.width(), w.height()):
            w.resize(width, height)
        frame = w.frameGeometry()
        if not area.contains(frame):
            w.move(max(area.left(), min(frame.left(), area.right() - frame.width() + 1)),
                      max(area.top(), min(frame.top(), area.bottom() - frame.height() + 1)))

    def restore_backends(self) -> None:
        if any(self.wanted_backends):
            self.experiment.set_checked_backends(self.wanted_backends)
