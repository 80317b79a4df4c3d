"""CUDA C kernels for the ``cupy-raw`` backend, compiled by CuPy on first use.

The plain one-element-per-thread kernel moves 4 bytes per input per thread in
float32: too few bytes in flight to fill an H200's memory system (about 60 %
of the copy bandwidth, see docs/GPU.md).  These kernels load 16 bytes per
input per thread (``float4`` / ``double2``) and give each thread two such
vectors, loaded before either is used.
"""
from __future__ import annotations

import functools

_VEC = {"float32": ("float", "float4", 4), "float64": ("double", "double2", 2)}
_FIELDS = "xyzw"
PER_THREAD = 2          # vectors per thread
BLOCK = 256

_BINARY = r"""
extern "C" __global__ void {name}(const {T}* __restrict__ a, const {T}* __restrict__ b,
                                   {T}* __restrict__ r, long long n) {{
    const long long nvec = n / {W};
    const {V}* a4 = reinterpret_cast<const {V}*>(a);
    const {V}* b4 = reinterpret_cast<const {V}*>(b);
    {V}* r4 = reinterpret_cast<{V}*>(r);
    long long i = (long long)blockIdx.x * blockDim.x * {P} + threadIdx.x;
    {V} x[{P}], y[{P}];
    #pragma unroll
    for (int k = 0; k < {P}; ++k) {{
        long long j = i + (long long)k * blockDim.x;
        if (j < nvec) {{ x[k] = a4[j]; y[k] = b4[j]; }}
    }}
    #pragma unroll
    for (int k = 0; k < {P}; ++k) {{
        long long j = i + (long long)k * blockDim.x;
        if (j < nvec) {{ {V} o; {vector_body} r4[j] = o; }}
    }}
    // The last n % W elements, which do not fill a vector.
    long long t = nvec * {W} + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x == 0 && t < n) {{ {T} xa = a[t], yb = b[t]; r[t] = {scalar_expr}; }}
}}
"""


@functools.cache
def binary(name: str, expr: str, dtype: str):
    """A kernel computing ``r = expr(a, b)`` elementwise, ``expr`` written in ``xa`` and ``yb``.

    Returns ``launch(a, b, out)`` for contiguous CuPy arrays of ``dtype``.
    """
    import cupy as cp
    T, V, W = _VEC[dtype]
    fields = _FIELDS[:W]
    vector_body = " ".join(
        f"{{ {T} xa = x[k].{f}, yb = y[k].{f}; o.{f} = {expr}; }}" for f in fields)
    src = _BINARY.format(name=f"{name}_{T}", T=T, V=V, W=W, P=PER_THREAD, vector_body=vector_body,
                         scalar_expr=expr)
    kernel = cp.RawKernel(src, f"{name}_{T}")

    def launch(a, b, out) -> None:
        n = out.size
        per_block = BLOCK * W * PER_THREAD
        blocks = max(1, (n + per_block - 1) // per_block)
        kernel((blocks,), (BLOCK,), (a, b, out, cp.int64(n)))

    return launch


_HEAT = r"""
extern "C" __global__ void {name}(const {T}* __restrict__ u, {T}* __restrict__ v, int n, {T} alpha) {{
    // One column per thread, {R} rows per thread: the rows above and below stay in
    // registers as the thread walks down, so each cell is read from memory once.
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * {R};
    if (c >= n || r0 >= n) return;
    const bool edge_col = (c == 0 || c == n - 1);
    {T} up = r0 > 0 ? u[(long long)(r0 - 1) * n + c] : ({T})0;
    {T} mid = u[(long long)r0 * n + c];
    #pragma unroll
    for (int k = 0; k < {R}; ++k) {{
        const int r = r0 + k;
        if (r >= n) break;
        const long long i = (long long)r * n + c;
        const {T} down = r + 1 < n ? u[i + n] : ({T})0;
        if (edge_col || r == 0 || r == n - 1) {{
            v[i] = mid;
        }} else {{
            v[i] = mid + alpha * (up + down + u[i - 1] + u[i + 1] - ({T})4 * mid);
        }}
        up = mid;
        mid = down;
    }}
}}
"""
HEAT_ROWS = 8
HEAT_BLOCK = (128, 2)


@functools.cache
def heat_step(dtype: str):
    """One explicit heat step over an n x n grid (edges copied), as ``step(u, v, alpha)``."""
    import cupy as cp
    T = _VEC[dtype][0]
    kernel = cp.RawKernel(_HEAT.format(name=f"heat_{T}", T=T, R=HEAT_ROWS), f"heat_{T}")
    scalar = cp.float32 if dtype == "float32" else cp.float64

    def step(u, v, alpha: float) -> None:
        n = u.shape[0]
        bx, by = HEAT_BLOCK
        grid = ((n + bx - 1) // bx, (n + by * HEAT_ROWS - 1) // (by * HEAT_ROWS))
        kernel(grid, HEAT_BLOCK, (u, v, cp.int32(n), scalar(alpha)))

    return step
