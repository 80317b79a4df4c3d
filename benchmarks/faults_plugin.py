"""A workload whose GPU points fail on purpose, for the supervisor's check on a real GPU.

Sizes (the sweep runs them in order, cupy then numba-cuda at each size):
  1, 3, 5: y = 2 x on either backend, verified;
  2: cupy asks for 16 TiB of device memory (out of memory; the engine lives on);
  4: numba-cuda writes far outside its array (an illegal address: CUDA's sticky error, which
     leaves the context unusable until the process exits, so the engine retires).
Run: gpu-workbench --plugin benchmarks/faults_plugin.py run -w faults -s 1,2,3,4,5
     python benchmarks/faults_window.py OUT.png   (the same sweep through the window)
"""
import numpy as np

from workbench.api import Workload, register
from workloads._common import BLOCK, device_phases, grid, kernel_builder

cuda = None

W = register(Workload(
    name="faults", title="Faults on purpose", kind="kernels",
    description="Points that run out of device memory or write out of bounds, between normal ones.",
    lesson="A point that fails costs that point, not the sweep.", size_unit="case",
    default_sizes=(1, 2, 3, 4, 5),
    make_inputs=lambda n, dt, v, rng: (np.arange(1024, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 2,
    flops=lambda n: 1024.0, bytes_moved=lambda n, isz: 2048.0 * isz, footprint=lambda n, isz: 1e6,
))


@W.implement("cupy")
def _cupy(inputs, ctx):
    cp = ctx.session.cp

    def double(x, out):
        if ctx.size == 2:
            cp.empty(2 ** 44, dtype=np.uint8)          # 16 TiB: more than any GPU holds
        cp.multiply(x, 2, out=out)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, double)


@kernel_builder
def _kernels():

    @cuda.jit
    def double(x, out, offset):
        i = cuda.grid(1)
        if i < x.size:
            out[i + offset] = 2 * x[i]                   # offset 0, or far out of bounds
    return double


@W.implement("numba-cuda")
def _numba_cuda(inputs, ctx):
    kernel = _kernels()
    stream = ctx.session.stream
    offset = 2 ** 36 if ctx.size == 4 else 0
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda x, out: kernel[grid(x.size), BLOCK, stream](x, out, offset))
