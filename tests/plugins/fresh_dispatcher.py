"""One array of n elements a call, its Numba kernel made by the factory: for the memory tests
(tests/test_memory_truth.py, issue 35).

A user who writes ``@numba.njit`` inside the factory gets a new dispatcher each time the
implementation is made, so the first call of every made implementation compiles (about 1.7 MiB
resident at its peak, 2.7 MiB with ``parallel=True``, on the 2-core VM). The memory pass makes
the implementation anew: its figure must be what a steady call allocates, not that compilation.
``serial`` fills the array in a plain loop, ``parallel`` in a ``prange`` on Numba's threads."""
import numpy as np

from workbench.api import Workload, register

W = register(Workload(
    name="fresh_dispatcher", title="Fresh dispatcher", kind="kernels",
    description="one array a call, the Numba kernel compiled by each implementation made",
    lesson="none", size_unit="elements", default_sizes=(2 ** 18,), variants=("serial", "parallel"),
    # The size travels as an input: the call allocates the array, nothing of n elements is held.
    make_inputs=lambda n, dt, v, rng: (np.zeros(1, dtype=dt), n),
    reference=lambda inp: np.ones(inp[1]), flops=lambda n: 0.0, bytes_moved=lambda n, i: 0.0,
    footprint=lambda n, i: 2.0 * n * i))


@W.implement("numpy")
def _numpy(inputs, ctx):
    like, n = inputs

    def call():
        a = np.empty(n, like.dtype)
        a.fill(1)
        return a
    return call


@W.implement("numba")
def _numba(inputs, ctx):
    import numba
    like, n = inputs

    @numba.njit(parallel=ctx.variant == "parallel")       # a new dispatcher: its first call compiles
    def fill(like, n):
        a = np.empty(n, like.dtype)
        for i in numba.prange(n):
            a[i] = 1
        return a
    return lambda: fill(like, n)
