"""Synthetic workloads of known behaviour, for testing the engine itself."""
from __future__ import annotations

import time

import numpy as np

from workbench.registry import Workload


def busy_wait(seconds: float) -> None:
    """Spin for ``seconds``: a computation of known duration (no sleep, no scheduler wake-up jitter)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def synthetic(name: str = "synthetic", **overrides) -> Workload:
    fields = dict(
        name=name, title="Synthetic", kind="kernels", description="a test workload", lesson="none",
        size_unit="elements", default_sizes=(8,),
        make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
        reference=lambda inp: inp[0].astype(np.float64) * 2,
        flops=lambda n: float(n), bytes_moved=lambda n, isz: 2.0 * n * isz,
        footprint=lambda n, isz: n * isz * 4,
    )
    fields.update(overrides)
    return Workload(**fields)
