"""The roofline chart's spec on rows of known figures: where each point sits, which roofs are drawn
and at what values, and what it says of points it cannot place (issue 29)."""
from __future__ import annotations

import math

import pytest
from helpers import measured

from workbench.results import rows as results
from workbench.results.files import ResultSet
from workbench.views import chart_kinds, spec
from workbench.views.spec import roofline
from workbench.views.presets import KINDS


def _row(backend="numpy", size=1024, gflops=10.0, gbps=5.0, gbps_limit=100.0, gflops_limit=400.0, **kw):
    return measured(workload=kw.pop("workload", "source_terms"), backend=backend, device=kw.pop("device", "CPU: T"),
                    size=size, dtype=kw.pop("dtype", "float32"), host_memory="", compute_median_s=1e-3,
                    total_median_s=1e-3, gflops=gflops, gbps=gbps, gbps_limit=gbps_limit, gflops_limit=gflops_limit,
                    bound="unknown", of_bound=0.1, status="ok", **kw)


def _set(rows, limits=None) -> ResultSet:
    env = {"cpu": "T"} | ({"limits": limits} if limits is not None else {})
    return ResultSet(results.to_frame(rows), env, {}, "2026-01-02T03:04:05+00:00", "h", "")


def _roofs(chart):
    return {s.name: (s.xs, s.ys) for s in chart.series if s.role == "roof"}


def test_roofline_is_a_kind():
    assert "roofline" in KINDS and chart_kinds.get("roofline").build is roofline.roofline


def test_a_point_sits_at_its_intensity_and_gflops():
    chart = spec.build("roofline", [_set([_row(gflops=10.0, gbps=5.0), _row(size=4096, gflops=40.0, gbps=4.0)])])
    (numpy,) = [s for s in chart.series if s.role == "compute"]
    assert numpy.xs == pytest.approx((2.0, 10.0)) and numpy.ys == pytest.approx((10.0, 40.0))
    assert numpy.sizes == (1024.0, 4096.0)            # the hover finds each point's row by its size
    assert chart.x.log and chart.y.log and chart.x.range[0] < 2.0 < 10.0 < chart.x.range[1]


def test_roofs_from_the_rows_where_the_environment_has_none():
    chart = spec.build("roofline", [_set([_row(gbps_limit=100.0, gflops_limit=400.0)])])
    roofs = _roofs(chart)
    assert set(roofs) == {"memory 100 GB/s", "peak float32 400 GFLOP/s"}
    xs, ys = roofs["memory 100 GB/s"]
    assert ys[0] == pytest.approx(100.0 * xs[0]) and xs[1] == pytest.approx(4.0) and ys[1] == pytest.approx(400.0)
    xs, ys = roofs["peak float32 400 GFLOP/s"]
    assert ys == (400.0, 400.0) and xs[0] == pytest.approx(4.0)       # flat from the ridge
    assert {t.text for t in chart.labels} == set(roofs)


def test_every_level_of_the_environment_ladder_is_a_roof():
    limits = [{"device": "CPU: T", "peak_gflops": {"float32": 432.0, "float64": 216.0},
               "levels": [{"level": "L1d", "best_gbps": 300.0}, {"level": "L3", "best_gbps": 188.0},
                          {"level": "memory", "best_gbps": 40.0}]},
              {"device": "GPU: other", "levels": [{"level": "memory", "best_gbps": 3000.0}]}]
    chart = spec.build("roofline", [_set([_row(gbps_limit=188.0)], limits)])
    roofs = _roofs(chart)
    # No roof of a device or dtype no drawn row ran on.
    assert set(roofs) == {"L1d 300 GB/s", "L3 188 GB/s", "memory 40 GB/s", "peak float32 432 GFLOP/s"}
    assert roofs["L3 188 GB/s"][0][1] == pytest.approx(432.0 / 188.0)


def test_an_older_row_without_limits_gets_no_point_and_no_roof():
    old = _row(backend="numba", gbps_limit=math.nan, gflops_limit=math.nan)
    chart = spec.build("roofline", [_set([_row(), old])])
    assert [s.name for s in chart.series if s.role == "compute"] == ["numpy"]
    assert set(_roofs(chart)) == {"memory 100 GB/s", "peak float32 400 GFLOP/s"}     # the ok row's alone
    assert any("without the device's ceilings" in n for n in chart.notes)
    alone = spec.build("roofline", [_set([old])])
    assert alone.empty and not alone.series and "without the device's ceilings" in alone.empty


def test_a_workload_without_flops_is_said_not_drawn():
    chart = spec.build("roofline", [_set([_row(), _row(backend="numba", gflops=0.0, gbps=30.0)])])
    assert [s.name for s in chart.series if s.role == "compute"] == ["numpy"]
    assert any("without FLOPs" in n and "not drawn" in n for n in chart.notes)
    none = spec.build("roofline", [_set([_row(workload="transfer", gflops=math.nan, gbps=12.0)])])
    assert none.empty and "without FLOPs" in none.empty
