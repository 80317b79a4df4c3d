"""Everything that happens during a sweep, as plain frozen dataclasses (no Qt, no GPU objects).

The engine yields these; the engine process sends them over its pipe unchanged;
the supervisor adds what only it can see (an engine that died); the command
line, the window and the tests each dispatch them through one table of
handlers (:func:`dispatch`). A message crosses a thread, a process or a file
as it is.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping


@dataclass(frozen=True)
class SweepStarted:
    total: int               # points in the whole sweep
    spec: Any                # the engine's SweepSpec


@dataclass(frozen=True)
class MeasuringLimits:
    """Between a point's passes and its row: the device's limits (its bandwidth ladder, its peak)
    are measured, once per engine and device. It takes as long as the machine's caches are large
    (12 s on a VM showing a 300 MiB L3): it has a time limit of its own, not a point's."""

    device: str


@dataclass(frozen=True)
class MakingInputs:
    """Between points: the inputs and the float64 reference of a size are being made, which every
    point of that size shares (an engine that ends now ended before any of them ran)."""

    size: int
    variant: str


@dataclass(frozen=True)
class PointStarted:
    index: int
    total: int
    backend: str
    size: int
    variant: str


@dataclass(frozen=True)
class PointFinished:
    index: int
    total: int
    row: dict = field(hash=False)      # one result row (workbench.results.rows.COLUMNS)


@dataclass(frozen=True)
class SweepFinished:
    cancelled: bool
    elapsed_s: float
    points: int = 0                    # rows delivered by this run


@dataclass(frozen=True)
class SweepError:
    """The sweep could not start (a plan the engine refuses); one line for the user."""

    message: str


@dataclass(frozen=True)
class LogLine:
    level: str                         # logging level name
    text: str


@dataclass(frozen=True)
class EngineFailed:
    """A request failed inside the engine process, which lives on."""

    message: str
    traceback: str = ""


@dataclass(frozen=True)
class EngineDied:
    """The engine process ended under a request (crash, kill, time limit); a fresh one follows."""

    message: str


@dataclass(frozen=True)
class EngineRetiring:
    """The engine ends itself after this: a point left its CUDA context unusable (an illegal
    address is sticky until the process exits), so a fresh engine takes the next point."""

    reason: str


@dataclass(frozen=True)
class EngineExiting:
    """The engine process is ending by itself, and why: plug-in code called ``sys.exit`` or raised
    KeyboardInterrupt (never Ctrl-C: the engine ignores SIGINT). Its exit status follows."""

    reason: str


@dataclass(frozen=True)
class ClusterLost:
    """The Dask scheduler of a sweep on a cluster went away (or every worker did): one line; the
    rows measured before it are in, the sweep ends (``workbench.cluster``)."""

    message: str


@dataclass(frozen=True)
class ProbeResults:
    availability: dict = field(hash=False)     # backend name -> backends.Availability


@dataclass(frozen=True)
class Environment:
    record: dict = field(hash=False)           # workbench.measure.environment.record()


@dataclass(frozen=True)
class Done:
    """The engine has answered a request completely."""

    request: str


def dispatch(handlers: Mapping[type, Callable[[Any], Any]], message: Any) -> Any:
    """Call the handler registered for the message's type; messages nobody handles are ignored."""
    handler = handlers.get(type(message))
    return handler(message) if handler is not None else None


def rows(messages: Iterable[Any]) -> list[dict]:
    """The result rows among ``messages``, in order: what a sweep measured."""
    return [m.row for m in messages if isinstance(m, PointFinished)]
