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

    def __init__(self, plugins: tuple[str, ...] = ()) -> None:
        super().__init__()
        from workbench.supervisor import Supervisor
        self.engine = Supervisor(plugins=plugins)   # the engine process starts on the first request

    def request_stop(self) -> None:
        """Called from the GUI thread: never blocks (a flag in shared memory, then the supervisor
        ends an engine that does not answer in time)."""
        self.engine.stop()

    @Slot(object)
    def run(self, spec) -> None:
        from workbench import protocol
        cancelled, t0 = False, time.perf_counter()
        handlers = {
            protocol.SweepStarted: lambda m: self.sweepStarted.emit(m.total),
            protocol.PointStarted: self.pointStarted.emit,
            protocol.PointFinished: lambda m: self.pointFinished.emit(m.row),
            protocol.SweepError: lambda m: self.failed.emit(m.message),
            protocol.EngineDied: lambda m: self.failed.emit(m.message),
            protocol.EngineFailed: self._engine_failed,
            protocol.LogLine: self._log,
            protocol.Environment: lambda m: self.environmentUpdated.emit(m.record),
        }
        try:
            for message in self.engine.run(spec):
                if isinstance(message, protocol.SweepFinished):
                    cancelled = message.cancelled
                protocol.dispatch(handlers, message)
        except Exception as exc:  # noqa: BLE001 - reported, the window goes on
            log.error("%s", exc)
            self.failed.emit(str(exc))
        finally:
            self.sweepFinished.emit(cancelled, time.perf_counter() - t0)

    @Slot()
    def probe(self) -> None:
        """Deep availability probes and the environment record, read by the engine process."""
        from workbench import protocol
        handlers = {
            protocol.ProbeResults: lambda m: self.backendsProbed.emit(m.availability),
            protocol.Environment: lambda m: self.environmentReady.emit(m.record),
            protocol.EngineDied: lambda m: self.failed.emit(m.message),
            protocol.EngineFailed: self._engine_failed,
            protocol.LogLine: self._log,
        }
        try:
            for message in self.engine.probe():
                protocol.dispatch(handlers, message)
        except Exception as exc:  # noqa: BLE001
            log.error("%s", exc)
            self.failed.emit(str(exc))

    def _log(self, message) -> None:
        logging.getLogger("engine").log(logging.getLevelName(message.level), message.text)

    def _engine_failed(self, message) -> None:
        log.error("%s\n%s", message.message, message.traceback)
        self.failed.emit(message.message)


class SweepController(QObject):
    """Owns the worker's thread; the window calls start/stop/shutdown and listens to the worker."""

    runRequested = Signal(object)
    probeRequested = Signal()

    def __init__(self, parent: QObject | None = None, plugins: tuple[str, ...] = ()) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("gpu-workbench-worker")
        self.worker = SweepWorker(plugins)
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
        self.worker.engine.arm()             # a Stop from now on counts, even before the worker runs
        self.runRequested.emit(spec)

    def probe(self) -> None:
        self.probeRequested.emit()

    def stop(self) -> None:
        self.worker.request_stop()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """End the engine process first (bounded, whatever it is doing: the worker's loop then ends
        within its poll interval), then the thread; True when both ended."""
        self.worker.engine.close()
        self.thread.quit()
        return self.thread.wait(timeout_ms)
