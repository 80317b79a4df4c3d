"""Preloaded into each worker of a local cluster (``connect.start_local``).

Ctrl-C reaches the terminal's whole process group, the local cluster's workers with it. The command
stops the sweep and closes the cluster itself; a worker that took the signal died mid-point with a
KeyboardInterrupt traceback, and the sweep then said it "went away", which was false.
"""
from __future__ import annotations

import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Dask calls this in the worker's process, on its main thread, as the worker starts (a restarted one too)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
