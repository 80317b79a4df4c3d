"""The smallest plug-in: y = 2 x on NumPy. The window tests open it, sweep it and edit it on disk."""
import numpy as np

from workbench.api import Workload, register

W = register(Workload(
    name="double", title="Double", kind="kernels", description="y = 2 x", lesson="none",
    size_unit="elements", default_sizes=(64, 256), make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 2, flops=lambda n: float(n),
    bytes_moved=lambda n, isz: 2.0 * n * isz, footprint=lambda n, isz: 2.0 * n * isz))
W.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
