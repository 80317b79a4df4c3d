"""What runs on a Dask worker: the survey of the worker, and one point in a supervised engine.

A point runs exactly as it does on the machine with the window: in an engine process that a
``workbench.measure.supervisor.Supervisor`` owns, started by the worker (a crash, a hang or a poisoned CUDA
context ends that engine, never the worker), and kept for the worker's next point, so that what
is compiled stays compiled, as locally. Before it starts, the point takes the host's locks
(``workbench.cluster.hostlock``): one point per GPU, a CPU point alone on its host.

The client learns that a point began, and where, from a Dask event (``log_event`` on the sweep's
topic); the point's messages come back as the task's result. A Stop reaches a running point
through a Dask ``Event``, which a thread here watches: the supervisor then stops the engine as it
would locally, within its grace time.
"""
from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.util
import os
import threading
from typing import Any

from workbench.cluster import places

log = logging.getLogger(__name__)

WATCH_S = 0.1                 # how often a running point looks whether it was stopped or cancelled
_lock = threading.Lock()
_idle: dict[tuple, list] = {}          # supervisors not in use, by (plugins, point time limit)
_every: list = []                      # every supervisor of this worker, in use or not
_loaded: dict[str, str] = {}           # plug-in files loaded into this worker process: path -> content's digest
_exit_hook = False


def digest(path: str) -> str:
    """The SHA-256 of a plug-in file's content ('' where it cannot be read, or is a FIFO or a device:
    never read, as everywhere a workload file is)."""
    from workbench.measure import plugins
    return plugins.digest(path)


def _load_plugins(plugins: tuple[str, ...], expected: dict[str, str] | None = None) -> list[str]:
    """Load the sweep's plug-in files here too (the worker validates and plans the sweep as the
    client did); what keeps one from loading is said, and the worker measures none of its points.

    A worker outlives a sweep: a file loaded once and then edited (the user changed a kernel and
    ran again) is loaded again, else the worker and its kept engine measured the old code. A file
    whose content is not the one the client started the sweep with (``expected``: path -> digest;
    another copy on this host) is refused: this worker would measure other code than asked."""
    from workbench.catalog.workloads import REGISTRY
    problems = []
    for path in plugins:
        have, want = digest(path), (expected or {}).get(path, "")
        if not have:
            problems.append(f"plug-in {path} is not on this worker (a plug-in must be at the same path on every "
                            "worker, or installed there)")
            continue
        if want and have != want:
            problems.append(f"plug-in {path} on this worker is not the file the sweep was started with (their "
                            "contents differ): copy it here")
            continue
        if _loaded.get(path) == have:
            continue
        try:
            REGISTRY.load_file(path)
            _loaded[path] = have
        except Exception as exc:  # noqa: BLE001 - reported with the point
            problems.append(f"plug-in {path} did not load on this worker: {exc}")
    return problems


def survey(backends: tuple[str, ...], plugins: tuple[str, ...] = (), expected: dict[str, str] | None = None) -> dict:
    """This worker's host, GPU, which of ``backends`` it can run, and what keeps it from loading the
    sweep's plug-ins (run on every worker by ``Client.run`` before a sweep): plain data."""
    from workbench.measure import engine, supervisor  # noqa: F401 - imported now, not while a point measures
    from workbench.catalog.backends import BACKENDS, probe_all
    from workbench.core import driver
    with _lock:
        problems = _load_plugins(plugins, expected)
    info = driver.query()
    known = [name for name in backends if name in BACKENDS]
    found = probe_all(known) if known else {}     # side by side: a GPU library's check is a child process of seconds
    usable = {name: "" if found[name].usable else found[name].reason for name in known}
    usable.update({name: f"unknown backend {name} on this worker (a plug-in it lacks?)"
                   for name in backends if name not in BACKENDS})
    from workbench import __version__
    return {"host": places.host_name(), "gpu": places.this_gpu(0 if info.error else info.device_count),
            "pid": os.getpid(), "usable": usable, "plugins": problems, "version": __version__}


def _supervisor(key: tuple):
    """An engine for ``key`` (plug-ins, their digests, the point time limit): the one this worker
    kept, else a fresh one. Idle engines of other keys are ended: one of an older version of a
    plug-in would measure old code, and each holds memory (on a GPU, a CUDA context) beside the
    points measured now."""
    from workbench.measure.supervisor import Supervisor
    global _exit_hook
    with _lock:
        if not _exit_hook:
            # An engine ignores SIGTERM (the parent decides what a signal means): multiprocessing's
            # exit, which terminates daemonic children and then joins them, would wait on it until
            # the nanny kills the worker (8 s). Its finalizers run before that: this one ends them.
            multiprocessing.util.Finalize(None, _end_engines, exitpriority=10)
            _exit_hook = True
        stale = [sup for other, free in _idle.items() if other != key for sup in free]
        for other in [k for k in _idle if k != key]:
            del _idle[other]
        for sup in stale:
            _every.remove(sup)
        free = _idle.setdefault(key, [])
        found = free.pop() if free else None
    for sup in stale:
        sup.close()
    if found is not None:
        return found
    plugins, _, timeout = key
    sup = Supervisor(plugins=plugins, point_timeout_s=timeout)
    with _lock:
        _every.append(sup)
    return sup


def _give_back(key: tuple, sup) -> None:
    with _lock:
        _idle.setdefault(key, []).append(sup)


def _prepare_worker() -> None:
    """Make this worker process a parent for engines that measure as they would locally.

    Dask's nanny starts its worker as a daemonic process, and multiprocessing refuses children to
    those. The engine needs none of what that protects: it dies with the worker by itself
    (``workbench.measure.engine_process.die_with_parent``), so the flag is lifted for this worker process.

    The nanny also sets, for its worker and so for every child, Dask's ``pre-spawn-environ``
    (``MALLOC_TRIM_THRESHOLD_=65536``, one OpenMP, MKL and OpenBLAS thread): good for a worker that
    holds data, wrong for a benchmark. With the trim threshold, the NumPy twins of
    ``benchmarks/aa_plugin.py`` measured 16-21 % slower at 2^16 and 2^18 elements than the same
    sweep without it (docs/PERFORMANCE.md), and one BLAS thread is not how a user runs NumPy. The
    values the nanny set are taken out of the environment the engines inherit."""
    proc = multiprocessing.current_process()
    if proc.daemon:
        proc._config["daemon"] = False      # noqa: SLF001 - the documented property's setter refuses a started process
    try:
        import dask
        nanny = dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {}
    except Exception:  # noqa: BLE001 - no such setting in this Dask: nothing was set
        nanny = {}
    for name, value in nanny.items():
        if name != "PYTHONHASHSEED" and os.environ.get(name) == str(value):
            del os.environ[name]


def run_point(spec: Any, index: int, gpu_backend: bool, plugins: tuple[str, ...], point_timeout_s: float | None,
              topic: str, stop_event: str, ident: int, expected: dict[str, str] | None = None) -> dict:
    """Measure point ``index`` of ``spec`` here: its messages, and where it was measured."""
    from distributed import Event, get_client, get_worker

    from workbench.measure import protocol
    from workbench.cluster import hostlock
    from workbench.core import driver
    worker = get_worker()
    key = worker.get_current_task()
    info = driver.query()
    gpu = places.this_gpu(0 if info.error else info.device_count) if gpu_backend else ""
    host = places.host_name()
    place = places.gpu_place(host, gpu) if gpu else f"{host}:CPU"
    where = {"worker": worker.address, "host": host, "place": place, "pid": os.getpid()}
    # The worker's client named here: the thread that watches the Event is not the task's, and an
    # Event that looks its client up there finds none (every wait raised, so no Stop reached a point).
    stop = Event(stop_event, client=get_client())
    state = {"stopped": False, "sup": None}
    done = threading.Event()

    def cancelled() -> bool:
        """The client cancelled this task (its worker was given up for lost) or stopped the sweep, or
        the worker is closing."""
        if state["stopped"]:
            return True
        try:
            # A worker closing (its scheduler gone, its nanny told to stop) waits for the task it
            # runs: end the point rather than make the nanny kill the worker seconds later.
            if getattr(worker.status, "name", "running") in ("closing", "closed", "closing_gracefully", "failed"):
                state["stopped"] = True
                return True
            ts = worker.state.tasks.get(key) if key is not None else None
            if key is not None and (ts is None or ts.state in ("cancelled", "released", "forgotten")):
                state["stopped"] = True
        except Exception:  # noqa: BLE001 - worker internals: without them, the Event still stops us
            pass
        return state["stopped"]

    def watch() -> None:
        while not done.is_set():
            try:
                if stop.wait(timeout=WATCH_S):
                    state["stopped"] = True
            except Exception:  # noqa: BLE001 - the scheduler is gone: the point ends by itself
                done.wait(WATCH_S)
            if cancelled() and state["sup"] is not None:
                state["sup"].stop()
                return
    watcher = threading.Thread(target=watch, name="gpu-workbench-stop-watch", daemon=True)
    watcher.start()
    messages: list = []
    try:
        with hostlock.alone(gpu, cancelled):
            if cancelled():
                return {**where, "messages": messages, "stopped": True}
            # Whatever this worker still has to load, it loads holding the lock: never beside a point.
            with _lock:
                problems = _load_plugins(plugins, expected)
            worker.log_event(topic, {"task": ident, "state": "started", **where})
            if problems:          # it would measure other code than asked, or none: an error row
                return {**where, "messages": [protocol.SweepError("; ".join(problems))], "stopped": False}
            engine_key = (tuple(plugins), tuple(_loaded.get(p, "") for p in plugins), point_timeout_s)
            _prepare_worker()
            sup = _supervisor(engine_key)
            sup.arm()
            state["sup"] = sup
            if cancelled():
                sup.stop()
            try:
                for message in sup.run(spec, skip=_all_but(spec, index)):
                    if isinstance(message, protocol.MeasuringLimits):
                        # The device's limits take their own time (12 s of a VM's 1 GiB ladder), longer
                        # than a point can last: the client must not take the worker for hung.
                        worker.log_event(topic, {"task": ident, "state": "limits", **where})
                    elif not isinstance(message, (protocol.SweepStarted, protocol.SweepFinished, protocol.MakingInputs)):
                        messages.append(message)
            finally:
                state["sup"] = None
                _give_back(engine_key, sup)
    except hostlock.Stopped:
        return {**where, "messages": messages, "stopped": True}
    finally:
        done.set()
    return {**where, "messages": messages, "stopped": state["stopped"]}


def _all_but(spec: Any, index: int) -> list[int]:
    """Every point of the sweep but ``index``: what the supervisor is told to skip."""
    from workbench.measure import engine
    try:
        n = len(engine.plan(spec, engine.validate(spec)))
    except engine.PlanError:        # the supervisor says why, in its own words
        return []
    return [i for i in range(n) if i != index]


def forget_engines() -> int:
    """End this worker's idle engines (``ClusterRunner.renew``: nothing compiled yet); how many."""
    with _lock:
        sups = [s for free in _idle.values() for s in free]
        _idle.clear()
        for sup in sups:
            _every.remove(sup)
    for sup in sups:
        sup.close()
    return len(sups)


def _end_engines() -> None:
    """As the worker exits: end every engine, the one measuring a point too (``Supervisor.abort``
    takes no lock; that point's thread then sees its engine gone)."""
    with _lock:
        sups = list(_every)
    for sup in sups:
        sup.abort()
    forget_engines()
    for sup in sups:
        sup.close()
