"""What the engine says besides a sweep's points: which backends can run (on this machine or the
cluster chosen under "Run on"), the environment it measured, its log lines and its troubles."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal, Slot

from panels import heap
from panels.status_line import short
from workbench.catalog.backends import is_gpu
from workbench.measure import protocol
from workbench.workspace import events as ev

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar
    from panels.experiment import ExperimentPanel
    from panels.info import EnvironmentPanel
    from panels.notice import NoticeBar
    from panels.plots import PlotsPanel
    from panels.run_on import RunOnBox
    from panels.worker import SweepController

log = logging.getLogger(__name__)


class EngineStatus(QObject):
    """The engine's news on screen: the backend list, the environment tab, the status line, the
    notice bar for a lost scheduler. ``restore_backends`` ticks the backends last chosen again."""

    ready = Signal()                # availability probed and environment read, the first time

    def __init__(self, parent: QObject, controller: SweepController, experiment: ExperimentPanel,
                 run_on: RunOnBox, environment: EnvironmentPanel, plots: PlotsPanel, status: QStatusBar,
                 notice: NoticeBar, restore_backends: Callable[[], None]) -> None:
        super().__init__(parent)
        self.controller, self.experiment, self.run_on, self.environment = controller, experiment, run_on, environment
        self.plots, self.status, self.notice, self.restore_backends = plots, status, notice, restore_backends
        self._ready = False
        run_on.targetChanged.connect(self.on_run_on)

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
        if self.controller.use(self.run_on.target()):
            self.status.showMessage("Asking the cluster which backends its workers can run..."
                                    if self.run_on.target() is not None else "Running on this machine")
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
        heap.settle(always=True)
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
