"""The client side of a sweep on a Dask cluster: ``ClusterRunner``, a
``workbench.measure.supervisor.Runner`` like the supervisor, so the command line and the window
drive either the same way and show a sweep on a cluster unchanged.

Before a sweep every worker is surveyed (its host, its GPU, which backends it can run); each point
is then a task restricted to the workers that can run it (``assign``), and ``stream`` relays the
tasks' messages as they finish. A worker lost under a point gives that point an error row, a
scheduler lost mid-sweep a ``ClusterLost`` after the rows measured so far; docs/CLUSTER.md says more.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from workbench.measure import protocol
from workbench.cluster import places
from workbench.cluster.assign import tasks_of
from workbench.cluster.stream import POLL_S, SweepStream
from workbench.cluster.connect import ClusterError, Interrupted, Target, connect, one_line

if TYPE_CHECKING:          # the engine (NumPy, the registry) is imported by the first sweep
    from workbench.measure.engine import SweepSpec

log = logging.getLogger(__name__)

CHECK_TIMEOUT_S = 5.0    # how long it may take to answer before it is taken for gone
STOP_WAIT_S = 1.5        # how long a stopped point may take to come back before it is given up
SURVEY_TIMEOUT_S = 60.0  # how long a worker may take to say what it has (its first imports, a GPU library's check)
HUNG_GRACE_S = 60.0      # past a point's longest life (inputs and point, each up to its time limit): its worker hangs
RESTART_S = 3.0          # how long a hung worker's nanny waits for it to close before it kills it (x 0.8)
DEFAULT_POINT_TIMEOUT_S = 300.0


class ClusterRunner:
    """Runs sweeps on a Dask cluster (a ``workbench.measure.runner.Runner``); see the module docstring."""

    def __init__(self, target: Target | str, plugins: tuple[str, ...] = (),
                 point_timeout_s: float | None = DEFAULT_POINT_TIMEOUT_S, devices: tuple[str, ...] | None = None,
                 journal: Any = None, stop_wait_s: float = STOP_WAIT_S,
                 survey_timeout_s: float = SURVEY_TIMEOUT_S, hung_grace_s: float = HUNG_GRACE_S) -> None:
        self.target = target if isinstance(target, Target) else Target(str(target))
        self.plugins = tuple(str(p) for p in plugins)
        self.point_timeout_s = point_timeout_s
        self.devices = devices
        self.journal = journal
        self.stop_wait_s = stop_wait_s
        self.survey_timeout_s = survey_timeout_s
        self.hung_grace_s = hung_grace_s
        self.client = None
        self.cluster = None                  # the local cluster this runner started, if any
        self.workers: list[places.WorkerInfo] = []
        self.asked: set[str] = set()         # every worker the last survey asked, answering or not
        self.restarts = 0                    # workers lost under a point
        self.lost = ""                       # why the last sweep lost its scheduler ('' : it did not)
        self._stop_at: float | None = None
        self._armed = False
        self._closed = False
        self._renew = False
        self._sweeping = False               # inside run(): a Stop counts
        self.alive: set[str] = set()         # the workers alive when the scheduler was last asked
        self._empty_since: float | None = None     # since when it has had none

    # --- the Runner protocol (workbench.measure.runner) -----------------------------------------

    @property
    def stop_at(self) -> float | None:
        """When Stop was asked (``time.monotonic``), None while it was not."""
        return self._stop_at

    @property
    def closed(self) -> bool:
        """Closed or aborted: a sweep running now gives up at once."""
        return self._closed

    def arm(self) -> None:
        self._stop_at = None
        self._armed = True

    def stop(self) -> None:
        """Ask the sweep to stop (never blocks: a signal handler may call it)."""
        if self._stop_at is None:
            self._stop_at = time.monotonic()

    def abort(self) -> None:
        """Stop now: the loop gives up at once (what runs on the workers is cancelled)."""
        self._closed = True
        self.stop()

    def renew(self) -> None:
        """The next sweep starts every worker's engine afresh (a first-call lesson)."""
        self._renew = True

    def close(self) -> None:
        """End the connection, and the local cluster this runner started (bounded time)."""
        self._closed = True
        self.stop()
        self._disconnect()

    def _disconnect(self) -> None:
        client, cluster, self.client, self.cluster = self.client, self.cluster, None, None
        for thing in (client, cluster):
            if thing is not None:
                try:
                    thing.close(timeout=2) if thing is client else thing.close()
                except Exception as exc:  # noqa: BLE001 - closing must not hide the sweep's outcome
                    log.debug("closing %s: %s", thing, exc)

    # --- a sweep --------------------------------------------------------------------------------

    def run(self, spec: "SweepSpec", skip: Iterable[int] = ()) -> Iterator[Any]:
        """Every message of a sweep on the cluster, ending with exactly one SweepFinished; the
        points whose index is in ``skip`` are not run."""
        if not self._armed:
            self.arm()
        self._armed = False
        self._sweeping = True
        try:
            yield from self._run(spec, skip)
        finally:
            self._sweeping = False

    def _run(self, spec: "SweepSpec", skip: Iterable[int]) -> Iterator[Any]:
        from workbench.measure import engine
        self.lost = ""
        t0 = time.monotonic()
        try:
            workload = engine.validate(spec)
        except engine.PlanError as exc:
            yield protocol.SweepError(str(exc))
            yield protocol.SweepFinished(False, 0.0)
            return
        points = engine.plan(spec, workload)
        try:
            self._ensure_client()
            self.workers = self._survey(spec)
            tasks = tasks_of(spec, points, set(skip), self.workers, self.asked, self.devices)
            if self._renew:
                from workbench.cluster import task
                self._renew = False
                self._call(lambda: self.client._run(task.forget_engines, on_error="return"),  # noqa: SLF001
                           self.survey_timeout_s, "end the workers' engines")
            if self._stopping():
                raise Interrupted("stopped before the first point")
        except Interrupted:          # stopped while the cluster was reached or surveyed: nothing ran
            yield protocol.SweepFinished(True, time.monotonic() - t0)
            return
        except ClusterError as exc:
            yield protocol.SweepError(str(exc))
            yield protocol.SweepFinished(False, time.monotonic() - t0)
            return
        total = len(points) if self.devices is None else len(tasks)
        yield protocol.SweepStarted(total, spec)
        yield from SweepStream(self, spec, tasks, total, t0).messages()

    def _ensure_client(self) -> None:
        if self._closed:
            raise ClusterError("closed")
        if self.client is not None and self.client.status == "running":
            return
        self._disconnect()
        try:
            self.target.check()
        except ValueError as exc:
            raise ClusterError(str(exc)) from None
        self.client, self.cluster = connect(self.target, self._stopping)

    def _stopping(self) -> bool:
        """Whether to give up waiting: closed, or asked to stop while a sweep runs or waits to (the
        window's Run queues its sweep behind the question of which backends the workers have: a
        Stop then ends that question too). A Stop of a sweep that ended stops nothing more."""
        return self._closed or (self._stop_at is not None and (self._sweeping or self._armed))

    def _call(self, make: Any, timeout_s: float, what: str) -> Any:
        """The result of the coroutine ``make()`` run on the client's loop, waited for at most
        ``timeout_s`` and given up at a Stop (:class:`Interrupted`): Dask's blocking calls wait on a
        worker that does not answer (stopped, hung in a C call) as long as the scheduler keeps it."""
        import asyncio
        import concurrent.futures
        job = asyncio.run_coroutine_threadsafe(make(), self.client.loop.asyncio_loop)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return job.result(timeout=POLL_S)
            except concurrent.futures.TimeoutError:
                if self._stopping():
                    job.cancel()
                    raise Interrupted(f"stopped while waiting to {what}") from None
                if time.monotonic() > deadline:
                    job.cancel()
                    raise ClusterError(f"the Dask cluster at {self.address} did not answer in {timeout_s:g} s "
                                       f"when asked to {what}") from None

    def probe(self) -> Iterator[Any]:
        """Which backends the cluster's workers can run, as ``Supervisor.probe`` says it of this
        machine: a backend is usable when some worker can run it (the window's backend list)."""
        from workbench.catalog.backends import BACKENDS, Availability
        try:
            self._ensure_client()
            workers = self._workers(tuple(BACKENDS))
        except Interrupted:          # Stop, or another place to run on: nobody waits for the answer
            return
        except ClusterError as exc:
            yield protocol.ClusterLost(str(exc))
            return
        found = {}
        for name in BACKENDS:
            able = [w for w in workers if not w.usable.get(name, "?")]
            found[name] = (Availability(True, "", f"on {len(able)} of {len(workers)} workers") if able else
                           Availability(False, f"no worker of {self.address} can run it: "
                                               f"{workers[0].usable.get(name)} on {workers[0].host}"))
        yield protocol.ProbeResults(found)

    def _survey(self, spec: "SweepSpec") -> list[places.WorkerInfo]:
        """Every worker's host, GPU and usable backends; ClusterError (one line) when none can work."""
        workers = self._workers(tuple(spec.backends))
        missing = []
        for backend in spec.backends:
            if all(w.usable.get(backend, "?") for w in workers):
                missing.append(f"{backend}: no worker can run it ({workers[0].usable.get(backend)} on "
                               f"{workers[0].host})")
        if missing:
            raise ClusterError("; ".join(missing))
        return workers

    def _workers(self, backends: tuple[str, ...]) -> list[places.WorkerInfo]:
        """Every worker that answers its survey (``backends``: the ones it is asked about) within
        ``survey_timeout_s``; one that does not is left out, and so are its points."""
        import asyncio

        from workbench.cluster import task
        client, deadline = self.client, time.monotonic() + self.target.timeout_s
        try:
            while not (addresses := sorted(client.nthreads(callback_timeout=CHECK_TIMEOUT_S))):
                if self._stopping():
                    raise Interrupted("stopped while waiting for a Dask worker")
                if time.monotonic() > deadline:
                    raise ClusterError(f"the Dask scheduler at {self.address} has no worker")
                time.sleep(POLL_S)
        except ClusterError:
            raise
        except Exception as exc:  # noqa: BLE001 - the scheduler went away meanwhile
            raise ClusterError(f"the Dask scheduler at {self.address} went away: {one_line(exc)}") from None
        limit = self.survey_timeout_s
        expected = self._digests()

        async def each() -> dict:
            # One request per worker, each with its time limit: Client.run waits for every worker, so
            # one hung worker kept every later sweep of the cluster from starting.
            async def one(address: str) -> Any:
                try:
                    got = await asyncio.wait_for(client._run(task.survey, backends, self.plugins,   # noqa: SLF001
                                                             expected, workers=[address], on_error="return"),
                                                 limit)
                    return got.get(address, LookupError("it left the cluster"))
                except asyncio.TimeoutError:
                    return TimeoutError(f"no answer in {limit:g} s (hung, or stopped?)")
                except Exception as exc:  # noqa: BLE001 - reported with the worker
                    return exc
            return dict(zip(addresses, await asyncio.gather(*(one(a) for a in addresses))))
        try:
            found = self._call(each, limit + CHECK_TIMEOUT_S, "survey the Dask workers")
        except ClusterError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise ClusterError(f"could not ask the Dask workers at {self.address} what they have: "
                               f"{one_line(exc)}") from None
        self.asked = set(found)
        from workbench import __version__
        workers, broken = [], []
        for address, info in sorted(found.items()):
            if isinstance(info, BaseException):
                # A worker that imported another gpu-workbench takes the survey's arguments otherwise.
                other = " (another gpu-workbench there than here?)" if isinstance(info, TypeError) else ""
                broken.append(f"{address}: {type(info).__name__}: {one_line(info)}{other}")
                continue
            if info.get("version") != __version__:
                broken.append(f"{address}: gpu-workbench {info.get('version', '(older)')} there, {__version__} here: "
                              "a worker measures with its own copy of the engine")
                continue
            if info.get("plugins"):         # it would measure none of the sweep's points, or other code
                broken.append(f"{address}: {'; '.join(info['plugins'])}")
                continue
            workers.append(places.WorkerInfo(address, info["host"], info["gpu"], info["pid"], info["usable"]))
        if not workers:
            hint = " (install gpu-workbench in the workers' environment)" if any(
                "No module named 'workbench" in b for b in broken) else ""
            raise ClusterError(f"no Dask worker at {self.address} can run this sweep{hint}: {broken[0]}")
        for line in broken:
            log.warning("left out a worker that failed its survey: %s", line)
        return workers

    def _digests(self) -> dict[str, str]:
        """Each plug-in file's digest as the client has it: a worker measures only the same file."""
        from workbench.cluster import task
        return {path: task.digest(path) for path in self.plugins}

    @property
    def address(self) -> str:
        return self.target.address

    def gone(self, client: Any) -> str:
        """Why the scheduler can no longer be used ('' while it can); its live workers in ``alive``."""
        if client.status != "running":      # reconnecting: the tasks it had are lost with the connection
            return f"the Dask scheduler at {self.address} went away (the connection to it was lost)"
        try:
            self.alive = set(client.nthreads(callback_timeout=CHECK_TIMEOUT_S))
        except Exception as exc:  # noqa: BLE001 - OSError, CommClosedError, TimeoutError
            return f"the Dask scheduler at {self.address} went away: {one_line(exc)}"
        if self.alive:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = time.monotonic()
        elif time.monotonic() - self._empty_since > self.target.timeout_s:   # a nanny restarts one sooner
            return (f"every Dask worker of the scheduler at {self.address} went away "
                    f"(none for {self.target.timeout_s:g} s)")
        return ""

    def restart(self, address: str) -> None:
        """Ask the scheduler to have ``address``'s nanny restart it, without waiting for the answer
        (the sweep goes on meanwhile); a worker without a nanny is only shut down."""
        import asyncio

        def said(job: Any) -> None:
            try:
                log.info("restarting the hung Dask worker %s: %s", address, job.result())
            except BaseException as exc:  # noqa: BLE001 - a worker without a nanny, a scheduler gone
                log.warning("could not restart the hung Dask worker %s: %s", address, one_line(exc))
        try:
            job = asyncio.run_coroutine_threadsafe(self.client._restart_workers(   # noqa: SLF001
                [address], timeout=RESTART_S, raise_for_error=False), self.client.loop.asyncio_loop)
            job.add_done_callback(said)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not restart the hung Dask worker %s: %s", address, one_line(exc))
