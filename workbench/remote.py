"""The engine in a process of its own, driven over a pipe (no Qt here).

The window's worker thread talks to one long-lived child process that owns the
GPU. Everything crossing the pipe is the engine's plain data (a SweepSpec in,
frozen events and row dicts out). A process rather than a thread, because:

* Numba compiling in a worker thread while the GUI thread paints crashed the
  process here (a segfault inside LLVM, about one run in two), and docs/GPU.md
  found that Numba wants the main thread first; in the child the engine runs
  on its main thread, as on the command line;
* an illegal memory access poisons a CUDA context until its process exits: a
  child can be replaced, the window cannot;
* cuDF's takeover of the allocators, and the peak-RSS reading, stay the
  child's own, away from the window's memory.

Requests: ("run", spec), ("probe",), ("quit",). Stop is a multiprocessing
Event the engine reads between repeats.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import threading
import traceback
from typing import Any


class _LockedConn:
    """A pipe end that several threads may send on (a log line from a helper thread, an event)."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def send(self, obj: Any) -> None:
        with self.lock:
            self.conn.send(obj)

    def recv(self) -> Any:
        return self.conn.recv()


class _PipeLog(logging.Handler):
    """Sends the child's log lines to the window's log panel."""

    def __init__(self, conn) -> None:
        super().__init__(logging.INFO)
        self.conn = conn
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.conn.send(("log", record.levelname, self.format(record)))
        except Exception:  # noqa: BLE001 - a closed pipe must not break the sweep
            pass


def serve(conn, stop_event) -> None:
    """The child's main loop."""
    conn = _LockedConn(conn)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger().addHandler(_PipeLog(conn))
    from workbench import engine
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        kind = request[0]
        if kind == "quit":
            return
        try:
            if kind == "run":
                stop_event.clear()
                for event in engine.run_sweep(request[1], engine.StopFlag(stop_event)):
                    conn.send(("event", event))
                # The sweep may have measured a device's limits: the record now carries them.
                from workbench.environment import record
                conn.send(("environment", record()))
            elif kind == "probe":
                from workbench.backends import probe_all
                from workbench.environment import record
                conn.send(("probed", probe_all()))
                conn.send(("environment", record()))
        except Exception as exc:  # noqa: BLE001 - reported, and the child lives on
            conn.send(("failed", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        conn.send(("done", kind))


class EngineProcess:
    """The parent's handle on the child: start, send, receive, stop, close."""

    def __init__(self) -> None:
        self.ctx = mp.get_context("spawn")        # never fork a process that may hold CUDA state
        self.stop_event = self.ctx.Event()
        self.process = None
        self.conn = None

    def ensure(self) -> None:
        if self.process is not None and self.process.is_alive():
            return
        parent, child = self.ctx.Pipe()
        self.process = self.ctx.Process(target=serve, args=(child, self.stop_event), daemon=True,
                                        name="gpu-workbench-engine")
        self.process.start()
        child.close()
        self.conn = parent

    def request(self, *message: Any):
        """Send a request and yield what comes back until the child says it is done."""
        self.ensure()
        self.conn.send(message)
        while True:
            try:
                reply = self.conn.recv()
            except (EOFError, OSError):
                code = self.process.exitcode if self.process is not None else None
                self.process.join(1) if self.process is not None else None
                code = self.process.exitcode if self.process is not None else code
                self.process = None
                raise ChildProcessError(f"the engine process died (exit code {code}); "
                                        "a new one starts with the next request") from None
            if reply[0] == "done":
                return
            yield reply

    def stop(self) -> None:
        self.stop_event.set()

    def close(self, timeout: float = 10.0) -> None:
        if self.process is None:
            return
        self.stop_event.set()
        try:
            self.conn.send(("quit",))
        except (OSError, BrokenPipeError):
            pass
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout)
        self.conn.close()
        self.process = None
