"""A workload whose plug-in code ends the engine by itself or never returns, by size: the corpus of
tests/test_signals.py.

size 1: fine; 2: make_inputs never returns; 3: sys.exit(3); 4: sys.exit(0); 5: raises
KeyboardInterrupt; 100 and above: each call takes 0.2 s (a sweep to interrupt), and the engine
then takes a second to exit (a stop is still being handled when the next signal comes). Where the
environment names a file in UNRULY_MARK, a line is appended to it when a point of size 2 or of 100
and above begins: a test waits for that, not for a time.
"""
import atexit
import os
import sys
import time

import numpy as np

from workbench.api import Workload, register


def _mark(what: str) -> None:
    path = os.environ.get("UNRULY_MARK")
    if path:
        with open(path, "a") as f:
            f.write(f"{what} {os.getpid()}\n")


_slow_exit: list = []


def _inputs(n, dt, v, rng):
    if n == 2:
        _mark("inputs")
        while True:
            time.sleep(1)
    return (np.full(4, n, dtype=dt),)


W = register(Workload(
    name="unruly", title="Unruly", kind="kernels", description="plug-in code that exits, interrupts or hangs",
    lesson="none", size_unit="behaviour", default_sizes=(1,),
    make_inputs=_inputs,
    reference=lambda inp: inp[0].astype(np.float64) * 2,
    flops=lambda n: 0.0, bytes_moved=lambda n, isz: 0.0, footprint=lambda n, isz: 1024.0,
))


@W.implement("numpy")
def _numpy(inputs, ctx):
    (x,) = inputs
    size = ctx.size
    if size >= 100:
        _mark("measuring")
        if not _slow_exit:       # an engine slow to exit: the supervisor waits for it, then kills it
            _slow_exit.append(atexit.register(time.sleep, 1.0))

    def run():
        if size == 3:
            sys.exit(3)
        elif size == 4:
            sys.exit(0)
        elif size == 5:
            raise KeyboardInterrupt
        elif size >= 100:
            time.sleep(0.2)
        return x * 2
    return run
