"""spmv: y = A x with A the CSR matrix of a finite-volume Laplacian on a 2-D or 3-D grid.

The size is the number of rows (unknowns) N, exactly: the grid is the most
nearly square (2-D) or cubic (3-D) one with N cells, so the 2-D and 3-D
variants share an x axis and every count is of the matrix actually built.
A power of two gives 2^a x 2^a or 2^a x 2^(a+1) in 2-D; a prime gives a
1 x N strip (still a Laplacian, with shorter rows; its counts say so).
"""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import BLOCK, device_phases, f64, grid, kernel_builder, uniform

WARP = 32
INT32_MAX = 2 ** 31 - 1

# numba.cuda, bound by the kernel builders on first use: a module global, as Numba (and its
# simulator) expect kernels to see it, without importing Numba when workloads are listed.
cuda = None


def _dims(variant: str) -> int:
    return 3 if variant == "3d" else 2


def _largest_divisor_at_most(n: int, k: int) -> int:
    for d in range(max(1, min(k, n)), 0, -1):
        if n % d == 0:
            return d
    return 1


def _iroot(n: int, dims: int) -> int:
    r = int(round(n ** (1.0 / dims)))
    while r ** dims > n:
        r -= 1
    while (r + 1) ** dims <= n:
        r += 1
    return r


@functools.lru_cache(maxsize=256)
def grid_shape(n: int, dims: int) -> tuple[int, ...]:
    """The most nearly square/cubic grid with exactly ``n`` cells, smallest side first."""
    if dims == 1:
        return (n,)
    side = _largest_divisor_at_most(n, _iroot(n, dims))
    return (side, *grid_shape(n // side, dims - 1))


def nonzeros(shape: tuple[int, ...]) -> int:
    """Diagonal plus two entries per interior face (each face couples two cells)."""
    n = math.prod(shape)
    faces = sum((m - 1) * (n // m) for m in shape)
    return n + 2 * faces


def _index_dtype(nnz: int) -> np.dtype:
    # int32 as SciPy and cuSPARSE prefer; int64 only when the entries no longer fit
    return np.dtype(np.int32 if nnz <= INT32_MAX else np.int64)


def laplacian_csr(n: int, dims: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, indices, indptr) of the finite-volume Laplacian with zero-value (Dirichlet) walls.

    Each row holds 2*dims on the diagonal and -1 for each neighbour, columns sorted; rows at a wall
    have fewer entries.  Built one offset at a time, so the temporaries stay a few N-sized arrays.
    """
    shape = grid_shape(n, dims)
    strides = [math.prod(shape[k + 1:]) for k in range(dims)]      # C order: the last axis is contiguous
    rows = np.arange(n, dtype=np.int64)
    # (column offset, rows that have that neighbour), in increasing column order
    entries: list[tuple[int, np.ndarray | None]] = []
    for stride, extent in zip(strides, shape):                       # the far neighbours first
        entries.append((-stride, (rows // stride) % extent > 0))
    entries.append((0, None))
    for stride, extent in reversed(list(zip(strides, shape))):
        entries.append((stride, (rows // stride) % extent < extent - 1))
    counts = np.ones(n, dtype=np.int64)
    for _, has in entries:
        if has is not None:
            counts += has
    nnz = int(counts.sum())
    idx = _index_dtype(nnz)
    indptr = np.zeros(n + 1, dtype=idx)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(nnz, dtype=idx)
    data = np.empty(nnz, dtype=dtype)
    slot = indptr[:-1].astype(np.int64)             # the next free entry of each row
    for offset, has in entries:
        r = rows if has is None else rows[has]
        at = slot[r]
        indices[at] = r + offset
        data[at] = 2 * dims if offset == 0 else -1
        slot[r] += 1
    return data, indices, indptr


def _inputs(n, dt, variant, rng):
    data, indices, indptr = laplacian_csr(n, _dims(variant), dt)
    return data, indices, indptr, uniform(rng, n, dt, -1.0, 1.0)


def _reference(inputs):
    from scipy import sparse
    data, indices, indptr, x = inputs
    n = x.size
    (d64, x64) = f64(data, x)
    return sparse.csr_array((d64, indices, indptr), shape=(n, n)) @ x64


def _counts(n: int, itemsize: int, variant: str) -> tuple[float, float]:
    """FLOPs (a multiply and an add per entry) and bytes: every CSR array read once, x read once
    (a perfect cache), y written once."""
    nnz = nonzeros(grid_shape(n, _dims(variant)))
    isz_index = _index_dtype(nnz).itemsize
    return 2.0 * nnz, float(nnz * (itemsize + isz_index) + (n + 1) * isz_index + 2 * n * itemsize)


W = register(Workload(
    name="spmv",
    order=80,
    title="Sparse matrix-vector product (CSR)",
    kind="kernels",
    description="y = A x with A the CSR matrix of the finite-volume Laplacian (5-point in 2-D, 7-point in "
                "3-D, Dirichlet walls) on the most nearly square or cubic grid of exactly N cells.",
    lesson="A sparse product reads each matrix entry once and does two flops with it: it is bound by "
           "memory bandwidth, and by how well the reads of x through the column indices hit the cache. "
           "cuSPARSE is the bar; one row per thread is simple and good on short rows; a warp per row "
           "leaves most of its 32 lanes idle on a 5- or 7-entry row, which is the lesson.",
    size_unit="rows N (2-D: 2^a x 2^a or 2^a x 2^(a+1) cells for a power of two)",
    default_sizes=tuple(2 ** k for k in range(10, 23, 2)),
    make_inputs=_inputs,
    reference=_reference,
    flops=lambda n: _counts(n, 8, "2d")[0],                 # 2-D; the engine asks ``counts`` per variant
    bytes_moved=lambda n, isz: _counts(n, isz, "2d")[1],
    counts=_counts,
    # the 3-D matrix (7 entries a row) with its int64 build temporaries, x, y and the float64 reference
    footprint=lambda n, isz: (7 * n * (isz + 4 + 8) + n * (6 * 8 + 3 * isz + 2 * 8)) * 1.3,
    tolerance={"float32": 1e-5, "float64": 1e-13},
    variants=("2d", "3d"),
))


@W.implement("scipy", note="scipy.sparse csr_array @ x (compiled, one thread)")
def _scipy(inputs, ctx):
    from scipy import sparse
    data, indices, indptr, x = inputs
    a = sparse.csr_array((data, indices, indptr), shape=(x.size, x.size))
    return lambda: a @ x


@functools.cache
def _numba_kernel():
    import numba

    @numba.njit(parallel=True)
    def csr_matvec(data, indices, indptr, x, y):
        for i in numba.prange(y.size):
            acc = y.dtype.type(0)
            for j in range(indptr[i], indptr[i + 1]):
                acc += data[j] * x[indices[j]]
            y[i] = acc
        return y
    return csr_matvec


@W.implement("numba", note="prange over rows")
def _numba(inputs, ctx):
    data, indices, indptr, x = inputs
    y = np.empty_like(x)
    kernel = _numba_kernel()
    return lambda: kernel(data, indices, indptr, x, y)


@W.implement("cupy", note="cupyx.scipy.sparse csr_matrix @ x: cuSPARSE SpMV")
def _cupy(inputs, ctx):
    n = inputs[3].size
    matrix = []

    def spmv(data, indices, indptr, x, out):
        if not matrix:
            # Wraps the device buffers (no copy), on the first call, once they hold the matrix: later
            # uploads refill the same buffers. cuSPARSE's descriptors and workspace are made per call,
            # as a program that writes A @ x gets them.
            from cupyx.scipy import sparse
            matrix.append(sparse.csr_matrix((data, indices, indptr), shape=(n, n), copy=False))
        return matrix[0] @ x

    phases = device_phases(ctx, inputs, (n,), inputs[3].dtype, spmv)
    # The matrix holds the input buffers: let it go with them, so the pool can free them at the point's end.
    return dataclasses.replace(phases, close=lambda: (matrix.clear(), phases.close()))


@kernel_builder
def _numba_cuda_kernels():

    @cuda.jit
    def row_per_thread(data, indices, indptr, x, y, zero):
        # Neighbouring threads walk neighbouring rows: their reads of a 5- or 7-entry row are a few
        # words apart, so a warp's loads share cache lines without being fully coalesced.
        i = cuda.grid(1)
        if i < y.size:
            acc = zero
            for j in range(indptr[i], indptr[i + 1]):
                acc += data[j] * x[indices[j]]
            y[i] = acc

    @cuda.jit
    def warp_per_row(data, indices, indptr, x, y, zero):
        # Lane k of the warp takes entries k, k+32, ... of the row (coalesced), then the lanes' sums
        # are combined by shuffles. Every lane joins the shuffles, also past the last row, because
        # shfl_down_sync with a full mask needs the whole warp.
        row = cuda.grid(1) // WARP
        lane = cuda.threadIdx.x % WARP
        acc = zero
        if row < y.size:
            for j in range(indptr[row] + lane, indptr[row + 1], WARP):
                acc += data[j] * x[indices[j]]
        offset = WARP // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
            offset //= 2
        if lane == 0 and row < y.size:
            y[row] = acc
    return row_per_thread, warp_per_row


def _numba_cuda_phases(inputs, ctx, kernel, threads_per_row: int):
    stream = ctx.session.stream
    zero = ctx.dtype.type(0)
    n = inputs[3].size
    blocks = grid(n * threads_per_row)
    return device_phases(ctx, inputs, (n,), inputs[3].dtype,
                         lambda d, i, p, x, y: kernel[blocks, BLOCK, stream](d, i, p, x, y, zero))


@W.implement("numba-cuda", note="one row per thread")
def _numba_cuda(inputs, ctx):
    return _numba_cuda_phases(inputs, ctx, _numba_cuda_kernels()[0], 1)


@W.implement("numba-cuda-warp", note="one warp (32 threads) per row, combined by shuffles")
def _numba_cuda_warp(inputs, ctx):
    return _numba_cuda_phases(inputs, ctx, _numba_cuda_kernels()[1], WARP)
