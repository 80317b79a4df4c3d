"""merge: N rows joined with a 1000-row key table."""
from __future__ import annotations

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import uniform
from workloads._frames import KEYS, accelerated, cudf_phases, frame_bytes, make_frame


def _inputs(n, dt, variant, rng):
    import pandas as pd
    table = pd.DataFrame({"key": np.arange(KEYS, dtype=np.int64), "weight": uniform(rng, KEYS, dt)})
    return make_frame(n, dt, rng), table


def _op(df, table):
    return df.merge(table, on="key", how="inner")


def _compare(res, ref):
    if len(res) != len(ref):
        return float("inf")
    got = res.sort_values("id")
    want = ref.sort_values("id")
    if not np.array_equal(got["key"].to_numpy(), want["key"].to_numpy()):
        return float("inf")
    g = got["weight"].to_numpy(np.float64)
    w = want["weight"].to_numpy(np.float64)
    return float(np.max(np.abs(g - w)) / np.max(np.abs(w))) if len(w) else 0.0


W = register(Workload(
    name="merge",
    order=110,
    title="Merge (join)",
    kind="dataframes",
    description=f"An inner join of N rows with a {KEYS}-row table on an int64 key.",
    lesson="A join builds a hash table and gathers rows: cuDF wins by a wide margin at millions of rows; "
           "the result is as long as the input, so bringing it back to pandas is a real cost.",
    size_unit="rows",
    default_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    make_inputs=_inputs,
    reference=lambda inp: _op(inp[0], inp[1].astype({"weight": np.float64})),
    flops=lambda n: 0.0,
    bytes_moved=lambda n, isz: frame_bytes(n, isz) + n * (8 + isz + 8 + isz),
    device_footprint=lambda n, isz: frame_bytes(n, isz) * 3.5,   # the frame, the join maps, N result rows
    footprint=lambda n, isz: frame_bytes(n, isz) * 8,
    tolerance={"float32": 1e-6, "float64": 1e-14},
    compare=_compare,
))


@W.implement("pandas")
def _pandas(inputs, ctx):
    df, table = inputs
    return lambda: _op(df, table)


@W.implement("cudf")
def _cudf(inputs, ctx):
    return cudf_phases(inputs, _op, ctx)


# The pandas implementation itself, run in an engine process whose pandas is cuDF's accelerator
# (the frames moved there and the result back are its transfer phases).
W.implement("cudf-pandas", note="the pandas code, unchanged, under cudf.pandas")(accelerated(_pandas))
