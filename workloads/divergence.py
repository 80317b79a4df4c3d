"""divergence: a loop whose trip count depends on each element's value."""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import BLOCK, device_phases, grid, kernel_builder, uniform

MAX_TRIPS = 256
DECAY = 0.5


def _inputs(n, dt, variant, rng):
    x = uniform(rng, n, dt)
    if variant == "sorted":
        x.sort()
    return (x,)


def _trips(x):
    return 1 + np.floor(x * MAX_TRIPS).astype(np.int64).clip(0, MAX_TRIPS - 1)


def _reference(inputs):
    # y <- DECAY * y + x, t times from y = 0, has the closed form x (1 - DECAY^t) / (1 - DECAY).
    x = inputs[0].astype(np.float64)
    return x * (1 - DECAY ** _trips(inputs[0])) / (1 - DECAY)


# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None

W = register(Workload(
    name="divergence",
    order=70,
    title="Branch divergence",
    kind="kernels",
    description=f"For each element x in [0, 1), repeat y = {DECAY} y + x  1 + floor({MAX_TRIPS} x) times. "
                "Run on the same values in random order and sorted.",
    lesson="GPU threads run in warps of 32 that step together: when their loop counts differ, the warp "
           "runs as long as its longest thread. On random input every warp pays for the maximum; sorted, "
           "neighbours agree and the same work runs about twice as fast. The CPU hardly cares.",
    size_unit="elements N",
    default_sizes=tuple(2 ** k for k in range(10, 23, 2)),
    make_inputs=_inputs,
    reference=_reference,
    flops=lambda n: 2.0 * n * (MAX_TRIPS + 1) / 2,
    bytes_moved=lambda n, isz: 2.0 * n * isz,
    footprint=lambda n, isz: n * (2 * isz + 5 * 8) * 1.2,
    tolerance={"float32": 1e-5, "float64": 1e-13},
    variants=("random", "sorted"),
))


@W.implement("numpy", note="vectorised: every element steps through all iterations under a mask")
def _numpy(inputs, ctx):
    (x,) = inputs
    trips = _trips(x)
    decay = ctx.dtype.type(DECAY)

    def run():
        y = np.zeros_like(x)
        for t in range(MAX_TRIPS):
            active = trips > t
            if not active.any():
                break
            np.copyto(y, y * decay + x, where=active)
        return y
    return run


@functools.cache
def _numba_kernel():
    import numba

    @numba.njit(parallel=True)
    def loop(x, out, decay, max_trips):
        for i in numba.prange(x.size):
            t = 1 + min(int(x[i] * max_trips), max_trips - 1)
            y = x.dtype.type(0)
            for _ in range(t):
                y = decay * y + x[i]
            out[i] = y
        return out
    return loop


@W.implement("numba", note="prange, a data-dependent loop per element")
def _numba(inputs, ctx):
    (x,) = inputs
    out = np.empty_like(x)
    kernel = _numba_kernel()
    decay = ctx.dtype.type(DECAY)
    return lambda: kernel(x, out, decay, MAX_TRIPS)


@W.implement("cupy", note="the NumPy code on the GPU: masked steps, one kernel each")
def _cupy(inputs, ctx):
    cp = ctx.session.cp
    decay = ctx.dtype.type(DECAY)

    def run(x, out):
        trips = 1 + cp.minimum((x * MAX_TRIPS).astype(cp.int32), MAX_TRIPS - 1)
        out.fill(0)
        for t in range(MAX_TRIPS):
            cp.copyto(out, out * decay + x, where=trips > t)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, run)


@functools.cache
def _cupy_loop():
    import cupy as cp
    return cp.ElementwiseKernel(
        "T x, T decay, int32 max_trips", "T y",
        """
        int t = 1 + min((int)(x * max_trips), max_trips - 1);
        T acc = 0;
        for (int k = 0; k < t; ++k) acc = decay * acc + x;
        y = acc;
        """, "divergent_loop")


@W.implement("cupy-fused", note="one ElementwiseKernel with the loop inside")
def _cupy_fused(inputs, ctx):
    kernel = _cupy_loop()
    decay = ctx.dtype.type(DECAY)
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda x, out: kernel(x, decay, np.int32(MAX_TRIPS), out))


@kernel_builder
def _numba_cuda_kernel():

    @cuda.jit
    def loop(x, out, decay, max_trips):
        i = cuda.grid(1)
        if i < x.size:
            t = 1 + min(int(x[i] * max_trips), max_trips - 1)
            y = x[i] - x[i]        # zero of x's dtype
            for _ in range(t):
                y = decay * y + x[i]
            out[i] = y
    return loop


@W.implement("numba-cuda", note="one element per thread, a data-dependent loop")
def _numba_cuda(inputs, ctx):
    kernel = _numba_cuda_kernel()
    decay = ctx.dtype.type(DECAY)
    stream = ctx.session.stream
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype,
                         lambda x, out: kernel[grid(x.size), BLOCK, stream](x, out, decay, MAX_TRIPS))
