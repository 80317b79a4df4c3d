"""What runs a sweep, written down once: the ``Runner`` protocol that the supervisor, the in-process
runner and the cluster's runner honour, so that the command line, the window and ``workbench.sweep``
drive any of them the same way; and ``InProcess``, the simplest of them."""
from __future__ import annotations

import logging
import threading
from typing import Any, Iterable, Iterator, Protocol, runtime_checkable

from workbench.measure import engine, protocol
from workbench.measure.engine import SweepSpec
from workbench.measure.environment import record

log = logging.getLogger(__name__)


@runtime_checkable
class Runner(Protocol):
    """Runs sweeps somewhere (an engine process, this process, a Dask cluster) and says what happens
    as ``workbench.measure.protocol`` messages. ``stop`` and ``abort`` may be called from any thread
    and from a signal handler: they only set flags and never block."""

    plugins: tuple[str, ...]     # the workload files its engines load (set while no sweep runs)
    restarts: int                # engines (or workers) lost under a point so far

    def arm(self) -> None:
        """From now on a Stop counts for the next :meth:`run` (called when Run is pressed, before
        the request reaches the thread that runs it); ``run`` arms itself if nobody did."""

    def run(self, spec: SweepSpec, skip: Iterable[int] = ()) -> Iterator[Any]:
        """Every message of a sweep, ending with exactly one ``SweepFinished`` whatever happens; the
        points whose index is in ``skip`` are not run (measured before: a resumed sweep)."""

    def probe(self) -> Iterator[Any]:
        """Which backends can run where this runner runs them (``ProbeResults``), and its environment."""

    def stop(self) -> None:
        """Ask the sweep to stop: the point in progress ends, kept if it has its samples."""

    def abort(self) -> None:
        """Stop now (a second Ctrl-C), without the grace time; no engine starts again."""

    def renew(self) -> None:
        """Run the next sweep with nothing compiled or cached yet (a lesson about first calls)."""

    def close(self) -> None:
        """End what it started (engine processes, a connection) in bounded time; no sweep runs after."""


class InProcess:
    """The engine in this process, unsupervised: for debugging and tests (a crash takes the caller)."""

    def __init__(self) -> None:
        self.flag = engine.StopFlag()
        self.restarts = 0
        self.plugins: tuple[str, ...] = ()    # loaded into this process's registry by whoever made it

    def arm(self) -> None:
        self.flag = type(self.flag)(threading.Event())

    def run(self, spec: SweepSpec, skip: Iterable[int] = ()) -> Iterator[Any]:
        """The sweep's messages (less the points in ``skip``), and before its SweepFinished this
        process's record, with the limits the sweep measured, as an engine process sends it."""
        for message in engine.run_sweep(spec, self.flag, skip=skip):
            if isinstance(message, protocol.SweepFinished):
                yield protocol.Environment(record())
            yield message

    def probe(self) -> Iterator[Any]:
        """This process's backends and record, as an engine process answers a probe."""
        from workbench.catalog.backends import probe_all
        yield protocol.ProbeResults(probe_all())
        yield protocol.Environment(record())

    def stop(self) -> None:
        self.flag.stop()

    def renew(self) -> None:
        """Nothing to renew: what this process compiled stays compiled (a first-call lesson says so)."""

    def abort(self) -> None:
        """A second Ctrl-C: the sweep runs on this very thread, so it is interrupted where it is
        (a signal handler calls this; the command line's main catches the KeyboardInterrupt)."""
        self.flag.stop()
        raise KeyboardInterrupt

    def close(self) -> None:
        self.flag.stop()
