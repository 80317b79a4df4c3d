"""The engine process: the engine on the main thread of a process of its own (no Qt here).

The supervisor (``workbench.measure.supervisor``) starts it and talks to it over a pipe. Requests in:
``("run", spec, first, last, skip)``, ``("probe",)``, ``("quit",)``; out: the messages of
``workbench.measure.protocol``, each request closed by ``Done``. A process, not a thread: Numba
compiling beside the GUI thread crashed, and only a child survives a poisoned CUDA context or a
segfault. Stop is a shared byte read without a lock (``SharedFlag``), and the engine dies with its
parent, however it ends (``die_with_parent``).
See docs/ARCHITECTURE.md, "workbench/measure/engine_process.py".
"""
from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from workbench.measure import protocol, sessions

log = logging.getLogger(__name__)


class SharedFlag:
    """A stop flag in shared memory, readable and settable from either process, lock-free."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def set(self) -> None:
        self.raw.value = True

    def clear(self) -> None:
        self.raw.value = False

    def is_set(self) -> bool:
        return bool(self.raw.value)

    stop = set          # the engine's StopFlag interface


class _LockedConn:
    """A pipe end that several threads may send on (a log line from a helper thread, an event)."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def send(self, obj: Any) -> None:
        try:
            with self.lock:
                self.conn.send(obj)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            os._exit(0)       # nobody reads us any more: the parent is gone or has given up on us

    def recv(self) -> Any:
        return self.conn.recv()


class _PipeLog(logging.Handler):
    """Sends the engine's log lines to whoever supervises it."""

    def __init__(self, conn) -> None:
        super().__init__(logging.INFO)
        self.conn = conn
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.conn.send(protocol.LogLine(record.levelname, self.format(record)))
        except Exception:  # noqa: BLE001 - a closed pipe must not break the sweep
            pass


#: CUDA errors after which the context stays unusable until the process exits (sticky errors).
STICKY_CUDA_ERRORS = ("illegal address", "illegal memory access", "ILLEGAL_ADDRESS", "cudaErrorIllegalAddress",
                      "unspecified launch failure", "LAUNCH_FAILED", "misaligned address", "ILLEGAL_INSTRUCTION",
                      "hardware stack error", "cudaErrorLaunchFailure")


def poisons_context(row: dict) -> bool:
    """Whether a failed point's error leaves the CUDA context unusable for every later point."""
    return row.get("status") == "error" and any(s.lower() in row.get("message", "").lower()
                                                 for s in STICKY_CUDA_ERRORS)


def limit_memory(limit_bytes: int | None) -> None:
    """Cap this process's data (heap and private anonymous mappings) so that an over-large point
    raises MemoryError in its own row instead of the machine's out-of-memory killer ending
    something. RLIMIT_DATA, not RLIMIT_AS: CUDA reserves vast address ranges it never touches."""
    if not limit_bytes:
        return
    import resource     # POSIX only
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        cap = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    except (ValueError, OSError) as exc:
        log.warning("could not limit the engine's memory: %s", exc)


def _prepare(target: str) -> tuple[str, Any]:
    """Run a dedicated engine's preparation: ('' when it worked, else why not, for every point's row;
    what the float64 reference is computed from, when the preparation replaced the workloads'
    library under them and returns how to get the real one back, else None)."""
    if not target:
        return "", None
    try:
        return "", sessions.preparation(target)()
    except Exception as exc:  # noqa: BLE001 - the engine lives on and says why in each row
        return f"this backend's engine process could not be prepared ({target}): {type(exc).__name__}: {exc}", None


#: The signals a terminal or a service manager sends to a whole process group: the parent decides.
GROUP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
WATCH_S = 0.2          # how often the watchdog looks for the parent


def ignore_group_signals() -> None:
    """Ctrl-C in a terminal reaches the whole process group: the parent decides what it means (a
    stop); here it would surface as a KeyboardInterrupt inside Numba's dispatcher. SIGTERM and SIGHUP
    too: sent to a process group (a terminal closing, `timeout`), they must end the sweep the
    parent's way (a stop, the points so far written), not kill a point mid-measure. The parent
    starts this process with them blocked (``workbench.measure.supervisor``), so one that came while the
    interpreter started is still pending: ignored now, it is discarded, and only then unblocked."""
    for sig in GROUP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, GROUP_SIGNALS)


def die_with_parent(parent: int | None, kernel: bool = True) -> None:
    """End this process when ``parent`` ends, however it ends. On Linux (``kernel``) the kernel
    sends SIGKILL at once (PR_SET_PDEATHSIG; it fires when the *thread* that started us ends, so
    the supervisor asks for it only from its main thread); everywhere a watchdog thread exits
    quietly once our parent is no longer ``parent`` (it was reparented: the parent died)."""
    if parent is None:
        return
    if kernel and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)          # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError) as exc:
            log.debug("no parent-death signal: %s", exc)
    if os.getppid() != parent:        # died before we asked: nobody would send the signal
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_S)
        os._exit(0)
    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _where(exc: BaseException) -> str:
    """Where ``exc`` was raised: 'file.py:12 in make_inputs', '' if unknown."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" at {Path(last.filename).name}:{last.lineno} in {last.name}"


def _exit_by_request(conn: "_LockedConn", exc: BaseException) -> None:
    """Plug-in code asked this process to end (``sys.exit``) or raised KeyboardInterrupt (the
    engine ignores Ctrl-C, so only code can): end as asked, after telling the parent why."""
    if isinstance(exc, SystemExit):
        code = exc.code
        status = 0 if code is None else code if isinstance(code, int) else 1
        why = f"a plug-in called sys.exit({code!r}){_where(exc)}"
    else:
        status, why = 1, f"a plug-in raised {type(exc).__name__}{_where(exc)}"
    conn.send(protocol.EngineExiting(why))
    os._exit(status & 0xFF)


def serve(conn, stop_raw, plugins: tuple[str, ...] = (), memory_limit: int | None = None,
          prepare: str = "", parent: int | None = None, kernel_watch: bool = True) -> None:
    """The engine process's main loop; ``prepare`` runs before anything else is imported.
    ``parent``: the pid of the process this one must not outlive (``die_with_parent``)."""
    ignore_group_signals()
    die_with_parent(parent, kernel_watch)
    conn = _LockedConn(conn)
    try:
        _serve(conn, stop_raw, plugins, memory_limit, prepare)
    except (SystemExit, KeyboardInterrupt) as exc:
        _exit_by_request(conn, exc)


def _serve(conn: "_LockedConn", stop_raw, plugins: tuple[str, ...], memory_limit: int | None,
           prepare: str) -> None:
    unavailable, reference_inputs = _prepare(prepare)
    limit_memory(memory_limit)
    # To the parent only, which says it its own way (the window's log, the command line's bar): a
    # second copy on this process's stderr broke the progress bar and said each line twice.
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger().addHandler(_PipeLog(conn))
    # Only now, with the preparation done: cudf.pandas must be installed before pandas is imported,
    # and the engine and the registry import it.
    from workbench.catalog.workloads import REGISTRY
    from workbench.catalog.backends import probe_all
    from workbench.measure import engine
    from workbench.measure import plugins as plugin_files
    from workbench.measure.environment import record
    for path in plugins:
        try:
            # Their footprints were fitted by the vetting child and checked by the process that planned the
            # sweep: an input that crashes at a probe size must not take this engine down before any point.
            plugin_files.seed(REGISTRY.load_file(path), {})
        except Exception as exc:  # noqa: BLE001 - the parent loaded it already; say why not here
            conn.send(protocol.LogLine("WARNING", f"plug-in {path} did not load in the engine: {exc}"))
    stop = SharedFlag(stop_raw)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        kind = request[0]
        if kind == "quit":
            return
        try:
            if kind == "run":
                spec, first = request[1], request[2] if len(request) > 2 else 0
                last = request[3] if len(request) > 3 else None
                skip = request[4] if len(request) > 4 else ()
                for message in engine.run_sweep(spec, stop, first, last, unavailable, skip,
                                                  reference_inputs=reference_inputs):
                    conn.send(message)
                    if isinstance(message, protocol.PointFinished) and poisons_context(message.row):
                        conn.send(protocol.EngineRetiring(
                            f"{message.row['backend']} at size {message.row['size']:,} left the CUDA context "
                            "unusable (a sticky error); a fresh engine goes on with the next point"))
                        os._exit(0)
                # The sweep may have measured a device's limits: the record now carries them.
                conn.send(protocol.Environment(record()))
            elif kind == "probe":
                conn.send(protocol.ProbeResults(probe_all()))
                conn.send(protocol.Environment(record()))
        except Exception as exc:  # noqa: BLE001 - reported, and the engine lives on
            conn.send(protocol.EngineFailed(f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        conn.send(protocol.Done(kind))
