"""One way to run the window's work off the GUI thread: a ``Background`` of one thread, running the
functions handed to it one at a time, in order, and saying what they gave through its signals,
which always fire in the GUI thread.

A function may return a value (``returned``) or be a generator whose every value is sent as it
comes (``yielded``: superqt's ``GeneratorWorker`` pattern, a sweep's messages); ``errored`` carries
what it raised, and ``finished`` follows either, always, so the caller can reset. A task cancelled
before it ran never runs, and nothing more is said of one cancelled while it runs (a generator is
closed at its next value). The thread is a plain Python thread, not a ``QThread``: one left
running when its owner is deleted cannot abort the process.
"""
from __future__ import annotations

import inspect
import logging
import queue
import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal, Slot

log = logging.getLogger(__name__)

_YIELDED, _RETURNED, _ERRORED = "yielded", "returned", "errored"
_END = object()                 # put on the queue by shutdown: the thread ends


class Task:
    """One function handed to a ``Background``; ``cancel`` drops what it has not said yet."""

    __slots__ = ("fn", "cancelled")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Background(QObject):
    """A thread of the window's, named ``name``, started by the first ``submit``."""

    yielded = Signal(object, object)     # (task, a value its generator yielded)
    returned = Signal(object, object)    # (task, what it returned)
    errored = Signal(object, object)     # (task, the exception it raised)
    finished = Signal(object)            # (task): after returned or errored, always
    _said = Signal(str, object, object)  # (kind, task, value), from the thread: queued to _relay

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._open = 0                   # tasks submitted and not yet ended
        self._idle = threading.Condition()
        # A bound slot of this GUI-thread object: what the thread says is queued to the GUI thread.
        self._said.connect(self._relay)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Task:
        """Run ``fn(*args)`` after the tasks before it; its task, to cancel it or to tell it apart."""
        task = Task((lambda: fn(*args)) if args else fn)
        with self._idle:
            self._open += 1
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()
        self._queue.put(task)
        return task

    @property
    def running(self) -> bool:
        """Whether the thread is alive (started and not shut down)."""
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout_ms: int | None = None) -> bool:
        """Block until every task submitted has ended; True if they have (False: timed out)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._open == 0,
                                       None if timeout_ms is None else timeout_ms / 1000)

    def shutdown(self, timeout_ms: int | None = None) -> bool:
        """Cancel the tasks not yet run, let the one running end, and end the thread; True if it ended
        (a task that does not end in ``timeout_ms`` keeps a daemon thread, which cannot hold the exit)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return True
        while True:                                  # what waits is cancelled: it is never run
            try:
                self._queue.get_nowait().cancel()
            except queue.Empty:
                break
            except AttributeError:                   # an _END of an earlier shutdown
                pass
        self._queue.put(_END)
        thread.join(None if timeout_ms is None else timeout_ms / 1000)
        return not thread.is_alive()

    def _loop(self) -> None:                         # in the thread: never a widget here
        while (task := self._queue.get()) is not _END:
            try:
                if not task.cancelled:
                    self._run(task)
            finally:
                with self._idle:
                    self._open -= 1
                    self._idle.notify_all()

    def _run(self, task: Task) -> None:
        try:
            value = task.fn()
            if inspect.isgenerator(value):
                for item in value:
                    if task.cancelled:
                        value.close()
                        return
                    self._say(_YIELDED, task, item)
                value = None
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the GUI thread, which says it
            log.debug("%s: a task failed:\n%s", self.name, traceback.format_exc())
            self._say(_ERRORED, task, exc)
        else:
            self._say(_RETURNED, task, value)

    def _say(self, kind: str, task: Task, value: Any) -> None:
        try:
            self._said.emit(kind, task, value)
        except RuntimeError:                         # the owner is gone (its window closed meanwhile)
            task.cancel()

    @Slot(str, object, object)
    def _relay(self, kind: str, task: Task, value: Any) -> None:
        if task.cancelled:
            return
        if kind == _YIELDED:
            self.yielded.emit(task, value)
            return
        (self.errored if kind == _ERRORED else self.returned).emit(task, value)
        self.finished.emit(task)
