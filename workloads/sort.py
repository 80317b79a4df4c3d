"""sort: sort N rows by a value column."""
from __future__ import annotations

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._frames import accelerated, cudf_phases, frame_bytes, make_frame


def _op(df):
    return df.sort_values("value")


def _compare(res, ref):
    got = res["value"].to_numpy(np.float64)
    want = ref["value"].to_numpy(np.float64)
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want))) if len(want) else 0.0


W = register(Workload(
    name="sort",
    order=130,
    title="Sort by value",
    kind="dataframes",
    description="df.sort_values('value'): sort N rows (key, value, id) by a floating-point column.",
    lesson="Sorting moves every row several times: a GPU radix sort is much faster than pandas on large "
           "frames, and the result, as large as the input, must come back.",
    size_unit="rows",
    default_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    make_inputs=lambda n, dt, v, rng: (make_frame(n, dt, rng),),
    reference=lambda inp: _op(inp[0].astype({"value": np.float64})),
    flops=lambda n: 0.0,
    bytes_moved=lambda n, isz: 2.0 * frame_bytes(n, isz),
    device_footprint=lambda n, isz: frame_bytes(n, isz) * 3,     # the frame, the order, the sorted copy
    footprint=lambda n, isz: frame_bytes(n, isz) * 6,
    tolerance={"float32": 0.0, "float64": 0.0},
    compare=_compare,
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
