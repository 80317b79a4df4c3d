"""Work that takes seconds and touches no widget (drawing five charts with matplotlib, a
report, a results file or a session of 5,000 points) runs off the GUI thread, one piece at a
time; its end comes back as a signal.

One background thread (``panels.background``), owned by the window: matplotlib's style is process-wide while a
chart is drawn (``rc_context``), so two exports must never overlap, and the window waits
for the one in flight before it closes.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal, Slot

from panels.background import Background, Task
from workbench.measure.offload import Offload

log = logging.getLogger(__name__)


class Job(QObject):
    """Runs one function at a time in a ``Background`` of its own; ``done`` or ``failed`` fires in the GUI thread."""

    done = Signal(object)          # the function's value
    failed = Signal(object)        # the exception it raised

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.background = Background("job", self)
        self.background.returned.connect(self._returned)
        self.background.errored.connect(self._errored)
        self.running = False
        self.child = Offload()                 # where matplotlib draws: not in the window's process

    def start(self, fn: Callable[[], Any]) -> bool:
        """Start ``fn`` unless a job runs already (then False: nothing is started)."""
        if self.running:
            return False
        self.running = True
        self.background.submit(fn)
        return True

    @Slot(object, object)
    def _returned(self, _task: Task, value: Any) -> None:
        self.running = False
        self.done.emit(value)

    @Slot(object, object)
    def _errored(self, _task: Task, exc: BaseException) -> None:
        self.running = False
        self.failed.emit(exc)

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Block until the job in flight has ended, then end the child and the thread (the window
        closes); True if it has."""
        done = self.background.wait(timeout_ms)
        if done:
            self.background.shutdown()
            self.child.close()
        return done
