"""Points for the cluster tests: ``nap`` on the numpy backend, by size.

size 3: the engine writes its worker's pid (its parent: the Dask worker process) to the folder
``GPU_WORKBENCH_TEST_PIDS`` names, then spins for a minute (the test kills that worker, or stops
the sweep); any other size: a quick, honest point.
"""
import os
import time
from pathlib import Path

import numpy as np

from workbench.api import Workload, register

W = register(Workload(
    name="nap", title="Nap", kind="kernels", description="a point that runs until its worker is killed",
    lesson="none", size_unit="elements", default_sizes=(1024,),
    make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 2,
    flops=lambda n: float(n), bytes_moved=lambda n, isz: 2.0 * n * isz, footprint=lambda n, isz: 4.0 * n * isz,
))


@W.implement("numpy")
def _numpy(inputs, ctx):
    (x,) = inputs
    out = np.empty_like(x)
    if ctx.size == 3:
        folder = Path(os.environ["GPU_WORKBENCH_TEST_PIDS"])
        (folder / f"{os.getppid()}.pid").write_text(str(os.getppid()))

        def long():
            end = time.monotonic() + 60
            while time.monotonic() < end:
                pass
            return np.multiply(x, 2, out=out)
        return long
    return lambda: np.multiply(x, 2, out=out)
