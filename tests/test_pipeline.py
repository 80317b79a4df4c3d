"""pipeline on the CPU: each stage does what it says, and every stage and hand-off is timed."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.measure.engine import SweepSpec, run_sweep
from workbench.catalog.workloads import REGISTRY
from workbench.measure import protocol
from workbench.results.rows import decode_stages
from workloads import pipeline as P


def test_the_three_stacks_are_the_pipelines_backends():
    assert REGISTRY.get("pipeline").backends == ("cpu-stack", "gpu-zero-copy", "gpu-round-trips")


def test_bins_are_a_power_of_two_with_a_few_readings_per_cell():
    assert P.bins(10) == P.MIN_BINS
    for n in (10_000, 1_000_000, 10_000_000):
        t = P.bins(n)
        assert t & (t - 1) == 0
        assert P.ROWS_PER_CELL / 2 < n / (P.SENSORS * t) <= P.ROWS_PER_CELL


def test_frame_stage_filters_joins_and_averages_per_cell():
    t = 16
    readings = pd.DataFrame({
        "sensor": np.array([0, 0, 0, 1, 1], np.int64),
        "t_ns": np.array([0, P.BIN_NS - 1, P.BIN_NS, 3 * P.BIN_NS, 3 * P.BIN_NS + 5], np.int64),
        "value": np.array([1.0, 3.0, 5.0, 2.0, 100.0]),
        "quality": np.array([1.0, 1.0, 1.0, 1.0, P.Q_MIN / 2]),    # the last reading is dropped
    })
    sensors = pd.DataFrame({"sensor": np.array([0, 1], np.int64), "gain": [2.0, 10.0],
                            "offset": [1.0, 0.5], "curve": [1.0, 1.0]})
    agg = P.frame_stage(readings, sensors, t)
    assert agg["cell"].tolist() == [0, 1, 1 * t + 3]
    # sensor 0, bin 0: mean of (1-1)*2 and (3-1)*2; bin 1: (5-1)*2; sensor 1, bin 3: (2-0.5)*10
    assert agg["level"].tolist() == [2.0, 8.0, 15.0]


def test_array_stage_keeps_a_slow_signal_and_removes_a_fast_one():
    t, sensors = 64, 2
    k = np.arange(t)
    slow, fast = np.cos(2 * np.pi * k / t), np.cos(2 * np.pi * (t // 4) * k / t)
    cell = np.arange(sensors * t)
    smooth = P.array_stage(np, cell, np.concatenate([slow + fast, slow]), sensors, t)
    assert smooth.shape == (sensors, t)
    assert np.allclose(smooth[0], slow) and np.allclose(smooth[1], slow)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_kernel_undoes_the_cubic_response(dtype):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(0)
    t = 32
    curve = rng.uniform(0.1, 2.0, 4).astype(dt)
    r = rng.uniform(-5, 5, 4 * t).astype(dt)
    v = P._cpu_stack(dt).kernel(r, curve, t)
    a = np.repeat(curve, t).astype(np.float64)
    v64 = v.astype(np.float64)
    assert v.dtype == dt                                       # no silent float64 arithmetic
    residual = np.abs(v64 + a * v64 ** 3 - r) / (1 + 3 * a * v64 ** 2)
    assert np.max(residual / np.maximum(np.abs(v64), 1e-30)) < 64 * np.finfo(dt).eps


def test_gather_stage_reports_mean_and_peak_per_sensor():
    t = 4
    agg = pd.DataFrame({"cell": np.array([1, 2, 5], np.int64), "level": [0.0, 0.0, 0.0]})
    linear = pd.Series(np.arange(8, dtype=np.float64) * 10)       # the whole 2 x 4 grid
    report = P.gather_stage(pd, agg, linear, t)
    assert report.index.tolist() == [0, 1]
    assert report["mean"].tolist() == [15.0, 50.0] and report["peak"].tolist() == [20.0, 50.0]


def test_a_wrong_report_is_caught():
    inputs = P._inputs(5000, np.dtype(np.float32), "", np.random.default_rng(0))
    ref = P._reference(inputs)
    assert P._compare(ref, ref) == 0
    assert P._compare(ref.iloc[1:], ref) == float("inf")               # a sensor lost
    shifted = ref.assign(peak=ref["peak"] * (1 + 1e-3))
    assert P._compare(shifted, ref) > REGISTRY.get("pipeline").tolerance["float32"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cpu_stack_times_every_stage_and_they_add_up(dtype):
    spec = SweepSpec("pipeline", ("cpu-stack",), (1000, 20_000), dtype, min_repeats=3, budget_s=0.0)
    rows = protocol.rows(run_sweep(spec))
    assert len(rows) == 2
    for row in rows:
        assert row["status"] == "ok", row["message"]
        stages = decode_stages(row["stages"])
        assert tuple(stages) == P.STAGES                              # each stage and hand-off, in order
        assert all(s > 0 for s in stages.values())
        # one repeat's stages, timed inside its compute: at most that repeat's time, itself <= the median
        assert sum(stages.values()) <= row["compute_median_s"]
