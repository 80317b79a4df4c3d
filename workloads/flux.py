"""flux: flux = velocity * phi over an nx x ny grid, indexed in 2-D."""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import device_phases, f64, kernel_builder, uniform
from workloads import raw_kernels

# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None

W = register(Workload(
    name="flux",
    order=40,
    title="Face fluxes (2-D grid)",
    kind="kernels",
    description="flux = velocity * phi on an n x n grid, with the kernels indexing rows and columns in 2-D.",
    lesson="A 2-D kernel must map threads to memory the way the array is laid out: consecutive threads on "
           "consecutive columns (row-major) so loads coalesce. Bound by bandwidth, like every elementwise job.",
    size_unit="grid side n (n x n cells)",
    default_sizes=(64, 128, 256, 512, 1024, 2048, 4096),
    make_inputs=lambda n, dt, v, rng: (uniform(rng, (n, n), dt), uniform(rng, (n, n), dt, -1, 1)),
    reference=lambda inp: (lambda u, p: u * p)(*f64(*inp)),
    flops=lambda n: 1.0 * n * n,
    bytes_moved=lambda n, isz: 3.0 * n * n * isz,
    footprint=lambda n, isz: n * n * (3 * isz + 3 * 8) * 1.2,
    tolerance={"float32": 1e-6, "float64": 1e-14},
))


@W.implement("numpy")
def _numpy(inputs, ctx):
    u, p = inputs
    return lambda: u * p


@functools.cache
def _numba_kernel():
    import numba

    @numba.njit(parallel=True)
    def flux(u, p, out):
        nx, ny = out.shape
        for i in numba.prange(nx):
            for j in range(ny):
                out[i, j] = u[i, j] * p[i, j]
        return out
    return flux


@W.implement("numba")
def _numba(inputs, ctx):
    u, p = inputs
    out = np.empty_like(p)
    kernel = _numba_kernel()
    return lambda: kernel(u, p, out)


@W.implement("cupy")
def _cupy(inputs, ctx):
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda u, p, out: ctx.session.cp.multiply(u, p, out=out))


@functools.cache
def _cupy_fused():
    import cupy as cp
    return cp.ElementwiseKernel("T u, T p", "T r", "r = u * p", "flux_fused")


@W.implement("cupy-fused")
def _cupy_fused_impl(inputs, ctx):
    kernel = _cupy_fused()
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, lambda u, p, out: kernel(u, p, out))


@W.implement("cupy-raw")
def _cupy_raw(inputs, ctx):
    launch = raw_kernels.binary("flux", "xa * yb", ctx.dtype.name)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, launch)


BX, BY = 32, 8   # 32 threads along a row: one warp reads 32 consecutive cells


@kernel_builder
def _numba_cuda_kernels():

    @cuda.jit
    def one(u, p, out):
        j, i = cuda.grid(2)          # x -> column j (contiguous), y -> row i
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = u[i, j] * p[i, j]

    @cuda.jit
    def four(u, p, out):
        # Four rows per thread, blockDim.y apart; loads first, then products.
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        by = cuda.blockDim.y
        i = cuda.blockIdx.y * by * 4 + cuda.threadIdx.y
        nx, ny = out.shape
        if j >= ny:
            return
        if i + 3 * by < nx:
            u0 = u[i, j]
            u1 = u[i + by, j]
            u2 = u[i + 2 * by, j]
            u3 = u[i + 3 * by, j]
            p0 = p[i, j]
            p1 = p[i + by, j]
            p2 = p[i + 2 * by, j]
            p3 = p[i + 3 * by, j]
            out[i, j] = u0 * p0
            out[i + by, j] = u1 * p1
            out[i + 2 * by, j] = u2 * p2
            out[i + 3 * by, j] = u3 * p3
        else:
            for k in range(4):
                r = i + k * by
                if r < nx:
                    out[r, j] = u[r, j] * p[r, j]
    return one, four


def _blocks(shape, rows_per_thread):
    nx, ny = shape
    return ((ny + BX - 1) // BX, (nx + BY * rows_per_thread - 1) // (BY * rows_per_thread))


@W.implement("numba-cuda", note="2-D grid, one cell per thread")
def _numba_cuda(inputs, ctx):
    one, _ = _numba_cuda_kernels()
    stream = ctx.session.stream
    blocks = _blocks(inputs[0].shape, 1)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda u, p, out: one[blocks, (BX, BY), stream](u, p, out))


@W.implement("numba-cuda-x4", note="2-D grid, four rows per thread")
def _numba_cuda_x4(inputs, ctx):
    _, four = _numba_cuda_kernels()
    stream = ctx.session.stream
    blocks = _blocks(inputs[0].shape, 4)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda u, p, out: four[blocks, (BX, BY), stream](u, p, out))
