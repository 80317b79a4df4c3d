"""Helpers shared by the dataframe workloads (not a workload itself)."""
from __future__ import annotations

import numpy as np

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


def accelerated(pandas_factory):
    """The cudf-pandas implementation: ``pandas_factory`` itself, unchanged, on frames that
    cudf.pandas holds on the GPU. So that its figures compare with cuDF's (pandas in, pandas out),
    the frames are made in the h2d phase from host columns, as a program under the accelerator
    makes them (``pd.DataFrame`` of NumPy arrays), and the result is brought back as a pandas
    object in d2h: without that, its end-to-end was the pandas calls alone on data already on the
    GPU, beside a cuDF end-to-end that paid both conversions (a speed-up chart 7x in its favour)."""
    def factory(inputs, ctx):
        # At run time: the GPU sessions load when a sweep on their backend starts (workbench.measure.gpu).
        from workbench.measure.gpu.cudf_pandas import real_pandas
        hosts = real_pandas(inputs)            # plain pandas copies on the host, made once, untimed
        hosts = hosts if isinstance(hosts, tuple) else (hosts,)
        held: dict = {}

        def h2d():
            held["run"] = pandas_factory(tuple(_through_the_accelerator(h) for h in hosts), ctx)

        def compute():
            held["out"] = held["run"]()

        def d2h():
            return real_pandas(held["out"])

        def close():
            held.clear()

        return Phases(h2d=h2d, compute=compute, d2h=d2h, close=close)

    factory.pandas_factory = pandas_factory
    return factory


def _through_the_accelerator(host):
    """A frame of the running process's pandas (cudf.pandas's proxies, on the GPU) with the
    columns and index of the plain pandas frame ``host``."""
    import pandas as pd
    columns = {name: host[name].to_numpy() for name in host.columns}
    index = host.index
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    return pd.DataFrame(columns) if default else pd.DataFrame(columns, index=index.to_numpy())
