"""The worker thread, the supervised engine it drives, and the controller.

The sweep's work runs in a ``panels.background.Background`` of its own, the same mechanism as
the window's other background work: a request is a generator handed to it, and every message of
``workbench.measure.protocol`` it yields comes out, in order, through one signal, ``message``
(superqt's GeneratorWorker emits everything a job yields through one ``yielded`` signal the same
way). The window keeps the one table of handlers. A run always ends with exactly one
``SweepFinished``, so the window can reset whatever happened. The worker relays between the
window and the Supervisor, which owns the engine process (``workbench.measure.supervisor`` says why);
Stop and close never block.
"""
from __future__ import annotations

import logging
import time
import traceback
from typing import Iterator

from PySide6.QtCore import QObject, Signal, Slot

from panels.background import Background, Task
from workbench.measure import protocol
from workbench.measure.supervisor import Supervisor

log = logging.getLogger(__name__)


class SweepWorker(QObject):
    """The engine the sweeps run on, and ``message``, which carries each of their messages in the
    GUI thread; ``run`` and ``probe`` are generators that the controller's background runs."""

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

    def run(self, spec) -> Iterator:
        """In the background thread: the sweep's messages, ending with one ``SweepFinished``."""
        t0, finished = time.perf_counter(), False
        try:
            for message in self.engine.run(spec):
                finished = finished or isinstance(message, protocol.SweepFinished)
                yield message
        except Exception as exc:  # noqa: BLE001 - reported, and the window goes on
            log.error("%s", exc)
            yield protocol.EngineFailed(f"{type(exc).__name__}: {exc}", traceback.format_exc())
        if not finished:
            yield protocol.SweepFinished(True, time.perf_counter() - t0)

    def probe(self) -> Iterator:
        """In the background thread: what the window loads after its first frame, then the deep
        availability probes and the environment record, read by the engine process."""
        preload()
        try:
            yield from self.engine.probe()
        except Exception as exc:  # noqa: BLE001
            log.error("%s", exc)
            yield protocol.EngineFailed(f"{type(exc).__name__}: {exc}", traceback.format_exc())


#: What the window uses after its first frame and not in it: imported in this thread once the frame
#: is painted (the probe's first step), so that neither the launch nor the GUI thread pays for them
#: (the lessons' menu, a sweep's table and its summary). Not pandas: it brings pyarrow's C++ runtime,
#: and a window closed while this thread had imported it ended in std::terminate at exit (2 of 28
#: launches closed at their first frame); pandas loads where it is first used, as before.
PRELOAD = ("workbench.lessons", "workbench.results.table", "workbench.views.live",
           # what a point's hover text reads (its kernels and energy), not imported at the first hover
           "workbench.measure.gpu.kernels", "workbench.measure.energy")


def preload() -> None:
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the GUI thread imports it at its use, and says why then
            log.warning("could not load %s ahead of its use: %s", name, exc)
    from workbench import lessons
    lessons.declared()              # found (entry points, modules) here, not when the menu is filled


class SweepController(QObject):
    """Owns the sweeps' background thread and whether a sweep runs; the window calls start/stop/shutdown."""

    def __init__(self, parent: QObject | None = None, plugins: tuple[str, ...] = (), journal=None) -> None:
        super().__init__(parent)
        self.background = Background("gpu-workbench-worker", self)
        self.worker = SweepWorker(plugins, journal)
        self.background.yielded.connect(self._on_yielded)
        self.running = False

    @Slot(object, object)
    def _on_yielded(self, _task: Task, message) -> None:
        if isinstance(message, protocol.SweepFinished):
            self.running = False
        self.worker.message.emit(message)

    def start(self, spec) -> None:
        self.running = True
        self.worker.engine.arm()             # a Stop from now on counts, even before the worker runs
        self.background.submit(self.worker.run, spec)

    def probe(self) -> None:
        self.background.submit(self.worker.probe)

    def use(self, target) -> bool:
        """Run the next sweeps on ``target`` (a ``workbench.cluster.connect.Target``; None: this
        machine's engine), from the GUI thread while no sweep runs; False while one does. The
        cluster's runner is a Runner (workbench.measure.runner), as the supervisor is: the worker drives either alike."""
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
        return self.background.shutdown(timeout_ms)
