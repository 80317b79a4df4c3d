"""How a child process ended, in words: for the row of a point whose engine died, and for a
plug-in whose loading took the interpreter down."""
from __future__ import annotations

import signal


def describe_exit(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        why = {"SIGSEGV": "a segmentation fault", "SIGKILL": "killed: out of memory, or kill -9",
               "SIGABRT": "aborted", "SIGBUS": "a bus error", "SIGFPE": "an arithmetic fault",
               "SIGTERM": "asked to terminate"}.get(name)
        return f"ended by {name}" + (f" ({why})" if why else "")
    return f"exited with status {code}"
