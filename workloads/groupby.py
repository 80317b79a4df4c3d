"""groupby: the mean of a value column per key, over N rows and 1000 keys."""
from __future__ import annotations

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._frames import KEYS, accelerated, cudf_phases, frame_bytes, make_frame


def _op(df):
    return df.groupby("key", sort=True)["value"].mean()


def _compare(res, ref):
    got = np.asarray(res.sort_index().to_numpy(), dtype=np.float64)
    want = ref.sort_index().to_numpy()
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


W = register(Workload(
    name="groupby",
    order=100,
    title="Group-by mean",
    kind="dataframes",
    description=f"df.groupby('key')['value'].mean() over N rows with {KEYS} distinct keys.",
    lesson="A hash aggregation touches every row once: cuDF is far ahead of pandas on millions of rows, "
           "but moving the frame to the GPU (pandas -> cuDF) costs more than the group-by itself.",
    size_unit="rows",
    default_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    make_inputs=lambda n, dt, v, rng: (make_frame(n, dt, rng),),
    reference=lambda inp: _op(inp[0].astype({"value": np.float64})),
    flops=lambda n: 1.0 * n,
    bytes_moved=lambda n, isz: frame_bytes(n, isz),
    device_footprint=lambda n, isz: frame_bytes(n, isz) * 2.5,   # the frame, hashes, the result
    footprint=lambda n, isz: frame_bytes(n, isz) * 4,
    tolerance={"float32": 1e-5, "float64": 1e-12},
    compare=_compare,
    library_dtypes=("value",),      # the mean: float64 on cuDF, on pandas float64 or float32 by the data
))


@W.implement("pandas")
def _pandas(inputs, ctx):
    (df,) = inputs
    return lambda: _op(df)


@W.implement("cudf")
def _cudf(inputs, ctx):
    return cudf_phases(inputs, _op, ctx)


# The pandas implementation itself, run in an engine process whose pandas is cuDF's accelerator
# (the frames moved there and the result back are its transfer phases).
W.implement("cudf-pandas", note="the pandas code, unchanged, under cudf.pandas")(accelerated(_pandas))
