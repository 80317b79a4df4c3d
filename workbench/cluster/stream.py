"""One sweep's tasks on a Dask cluster, from submitted to answered, as the messages of
``workbench.measure.protocol`` (``ClusterRunner.run`` yields them)."""
from __future__ import annotations

import logging
import queue
import time
import uuid
from typing import TYPE_CHECKING, Any, Iterator

from workbench.cluster import places
from workbench.cluster.assign import Task
from workbench.cluster.connect import one_line
from workbench.measure import protocol
from workbench.measure.supervisor import LIMITS_TIMEOUT_S
from workbench.results.rows import empty_row

if TYPE_CHECKING:
    from workbench.measure.engine import SweepSpec

log = logging.getLogger(__name__)

POLL_S = 0.05            # how long the loop waits for an event before it looks at the rest
CHECK_S = 0.25           # how often the scheduler is asked which workers are alive


class SweepStream:
    """The state of one sweep while its tasks run: which are still open, where each runs, which this
    sweep cancelled itself. :meth:`messages` is the loop; each thing that can happen in it (a point
    started, tasks answered, Stop, a look at the workers) has a method of its own."""

    # ``runner``: the ClusterRunner this sweep runs for (its client, limits and Stop), not named as a type:
    # it imports this module, and an import circle is refused even for typing (tests/test_layers.py).
    def __init__(self, runner: Any, spec: "SweepSpec", tasks: list[Task], total: int, t0: float) -> None:
        self.runner, self.client, self.spec = runner, runner.client, spec
        self.tasks, self.total, self.t0 = tasks, total, t0
        self.open: dict[int, Task] = {t.index: t for t in tasks}     # not yet answered for
        self.running: dict[int, dict] = {}                            # where each started point runs
        self.announced: set[int] = set()
        self.ours: set[int] = set()                                   # the tasks this sweep cancelled itself
        self.envs: dict[str, dict] = {}
        self.delivered, self.cancelled, self.stop_sent, self.lost = 0, False, False, ""
        self.checked = 0.0
        self.futures: dict[Any, Task] = {}
        self.by_index: dict[int, Any] = {}
        # A point's own engine ends it past its time limit, but only while its worker works: a worker
        # stopped or hung in a C call holds its host's lock, and every point of the host waits,
        # until the scheduler gives the worker up (worker-ttl: minutes).
        timeout = runner.point_timeout_s
        self.hung_after = 2 * timeout + runner.hung_grace_s if timeout else None

    def messages(self) -> Iterator[Any]:
        """Submit every task, then relay what happens until each is answered for; ends with exactly
        one SweepFinished."""
        from distributed import as_completed

        from workbench.cluster import task as task_mod
        client, runner = self.client, self.runner
        sweep = uuid.uuid4().hex[:12]
        topic, stop_name = f"gpu-workbench-{sweep}", f"gpu-workbench-stop-{sweep}"
        events: queue.Queue = queue.Queue()
        client.subscribe_topic(topic, events.put)
        expected = runner._digests()  # noqa: SLF001 - the runner's, so that a test can replace it
        for t in self.tasks:
            f = client.submit(task_mod.run_point, self.spec, t.point, t.gpu, runner.plugins, runner.point_timeout_s,
                              topic, stop_name, t.index, expected, key=f"{topic}-{t.index}",
                              workers=list(t.workers) if t.workers is not None else None,
                              allow_other_workers=False, pure=False)
            self.futures[f] = t
        self.by_index = {t.index: f for f, t in self.futures.items()}
        waiting = as_completed(list(self.futures), loop=client.loop)
        try:
            while self.open:
                if runner.closed:
                    self.cancelled = True
                    break
                try:
                    _, event = events.get(timeout=POLL_S)
                except queue.Empty:
                    event = None
                if isinstance(event, dict) and event.get("state") == "started":
                    yield from self._started(event)
                elif isinstance(event, dict) and event.get("state") == "limits":
                    self._measuring_limits(event)
                if waiting.has_ready():
                    yield from self._answered_batch(waiting.next_batch(block=False))
                    if self.lost:
                        break
                now = time.monotonic()
                if runner.stop_at is not None and (yield from self._stopping(now, stop_name)):
                    break
                if now - self.checked > CHECK_S:
                    self.checked = now
                    yield from self._check_workers(now)
                    if self.lost:
                        break
            if self.lost:
                yield from self._scheduler_lost()
        finally:
            try:
                client.unsubscribe_topic(topic)
                client.cancel([f for f in self.futures if not f.done()])
            except Exception as exc:  # noqa: BLE001 - a scheduler gone: nothing left to cancel
                log.debug("after the sweep: %s", exc)
        if self.envs:
            yield protocol.Environment(self._environment())
        yield protocol.SweepFinished(self.cancelled, time.monotonic() - self.t0, self.delivered)

    # --- what can happen ------------------------------------------------------------------------

    def _started(self, event: dict) -> Iterator[Any]:
        """A worker began a point: announced once; a second worker on it means the first died under it."""
        t = next((x for x in self.tasks if x.index == event.get("task")), None)
        if t is None or t.index not in self.open:
            return
        before = self.running.get(t.index)
        if before is not None and before["worker"] != event["worker"]:
            # The scheduler handed the point to another worker: the first one died under it.
            self.ours.add(t.index)
            yield from self._lost_worker(t, before)
        else:
            self.running[t.index] = {**event, "since": time.monotonic()}
            if t.index not in self.announced:
                self.announced.add(t.index)
                yield protocol.PointStarted(t.index, self.total, t.name, t.size, t.variant)

    def _measuring_limits(self, event: dict) -> None:
        """A worker measures its device's limits before the point's row: under their own time limit
        (the supervisor's), not a point's."""
        where = self.running.get(event.get("task"))
        if where is not None and where["worker"] == event.get("worker") and self.hung_after is not None:
            where["since"] = time.monotonic()
            where["allow"] = LIMITS_TIMEOUT_S + self.runner.hung_grace_s

    def _answered_batch(self, batch: Any) -> Iterator[Any]:
        """Tasks that ended; one cancelled by nobody here may mean the scheduler is gone (``lost``)."""
        for f in batch:
            t = self.futures[f]
            if f.status == "cancelled" and t.index not in self.ours and t.index in self.open:
                # Nobody here cancelled it: the client lost its scheduler (or someone
                # cancelled it on the cluster: then the scheduler is still there).
                self.lost = self.runner.gone(self.client)
                if self.lost:
                    return
                yield from self._finish(t, self._row(t, "error", "its task was cancelled on the cluster, "
                                                               "not by this sweep; not measured"))
            elif t.index in self.open:
                yield from self._answered(f, t, self.running.get(t.index))

    def _stopping(self, now: float, stop_name: str) -> Iterator[Any]:
        """Stop: the first time, tell the running points (the Dask Event ``stop_name``) and cancel
        those not begun; ``stop_wait_s`` later, give up the points still out. Returns True when the
        loop should end."""
        from distributed import Event
        self.cancelled = True
        client = self.client
        if not self.stop_sent:
            self.stop_sent = True
            try:
                Event(stop_name, client=client).set()
                idle = [i for i in list(self.open) if i not in self.running]
                self.ours.update(idle)
                client.cancel([self.by_index[i] for i in idle])
            except Exception as exc:  # noqa: BLE001 - the scheduler is gone: nothing runs on
                log.debug("stopping: %s", exc)
                return True
            for i in [i for i in list(self.open) if i not in self.running]:
                yield from self._finish(self.open[i], None)      # never started: no row, as locally
        elif now - self.runner.stop_at > self.runner.stop_wait_s:
            for i in list(self.open):
                t = self.open[i]
                yield from self._finish(t, self._row(t, "cancelled", "stopped: the worker did not "
                                                     "answer in time; not measured"), self.running.get(i))
            self.ours.update(self.by_index)
            client.cancel([self.by_index[i] for i in self.by_index])
            return True
        return False

    def _check_workers(self, now: float) -> Iterator[Any]:
        """Whether the scheduler is still there (``lost``), and each running point's worker alive and
        not hung; a point no worker left can run is an error row."""
        self.lost = self.runner.gone(self.client)
        if self.lost:
            return
        alive = self.runner.alive
        for i, where in list(self.running.items()):
            if i in self.open and where["worker"] not in alive:
                self.ours.add(i)
                yield from self._lost_worker(self.open[i], where)
            elif i in self.open and self.hung_after is not None and now - where["since"] > where.get("allow", self.hung_after):
                self.ours.add(i)
                yield from self._lost_worker(self.open[i], where, where.get("allow", self.hung_after))
        for i, t in list(self.open.items()):
            if i not in self.running and t.workers is not None and not set(t.workers) & alive:
                self.ours.add(i)
                self.client.cancel([self.by_index[i]])
                yield from self._finish(t, self._row(t, "error", (
                    f"no worker that can measure {t.name} is left in the cluster (those that could, "
                    f"{', '.join(t.workers)}, went away); not measured")))

    def _scheduler_lost(self) -> Iterator[Any]:
        """The scheduler went away: an error row for each point that ran, then ClusterLost."""
        self.cancelled = True
        for i in list(self.open):
            t = self.open[i]
            yield from self._finish(t, self._row(t, "error", f"{self.lost} while this point ran; not measured")
                                    if i in self.running else None, self.running.get(i))
        self.runner.lost = self.lost
        yield protocol.ClusterLost(self.lost)

    # --- rows -----------------------------------------------------------------------------------

    def _finish(self, t: Task, row: dict | None, where: dict | None = None) -> Iterator[Any]:
        """Point ``t`` is answered for: its row (None: it never started, no row), placed and journalled."""
        self.open.pop(t.index, None)
        self.running.pop(t.index, None)
        if row is None:
            return
        if t.index not in self.announced:
            self.announced.add(t.index)
            yield protocol.PointStarted(t.index, self.total, t.name, t.size, t.variant)
        row = self._placed(row, t, where or {})
        if self.runner.journal is not None:
            self.runner.journal.append(row)
        self.delivered += 1
        yield protocol.PointFinished(t.index, self.total, row)

    def _lost_worker(self, t: Task, where: dict, hung_s: float = 0.0) -> Iterator[Any]:
        """A worker went away under point ``t`` (or hangs: ``hung_s``, how long it has measured it):
        its error row, and no second try elsewhere. A hung worker is restarted through its nanny,
        which frees its host for the points that wait for it."""
        self.runner.restarts += 1
        try:
            self.client.cancel([self.by_index[t.index]])
        except Exception as exc:  # noqa: BLE001
            log.debug("cancelling %s: %s", t.name, exc)
        what = f"{t.name} at size {t.size:,}" + (f" ({t.variant})" if t.variant else "")
        worker = f"the Dask worker {where['worker']} ({where.get('place', '')})"
        if hung_s:
            self.runner.restart(where["worker"])
            message = (f"{worker} has been measuring {what} for over {hung_s:g} s, longer than a point can "
                       "last: it hangs (stopped, or stuck in a call); asked its nanny to restart it; the sweep "
                       "goes on on the other workers")
        else:
            message = f"{worker} went away while measuring {what}; the sweep goes on on the other workers"
        yield protocol.EngineDied(message)
        yield from self._finish(t, self._row(t, "error", message), where)

    def _answered(self, f: Any, t: Task, where: dict | None) -> Iterator[Any]:
        """The messages of a task that ended: its row (or an error row saying why it has none)."""
        status = f.status
        if status == "cancelled":
            yield from self._finish(t, None)
            return
        if status != "finished":
            exc = f.exception()
            who = f"the Dask worker {where['worker']}" if where else "a Dask worker"
            if type(exc).__name__ == "KilledWorker":
                message = f"{who} died while measuring {t.name} (and so did each worker it was given to)"
            else:
                message = f"{who} failed to measure {t.name}: {type(exc).__name__}: {one_line(exc)}"
            yield from self._finish(t, self._row(t, "error", message), where)
            return
        result = f.result()
        where = {k: result.get(k) for k in ("worker", "host", "place", "pid")}
        row = None
        for m in result["messages"]:
            if isinstance(m, protocol.PointFinished):
                row = m.row
            elif isinstance(m, protocol.Environment):
                self.envs.setdefault(where["worker"], {"host": where["host"], "place": where["place"]})["record"] = \
                    m.record
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
        yield from self._finish(t, row, where)

    def _row(self, t: Task, status: str, message: str) -> dict:
        """A row for a point that has no measured one (its worker went away, the sweep was stopped)."""
        spec = self.spec
        memory = spec.host_memory if t.gpu else ""
        try:        # a variant that names its host memory (overlap) says it in this row too
            from workbench.catalog.workloads import REGISTRY
            from workbench.measure.engine import host_memory
            memory = host_memory(REGISTRY.get(spec.workload), spec, t.variant, t.backend)
        except KeyError:          # a plug-in's workload, not loaded in this process
            pass
        return empty_row(workload=spec.workload, backend=t.backend, size=t.size, dtype=spec.dtype,
                         variant=t.variant, host_memory=memory, device="", status=status, message=message)

    def _placed(self, row: dict, t: Task, where: dict) -> dict:
        """The row with the device and the worker that measured it; named for its device when the
        sweep names devices (``cupy @ node2:GPU1``)."""
        row = dict(row)
        place = where.get("place") or t.place
        row["place"] = place or ""
        row["worker"] = where.get("worker") or ""
        if self.runner.devices is not None:
            row["backend"] = places.series_name(places.backend_of(str(row["backend"])), t.place or place)
        return row

    def _environment(self) -> dict:
        """The sweep's record: the first worker's, its limits those of every worker (each is per
        device), and every worker's own record under ``workers``."""
        from workbench.measure.environment import merged
        records = [e["record"] for e in self.envs.values() if "record" in e]
        out: dict = dict(records[0]) if records else {}
        for rec in records[1:]:
            out["limits"] = merged(out, rec)["limits"]
        out["workers"] = {address: e for address, e in self.envs.items()}
        runner = self.runner
        out["cluster"] = {"scheduler": runner.address if runner.address != "local" else "local (127.0.0.1)",
                          "devices": list(runner.devices) if runner.devices else "spread"}
        return out
