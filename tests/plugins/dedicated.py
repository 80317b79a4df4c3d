"""Backends that ask for an engine process of their own, as cudf-pandas does (tests/helpers.py):
``marked`` (prepared by helpers.mark_engine), ``unprepared`` (whose preparation fails) and
``plain`` (the shared engine); each session names the process it runs in."""
import numpy as np

from workbench.api import Workload, backend, register

backend("plain", session="helpers:ProcessNamingSession")
backend("marked", session="helpers:ProcessNamingSession", engine="helpers:mark_engine")
backend("unprepared", session="helpers:ProcessNamingSession", engine="helpers:fail_to_prepare")

W = register(Workload(
    name="where", title="Where", kind="kernels", description="y = 2 x, and which process ran it", lesson="none",
    size_unit="elements", default_sizes=(8,), make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 2, flops=lambda n: 0.0, bytes_moved=lambda n, i: 0.0,
    footprint=lambda n, i: 1024.0))

for name in ("plain", "marked", "unprepared"):
    W.implement(name)(lambda inputs, ctx: (lambda: inputs[0] * 2))
