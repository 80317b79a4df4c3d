"""stencil: k explicit steps of the 2-D heat equation with a 5-point Laplacian."""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Phases, Workload, register
from workloads._common import f64, kernel_builder, uniform
from workloads import raw_kernels

STEPS = 10
ALPHA = 0.2   # explicit scheme is stable for alpha <= 0.25


def _numpy_step(u, v, a):
    v[1:-1, 1:-1] = u[1:-1, 1:-1] + a * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                         - 4 * u[1:-1, 1:-1])


def _heat(u0, steps, step):
    """Run ``steps`` steps from ``u0`` between two buffers whose edges hold ``u0``'s."""
    a, b = u0.copy(), u0.copy()
    src = u0
    for k in range(steps):
        dst = a if k % 2 == 0 else b
        step(src, dst)
        src = dst
    return src


def _reference(inputs):
    (u0,) = f64(*inputs)
    return _heat(u0, STEPS, lambda u, v: _numpy_step(u, v, ALPHA))


# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None

W = register(Workload(
    name="stencil",
    order=60,
    title="Heat equation (5-point stencil)",
    kind="kernels",
    description=f"{STEPS} explicit steps of the 2-D heat equation on an n x n grid (5-point Laplacian, "
                "fixed edges); the grid moves to the device once and stays there for every step.",
    lesson="Move once, compute many: a stencil reuses data that stays on the GPU, so the transfer is paid "
           "once for many steps. Written with array slices, every step makes temporaries and runs "
           "several kernels; one fused kernel per step reads each cell once.",
    size_unit="grid side n (n x n cells)",
    default_sizes=(64, 128, 256, 512, 1024, 2048, 4096),
    make_inputs=lambda n, dt, v, rng: (uniform(rng, (n, n), dt),),
    reference=_reference,
    flops=lambda n: 7.0 * max(n - 2, 0) ** 2 * STEPS,
    bytes_moved=lambda n, isz: 2.0 * n * n * isz * STEPS,
    device_footprint=lambda n, isz: 3.0 * n * n * isz,
    footprint=lambda n, isz: n * n * (4 * isz + 4 * 8 + 8 * 8) * 1.2,
    tolerance={"float32": 1e-5, "float64": 1e-13},
))


@W.implement("numpy", note="array slices (temporaries)")
def _numpy(inputs, ctx):
    (u0,) = inputs
    a = ctx.dtype.type(ALPHA)
    bufs = (u0.copy(), u0.copy())

    def run():
        src = u0
        for k in range(STEPS):
            dst = bufs[k % 2]
            _numpy_step(src, dst, a)
            src = dst
        return src
    return run


@functools.cache
def _numba_step():
    import numba

    @numba.njit(parallel=True)
    def step(u, v, a, four):
        n, m = u.shape
        for i in numba.prange(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + a * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - four * u[i, j])
    return step


@W.implement("numba")
def _numba(inputs, ctx):
    (u0,) = inputs
    step = _numba_step()
    a = ctx.dtype.type(ALPHA)
    four = ctx.dtype.type(4)   # an int literal would promote float32 math to float64
    bufs = (u0.copy(), u0.copy())

    def run():
        src = u0
        for k in range(STEPS):
            dst = bufs[k % 2]
            step(src, dst, a, four)
            src = dst
        return src
    return run


def _gpu_phases(ctx, u0, step):
    """Upload u0 once, ``STEPS`` device steps between two device buffers, download the last."""
    s = ctx.session
    pinned = ctx.host_memory == "pinned"
    host = s.host_buffer(u0, pinned)
    dev = [s.empty_device(u0.shape, u0.dtype) for _ in range(3)]
    host_out = s.empty_host(u0.shape, u0.dtype, pinned)
    last = [dev[0]]

    def compute():
        src = dev[0]
        for k in range(STEPS):
            dst = dev[1 + k % 2]
            step(src, dst)
            src = dst
        last[0] = src

    return Phases(h2d=lambda: s.upload(host, dev[0]), compute=compute,
                  d2h=lambda: s.download(last[0], host_out), close=dev.clear)


@W.implement("cupy", note="array slices, as NumPy code ports over")
def _cupy(inputs, ctx):
    a = ctx.dtype.type(ALPHA)

    def step(u, v):
        v[0, :] = u[0, :]          # the device buffers start empty: carry the fixed edges along
        v[-1, :] = u[-1, :]
        v[:, 0] = u[:, 0]
        v[:, -1] = u[:, -1]
        _numpy_step(u, v, a)
    return _gpu_phases(ctx, inputs[0], step)


@functools.cache
def _cupy_fused_kernel():
    import cupy as cp
    return cp.ElementwiseKernel(
        "raw T u, int32 n, T a", "T v",
        """
        const int r = i / n, c = i - r * n;
        if (r == 0 || c == 0 || r == n - 1 || c == n - 1) v = u[i];
        else v = u[i] + a * (u[i - n] + u[i + n] + u[i - 1] + u[i + 1] - (T)4 * u[i]);
        """, "heat_step_fused")


@W.implement("cupy-fused", note="one ElementwiseKernel per step, a cell per thread")
def _cupy_fused(inputs, ctx):
    kernel = _cupy_fused_kernel()
    a = ctx.dtype.type(ALPHA)
    n = np.int32(inputs[0].shape[0])
    return _gpu_phases(ctx, inputs[0], lambda u, v: kernel(u, n, a, v))


@W.implement("cupy-raw", note="RawKernel, a column strip of 8 rows per thread")
def _cupy_raw(inputs, ctx):
    step = raw_kernels.heat_step(ctx.dtype.name)
    return _gpu_phases(ctx, inputs[0], lambda u, v: step(u, v, ALPHA))


BX, BY, ROWS = 32, 8, 8
STRIP = ROWS + 2   # Numba needs local array sizes as plain module constants


@kernel_builder
def _numba_cuda_kernels():

    @cuda.jit
    def one(u, v, a, four):
        j, i = cuda.grid(2)
        n, m = u.shape
        if i < n and j < m:
            if i == 0 or j == 0 or i == n - 1 or j == m - 1:
                v[i, j] = u[i, j]
            else:
                v[i, j] = u[i, j] + a * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - four * u[i, j])

    return one


@kernel_builder
def _numba_cuda_strip(dtype: str):
    """A strip of ROWS rows per thread, every load issued before the first store.

    Numba cannot tell the compiler that ``u`` and ``v`` do not overlap (CUDA C's
    ``__restrict__``), so a load written after a store must wait for it: a loop that
    loads, computes and stores row by row keeps one row's loads in flight at a time
    (61 % of the copy bandwidth in float32 on an H200). Loading the whole strip into
    registers first puts 3 * ROWS + 2 loads in flight per thread.
    """
    from numba import float32, float64
    nbtype = float32 if dtype == "float32" else float64

    @cuda.jit
    def strip(u, v, a, four):
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        i0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * ROWS
        n, m = u.shape
        if j >= m or i0 >= n:
            return
        if 0 < j < m - 1 and 0 < i0 and i0 + ROWS < n:
            c = cuda.local.array(STRIP, nbtype)
            left = cuda.local.array(ROWS, nbtype)
            right = cuda.local.array(ROWS, nbtype)
            for k in range(STRIP):
                c[k] = u[i0 - 1 + k, j]
            for k in range(ROWS):
                left[k] = u[i0 + k, j - 1]
                right[k] = u[i0 + k, j + 1]
            for k in range(ROWS):
                v[i0 + k, j] = c[k + 1] + a * (c[k] + c[k + 2] + left[k] + right[k] - four * c[k + 1])
            return
        for k in range(ROWS):       # strips that touch an edge: cell by cell
            i = i0 + k
            if i >= n:
                return
            if i == 0 or j == 0 or i == n - 1 or j == m - 1:
                v[i, j] = u[i, j]
            else:
                v[i, j] = u[i, j] + a * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - four * u[i, j])
    return strip


@W.implement("numba-cuda", note="2-D grid, a cell per thread")
def _numba_cuda(inputs, ctx):
    one = _numba_cuda_kernels()
    n = inputs[0].shape[0]
    a, four = ctx.dtype.type(ALPHA), ctx.dtype.type(4)
    stream = ctx.session.stream
    blocks = ((n + BX - 1) // BX, (n + BY - 1) // BY)
    return _gpu_phases(ctx, inputs[0], lambda u, v: one[blocks, (BX, BY), stream](u, v, a, four))


@W.implement("numba-cuda-x4", note="2-D grid, a strip of ROWS rows per thread")
def _numba_cuda_x4(inputs, ctx):
    rows = _numba_cuda_strip(ctx.dtype.name)
    n = inputs[0].shape[0]
    a, four = ctx.dtype.type(ALPHA), ctx.dtype.type(4)
    stream = ctx.session.stream
    blocks = ((n + BX - 1) // BX, (n + BY * ROWS - 1) // (BY * ROWS))
    return _gpu_phases(ctx, inputs[0], lambda u, v: rows[blocks, (BX, BY), stream](u, v, a, four))
