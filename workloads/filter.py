"""filter: keep the rows whose value passes a threshold, and count them."""
from __future__ import annotations

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._frames import accelerated, cudf_phases, frame_bytes, make_frame

THRESHOLD = 0.5


def _op(df):
    return df[df["value"] > THRESHOLD]


def _compare(res, ref):
    # The count must be exact; the kept values' sum checks that the right rows were kept.
    if len(res) != len(ref):
        return float("inf")
    got = float(res["value"].to_numpy(np.float64).sum())
    want = float(ref["value"].to_numpy(np.float64).sum())
    return abs(got - want) / max(abs(want), 1e-300)


W = register(Workload(
    name="filter",
    order=120,
    title="Filter (boolean mask)",
    kind="dataframes",
    description=f"df[df['value'] > {THRESHOLD}]: a boolean mask, then the rows it keeps (and their count).",
    lesson="Filtering is a streaming pass plus a compaction: cheap on either device, so the GPU only wins "
           "when the data already lives there; the conversion to and from pandas dominates.",
    size_unit="rows",
    default_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    make_inputs=lambda n, dt, v, rng: (make_frame(n, dt, rng),),
    reference=lambda inp: _op(inp[0].astype({"value": np.float64})),
    flops=lambda n: 1.0 * n,
    bytes_moved=lambda n, isz: frame_bytes(n, isz) * 1.5,
    device_footprint=lambda n, isz: frame_bytes(n, isz) * 2.5,   # the frame, the mask, the rows kept
    footprint=lambda n, isz: frame_bytes(n, isz) * 5,
    tolerance={"float32": 1e-6, "float64": 1e-12},
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
