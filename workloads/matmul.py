"""matmul: the n x n matrix product, the arithmetic-bound workload."""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import device_phases, f64, kernel_builder, uniform

# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None

W = register(Workload(
    name="matmul",
    order=10,
    title="Matrix multiply",
    kind="array math",
    description="C = A @ B for two random n x n matrices.",
    lesson="Matrix multiply does n^3 work on n^2 data, so it is bound by arithmetic: the GPU's tensor-less "
           "FP32/FP64 units and cuBLAS win by orders of magnitude at large n, float32 runs faster than "
           "float64, and a hand-written tiled kernel shows how far a library is ahead of textbook code.",
    size_unit="matrix dimension n (n x n)",
    default_sizes=(64, 128, 256, 512, 1024, 2048),
    make_inputs=lambda n, dt, v, rng: (uniform(rng, (n, n), dt, -1, 1), uniform(rng, (n, n), dt, -1, 1)),
    reference=lambda inp: (lambda a, b: a @ b)(*f64(*inp)),
    flops=lambda n: 2.0 * n ** 3,
    bytes_moved=lambda n, isz: 3.0 * n * n * isz,
    footprint=lambda n, isz: n * n * (3 * isz + 3 * 8) * 1.2,
    tolerance={"float32": 1e-4, "float64": 1e-11},
))


@W.implement("numpy", threads="blas")
def _numpy(inputs, ctx):
    a, b = inputs
    return lambda: a @ b


@functools.cache
def _numba_dot():
    import numba

    @numba.njit
    def dot(a, b):
        return np.dot(a, b)   # Numba hands this to the BLAS that SciPy ships
    return dot


@W.implement("numba", note="np.dot inside @njit, which calls BLAS", threads="blas")
def _numba(inputs, ctx):
    a, b = inputs
    dot = _numba_dot()
    return lambda: dot(a, b)


@W.implement("cupy", note="cuBLAS")
def _cupy(inputs, ctx):
    n = inputs[0].shape[0]
    return device_phases(ctx, inputs, (n, n), inputs[0].dtype,
                         lambda a, b, out: ctx.session.cp.matmul(a, b, out=out))


TILE = 16


@kernel_builder
def _tiled_kernel(dtype: str):
    """The textbook shared-memory tiled product (TILE x TILE tiles), one kernel per dtype."""
    from numba import float32, float64
    nbtype = float32 if dtype == "float32" else float64

    @cuda.jit
    def tiled(a, b, c):
        sa = cuda.shared.array((TILE, TILE), nbtype)
        sb = cuda.shared.array((TILE, TILE), nbtype)
        x, y = cuda.grid(2)            # x: column of C, y: row of C
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        n = c.shape[0]
        acc = nbtype(0)
        for t in range((n + TILE - 1) // TILE):
            col = t * TILE + tx
            row = t * TILE + ty
            sa[ty, tx] = a[y, col] if (y < n and col < n) else nbtype(0)
            sb[ty, tx] = b[row, x] if (row < n and x < n) else nbtype(0)
            cuda.syncthreads()
            for k in range(TILE):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        if y < n and x < n:
            c[y, x] = acc
    return tiled


@W.implement("numba-cuda", note="tiled shared-memory kernel, 16 x 16 tiles")
def _numba_cuda(inputs, ctx):
    n = inputs[0].shape[0]
    kernel = _tiled_kernel(ctx.dtype.name)
    stream = ctx.session.stream
    blocks = ((n + TILE - 1) // TILE, (n + TILE - 1) // TILE)
    return device_phases(ctx, inputs, (n, n), inputs[0].dtype,
                         lambda a, b, out: kernel[blocks, (TILE, TILE), stream](a, b, out))
