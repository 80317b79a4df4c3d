"""A workload of known allocation, for the memory tests (tests/test_memory_truth.py): in each
variant a call holds at its peak ``one`` array of n elements, ``two`` at once, ``nothing``, or
one ``freed`` before it returns; NumPy, Numba and pandas, each returning its input's values."""
import functools

import numpy as np

from workbench.api import Workload, register

#: Arrays of n elements at a call's peak, by variant.
ARRAYS = {"one": 1, "two": 2, "nothing": 0, "freed": 1}

W = register(Workload(
    name="allocating", title="Allocating", kind="kernels", description="known allocations a call",
    lesson="none", size_unit="elements", default_sizes=(2 ** 18,), variants=tuple(ARRAYS),
    make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64), flops=lambda n: 0.0, bytes_moved=lambda n, i: 0.0,
    footprint=lambda n, i: 4.0 * n * i))


@W.implement("numpy")
def _numpy(inputs, ctx):
    x = inputs[0]
    if ctx.variant == "one":
        return lambda: x.copy()
    if ctx.variant == "two":
        def two():
            a, b = x.copy(), x.copy()
            return a if b is not None else None
        return two
    if ctx.variant == "freed":
        def freed():
            a = x.copy()
            x[0] = a[0]
            del a
            return x
        return freed
    return lambda: x


@functools.cache
def _kernels():
    import numba

    @numba.njit
    def one(x):
        return x.copy()

    @numba.njit
    def two(x):
        a = x.copy()
        b = x.copy()
        a[0] = b[0]           # both used: neither is left out by the compiler
        return a

    @numba.njit
    def nothing(x):
        return x

    @numba.njit
    def freed(x):
        a = x.copy()
        x[0] = a[0]
        return x
    return {"one": one, "two": two, "nothing": nothing, "freed": freed}


@W.implement("numba")
def _numba(inputs, ctx):
    kernel, x = _kernels()[ctx.variant], inputs[0]
    return lambda: kernel(x)


@W.implement("pandas")
def _pandas(inputs, ctx):
    import pandas as pd
    x = inputs[0]
    s = pd.Series(x, copy=False)
    if ctx.variant == "one":
        return lambda: s.to_numpy(copy=True)
    if ctx.variant == "two":
        def two():
            a, b = s.to_numpy(copy=True), (s * 1).to_numpy()
            return a if b is not None else None
        return two
    if ctx.variant == "freed":
        def freed():
            a = (s * 1).to_numpy()
            x[0] = a[0]
            del a
            return x
        return freed
    return lambda: s.to_numpy()


@W.implement("cudf")
def _cudf(inputs, ctx):
    """The same on the device through cuDF: its input uploaded once and held, each call's copies made
    by RMM (the allocator cuDF reads its statistics from), the result brought back."""
    import cudf
    from workbench.api import Phases
    # nan_as_null=False: by default cuDF scans a float array for NaN to turn them into nulls, with
    # a boolean column of one byte a row (isnan) alive beside the data, which the making's peak
    # rightly counts (21,014,024 B against 16,777,216 at 2^22 float32 on an H100). This file means
    # one held array per variant; the scan is cuDF's own work, not what it tests.
    s = cudf.Series(inputs[0], nan_as_null=False)
    held = [s]

    def compute():
        if ctx.variant == "one":
            held[0] = s.copy(deep=True)
        elif ctx.variant == "two":
            a, b = s.copy(deep=True), s.copy(deep=True)
            held[0] = a if b is not None else None
        elif ctx.variant == "freed":
            a = s.copy(deep=True)
            del a
            held[0] = s
        else:
            held[0] = s
    return Phases(compute=compute, d2h=lambda: held[0].to_numpy())
