"""Helpers shared by the dataframe workloads (not a workload itself)."""
from __future__ import annotations

import numpy as np

from workbench.catalog.accelerated import accelerated  # noqa: F401 - the dataframe workloads' cudf-pandas
from workbench.catalog.workloads import Phases
from workloads._common import uniform

KEYS = 1000


def make_frame(n: int, dtype: np.dtype, rng: np.random.Generator):
    """N rows: an int64 key in [0, KEYS), a value of ``dtype`` and a row id."""
    import pandas as pd
    return pd.DataFrame({
        "key": rng.integers(0, KEYS, n, dtype=np.int64),
        "value": uniform(rng, n, dtype),
        "id": np.arange(n, dtype=np.int64),
    })


def frame_bytes(n: int, isz: int) -> float:
    return n * (8 + isz + 8)


def cudf_phases(frames, op, ctx) -> Phases:
    """pandas in, cuDF on the device, pandas out: conversions are the transfer phases."""
    import cudf
    dev = [None] * len(frames)
    out = [None]

    def h2d():
        for k, f in enumerate(frames):
            dev[k] = cudf.from_pandas(f)

    def compute():
        out[0] = op(*dev)

    def d2h():
        res = out[0]
        return res.to_pandas() if hasattr(res, "to_pandas") else res

    def close():
        dev.clear()
        out.clear()

    return Phases(h2d=h2d, compute=compute, d2h=d2h, close=close)
