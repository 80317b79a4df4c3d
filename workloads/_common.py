"""Helpers shared by the workload modules (not a workload itself)."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from workbench.catalog.workloads import Context, Phases

BLOCK = 256   # threads per block for 1-D GPU kernels: a multiple of the warp, good occupancy on every GPU


def uniform(rng: np.random.Generator, shape: Any, dtype: np.dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """Seeded uniform values generated directly in ``dtype`` (no float64 copy for float32)."""
    a = rng.random(shape, dtype=np.dtype(dtype))
    if (low, high) != (0.0, 1.0):
        a *= dtype.type(high - low)
        a += dtype.type(low)
    return a


def f64(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64) for a in arrays]


def device_phases(ctx: Context, inputs: Sequence[np.ndarray], out_shape: Any, out_dtype: Any,
                  compute: Callable[..., Any]) -> Phases:
    """Phases of a GPU array implementation: upload ``inputs``, ``compute(*dev_inputs, dev_out)``, download.

    ``compute`` writes into ``dev_out`` or returns a device array of the same shape.

    Device buffers and (for pinned transfers) page-locked host buffers are
    allocated here, before timing, and reused by every repeat; a repeat's copy
    phases move exactly the inputs and the result, as a program would.
    """
    s = ctx.session
    pinned = ctx.host_memory == "pinned"
    hosts = [s.host_buffer(np.ascontiguousarray(a), pinned) for a in inputs]
    dev_in = [s.empty_device(h.shape, h.dtype) for h in hosts]
    dev_out = s.empty_device(out_shape, out_dtype)
    host_out = s.empty_host(out_shape, out_dtype, pinned)

    def h2d() -> None:
        for h, d in zip(hosts, dev_in):
            s.upload(h, d)

    result = [dev_out]

    def run() -> None:
        made = compute(*dev_in, dev_out)
        if made is not None:      # a library call that returns a new array (cuFFT) writes no ``out``
            result[0] = made

    def d2h() -> np.ndarray:
        return s.download(result[0], host_out)

    def close() -> None:
        dev_in.clear()
        hosts.clear()

    return Phases(compute=run, h2d=h2d, d2h=d2h, close=close)


def grid(n: int, per_block: int = BLOCK) -> int:
    return max(1, (n + per_block - 1) // per_block)


@functools.cache
def numba_cuda():
    """Import numba.cuda once, on first use by a kernel builder."""
    from numba import cuda
    return cuda


def kernel_builder(build: Callable[..., Any]) -> Callable[..., Any]:
    """Run a module's Numba CUDA kernel builder once per set of arguments, on first use.

    Kernels say ``cuda.grid(1)``, and Numba reads ``cuda`` from the module's globals when it
    compiles them; numba.cuda is imported only when a GPU kernel is wanted, so the builder's
    module gets it here, just before the builder runs (each module keeps ``cuda = None``).
    """
    @functools.cache
    @functools.wraps(build)
    def built(*args: Any) -> Any:
        build.__globals__["cuda"] = numba_cuda()
        return build(*args)
    return built
