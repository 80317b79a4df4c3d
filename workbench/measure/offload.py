"""Run a function, named by its module path, in a child process that keeps it loaded.

The window draws exports with matplotlib; imported in the window's own process, matplotlib
and its font cache stay there for good (40-55 MB after the first export, measured by
benchmarks/long_session.py). One spawned child, started at the first export and kept for
the next ones, holds them instead, and a chart that crashes the interpreter takes the child
down, not the window. The target is named ("workbench.views.matplotlib_charts:export"), so that the parent
never imports it. The window's results and sessions are read there too: pandas' long calls, in a
thread of the window's process, held the GIL against its GUI thread (issue 38). Result sets sent
to it go packed (``workbench.results.pieces.PackedSets``): the pool's thread pickled a table of
5,000 rows in one call that held the GIL for 20 ms. A session's rows go as they are
(``PackedParts``), and the child makes their table.
"""
from __future__ import annotations

import importlib
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from workbench.core import priority
from workbench.results.pieces import PackedSets
from workbench.results.sets import PackedParts


def call(target: str, *args: Any, **kwargs: Any) -> Any:
    """In the child: import ``module:function`` and call it, with any result sets packed in pieces
    (``PackedSets``, or a session's rows: ``PackedParts``) as the sets again."""
    module, _, name = target.partition(":")
    args = tuple(a.unpacked() if isinstance(a, (PackedSets, PackedParts)) else a for a in args)
    kwargs = {k: v.unpacked() if isinstance(v, (PackedSets, PackedParts)) else v for k, v in kwargs.items()}
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


class Offload:
    """One child process, started on first use; ``run`` blocks until the call returns there."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def run(self, target: str, *args: Any, **kwargs: Any) -> Any:
        for _ in range(2):
            if self._pool is None:
                # Below the window's priority, as the spec process: reading 5,000 rows for a
                # compare took a core from the GUI thread on a 2-core machine.
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"),
                                                 initializer=priority.lower)
            try:
                future = self._pool.submit(call, target, *args, **kwargs)
            except BrokenProcessPool:
                # The child died between two calls (killed while idle): this one never ran, so it
                # goes to a fresh child rather than failing as if it had crashed it.
                self._pool = None
                continue
            try:
                return future.result()
            except BrokenProcessPool:
                self._pool = None       # the next call starts a fresh child
                raise RuntimeError("the child process that ran it ended without an answer (it crashed?)") from None
        raise RuntimeError("no child process could be started to run it")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
