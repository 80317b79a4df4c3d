"""What happens to a workspace, as plain frozen dataclasses, and who is told.

One message type per thing that happens (``workbench.measure.protocol`` for the engine's,
these for the session's), and one way to hear them: :meth:`Listeners.add` a callable that takes
every event, and dispatch on its type (``workbench.measure.protocol.dispatch``). Listeners are
called in the thread that changed the workspace, in the order they were added: no Qt, so the
command line, a test and the window hear the same events.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from workbench.measure.engine import SweepSpec


class RunState(enum.Enum):
    """Whether a sweep runs: Run is offered when idle, Stop while running."""

    IDLE = "idle"
    RUNNING = "running"
    STOPPING = "stopping"      # asked to stop: the point in progress ends, then the sweep


@dataclass(frozen=True)
class StateChanged:
    state: RunState


@dataclass(frozen=True)
class SweepBegan:
    """A sweep was handed to the engine; ``first`` False: a lesson's next run, whose rows join the last run's."""

    spec: SweepSpec
    first: bool = True
    notes: tuple[str, ...] = ()          # what it will meet on the device (the memory wall), said before


@dataclass(frozen=True)
class SweepPlanned:
    """The engine said how many points the sweep has."""

    spec: SweepSpec
    total: int


@dataclass(frozen=True)
class PointBegan:
    backend: str
    size: int
    variant: str
    done: int                            # points of this run finished so far
    total: int


@dataclass(frozen=True)
class PointAdded:
    """A finished point is in the rows (and, where the workspace writes a file, on disk)."""

    row: Any                             # workbench.results.rows.Row
    index: int                           # its place in the workspace's rows
    done: int                            # points of this run finished so far
    total: int


@dataclass(frozen=True)
class SaveFailed:
    """A save after a point, or the last one, could not be written; the sweep goes on."""

    text: str                            # one line: what could not be written, and why
    final: bool = False
    unsaved: int = 0                     # points measured that are not in the file


@dataclass(frozen=True)
class Trouble:
    """A sweep the engine refused, an engine that died, a request that failed in it."""

    text: str
    traceback: str = ""
    # "refused" (the sweep, before any point), "died" (the engine), "lost" (a Dask scheduler), "failed"
    what: str = "failed"

    @property
    def refused(self) -> bool:
        return self.what == "refused"


@dataclass(frozen=True)
class SweepEnded:
    """The last run of a sweep (or a lesson) ended; the workspace is idle again."""

    cancelled: bool
    elapsed_s: float
    done: int                            # points of the last run finished
    total: int
    troubles: tuple[str, ...] = ()
    lesson: Any = None                   # the lesson's statement (lessons.Statement), where one ran


@dataclass(frozen=True)
class SetsShown:
    """Other result sets are shown: opened files, a saved session, a restored journal."""

    count: int
    restored: bool = False


@dataclass(frozen=True)
class EnvironmentRead:
    record: dict = field(hash=False)


class Listeners:
    """Callables that each take every event, in the order they were added. An exception a listener
    raises goes to whoever changed the workspace (the command line ends a refused sweep so)."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[Any], Any]] = []

    def add(self, listener: Callable[[Any], Any]) -> None:
        self._listeners.append(listener)

    def remove(self, listener: Callable[[Any], Any]) -> None:
        self._listeners.remove(listener)

    def emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            listener(event)
