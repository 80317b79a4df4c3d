"""Work that takes seconds and touches no widget (drawing five charts with matplotlib, a
report, a results file or a session of 5,000 points; reading one) runs off the GUI thread, one
piece at a time; its end comes back as a signal.

One background thread (``panels.background``), owned by the window: matplotlib's style is process-wide while a
chart is drawn (``rc_context``), so two exports must never overlap, and the window waits
for the one in flight before it closes. Reads run on the same thread, in the order asked: a read
asked while a file is written waits for it, and a file read is shown after what was read before it.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal, Slot

from panels.background import Background, Task
from workbench.measure.offload import Offload

log = logging.getLogger(__name__)


class Job(QObject):
    """Runs one function at a time in a ``Background`` of its own; ``done`` or ``failed`` fires in the
    GUI thread for a write (``start``), ``readDone`` or ``readFailed`` for a read (``read``)."""

    done = Signal(object)          # the function's value
    failed = Signal(object)        # the exception it raised
    readDone = Signal(object, object)      # (the read's task, what it returned)
    readFailed = Signal(object, object)    # (the read's task, the exception it raised)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.background = Background("job", self)
        self.background.returned.connect(self._returned)
        self.background.errored.connect(self._errored)
        self.running = False                   # a write is in flight (one at a time)
        self._reads: list[Task] = []           # reads asked and not yet answered, in order
        self.child = Offload()                 # where matplotlib draws: not in the window's process

    def start(self, fn: Callable[[], Any]) -> bool:
        """Start ``fn`` unless a job runs already (then False: nothing is started)."""
        if self.running:
            return False
        self.running = True
        self.background.submit(fn)
        return True

    def read(self, fn: Callable[[], Any], replace: bool = False) -> Task:
        """Run ``fn`` after what was asked before it, a write in flight or not; its task, which
        ``readDone`` or ``readFailed`` carries back. ``replace``: the reads not answered yet are
        dropped first (never run, or never answered), so that an older read cannot overwrite it."""
        if replace:
            self.drop_reads()
        task = self.background.submit(fn)
        self._reads.append(task)
        return task

    def drop_reads(self) -> None:
        """Nothing more is said of the reads not answered yet."""
        for task in self._reads:
            task.cancel()
        self._reads.clear()

    @property
    def reading(self) -> bool:
        """A read is asked and not answered yet."""
        return bool(self._reads)

    @Slot(object, object)
    def _returned(self, task: Task, value: Any) -> None:
        if task in self._reads:
            self._reads.remove(task)
            self.readDone.emit(task, value)
            return
        self.running = False
        self.done.emit(value)

    @Slot(object, object)
    def _errored(self, task: Task, exc: BaseException) -> None:
        if task in self._reads:
            self._reads.remove(task)
            self.readFailed.emit(task, exc)
            return
        self.running = False
        self.failed.emit(exc)

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Block until the job in flight has ended, then end the child and the thread (the window
        closes); True if it has. A read not answered yet is dropped: no one is left to show it."""
        self.drop_reads()
        done = self.background.wait(timeout_ms)
        if done:
            self.background.shutdown()
            self.child.close()
        return done
