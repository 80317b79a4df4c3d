"""Results whose values are right but whose dtype is not the point's: ``wrong``, said in one line.

A float32 implementation that returns float64 computed in float64 (under NumPy 2 one ``np.float64``
scalar in an expression is enough): its error against the float64 reference is nothing, and its
float32 figures were float64 work. A complex result where the reference is real, and a float64
point that returns float32, are the same fault. Every built-in workload on the CPU backends, in
both dtypes, stays ``ok``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import synthetic
from workbench.catalog.workloads import REGISTRY, Workload
from workbench.catalog.backends import is_gpu
from workbench.measure import protocol
from workbench.measure.engine import SweepSpec, run_sweep

QUICK = dict(min_repeats=1, budget_s=0, rounds=1)


def _rows(workload: str, backend: str, size: int, dtype: str) -> list[dict]:
    """One row per variant of the workload."""
    return protocol.rows(run_sweep(SweepSpec(workload, (backend,), (size,), dtype=dtype, **QUICK)))


def _row(workload: str, backend: str, size: int, dtype: str) -> dict:
    (row,) = _rows(workload, backend, size, dtype)
    return row


def _measured(registry, returns, dtype: str) -> dict:
    w = registry.add(synthetic("returns"))
    w.implement("numpy")(lambda inputs, ctx: (lambda: returns(inputs[0])))
    return _row("returns", "numpy", 64, dtype)


WRONG = [
    ("float32", lambda x: x * np.float64(2), "result is float64 in a float32 point: it computes in float64"),
    ("float32", lambda x: (x * 2).astype(np.complex64), "result is complex64 in a float32 point whose reference is real"),
    ("float32", lambda x: (x * 2).astype(np.float64), "result is float64 in a float32 point: it computes in float64"),
    ("float64", lambda x: (x * 2).astype(np.float32), "result is float32 in a float64 point: it computes in float32"),
    ("float64", lambda x: (x * 2).astype(np.float16), "result is float16 in a float64 point: it computes in float16"),
    ("float32", lambda x: x * 2 + np.float64(0), "result is float64 in a float32 point: it computes in float64"),
    ("float32", lambda x: (x * 2).astype(np.complex128), "result is complex128 in a float32 point whose reference"),
]


@pytest.mark.parametrize("dtype,returns,expect", WRONG, ids=[f"{d}-{e[:30]}" for d, _, e in WRONG])
def test_a_result_of_another_dtype_is_wrong_with_both_dtypes_named(registry, dtype, returns, expect):
    row = _measured(registry, returns, dtype)
    assert row["status"] == "wrong" and not row["verified"], row["message"]
    assert expect in row["message"]
    assert row["max_rel_error"] <= registry.get("returns").tolerance[dtype]       # its values were right


RIGHT = [
    ("float32", lambda x: x * np.float32(2)),
    ("float32", lambda x: x * 2.0),                       # a Python float keeps float32 under NumPy 2
    ("float64", lambda x: x * 2),
    ("float32", lambda x: x.astype(np.int64) * 2),        # an integer result (counts, indices): no float work
]


@pytest.mark.parametrize("dtype,returns", RIGHT, ids=[str(i) for i in range(len(RIGHT))])
def test_a_result_of_the_points_dtype_stays_ok(registry, dtype, returns):
    row = _measured(registry, returns, dtype)
    assert row["status"] == "ok", row["message"]


def test_a_wrong_dtype_and_a_wrong_value_are_both_said(registry):
    row = _measured(registry, lambda x: x * np.float64(3), "float32")
    assert row["status"] == "wrong"
    assert "float64 in a float32 point" in row["message"] and "exceeds the float32 tolerance" in row["message"]


def _frames(registry, op, library_dtypes=()) -> Workload:
    def inputs(n, dt, v, rng):
        return (pd.DataFrame({"key": np.arange(n, dtype=np.int64) % 4, "value": np.arange(n, dtype=dt)}),)
    free = {"library_dtypes": library_dtypes} if library_dtypes else {}
    w = registry.add(synthetic("frames", kind="dataframes", make_inputs=inputs, **free,
                               reference=lambda inp: op(inp[0].astype({"value": np.float64})),
                               compare=lambda res, ref: float(np.max(np.abs(
                                   res["value"].to_numpy(np.float64) - ref["value"].to_numpy(np.float64))))))
    w.implement("pandas")(lambda inputs, ctx: (lambda: op(inputs[0])))
    return w


def test_a_frame_column_computed_in_float64_is_wrong_and_keys_are_not_checked(registry):
    _frames(registry, lambda df: df.assign(value=df["value"].astype(np.float64) * 2, count=len(df)))
    row = _row("frames", "pandas", 64, "float32")
    assert row["status"] == "wrong"
    assert "result column 'value' is float64 in a float32 point: it computes in float64" in row["message"]


def test_a_column_whose_dtype_the_library_chooses_is_left_out(registry):
    _frames(registry, lambda df: df.assign(value=df["value"].astype(np.float64) * 2), library_dtypes=("value",))
    assert _row("frames", "pandas", 64, "float32")["status"] == "ok"


def test_a_float32_frame_stays_ok(registry):
    _frames(registry, lambda df: df.assign(value=df["value"] * np.float32(2)))
    assert _row("frames", "pandas", 64, "float32")["status"] == "ok"


# Every built-in workload on every CPU backend, in both dtypes, at a small size: none is newly wrong.

SMALL = {"matmul": 32, "flux": 32, "stencil": 32, "spmv": 1024}
BUILT_IN = [(w.name, b, d) for w in REGISTRY.all() for b in w.backends if not is_gpu(b) for d in w.dtypes]


@pytest.mark.parametrize("workload,backend,dtype", BUILT_IN, ids=["-".join(c) for c in BUILT_IN])
def test_every_built_in_workload_keeps_to_its_dtype(workload, backend, dtype):
    rows = _rows(workload, backend, SMALL.get(workload, 4096), dtype)
    assert rows and [(r["variant"], r["status"], r["message"]) for r in rows if r["status"] != "ok"] == []


@pytest.mark.gpu
def test_a_cupy_result_of_another_dtype_is_wrong_read_on_the_device(registry):
    """The dtype is read from the CuPy array itself (no copy to the host): a compute phase that
    promotes float32 to float64 on the device is wrong, and the same kernel in float32 is ok."""
    import cupy as cp
    from workbench.catalog.workloads import Phases
    from workbench.catalog.result_dtype import dtype_problem
    assert "float64 in a float32 point" in dtype_problem(cp.ones(4, cp.float64), np.ones(4), "float32")
    assert dtype_problem(cp.ones(4, cp.complex64), np.ones(4, np.complex128), "float32") == ""

    for name, work in (("promotes", cp.float64), ("keeps", cp.float32)):
        w = registry.add(synthetic(name))

        def factory(inputs, ctx, work=work):
            dev, out = [None], [None]
            return Phases(h2d=lambda: dev.__setitem__(0, cp.asarray(inputs[0])),
                          compute=lambda: out.__setitem__(0, dev[0].astype(work) * 2),
                          d2h=lambda: out[0].get())
        w.implement("cupy")(factory)
    assert "float64 in a float32 point" in _row("promotes", "cupy", 1024, "float32")["message"]
    assert _row("keeps", "cupy", 1024, "float32")["status"] == "ok"
