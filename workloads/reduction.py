"""reduction: the sum of N values."""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import BLOCK, kernel_builder, uniform
from workbench.catalog.workloads import Phases

CHUNK = 4096          # Numba CPU: each chunk summed in order, chunk sums added after
GPU_BLOCKS = 1024     # Numba CUDA: first pass leaves one partial per block


# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None

W = register(Workload(
    name="reduction",
    order=50,
    title="Reduction (sum)",
    kind="kernels",
    description="The sum of N random values.",
    lesson="A reduction reads every value once and writes one number: bound by bandwidth, and it needs "
           "cooperation between threads (shared memory, a second pass). The result is tiny, so the "
           "device-to-host copy is free, but the input still has to get to the GPU.",
    size_unit="values N",
    default_sizes=tuple(2 ** k for k in range(10, 25, 2)),
    make_inputs=lambda n, dt, v, rng: (uniform(rng, n, dt),),
    reference=lambda inp: np.sum(inp[0], dtype=np.float64),
    flops=lambda n: 1.0 * n,
    bytes_moved=lambda n, isz: 1.0 * n * isz,
    footprint=lambda n, isz: n * (isz + 8) * 1.2,
    tolerance={"float32": 1e-4, "float64": 1e-11},
    compare=lambda res, ref: abs(float(np.asarray(res).reshape(-1)[0]) - float(ref)) / max(abs(float(ref)), 1e-300),
))


@W.implement("numpy", note="pairwise summation")
def _numpy(inputs, ctx):
    (x,) = inputs
    return lambda: x.sum()


@functools.cache
def _numba_kernel():
    import numba

    @numba.njit(parallel=True)
    def chunked_sum(x):
        # A plain prange sum accumulates each thread's share in one float32 register and loses
        # digits at large N; summing fixed chunks first keeps float32 honest, as a GPU's tree does.
        nchunks = (x.size + CHUNK - 1) // CHUNK
        partial = np.zeros(nchunks, dtype=x.dtype)
        for c in numba.prange(nchunks):
            acc = x.dtype.type(0)
            for i in range(c * CHUNK, min((c + 1) * CHUNK, x.size)):
                acc += x[i]
            partial[c] = acc
        return partial.sum()
    return chunked_sum


@W.implement("numba", note="prange over chunks")
def _numba(inputs, ctx):
    (x,) = inputs
    kernel = _numba_kernel()
    return lambda: kernel(x)


def _gpu_phases(ctx, x, reduce):
    s = ctx.session
    pinned = ctx.host_memory == "pinned"
    host = s.host_buffer(x, pinned)
    dev = s.empty_device(x.shape, x.dtype)
    out = [None]
    return Phases(h2d=lambda: s.upload(host, dev),
                  compute=lambda: out.__setitem__(0, reduce(dev)),
                  d2h=lambda: s.download(out[0]))


@W.implement("cupy", note="CUB device reduction")
def _cupy(inputs, ctx):
    return _gpu_phases(ctx, inputs[0], lambda d: d.sum())


@kernel_builder
def _numba_cuda_kernel(dtype: str):
    from numba import float32, float64
    nbtype = float32 if dtype == "float32" else float64

    @cuda.jit
    def block_sums(x, partial):
        # Grid-stride accumulation per thread, then a shared-memory tree per block.
        sm = cuda.shared.array(BLOCK, nbtype)
        tid = cuda.threadIdx.x
        acc = nbtype(0)
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            acc += x[i]
            i += stride
        sm[tid] = acc
        cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if tid < step:
                sm[tid] += sm[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = sm[0]
    return block_sums


@W.implement("numba-cuda", note="shared-memory tree per block, two passes")
def _numba_cuda(inputs, ctx):
    (x,) = inputs
    kernel = _numba_cuda_kernel(ctx.dtype.name)
    s = ctx.session
    blocks = min(GPU_BLOCKS, max(1, (x.size + BLOCK - 1) // BLOCK))
    partial = s.empty_device((blocks,), x.dtype)
    total = s.empty_device((1,), x.dtype)

    def reduce(dev):
        kernel[blocks, BLOCK, s.stream](dev, partial)
        kernel[1, BLOCK, s.stream](partial, total)
        return total
    return _gpu_phases(ctx, x, reduce)
