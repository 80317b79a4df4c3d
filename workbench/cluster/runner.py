"""The client side of a sweep on a Dask cluster: ``ClusterRunner``, with the supervisor's interface.

The command line and the window drive a ``ClusterRunner`` exactly as they drive a
``workbench.measure.supervisor.Supervisor`` (``arm``, ``run``, ``stop``, ``abort``, ``close``, ``renew``):
``run`` yields the same ``workbench.protocol`` messages, in the same order rules (one
``SweepStarted``, ``PointStarted`` before each ``PointFinished``, exactly one ``SweepFinished``
last), so everything that shows a sweep shows one on a cluster unchanged.

What it does:

* before the sweep, every worker is surveyed (``Client.run``): its host, its GPU, and which of the
  sweep's backends it can run; a backend that no worker can run is refused in one line;
* each point is a task (``workbench.cluster.task.run_point``), restricted to the workers that can
  run its backend (and, when the sweep names devices, to the device's workers); the tasks finish
  in any order and come back through ``as_completed``, each as its messages;
* a worker that goes away while it measures a point (the scheduler drops it) gives that point an
  ``error`` row naming the worker; its task is cancelled, so the scheduler does not hand the point
  to another worker, and the sweep goes on on the others;
* a scheduler that cannot be reached is a ``SweepError`` (one line, nothing ran); one that goes away
  mid-sweep is a ``ClusterLost`` (one line) after the rows measured so far;
* Stop cancels the tasks not started and sets the sweep's Dask ``Event``, which every running point
  watches: its supervisor stops it as it would locally (the point kept once its round has its
  fewest samples); a point still running ``STOP_WAIT_S`` later is given up as ``cancelled``.

Rows come back with the device that measured them (``place``: ``node2:GPU1``) and the worker
(``worker``: its address); when the sweep names devices, the backend column holds the series name
(``cupy @ node2:GPU1``), so that each device is a series of its own everywhere. The environment
record is each worker's own: the sweep's record is the first worker's, with every worker's kept
under ``workers``.
"""
from __future__ import annotations

import logging
import queue
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from workbench.measure import protocol
from workbench.cluster import places
from workbench.cluster.connect import DEFAULT_TIMEOUT_S, ClusterError, Interrupted, Target, connect, one_line
from workbench.results.rows import empty_row

log = logging.getLogger(__name__)

POLL_S = 0.05            # how long the loop waits for an event before it looks at the rest
CHECK_S = 0.25           # how often the scheduler is asked which workers are alive
CHECK_TIMEOUT_S = 5.0    # how long it may take to answer before it is taken for gone
STOP_WAIT_S = 1.5        # how long a stopped point may take to come back before it is given up
SURVEY_TIMEOUT_S = 60.0  # how long a worker may take to say what it has (its first imports, a GPU library's check)
HUNG_GRACE_S = 60.0      # past a point's longest life (inputs and point, each up to its time limit): its worker hangs
RESTART_S = 3.0          # how long a hung worker's nanny waits for it to close before it kills it (x 0.8)
DEFAULT_POINT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Task:
    """One point on one device: what is submitted, and how its rows are named."""

    index: int               # its place in the sweep as this runner announces it
    point: int               # its index in the engine's plan (workbench.measure.engine.plan)
    name: str                # the backend, or the series name 'cupy @ node2:GPU1' when devices are named
    backend: str
    size: int
    variant: str
    gpu: bool
    place: str = ""          # the device it must run on ('' : any worker that can run its backend)
    workers: tuple[str, ...] | None = None


class ClusterRunner:
    """Runs sweeps on a Dask cluster; see the module docstring."""

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
        self._spec: Any = None               # the sweep running now
        self._alive: set[str] = set()        # the workers alive when the scheduler was last asked
        self._empty_since: float | None = None     # since when it has had none

    # --- the supervisor's interface -------------------------------------------------------------

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

    def run(self, spec: Any, skip: Iterable[int] = ()) -> Iterator[Any]:
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

    def _run(self, spec: Any, skip: Iterable[int]) -> Iterator[Any]:
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
            tasks = self._tasks(spec, points, set(skip))
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
        yield from self._stream(spec, tasks, total, t0)

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

    def _survey(self, spec: Any) -> list[places.WorkerInfo]:
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

    def _tasks(self, spec: Any, points: list, skip: set[int]) -> list[Task]:
        from workbench.catalog.backends import is_gpu
        tasks: list[Task] = []
        if self.devices is None:           # spread: any worker that can run the backend
            for i, (size, variant, backend) in enumerate(points):
                if i in skip:
                    continue
                able = tuple(w.address for w in self.workers if not w.usable.get(backend, "?"))
                # Unrestricted only when every worker asked can run it (a worker its nanny restarts
                # under a new address may then take the points on): never a worker that failed its
                # survey or did not answer it.
                restrict = None if set(able) == self.asked else able
                tasks.append(Task(i, i, backend, backend, size, variant, is_gpu(backend), "", restrict))
            return tasks
        unknown = places.unknown_devices(self.workers, self.devices)
        if unknown:
            known = sorted({w.gpu_place for w in self.workers if w.gpu} | {w.cpu_place for w in self.workers})
            raise ClusterError(f"no worker has {', '.join(unknown)}; the cluster's devices: {', '.join(known)}")
        by_backend = {}
        for backend in spec.backends:
            chosen = places.choose_places(self.workers, self.devices, is_gpu(backend))
            chosen = [p for p in chosen if places.workers_for(self.workers, p, backend, is_gpu(backend))]
            if not chosen:
                raise ClusterError(f"{backend}: none of the devices named ({', '.join(self.devices)}) can run it")
            by_backend[backend] = chosen
        for i, (size, variant, backend) in enumerate(points):
            if i in skip:
                continue
            for place in by_backend[backend]:
                tasks.append(Task(len(tasks), i, places.series_name(backend, place), backend, size, variant,
                                  is_gpu(backend), place,
                                  tuple(places.workers_for(self.workers, place, backend, is_gpu(backend)))))
        return tasks

    def _stream(self, spec: Any, tasks: list[Task], total: int, t0: float) -> Iterator[Any]:
        from distributed import Event, as_completed

        from workbench.cluster import task as task_mod
        client = self.client
        self._spec = spec
        sweep = uuid.uuid4().hex[:12]
        topic, stop_name = f"gpu-workbench-{sweep}", f"gpu-workbench-stop-{sweep}"
        events: queue.Queue = queue.Queue()
        client.subscribe_topic(topic, events.put)
        expected = self._digests()
        futures = {}
        for t in tasks:
            f = client.submit(task_mod.run_point, spec, t.point, t.gpu, self.plugins, self.point_timeout_s,
                              topic, stop_name, t.index, expected, key=f"{topic}-{t.index}",
                              workers=list(t.workers) if t.workers is not None else None,
                              allow_other_workers=False, pure=False)
            futures[f] = t
        by_index = {t.index: f for f, t in futures.items()}
        waiting = as_completed(list(futures), loop=client.loop)
        open_ = {t.index: t for t in tasks}          # not yet answered for
        running: dict[int, dict] = {}                 # where each started point runs
        announced: set[int] = set()
        ours: set[int] = set()                        # the tasks this sweep cancelled itself
        envs: dict[str, dict] = {}
        delivered, cancelled, stop_sent, lost = 0, False, False, ""
        checked = 0.0
        # A point's own engine ends it past its time limit, but only while its worker works: a worker
        # stopped or hung in a C call holds its host's lock, and every point of the host waits,
        # until the scheduler gives the worker up (worker-ttl: minutes).
        hung_after = 2 * self.point_timeout_s + self.hung_grace_s if self.point_timeout_s else None

        def finish(t: Task, row: dict | None, where: dict | None = None) -> Iterator[Any]:
            nonlocal delivered
            open_.pop(t.index, None)
            running.pop(t.index, None)
            if row is None:
                return
            if t.index not in announced:
                announced.add(t.index)
                yield protocol.PointStarted(t.index, total, t.name, t.size, t.variant)
            row = self._placed(row, t, where or {})
            if self.journal is not None:
                self.journal.append(row)
            delivered += 1
            yield protocol.PointFinished(t.index, total, row)

        try:
            while open_:
                if self._closed:
                    cancelled = True
                    break
                try:
                    _, event = events.get(timeout=POLL_S)
                except queue.Empty:
                    event = None
                if isinstance(event, dict) and event.get("state") == "started":
                    t = next((x for x in tasks if x.index == event.get("task")), None)
                    if t is not None and t.index in open_:
                        before = running.get(t.index)
                        if before is not None and before["worker"] != event["worker"]:
                            # The scheduler handed the point to another worker: the first one died under it.
                            ours.add(t.index)
                            yield from self._lost_worker(t, before, by_index, finish)
                        else:
                            running[t.index] = {**event, "since": time.monotonic()}
                            if t.index not in announced:
                                announced.add(t.index)
                                yield protocol.PointStarted(t.index, total, t.name, t.size, t.variant)
                if waiting.has_ready():
                    for f in waiting.next_batch(block=False):
                        t = futures[f]
                        if f.status == "cancelled" and t.index not in ours and t.index in open_:
                            # Nobody here cancelled it: the client lost its scheduler (or someone
                            # cancelled it on the cluster: then the scheduler is still there).
                            lost = self._gone(client)
                            if lost:
                                break
                            yield from finish(t, self._row(t, "error", "its task was cancelled on the cluster, "
                                                                         "not by this sweep; not measured"))
                        elif t.index in open_:
                            yield from self._answered(f, t, running.get(t.index), finish, envs)
                    if lost:
                        break
                now = time.monotonic()
                if self._stop_at is not None:
                    cancelled = True
                    if not stop_sent:
                        stop_sent = True
                        try:
                            Event(stop_name, client=client).set()
                            idle = [i for i in list(open_) if i not in running]
                            ours.update(idle)
                            client.cancel([by_index[i] for i in idle])
                        except Exception as exc:  # noqa: BLE001 - the scheduler is gone: nothing runs on
                            log.debug("stopping: %s", exc)
                            break
                        for i in [i for i in list(open_) if i not in running]:
                            yield from finish(open_[i], None)      # never started: no row, as locally
                    elif now - self._stop_at > self.stop_wait_s:
                        for i in list(open_):
                            t = open_[i]
                            yield from finish(t, self._row(t, "cancelled", "stopped: the worker did not "
                                                           "answer in time; not measured"), running.get(i))
                        ours.update(by_index)
                        client.cancel([by_index[i] for i in by_index])
                        break
                if now - checked > CHECK_S:
                    checked = now
                    lost = self._gone(client)
                    if lost:
                        break
                    alive = self._alive
                    for i, where in list(running.items()):
                        if i in open_ and where["worker"] not in alive:
                            ours.add(i)
                            yield from self._lost_worker(open_[i], where, by_index, finish)
                        elif i in open_ and hung_after is not None and now - where["since"] > hung_after:
                            ours.add(i)
                            yield from self._lost_worker(open_[i], where, by_index, finish, hung_after)
                    for i, t in list(open_.items()):
                        if i not in running and t.workers is not None and not set(t.workers) & alive:
                            ours.add(i)
                            client.cancel([by_index[i]])
                            yield from finish(t, self._row(t, "error", (
                                f"no worker that can measure {t.name} is left in the cluster (those that could, "
                                f"{', '.join(t.workers)}, went away); not measured")))
            if lost:
                cancelled = True
                for i in list(open_):
                    t = open_[i]
                    yield from finish(t, self._row(t, "error", f"{lost} while this point ran; not measured")
                                      if i in running else None, running.get(i))
                self.lost = lost
                yield protocol.ClusterLost(lost)
        finally:
            try:
                client.unsubscribe_topic(topic)
                client.cancel([f for f in futures if not f.done()])
            except Exception as exc:  # noqa: BLE001 - a scheduler gone: nothing left to cancel
                log.debug("after the sweep: %s", exc)
        if envs:
            yield protocol.Environment(self._environment(envs))
        yield protocol.SweepFinished(cancelled, time.monotonic() - t0, delivered)

    def _gone(self, client: Any) -> str:
        """Why the scheduler can no longer be used ('' while it can); its live workers in ``_alive``."""
        if client.status != "running":      # reconnecting: the tasks it had are lost with the connection
            return f"the Dask scheduler at {self.address} went away (the connection to it was lost)"
        try:
            self._alive = set(client.nthreads(callback_timeout=CHECK_TIMEOUT_S))
        except Exception as exc:  # noqa: BLE001 - OSError, CommClosedError, TimeoutError
            return f"the Dask scheduler at {self.address} went away: {one_line(exc)}"
        if self._alive:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = time.monotonic()
        elif time.monotonic() - self._empty_since > self.target.timeout_s:   # a nanny restarts one sooner
            return (f"every Dask worker of the scheduler at {self.address} went away "
                    f"(none for {self.target.timeout_s:g} s)")
        return ""

    def _lost_worker(self, t: Task, where: dict, by_index: dict, finish, hung_s: float = 0.0) -> Iterator[Any]:
        """A worker went away under point ``t`` (or hangs: ``hung_s``, how long it has measured it):
        its error row, and no second try elsewhere. A hung worker is restarted through its nanny,
        which frees its host for the points that wait for it."""
        self.restarts += 1
        try:
            self.client.cancel([by_index[t.index]])
        except Exception as exc:  # noqa: BLE001
            log.debug("cancelling %s: %s", t.name, exc)
        what = f"{t.name} at size {t.size:,}" + (f" ({t.variant})" if t.variant else "")
        worker = f"the Dask worker {where['worker']} ({where.get('place', '')})"
        if hung_s:
            self._restart(where["worker"])
            message = (f"{worker} has been measuring {what} for over {hung_s:g} s, longer than a point can "
                       "last: it hangs (stopped, or stuck in a call); asked its nanny to restart it; the sweep "
                       "goes on on the other workers")
        else:
            message = f"{worker} went away while measuring {what}; the sweep goes on on the other workers"
        yield protocol.EngineDied(message)
        yield from finish(t, self._row(t, "error", message), where)

    def _restart(self, address: str) -> None:
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

    def _answered(self, f: Any, t: Task, where: dict | None, finish, envs: dict) -> Iterator[Any]:
        """The messages of a task that ended: its row (or an error row saying why it has none)."""
        status = f.status
        if status == "cancelled":
            yield from finish(t, None)
            return
        if status != "finished":
            exc = f.exception()
            who = f"the Dask worker {where['worker']}" if where else "a Dask worker"
            if type(exc).__name__ == "KilledWorker":
                message = f"{who} died while measuring {t.name} (and so did each worker it was given to)"
            else:
                message = f"{who} failed to measure {t.name}: {type(exc).__name__}: {one_line(exc)}"
            yield from finish(t, self._row(t, "error", message), where)
            return
        result = f.result()
        where = {k: result.get(k) for k in ("worker", "host", "place", "pid")}
        row = None
        for m in result["messages"]:
            if isinstance(m, protocol.PointFinished):
                row = m.row
            elif isinstance(m, protocol.Environment):
                envs.setdefault(where["worker"], {"host": where["host"], "place": where["place"]})["record"] = m.record
            elif isinstance(m, protocol.SweepError):
                row = self._row(t, "error", f"on the Dask worker {where['worker']}: {m.message}")
            elif isinstance(m, protocol.EngineDied):
                yield protocol.EngineDied(f"on the Dask worker {where['worker']}: {m.message}")
            elif isinstance(m, protocol.EngineFailed):
                yield protocol.EngineFailed(f"on the Dask worker {where['worker']}: {m.message}", m.traceback)
            elif isinstance(m, protocol.LogLine):
                yield protocol.LogLine(m.level, f"{where['worker']}: {m.text}")
        if row is None and not result.get("stopped"):
            row = self._row(t, "error", f"the Dask worker {where['worker']} returned no row for {t.name}")
        yield from finish(t, row, where)

    def _row(self, t: Task, status: str, message: str) -> dict:
        """A row for a point that has no measured one (its worker went away, the sweep was stopped)."""
        spec = self._spec
        return empty_row(workload=spec.workload, backend=t.backend, size=t.size, dtype=spec.dtype,
                         variant=t.variant, host_memory=spec.host_memory if t.gpu else "", device="",
                         status=status, message=message)

    def _placed(self, row: dict, t: Task, where: dict) -> dict:
        """The row with the device and the worker that measured it; named for its device when the
        sweep names devices (``cupy @ node2:GPU1``)."""
        row = dict(row)
        place = where.get("place") or t.place
        row["place"] = place or ""
        row["worker"] = where.get("worker") or ""
        if self.devices is not None:
            row["backend"] = places.series_name(places.backend_of(str(row["backend"])), t.place or place)
        return row

    def _environment(self, envs: dict[str, dict]) -> dict:
        """The sweep's record: the first worker's, its limits those of every worker (each is per
        device), and every worker's own record under ``workers``."""
        from workbench.measure.environment import merged
        records = [e["record"] for e in envs.values() if "record" in e]
        out: dict = dict(records[0]) if records else {}
        for rec in records[1:]:
            out["limits"] = merged(out, rec)["limits"]
        out["workers"] = {address: e for address, e in envs.items()}
        out["cluster"] = {"scheduler": self.address if self.address != "local" else "local (127.0.0.1)",
                          "devices": list(self.devices) if self.devices else "spread"}
        return out
