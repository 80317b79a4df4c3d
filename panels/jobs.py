"""Work that takes seconds and touches no widget (drawing five charts with matplotlib, a
report) runs off the GUI thread, one piece at a time; its end comes back as a signal.

A pool of one thread, owned by the window: matplotlib's style is process-wide while a
chart is drawn (``rc_context``), so two exports must never overlap, and the window waits
for the one in flight before it closes.
"""
from __future__ import annotations

import logging
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThreadPool, Signal, Slot

from workbench.measure.offload import Offload

log = logging.getLogger(__name__)


class Job(QObject):
    """Runs one function at a time in its own thread; ``done`` or ``failed`` fires in the GUI thread."""

    done = Signal(object)          # the function's value
    failed = Signal(object)        # the exception it raised
    _finished = Signal(object, object)   # (value, exception), from the pool's thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.running = False
        self.child = Offload()                 # where matplotlib draws: not in the window's process
        self._finished.connect(self._end)      # a bound slot of a GUI-thread object: queued there

    def start(self, fn: Callable[[], Any]) -> bool:
        """Start ``fn`` unless a job runs already (then False: nothing is started)."""
        if self.running:
            return False
        self.running = True
        self.pool.start(lambda: self._run(fn))
        return True

    def _run(self, fn: Callable[[], Any]) -> None:      # in the pool's thread: no widget here
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the window, which says it
            log.debug("job failed:\n%s", traceback.format_exc())
            self._finished.emit(None, exc)
        else:
            self._finished.emit(value, None)

    @Slot(object, object)
    def _end(self, value: Any, exc: BaseException | None) -> None:
        self.running = False
        if exc is not None:
            self.failed.emit(exc)
        else:
            self.done.emit(value)

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Block until the job in flight has ended, then end the child (the window closes); True if it has."""
        done = self.pool.waitForDone(timeout_ms)
        if done:
            self.child.close()
        return done
