"""The supervisor: sweeps run in an engine process that may crash, hang or be stopped at any time.

``Supervisor`` owns the engine process (``workbench.measure.engine_process``), relays its messages and
turns every way a point can end into a row: an engine killed, or past the per-point time limit, gives
an ``error`` row naming the cause and a fresh engine goes on; Stop ends a sweep within
``STOP_GRACE_S``; every finished point is journalled before it is handed on; a backend with an engine
of its own (``Backend.engine``) gets one, one engine measuring at a time. ``stop()`` and ``abort()``
take no lock, so a signal handler may call them; ``close()`` may wait for one. No Qt here.
See docs/ARCHITECTURE.md, "workbench/measure/supervisor.py".
"""
from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from multiprocessing import resource_tracker
from typing import Any, Iterable, Iterator

import psutil

from workbench.core import spawned
from workbench.measure import protocol
from workbench.catalog.backends import engine_of, is_gpu
from workbench.measure import engine
from workbench.measure import plugins as plugin_files
from workbench.measure.engine_process import GROUP_SIGNALS, SharedFlag, serve
from workbench.results.rows import empty_row
from workbench.measure.exits import describe_exit
from workbench.measure.engine import SweepSpec
from workbench.catalog.workloads import Workload
from workbench.measure.runner import InProcess, Runner

# InProcess lived here before the Runner protocol was written down: tests and scripts import it here.
__all__ = ["DEFAULT_POINT_TIMEOUT_S", "InProcess", "Runner", "Supervisor"]

log = logging.getLogger(__name__)

STOP_GRACE_S = 0.5          # how long a stopped engine may take to answer before it is ended
DEFAULT_POINT_TIMEOUT_S = 300.0
MEMORY_SHARE = 0.85         # of the memory available when the engine starts
POLL_S = 0.05
EXITING_GRACE_S = 1.0       # how long an engine whose pipe closed may take to finish exiting before it is killed


#: The most a device's limits may take to measure (the bandwidth ladder up past the last cache):
#: far beyond the 12 s seen, short of a hang.
LIMITS_TIMEOUT_S = 300.0


class Supervisor:
    """Runs sweeps in a supervised engine process (a ``workbench.measure.runner.Runner``). See the
    module docstring."""

    def __init__(self, plugins: tuple[str, ...] = (), point_timeout_s: float | None = DEFAULT_POINT_TIMEOUT_S,
                 memory_limit: int | str | None = "auto", journal: Any = None,
                 stop_grace_s: float = STOP_GRACE_S) -> None:
        self.ctx = mp.get_context("spawn")        # never fork a process that may hold CUDA state
        self.plugins = tuple(str(p) for p in plugins)
        self.point_timeout_s = point_timeout_s
        self.memory_limit = memory_limit
        self.journal = journal
        self.stop_grace_s = stop_grace_s
        self.flag = SharedFlag(self.ctx.RawValue(ctypes.c_bool, False))
        self.process = None                # the engine of the current request ...
        self.conn = None
        self.kind = ""                     # ... which engine it is ('' the shared one; else Backend.engine)
        self._parked: dict[str, tuple] = {}     # the other engines, alive, by kind: (process, conn)
        self.restarts = 0
        self._lock = threading.Lock()      # start and end of the process, from any thread
        self._stop_at: float | None = None
        self._armed = False
        self._closed = False
        self._aborted = False
        self._renew = False

    # --- the engine process ---------------------------------------------------------------------

    def _memory_limit(self) -> int | None:
        if self.memory_limit in (None, 0, "none"):
            return None
        if self.memory_limit == "auto":
            return int(psutil.virtual_memory().available * MEMORY_SHARE)
        return int(self.memory_limit)

    def _ensure(self, kind: str = "") -> None:
        """Make the engine of ``kind`` the current one, started if it is not alive."""
        with self._lock:
            if self._closed:
                raise _Ended("closed", None)
            if kind != self.kind:
                if self.process is not None:
                    self._parked[self.kind] = (self.process, self.conn)
                self.process, self.conn = self._parked.pop(kind, (None, None))
                self.kind = kind
            if self.process is not None and self.process.is_alive():
                return
            self._end_locked()
            parent, child = self.ctx.Pipe()
            name = "gpu-workbench-engine" + (f" ({kind.split(':')[0]})" if kind else "")
            main = threading.current_thread() is threading.main_thread()
            self.process = self.ctx.Process(target=serve, name=name, daemon=True,
                                            args=(child, self.flag.raw, self.plugins, self._memory_limit(), kind,
                                                  os.getpid(), main))
            try:
                with _group_signals_blocked(), spawned.main_without_a_file():
                    self.process.start()
            except BaseException:
                self.process = None              # never started: nothing to end or join later
                parent.close()
                raise
            finally:
                child.close()
            self.conn = parent

    @staticmethod
    def _kill(proc, conn, grace: float = 0.0) -> int | None:
        """End ``proc``; one that may be exiting by itself (``grace``) is given that long first, so
        that its own exit status, not our SIGKILL, is what is reported."""
        code = None
        if proc is not None:
            if grace and proc.is_alive():
                proc.join(grace)
            if proc.is_alive():
                proc.kill()
            proc.join(2.0)
            code = proc.exitcode
            proc.close() if proc.exitcode is not None else None
        if conn is not None:
            conn.close()
        return code

    def _end_locked(self, grace: float = 0.0) -> int | None:
        """End the current engine process, whatever it is doing; returns its exit code."""
        proc, conn = self.process, self.conn
        self.process = self.conn = None
        return self._kill(proc, conn, grace)

    def _end(self, grace: float = 0.0) -> int | None:
        with self._lock:
            return self._end_locked(grace)

    def alive(self) -> bool:
        """Whether any engine process (the current one, or one parked) is alive."""
        procs = [self.process] + [p for p, _ in self._parked.values()]
        return any(p is not None and p.is_alive() for p in procs)

    def pid(self) -> int | None:
        p = self.process
        return p.pid if p is not None else None

    # --- requests -----------------------------------------------------------------------------

    def _replies(self, point_clock: dict) -> Iterator[Any]:
        """Messages of the current request until Done; raises _Ended when the engine ends under it."""
        exiting = ""                  # why the engine said it is ending by itself
        while True:
            now = time.monotonic()
            if self._closed:                  # closed, or aborted: no grace
                raise _Ended("closed", self._end())
            if self._stop_at is not None and now - self._stop_at > self.stop_grace_s:
                raise _Ended("stopped", self._end())
            started = point_clock.get("t")
            limit = point_clock.get("limit", self.point_timeout_s)
            if started is not None and limit and now - started > limit:
                raise _Ended("timeout", self._end(), "" if point_clock.get("point") else "inputs")
            conn, proc = self.conn, self.process
            try:
                ready = conn.poll(POLL_S) if conn is not None else False
                if ready:
                    message = conn.recv()
                    if isinstance(message, protocol.Done):
                        return
                    if isinstance(message, protocol.EngineRetiring):
                        self._end(EXITING_GRACE_S)
                        raise _Retired(message.reason)
                    if isinstance(message, protocol.EngineExiting):
                        exiting = message.reason
                        continue
                    yield message
                elif proc is None or not proc.is_alive():
                    raise EOFError
            except (EOFError, OSError, ValueError):
                raise _Ended("died", self._end(EXITING_GRACE_S), exiting) from None
            except _Retired as retired:
                raise _Ended("retired", 0, str(retired)) from None

    def _send(self, request: tuple) -> None:
        try:
            self.conn.send(request)
        except (OSError, ValueError, AttributeError):
            raise _Ended("died", self._end()) from None

    def probe(self) -> Iterator[Any]:
        """Deep availability probes and the environment record, from the shared engine process."""
        try:
            self._ensure("")
            self._send(("probe",))
            yield from self._replies({})
        except _Ended as ended:
            yield protocol.EngineDied(f"the engine process {_cause(ended)} while probing")

    def arm(self) -> None:
        """Get ready for the next run: from now on a Stop counts for it. The window calls this when
        Run is pressed, before the request reaches the thread that calls :meth:`run`, so that a Stop
        pressed in between is not lost; :meth:`run` arms itself if nobody did."""
        self.flag.clear()
        self._stop_at = None
        self._armed = True

    def renew(self) -> None:
        """Run the next sweep in a fresh engine process: nothing compiled or cached in memory yet (a
        lesson about first calls). From any thread; the engine in use now ends when that sweep begins."""
        self._renew = True

    def run(self, spec: SweepSpec, skip: Iterable[int] = ()) -> Iterator[Any]:
        """Every message of a sweep, ending with exactly one SweepFinished, whatever happens; the
        points whose index is in ``skip`` are not run (measured before: a resumed sweep)."""
        if not self._armed:
            self.arm()
        self._armed = False
        if self._renew:
            self._renew = False
            with self._lock:
                self._quit_locked()
        t0 = time.monotonic()
        try:
            workload = engine.validate(spec)
        except engine.PlanError as exc:
            yield protocol.SweepError(str(exc))
            yield protocol.SweepFinished(False, 0.0)
            return
        points = engine.plan(spec, workload)
        kinds = [engine_of(backend) for _, _, backend in points]
        files = {path: plugin_files.digest(path) for path in self.plugins}    # what a fresh engine must load
        first, delivered, cancelled, announced = 0, 0, False, False
        # Points that took an engine down: never run again. The points of one size run their rounds
        # interleaved (workbench.measure.point), so the engine can die in one point while others of its size
        # are unfinished: the sweep resumes at the first unfinished point, without the culprit.
        skip = set(skip)
        first = _next_unfinished(0, skip, len(points))
        while first < len(points) and not cancelled:
            clock: dict = {}
            finished: set[int] = set()
            current: protocol.PointStarted | None = None
            making = False                      # the engine said it makes a size's inputs (MakingInputs)
            next_up = first                     # the point the engine is on between points
            last = first                        # the run of points, from first, that one engine takes
            while last < len(points) and kinds[last] == kinds[first]:
                last += 1
            try:
                self._ensure(kinds[first])
                self._send(("run", spec, first, last, tuple(sorted(skip))))
                for message in self._replies(clock):
                    clock.pop("limit", None)            # a point's own limit again, whatever came next
                    if isinstance(message, protocol.MeasuringLimits):
                        clock.update(t=time.monotonic(), limit=LIMITS_TIMEOUT_S)
                        yield message           # with a limit of its own: a cluster's client must know
                    if isinstance(message, protocol.SweepStarted):
                        clock.update(t=time.monotonic(), point=False)    # the first inputs are being made
                        if announced:
                            continue            # a resumed sweep is still the same sweep
                        announced = True
                    elif isinstance(message, protocol.MakingInputs):
                        making = True
                        clock.update(t=time.monotonic(), point=False)
                        continue                # the engine's own business: nobody above reads it
                    elif isinstance(message, protocol.PointStarted):
                        current, making = message, False
                        clock.update(t=time.monotonic(), point=True)
                    elif isinstance(message, protocol.PointFinished):
                        current = None
                        finished.add(message.index)
                        next_up = _next_unfinished(message.index + 1, finished | skip, last)
                        # The next point's own time from now: the rest of this size's untimed passes
                        # are its, unless the engine says it makes the next size's inputs.
                        clock.update(t=time.monotonic(), point=True)
                        delivered += 1
                        self._journal(message.row)
                    elif isinstance(message, protocol.SweepFinished):
                        clock.pop("t", None)              # no point runs any more
                        cancelled = message.cancelled
                        continue                # the supervisor's own comes last
                    elif isinstance(message, protocol.SweepError):
                        cancelled = True        # the engine refused the plan: nothing more to run
                    yield message
                first = last                    # the engine ran to the end of its run of points
            except _Ended as ended:
                if not announced:
                    announced = True
                    yield protocol.SweepStarted(len(points), spec)
                if ended.why == "retired":        # its last point's row is in; a fresh engine goes on
                    self.restarts += 1
                    yield protocol.EngineDied(ended.reason)
                    first = next_up
                    continue
                stopping = ended.why in ("stopped", "closed")
                index = current.index if current is not None else next_up
                if stopping and current is None:
                    cancelled = True
                    break
                if index >= last:               # it ended after its run's last point: the next run goes on
                    first = last
                    continue
                # Ended while the inputs of a size were being made: every point of that size shares
                # them, and a fresh engine would only make them again, to end the same way.
                making = making and current is None and not stopping
                lost = [j for j in range(index, last) if j not in finished | skip
                        and points[j][:2] == points[index][:2]] if making else [index]
                for j in lost:
                    row = self._ended_row(ended, spec, workload, points[j], making=making)
                    if current is None:
                        yield protocol.PointStarted(j, len(points), points[j][2], points[j][0], points[j][1])
                    self._journal(row)
                    yield protocol.PointFinished(j, len(points), row)
                    delivered += 1
                    skip.add(j)
                if stopping:
                    cancelled = True
                else:
                    self.restarts += 1
                    yield protocol.EngineDied(row["message"])
                    changed = [path for path, was in files.items() if plugin_files.digest(path) != was]
                    if changed:         # a fresh engine would load what the file holds now, not what ran
                        yield protocol.SweepError(f"{changed[0]} changed during the sweep: the points left were "
                                                  "not measured, as a fresh engine would run its new contents; "
                                                  "run again to measure them")
                        cancelled = True
                        break
                first = _next_unfinished(min(next_up, index + 1), finished | skip, len(points))
        yield protocol.SweepFinished(cancelled, time.monotonic() - t0, delivered)

    def _ended_row(self, ended: "_Ended", spec: SweepSpec, workload: Workload, point: tuple,
                   making: bool = False) -> dict:
        """The row of the point an engine ended under; ``making``: it ended between points, while the
        inputs and the float64 reference of the next size were being made, before any kernel ran."""
        size, variant, backend = point
        base = dict(workload=workload.name, backend=backend, size=size, dtype=spec.dtype, variant=variant,
                    host_memory=engine.host_memory(workload, spec, variant, backend), device="")
        what = f"{backend} at size {size:,}" + (f" ({variant})" if variant else "")
        if ended.why in ("stopped", "closed"):
            return empty_row(**base, status="cancelled",
                             message="stopped: the engine did not answer in time and was ended; not measured")
        if ended.why == "timeout":
            doing = (f"making the inputs and the reference at size {size:,}, before {backend} ran,"
                     if making else what)
            return empty_row(**base, status="error",
                             message=f"{doing} ran past the per-point time limit of {self.point_timeout_s:g} s; "
                                     "the engine was ended and a fresh one goes on with the next point")
        doing = (f"while making the inputs and the reference at size {size:,}, before {backend} ran" if making
                 else f"while measuring {what}")
        return empty_row(**base, status="error",
                         message=f"the engine process {_cause(ended)} {doing}; "
                                 "a fresh engine goes on with the next point")

    def _journal(self, row: dict) -> None:
        if self.journal is not None:
            self.journal.append(row)

    # --- from any thread ------------------------------------------------------------------------

    def stop(self) -> None:
        """Ask the sweep to stop; it ends within the grace time (never blocks)."""
        self.flag.set()
        if self._stop_at is None:
            self._stop_at = time.monotonic()

    def abort(self) -> None:
        """Stop now (a second Ctrl-C): the engine at work is ended without the grace time, and no
        engine starts again. Takes no lock and never blocks: a signal handler may call it; the
        thread in :meth:`run` ends the engine within ``POLL_S``, and :meth:`close` ends the others
        without waiting for them."""
        self._aborted = True
        self._closed = True
        self.stop()

    def close(self) -> None:
        """End every engine process and refuse further requests (bounded time, from any thread
        but a signal handler's: see :meth:`abort`)."""
        self._closed = True
        self.flag.set()
        with self._lock:
            self._quit_locked()

    def _quit_locked(self) -> None:
        """Ask every engine process (the current one and those parked) to quit, and end those that
        have not within the grace time."""
        engines = [(self.process, self.conn)] + list(self._parked.values())
        self.process = self.conn = None
        self._parked.clear()
        for proc, conn in engines:
            if proc is not None and proc.is_alive() and conn is not None:
                try:
                    conn.send(("quit",))
                except (OSError, ValueError):
                    pass
        for proc, conn in engines:
            if proc is not None and proc.is_alive() and not self._aborted:
                proc.join(self.stop_grace_s)
            self._kill(proc, conn)


class _Ended(Exception):
    def __init__(self, why: str, code: int | None, reason: str = "") -> None:
        super().__init__(why)
        self.why, self.code, self.reason = why, code, reason


class _Retired(Exception):
    pass


def _cause(ended: _Ended) -> str:
    """How an engine ended, with what it said of why ('exited with status 3 (a plug-in called ...)')."""
    return describe_exit(ended.code) + (f" ({ended.reason})" if ended.reason else "")


@contextlib.contextmanager
def _group_signals_blocked():
    """Start an engine with Ctrl-C, SIGTERM and SIGHUP blocked (in this thread, and so in the child):
    one sent to the process group while the child's interpreter starts stays pending there until the
    engine ignores it (``workbench.measure.engine_process.ignore_group_signals``), instead of a KeyboardInterrupt
    traceback; here it is delivered once they are unblocked, to the handler that was in place."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    # Starting the resource tracker unblocks SIGINT and SIGTERM (multiprocessing.resource_tracker):
    # it must be running before they are blocked, not started inside Process.start().
    resource_tracker.ensure_running()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, GROUP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _next_unfinished(start: int, done: set, end: int) -> int:
    """The first index from ``start`` on that is not in ``done`` (``end`` when there is none)."""
    i = start
    while i < end and i in done:
        i += 1
    return i
