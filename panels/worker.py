"""The worker thread, the supervised engine it drives, and the controller.

pyqtgraph's pattern: a parentless worker QObject moved to a QThread, requests in
as queued signals, and out one signal, ``message``, carrying every message of
``workbench.measure.protocol`` in order (superqt's GeneratorWorker emits everything a job
yields through one ``yielded`` signal the same way). The window keeps the one
table of handlers. A run always ends with exactly one ``SweepFinished``, so the
window can reset whatever happened. The worker relays between the window and the
Supervisor, which owns the engine process (``workbench.measure.supervisor`` says why);
Stop and close never block.
"""
from __future__ import annotations

import logging
import time
import traceback

from PySide6.QtCore import QObject, QThread, Signal, Slot

from workbench.measure import protocol
from workbench.measure.supervisor import Supervisor

log = logging.getLogger(__name__)


class SweepWorker(QObject):
    message = Signal(object)       # a workbench.measure.protocol message

    def __init__(self, plugins: tuple[str, ...] = (), journal=None) -> None:
        super().__init__()
        # The engine process starts on the first request; every finished point is journalled first.
        self.engine = self.local = Supervisor(plugins=plugins, journal=journal)
        self.plugins, self.journal = plugins, journal

    def request_stop(self) -> None:
        """Called from the GUI thread: never blocks (a flag in shared memory, then the supervisor
        ends an engine that does not answer in time)."""
        self.engine.stop()

    @Slot(object)
    def run(self, spec) -> None:
        t0, finished = time.perf_counter(), False
        try:
            for message in self.engine.run(spec):
                finished = finished or isinstance(message, protocol.SweepFinished)
                self.message.emit(message)
        except Exception as exc:  # noqa: BLE001 - reported, and the window goes on
            log.error("%s", exc)
            self.message.emit(protocol.EngineFailed(f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        finally:
            if not finished:
                self.message.emit(protocol.SweepFinished(True, time.perf_counter() - t0))

    @Slot()
    def probe(self) -> None:
        """Deep availability probes and the environment record, read by the engine process."""
        try:
            for message in self.engine.probe():
                self.message.emit(message)
        except Exception as exc:  # noqa: BLE001
            log.error("%s", exc)
            self.message.emit(protocol.EngineFailed(f"{type(exc).__name__}: {exc}", traceback.format_exc()))


class SweepController(QObject):
    """Owns the worker's thread and whether a sweep runs; the window calls start/stop/shutdown."""

    runRequested = Signal(object)
    probeRequested = Signal()

    def __init__(self, parent: QObject | None = None, plugins: tuple[str, ...] = (), journal=None) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("gpu-workbench-worker")
        self.worker = SweepWorker(plugins, journal)
        self.worker.moveToThread(self.thread)
        # The documented way to free a worker: delete it in its own thread as that thread ends,
        # not later from the garbage collector of another thread (or of a finalizing interpreter).
        self.thread.finished.connect(self.worker.deleteLater)
        self.runRequested.connect(self.worker.run)
        self.probeRequested.connect(self.worker.probe)
        self.running = False
        self.worker.message.connect(self._on_message)
        self.thread.start()

    @Slot(object)
    def _on_message(self, message) -> None:
        if isinstance(message, protocol.SweepFinished):
            self.running = False

    def start(self, spec) -> None:
        self.running = True
        self.worker.engine.arm()             # a Stop from now on counts, even before the worker runs
        self.runRequested.emit(spec)

    def probe(self) -> None:
        self.probeRequested.emit()

    def use(self, target) -> bool:
        """Run the next sweeps on ``target`` (a ``workbench.cluster.connect.Target``; None: this
        machine's engine), from the GUI thread while no sweep runs; False while one does. The
        cluster's runner has the supervisor's interface: the worker drives either the same way."""
        if self.running:
            return False
        worker = self.worker
        old = worker.engine
        if target is None:
            worker.engine = worker.local
        else:
            from workbench.cluster.runner import ClusterRunner      # Dask is imported by its first sweep
            worker.engine = ClusterRunner(target, plugins=worker.plugins, journal=worker.journal)
        if old is not worker.local:
            old.close()          # bounded: the connection, and a local cluster it started
        return True

    def use_plugins(self, paths: tuple[str, ...]) -> bool:
        """The workload files every engine loads, from the GUI thread while no sweep runs (False while
        one does: a workload is never swapped under a running sweep). The next sweep starts fresh
        engines, which load them as they are now on disk."""
        if self.running:
            return False
        worker = self.worker
        worker.plugins = tuple(paths)
        for engine in (worker.local, worker.engine):     # a cluster's runner sends them with each sweep
            engine.plugins = worker.plugins
        worker.local.renew()
        return True

    def stop(self) -> None:
        self.worker.request_stop()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """End the engine process first (bounded, whatever it is doing: the worker's loop then ends
        within its poll interval), then the thread; True when both ended."""
        self.worker.engine.close()
        if self.worker.local is not self.worker.engine:
            self.worker.local.close()
        self.thread.quit()
        return self.thread.wait(timeout_ms)
