"""The worker thread, the long-lived engine process it drives, and the controller.

pyqtgraph's pattern: a parentless worker QObject moved to a QThread, requests in
as queued signals, results out as signals carrying plain data (the engine's
frozen events and row dicts). The worker thread relays between the window and
one long-lived child process that owns the GPU and runs the engine on its main
thread (``workbench.remote`` says why a process). Stop sets an event the engine
reads between repeats; ``sweepFinished`` always fires so the window can reset.
"""
from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, QThread, Signal, Slot

log = logging.getLogger(__name__)


class SweepWorker(QObject):
    sweepStarted = Signal(int)            # number of points
    pointStarted = Signal(object)         # engine.PointStarted
    pointFinished = Signal(object)        # a result row (dict)
    sweepFinished = Signal(bool, float)   # cancelled, elapsed seconds
    failed = Signal(str)
    backendsProbed = Signal(object)       # {name: Availability}
    environmentReady = Signal(object)     # the environment record (dict)
    environmentUpdated = Signal(object)   # the record again after a sweep, with the limits it measured

    def __init__(self) -> None:
        super().__init__()
        from workbench.remote import EngineProcess
        self.engine = EngineProcess()      # the child process starts on the first request

    def request_stop(self) -> None:
        """Called from the GUI thread: sets a multiprocessing.Event the engine reads between repeats."""
        self.engine.stop()

    @Slot(object)
    def run(self, spec) -> None:
        from workbench import engine
        cancelled, t0 = False, time.perf_counter()
        try:
            for reply in self.engine.request("run", spec):
                if reply[0] == "event":
                    event = reply[1]
                    if isinstance(event, engine.SweepStarted):
                        self.sweepStarted.emit(event.total)
                    elif isinstance(event, engine.PointStarted):
                        self.pointStarted.emit(event)
                    elif isinstance(event, engine.PointFinished):
                        self.pointFinished.emit(event.row)
                    elif isinstance(event, engine.SweepError):
                        self.failed.emit(event.message)
                    elif isinstance(event, engine.SweepFinished):
                        cancelled = event.cancelled
                else:
                    self._other(reply)
        except Exception as exc:  # noqa: BLE001 - a dead child is reported, the window goes on
            log.error("%s", exc)
            self.failed.emit(str(exc))
        finally:
            self.sweepFinished.emit(cancelled, time.perf_counter() - t0)

    @Slot()
    def probe(self) -> None:
        """Deep availability probes and the environment record, read by the engine process."""
        try:
            for reply in self.engine.request("probe"):
                if reply[0] == "probed":
                    self.backendsProbed.emit(reply[1])
                elif reply[0] == "environment":
                    self.environmentReady.emit(reply[1])
                else:
                    self._other(reply)
        except Exception as exc:  # noqa: BLE001
            log.error("%s", exc)
            self.failed.emit(str(exc))

    def _other(self, reply) -> None:
        if reply[0] == "environment":
            self.environmentUpdated.emit(reply[1])
        elif reply[0] == "log":
            logging.getLogger("engine").log(logging.getLevelName(reply[1]), reply[2])
        elif reply[0] == "failed":
            log.error("%s\n%s", reply[1], reply[2])
            self.failed.emit(reply[1])


class SweepController(QObject):
    """Owns the worker's thread; the window calls start/stop/shutdown and listens to the worker."""

    runRequested = Signal(object)
    probeRequested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("gpu-workbench-worker")
        self.worker = SweepWorker()
        self.worker.moveToThread(self.thread)
        # The documented way to free a worker: delete it in its own thread as that thread ends,
        # not later from the garbage collector of another thread (or of a finalizing interpreter).
        self.thread.finished.connect(self.worker.deleteLater)
        self.runRequested.connect(self.worker.run)
        self.probeRequested.connect(self.worker.probe)
        self.running = False
        self.worker.sweepStarted.connect(self._on_started)
        self.worker.sweepFinished.connect(self._on_finished)
        self.thread.start()

    @Slot(int)
    def _on_started(self, total: int) -> None:
        self.running = True

    @Slot(bool, float)
    def _on_finished(self, cancelled: bool, elapsed: float) -> None:
        self.running = False

    def start(self, spec) -> None:
        self.running = True
        self.runRequested.emit(spec)

    def probe(self) -> None:
        self.probeRequested.emit()

    def stop(self) -> None:
        self.worker.request_stop()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Stop the sweep, end the thread, then the engine process; True when both ended."""
        self.stop()
        self.thread.quit()
        ended = self.thread.wait(timeout_ms)
        self.worker.engine.close()           # the thread is gone: nothing else uses the pipe now
        return ended
