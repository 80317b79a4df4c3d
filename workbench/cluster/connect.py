"""Reaching a Dask scheduler: its address, TLS, a time limit, and a local cluster on request.

Every failure to reach one is a :class:`ClusterError` whose text is one line for the user.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 10.0
LOCAL = "local"
ANSWER_SLACK_S = 0.5     # past Dask's own time to connect, before a silent peer is taken for no scheduler
POLL_S = 0.1             # how often a wait looks whether the sweep was stopped


class ClusterError(Exception):
    """The cluster cannot be used; ``str()`` is one line."""


class Interrupted(ClusterError):
    """The sweep was stopped (Ctrl-C, the window's Stop) while the cluster was being reached."""


@dataclass(frozen=True)
class Target:
    """Where the points go: a scheduler's address, or ``local``; TLS files, and how long to try."""

    address: str
    tls_ca_file: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S

    def check(self) -> None:
        """Refuse what cannot work before anything is started (ValueError, one line)."""
        if not self.address.strip():
            raise ValueError("give a scheduler's address (tcp://HOST:8786, tls://HOST:8786) or 'local'")
        if self.address != LOCAL:
            problem = address_problem(self.address)
            if problem:
                raise ValueError(f"{self.address!r} is not a scheduler address ({problem}): write "
                                 "tcp://HOST:PORT, tls://HOST:PORT or 'local'")
        files = [f for f in (self.tls_ca_file, self.tls_cert, self.tls_key) if f]
        if files and not (self.tls_ca_file and self.tls_cert):
            raise ValueError("TLS needs --tls-ca-file and --tls-cert (and --tls-key unless the certificate "
                             "file holds the key)")
        for f in files:
            if not Path(f).is_file():
                raise ValueError(f"{f}: no such file")
        if not 0 < self.timeout_s < float("inf"):
            raise ValueError(f"the time to reach the scheduler must be a positive number of seconds, not {self.timeout_s}")

    @property
    def tls(self) -> bool:
        return self.address.startswith("tls://") or bool(self.tls_ca_file)


#: The schemes of a scheduler another process can reach (``inproc://`` lives in one process).
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


def address_problem(address: str) -> str:
    """What keeps ``address`` from naming a scheduler ('' : nothing), found before Dask sees it:
    Dask takes ``tcp://host:abc`` or ``tcp://`` as far as its connection attempt, which fails with a
    traceback of its own as the half-made client is collected, seconds later."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "", address
    if scheme in ("http", "https"):
        return "that is a web address, perhaps the dashboard's (:8787); the scheduler's is tcp://HOST:8786"
    if scheme and scheme not in SCHEMES:
        return f"{scheme}:// is not a scheme a scheduler listens on"
    if rest.startswith("["):                 # IPv6: [::1]:8786
        host, bracket, port = rest[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            return "an IPv6 address is written [ADDRESS]:PORT"
        port = port[1:]
    else:
        host, colon, port = rest.rpartition(":")
        if not colon:
            return "no port"
        if ":" in host:
            return "an IPv6 address is written in brackets, [ADDRESS]:PORT"
    if not host:
        return "no host"
    if not port.isdigit() or not 0 < int(port) < 65536:
        return f"the port must be a number from 1 to 65535, not {port!r}" if port else "no port"
    return ""


def security(target: Target) -> Any:
    """Dask's ``Security``: from the files given, else from Dask's configuration
    (``distributed.comm.tls.*``, e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``), which
    ``Security()`` reads by itself; None for a plain tcp address with nothing configured."""
    from distributed import Security
    if target.tls_ca_file:
        return Security(tls_ca_file=target.tls_ca_file, tls_client_cert=target.tls_cert,
                        tls_client_key=target.tls_key or None, require_encryption=True)
    sec = Security()
    if target.address.startswith("tls://") and not sec.tls_ca_file:
        raise ClusterError(f"{target.address}: a tls:// scheduler needs certificates: give --tls-ca-file, "
                           "--tls-cert and --tls-key, or set them in Dask's configuration (distributed.comm.tls)")
    return sec


def start_local() -> Any:
    """A cluster on this machine, bound to 127.0.0.1: one worker per GPU (``LocalCUDACluster``)
    where there are GPUs and dask-cuda, else one single-threaded CPU worker (a CPU point has the
    host to itself anyway: ``workbench.cluster.hostlock``).

    Dask's nanny writes its ``pre-spawn-environ`` (``MALLOC_TRIM_THRESHOLD_=65536``, one OpenMP, MKL
    and OpenBLAS thread) into this process's own environment to hand it to its workers, and leaves
    it there: every local engine started afterwards, in the window or the command line, inherited
    one BLAS thread and glibc's fixed mmap threshold (the engine's layout test saw the offsets of
    a freshly placed buffer stop varying). The environment is put back once the workers are up."""
    before = dict(os.environ)
    try:
        return _start_local()
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        os.environ.update(before)


def _start_local() -> Any:
    from workbench.core import driver
    gpus = driver.query()
    if not gpus.error:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            log.warning("GPUs here but no dask-cuda: a local cluster of one CPU worker instead "
                        "(pip install dask-cuda for one worker per GPU)")
        else:
            return LocalCUDACluster(host="127.0.0.1", threads_per_worker=1, dashboard_address=None,
                                    scheduler_kwargs=_QUIET_HTTP, silence_logs=_log_level(), preload=[_DEAF])
    from distributed import LocalCluster
    return LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address=None, scheduler_kwargs=_QUIET_HTTP, silence_logs=_log_level(),
                        preload=[_DEAF])


#: Ctrl-C goes to the whole terminal group: the command stops the sweep, its workers ignore it.
_DEAF = "workbench.cluster.quiet_worker"


#: A scheduler serves HTTP (health, metrics) even without its dashboard, by default on port 8787:
#: a second local cluster, or a lab's scheduler on this host, made Dask warn 'Port 8787 is already
#: in use' into the command's output. A free port of 127.0.0.1 instead.
_QUIET_HTTP = {"dashboard_address": "127.0.0.1:0"}


def _log_level() -> int:
    """Dask's own log lines (a worker starting, a connection closed as the cluster shuts down) only
    where the user asked to see what happens (``-v``); its errors always."""
    return logging.INFO if logging.getLogger().getEffectiveLevel() <= logging.INFO else logging.ERROR


def connect(target: Target, stopped: Callable[[], bool] = lambda: False) -> tuple[Any, Any]:
    """(a Client, the local cluster it started or None); ClusterError when the scheduler cannot be
    reached in ``timeout_s`` (refused, unreachable, a TLS handshake that fails, a port that answers
    but not as a scheduler), one line; :class:`Interrupted` as soon as ``stopped()``."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError("Dask is not installed: pip install 'gpu-workbench[cluster]' "
                           "(distributed and dask[dataframe])") from None
    cluster = None
    if _log_level() > logging.INFO:      # what goes wrong is said in our one line; Dask's traceback with -v
        # Dask's configuration gives some of its loggers levels of their own (distributed.client ...).
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        if target.address == LOCAL:
            cluster = start_local()
            return Client(cluster, set_as_default=False, timeout=target.timeout_s), cluster
        sec = security(target)
        reach(target, sec, stopped)
        return Client(target.address, security=sec, set_as_default=False, timeout=target.timeout_s), None
    except ClusterError:
        raise
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, TLS errors, bad addresses: one line
        if cluster is not None:
            cluster.close()
        what = "start a local Dask cluster" if target.address == LOCAL else \
            f"reach the Dask scheduler at {target.address}"
        raise ClusterError(f"could not {what}: {one_line(exc)}") from None


def reach(target: Target, sec: Any, stopped: Callable[[], bool] = lambda: False) -> None:
    """Open one connection to the scheduler and finish Dask's handshake on it, within ``timeout_s``.

    Dask's client retries a refused connection until its time is up, but then waits for the
    scheduler's handshake without any limit: a port held by something else (a web server, a tunnel
    whose far end is down, a firewall that takes connections and drops them) kept ``run --cluster``
    waiting for ever, deaf to Ctrl-C. Tried here first, on a loop of its own, the wait has an end,
    and a Stop ends it at once."""
    import asyncio

    from distributed.comm import connect as open_comm

    async def attempt() -> Any:
        comm = await open_comm(target.address, timeout=target.timeout_s, **sec.get_connection_args("client"))
        try:       # who answers: a worker's port, or an echo, passes the handshake but not this
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            await comm.close()

    async def bounded() -> None:
        job = asyncio.ensure_future(attempt())
        deadline = time.monotonic() + target.timeout_s + ANSWER_SLACK_S
        try:
            while not job.done():
                if stopped():
                    raise Interrupted("stopped while reaching the Dask scheduler")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ClusterError(
                        f"could not reach the Dask scheduler at {target.address}: something took the connection "
                        f"but did not answer as a Dask scheduler in {target.timeout_s:g} s (another service on "
                        "that port, or a tunnel whose far end is down?)")
                await asyncio.wait({job}, timeout=min(POLL_S, left))
            answered(target.address, job.result())
        finally:
            job.cancel()
            await asyncio.gather(job, return_exceptions=True)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(bounded())
    finally:
        loop.close()


def answered(address: str, identity: Any) -> None:
    """Refuse what answered at ``address`` unless it is a scheduler. Dask's Client, given a worker or
    an echo, failed after its handshake, and its half-made self timed out 6 s later, in a traceback."""
    kind = identity.get("type") if isinstance(identity, dict) else None
    if isinstance(kind, str) and "Scheduler" in kind:
        return
    if kind in ("Worker", "Nanny"):
        scheduler = identity.get("scheduler")
        raise ClusterError(f"{address} is a Dask {kind.lower()}, not a scheduler: give the scheduler's address"
                           + (f" ({scheduler})" if isinstance(scheduler, str) and scheduler else
                              " (tcp://HOST:8786, as `dask worker` was given it)"))
    raise ClusterError(f"could not reach the Dask scheduler at {address}: something answered, but not as a Dask "
                       "scheduler (another service on that port?)")


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
