"""A workload whose points misbehave on purpose, by size: the supervisor's test corpus.

size 1: fine; 2: segfault; 3: os._exit(3); 4: hangs; 5: a 30-second repeat (stop it);
6: raises; 7: holds the GIL in a C call for 30 s; 8: raises CUDA's sticky illegal-address error
(as a Numba kernel's out-of-bounds write does); anything else: fine.
"""
import ctypes
import os
import signal
import time

import numpy as np

from workbench.api import Workload, register

W = register(Workload(
    name="misbehaving", title="Misbehaving", kind="kernels", description="points that crash, hang or raise",
    lesson="none", size_unit="behaviour", default_sizes=(1,),
    make_inputs=lambda n, dt, v, rng: (np.full(4, n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 2,
    flops=lambda n: 0.0, bytes_moved=lambda n, isz: 0.0, footprint=lambda n, isz: 1024.0,
))


@W.implement("numpy")
def _numpy(inputs, ctx):
    (x,) = inputs
    size = ctx.size

    def run():
        if size == 2:
            os.kill(os.getpid(), signal.SIGSEGV)
        elif size == 3:
            os._exit(3)
        elif size == 4:
            while True:
                time.sleep(1)
        elif size == 5:
            end = time.monotonic() + 30
            while time.monotonic() < end:
                pass
        elif size == 6:
            raise ZeroDivisionError("a point that raises")
        elif size == 8:
            raise RuntimeError("[700] Call to cuCtxSynchronize results in CUDA_ERROR_ILLEGAL_ADDRESS")
        elif size == 7:
            ctypes.CDLL(None).sleep(30)
        return x * 2
    return run


@W.implement("numba")
def _second(inputs, ctx):
    """A second backend, fine except at size 9, where it takes the engine down (a segfault): the
    points of one size run their rounds interleaved, so the other backend's point there is unfinished."""
    (x,) = inputs
    size = ctx.size

    def run():
        if size == 9:
            os.kill(os.getpid(), signal.SIGSEGV)
        return x * 2
    return run
