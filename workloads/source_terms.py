"""source_terms: result = coeff * phi**2 over N cells, a finite-volume solver's elementwise kernel."""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import BLOCK, device_phases, f64, grid, kernel_builder, uniform
from workloads import raw_kernels

# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None

W = register(Workload(
    name="source_terms",
    order=30,
    title="Source terms (elementwise)",
    kind="kernels",
    description="result = coeff * phi**2 for every cell: the pointwise source term of a finite-volume solver.",
    lesson="Elementwise work is bound by memory bandwidth, not arithmetic: the GPU wins big once the arrays "
           "are large, loses on small ones to launch and transfer costs, and how the kernel is written "
           "(several kernels with temporaries, one fused kernel, wide loads) decides how much of the "
           "bandwidth it gets.",
    size_unit="cells N",
    default_sizes=tuple(2 ** k for k in range(10, 25, 2)),
    make_inputs=lambda n, dt, v, rng: (uniform(rng, n, dt), uniform(rng, n, dt)),
    reference=lambda inp: (lambda c, p: c * p ** 2)(*f64(*inp)),
    flops=lambda n: 2.0 * n,
    bytes_moved=lambda n, isz: 3.0 * n * isz,
    footprint=lambda n, isz: n * (3 * isz + 2 * 8 + 8) * 1.2,
    tolerance={"float32": 1e-6, "float64": 1e-14},
))


@W.implement("numpy")
def _numpy(inputs, ctx):
    coeff, phi = inputs
    return lambda: coeff * phi ** 2


@functools.cache
def _numba_kernel():
    import numba

    @numba.njit(parallel=True)
    def source_terms(coeff, phi, out):
        for i in numba.prange(out.size):
            out[i] = coeff[i] * phi[i] * phi[i]
        return out
    return source_terms


@W.implement("numba")
def _numba(inputs, ctx):
    coeff, phi = inputs
    out = np.empty_like(phi)
    kernel = _numba_kernel()
    return lambda: kernel(coeff, phi, out)


@W.implement("cupy", note="two kernels: phi**2 into a temporary, then the product")
def _cupy(inputs, ctx):
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda c, p, out: ctx.session.cp.multiply(c, p ** 2, out=out))


@functools.cache
def _cupy_fused():
    import cupy as cp
    return cp.ElementwiseKernel("T c, T p", "T r", "r = c * p * p", "source_terms_fused")


@W.implement("cupy-fused")
def _cupy_fused_impl(inputs, ctx):
    kernel = _cupy_fused()
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, lambda c, p, out: kernel(c, p, out))


@W.implement("cupy-raw")
def _cupy_raw(inputs, ctx):
    launch = raw_kernels.binary("source_terms", "xa * yb * yb", ctx.dtype.name)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, launch)


@kernel_builder
def _numba_cuda_kernels():

    @cuda.jit
    def one(coeff, phi, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = coeff[i] * phi[i] * phi[i]

    @cuda.jit
    def four(coeff, phi, out):
        # Four elements per thread, a block apart so each load stays coalesced;
        # all eight loads are issued before the first product needs them.
        bd = cuda.blockDim.x
        i = cuda.blockIdx.x * bd * 4 + cuda.threadIdx.x
        n = out.size
        if i + 3 * bd < n:
            c0 = coeff[i]
            c1 = coeff[i + bd]
            c2 = coeff[i + 2 * bd]
            c3 = coeff[i + 3 * bd]
            p0 = phi[i]
            p1 = phi[i + bd]
            p2 = phi[i + 2 * bd]
            p3 = phi[i + 3 * bd]
            out[i] = c0 * p0 * p0
            out[i + bd] = c1 * p1 * p1
            out[i + 2 * bd] = c2 * p2 * p2
            out[i + 3 * bd] = c3 * p3 * p3
        else:
            for k in range(4):
                j = i + k * bd
                if j < n:
                    out[j] = coeff[j] * phi[j] * phi[j]
    return one, four


@W.implement("numba-cuda")
def _numba_cuda(inputs, ctx):
    one, _ = _numba_cuda_kernels()
    stream = ctx.session.stream
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda c, p, out: one[grid(out.size), BLOCK, stream](c, p, out))


@W.implement("numba-cuda-x4")
def _numba_cuda_x4(inputs, ctx):
    _, four = _numba_cuda_kernels()
    stream = ctx.session.stream
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda c, p, out: four[grid(out.size, 4 * BLOCK), BLOCK, stream](c, p, out))
