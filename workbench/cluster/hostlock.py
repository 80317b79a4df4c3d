"""The locks that keep a point alone where it measures, across every worker process of a host.

Dask's worker resources are counted per worker and a host may run several workers, so every worker
process of the host takes file locks instead (:func:`alone`): a CPU point holds the host lock
exclusively; a GPU point holds it shared and its GPU's lock exclusively. A turnstile lock keeps a
stream of GPU points from starving a waiting CPU point. ``flock`` locks go with their process, so a
worker killed mid-point never leaves its host locked. The files live in ``GPU_WORKBENCH_LOCK_DIR``,
else the system's temporary folder (:func:`lock_dir`).
See docs/ARCHITECTURE.md, "workbench/cluster/hostlock.py".
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

log = logging.getLogger(__name__)

POLL_S = 0.05


class Stopped(Exception):
    """The wait for a lock was given up: the sweep was stopped."""


def lock_dir() -> Path:
    folder = Path(os.environ.get("GPU_WORKBENCH_LOCK_DIR") or Path(tempfile.gettempdir()) / "gpu-workbench-locks")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _flock(path: Path, exclusive: bool, stopped: Callable[[], bool]) -> int:
    """An open file descriptor holding ``path``'s lock; waits (polling ``stopped``) until it is free."""
    import fcntl
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    while True:
        try:
            fcntl.flock(fd, mode)
            return fd
        except BlockingIOError:
            if stopped():
                os.close(fd)
                raise Stopped() from None
            time.sleep(POLL_S)
        except OSError:
            os.close(fd)
            raise


@contextlib.contextmanager
def alone(gpu: str, stopped: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """Hold this host for one point: ``gpu`` '' for a CPU point (the host to itself), else the GPU's
    name (that GPU to itself, the host shared with other GPUs' points). Raises :class:`Stopped`."""
    try:
        import fcntl  # noqa: F401 - POSIX only
    except ImportError:          # no flock (Windows): say so, measure anyway
        log.warning("no file locks here: a point may share this host with another")
        yield
        return
    folder = lock_dir()
    turnstile = _flock(folder / "turnstile.lock", True, stopped)
    try:
        held = [_flock(folder / "host.lock", exclusive=not gpu, stopped=stopped)]
    finally:
        os.close(turnstile)
    try:
        if gpu:
            held.append(_flock(folder / f"gpu-{re.sub(r'[^A-Za-z0-9_.-]', '_', gpu)}.lock", True, stopped))
        yield
    finally:
        for fd in reversed(held):
            os.close(fd)        # closing the descriptor releases its lock
