"""Loading a user's workload file without letting it take the program down.

A plug-in is imported first in a child process, with a time limit: one that
crashes the interpreter, calls ``os._exit``, hangs or raises at import is
reported in one line (:class:`~workbench.catalog.workloads.PluginError`) and never
reaches this process. Only a file that loads cleanly there is loaded here,
where the same checks run again (a clash with a built-in name, an unknown
backend), and one more that only this process can make: a name an earlier
plug-in declared is refused, never replaced. What its points do when they run
is the supervisor's business.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from workbench.catalog.workloads import REGISTRY, PluginError
from workbench.measure.exits import describe_exit

VET_TIMEOUT_S = 60.0
_VET = ("import sys\nfrom workbench.catalog.workloads import REGISTRY, PluginError\n"
        "try:\n    REGISTRY.load_file(sys.argv[1])\n"
        "except PluginError as exc:\n    print(exc, file=sys.stderr); sys.exit(3)\n")


def vet(path: str | Path, timeout: float | None = None) -> None:
    """Import ``path`` in a child process; raise PluginError with the reason if that goes wrong.
    The child imports from this process's path, as the engine process does, and from nothing
    else: ``-P`` keeps its working folder off it, so no folder there shadows a module."""
    timeout = VET_TIMEOUT_S if timeout is None else timeout     # read now, so a test can shorten it
    path = Path(path)
    if not path.is_file():
        raise PluginError(f"no such workload file: {path}")
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
        proc = subprocess.run([sys.executable, "-P", "-c", _VET, str(path.resolve())], capture_output=True,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise PluginError(f"{path}: loading it did not finish in {timeout:.0f} s (does it wait for something?)") from None
    if proc.returncode == 0:
        return
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    if proc.returncode == 3 and lines:
        raise PluginError(lines[-1])
    if proc.returncode < 0:
        raise PluginError(f"{path}: loading it crashed the interpreter ({describe_exit(proc.returncode)})")
    raise PluginError(f"{path}: loading it ended the interpreter (exit status {proc.returncode})"
                      + (f": {lines[-1]}" if lines else ""))


def load(path: str | Path) -> list[str]:
    """Vet ``path`` in a child process, then load it here; returns the workload names it declares."""
    vet(path)
    return REGISTRY.load_file(path, exclusive=True)
