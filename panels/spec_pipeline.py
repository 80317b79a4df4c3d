"""The charts' specs of a live sweep, made off the GUI thread: only the latest data scheduled.

``SpecPipeline.schedule`` hands the data (the workspace's parts, a table, or sets) to a background
thread (``panels.background``), which sends the parts to the spec process
(``workbench.views.spec_process``): it makes the sets' series, the specs and the summary (plain
data, ``workbench.views.live``) in an interpreter of its own, so that the GUI thread never waits
for the GIL. Where that process cannot run, the thread makes them itself.
"""
from __future__ import annotations

import logging
import sys
from typing import Any, Callable, Sequence

from workbench.core.lazy import lazy_module
from PySide6.QtCore import QObject, Signal, Slot

from panels.background import Background, Task
from workbench.results.files import ResultSet
from workbench.results.rows import to_frame
from workbench.results.sets import SetParts, sets_of
from workbench.views import spec_process
from workbench.views.live import Prepared, prepare

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

#: How long the spec thread may hold the GIL while the GUI thread waits for it (seconds).
SWITCH_S = 0.0005


class SpecPipeline(QObject):
    """One job in flight at a time; data scheduled meanwhile wait, and only the latest is made.

    ``inputs`` gives what the specs depend on besides the data: (the baseline's text, the lesson's
    marks), read as each job starts. ``invalidate`` makes a job in flight out of date: what it
    made is made again rather than shown.
    """

    made = Signal(object, object)   # (Prepared, what makes its sets in the GUI thread)
    failed = Signal()               # the latest data could not be made (said in the log)
    unchanged = Signal()            # the latest data are those made last: nothing to draw anew

    def __init__(self, inputs: Callable[[], tuple[str | None, list | None]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.inputs = inputs
        self.generation = 0             # bumped by whatever makes a job in flight out of date
        self.background = Background("chart-specs", self)
        self.background.returned.connect(self._returned)
        self.background.errored.connect(self._errored)
        self._client: spec_process.SpecClient | None = None    # the spec process's, at the first job
        self._task: Task | None = None  # the job in flight
        self._job: tuple = (None, None)  # (data, sets) it was given
        self._wanted: tuple | None = None   # (data, sets) scheduled while it was in flight
        self.shown: Any = None              # the data of the last specs ``made`` gave
        self._made_of: tuple | None = None  # what those were made of (``_identity``), where parts

    @property
    def busy(self) -> bool:
        """A job is in flight, or data wait for one."""
        return self._task is not None or self._wanted is not None

    @property
    def running(self) -> bool:
        """The pipeline's thread is alive (from the first job until ``shutdown``)."""
        return self.background.running

    def schedule(self, data, sets: Callable[[], Sequence[ResultSet]] | None = None) -> None:
        """Have the specs of ``data`` made (as ``PlotsPanel.schedule`` takes it); ``made`` fires with them."""
        if self._task is not None:
            self._wanted = (data, sets)
            return
        self._submit(data, sets)

    def warm(self) -> None:
        """Start the spec process now, in the thread: at a sweep's first update, its start (a fork,
        pandas imported) slowed the GUI thread's first repaints of the sweep."""
        self.background.submit(_in_process, self._started().warm)

    def invalidate(self) -> None:
        self.generation += 1

    def forget(self) -> None:
        """The job in flight and the data waiting are out of date: nothing is said of them."""
        self.generation += 1
        if self._task is not None:
            self._task.cancel()
        self._task = self._wanted = None
        self.shown = self._made_of = None

    def shutdown(self) -> None:
        """The thread ends (the job in flight first) and the spec process is let go."""
        self.forget()
        if self._client is not None:
            self._client.closed.set()       # a request waiting for the process stops waiting
        self.background.shutdown()
        if self._client is not None:
            self._client.close()
            self._client = None

    def _started(self) -> spec_process.SpecClient:
        if self._client is None:
            # The GUI thread takes the GIL back from the spec thread within SWITCH_S, not Python's
            # 5 ms: where the specs are made in this thread, a repaint waited that long for each item.
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_S))
            self._client = spec_process.SpecClient()
        return self._client

    def _submit(self, data, sets=None) -> None:
        self._wanted = None
        baseline_text, marks = self.inputs()
        self._task = self.background.submit(_make, self._started(), self.generation, data, baseline_text, marks,
                                            self._made_of if _same_source(data, self.shown) else None)
        self._job = (data, sets)

    @Slot(object, object)
    def _returned(self, task: Task, result: Prepared) -> None:
        if task is not self._task:
            return
        self._task = None
        if self._wanted is not None:        # newer data came meanwhile: make those, draw these not
            self._submit(*self._wanted)
        elif result.generation != self.generation:
            self._submit(*self._job)         # made with a lesson's old marks: made again
        elif result.made_of is SAME:
            self.unchanged.emit()
        else:
            data, sets = self._job
            self.shown, self._made_of = data, result.made_of
            self.made.emit(result, sets or _sets_maker(data))

    @Slot(object, object)
    def _errored(self, task: Task, exc: BaseException) -> None:
        if task is not self._task:
            return
        self._task = None
        log.error("the charts could not be made: %s", exc, exc_info=exc)
        if self._wanted is not None:
            self._submit(*self._wanted)
        else:
            self.failed.emit()


#: The ``made_of`` of what ``_make`` returns where the data are what the specs shown were made of.
SAME = ("the specs shown",)


def _same_source(a, b) -> bool:
    """Whether ``a`` and ``b`` give the same data: one object, or one method of one object (the
    workspace's ``parts``, a new bound method each time it is read)."""
    return a is b or (callable(a) and callable(b) and a == b)


def _identity(parts: SetParts, generation: int, baseline_text: str | None, marks) -> tuple:
    """What the specs of ``parts`` depend on: the same rows up to the same count (a live list is only
    appended to; its epoch changes where it is replaced), the same sets compared, the same inputs."""
    return (id(parts.rows), parts.count, parts.epoch, id(parts.origin), tuple(map(id, parts.compared)),
            id(parts.environment), id(parts.settings), generation, baseline_text, repr(marks))


def _make(client: spec_process.SpecClient | None, generation: int, data, baseline_text: str | None,
          marks, made_of: tuple | None = None) -> Prepared:
    """In the spec thread: what ``data`` (as ``PlotsPanel.schedule`` takes it) shows. Parts go to
    the spec process; sets, and parts where that process cannot run, are made here. ``made_of``:
    what the specs shown were made of, where of the same source; the same parts give ``UNCHANGED``
    (a sweep's end asks for its last points again: drawn anew, each chart's step and repaint held
    the GUI thread for 20-48 ms for nothing, issue 38)."""
    if callable(data):
        data = data()
    if not isinstance(data, SetParts):
        return prepare(generation, data, baseline_text, marks)
    parts = data
    if _identity(parts, generation, baseline_text, marks) == made_of:
        return Prepared(generation, None, [], [], "", None, None, made_of=SAME)
    made = _NOT_THERE
    if client is not None:
        made = _in_process(lambda: client.prepare(generation, parts, baseline_text, marks))
    if made is _NOT_THERE:
        made = prepare(generation, _parts_sets(parts), baseline_text, marks)
    # Known by the baseline it was made with: the chooser holds that one from now on.
    made.made_of = _identity(parts, generation, made.baseline_text, marks)
    return made


_NOT_THERE = object()      # what _in_process returns where no spec process can run


def _in_process(call: Callable[[], Any]) -> Any:
    """``call()``, a request to the spec process; ``_NOT_THERE`` where none can run: said once,
    and the spec thread makes the specs itself from then on."""
    if not spec_process.usable():
        return _NOT_THERE
    try:
        return call()
    except spec_process.Unavailable as e:
        log.warning("%s: the charts are made in the window's process", e)
        spec_process.give_up()
        return _NOT_THERE


def _parts_sets(parts: SetParts) -> list[ResultSet]:
    return sets_of(to_frame(parts.rows[:parts.count]), parts.origin, parts.compared, parts.environment,
                   parts.settings)


def _sets_maker(data) -> Callable[[], list[ResultSet]]:
    """What makes the sets of ``data`` (as ``schedule`` takes it), in the GUI thread."""
    def made() -> list[ResultSet]:
        d = data() if callable(data) else data
        if isinstance(d, SetParts):
            return _parts_sets(d)
        return [ResultSet(d)] if isinstance(d, pd.DataFrame) else list(d)
    return made
