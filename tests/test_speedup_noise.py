"""The speedup chart marks the points whose verdict against the baseline is ``same`` or
``undecided`` with a ring, in the window and in the exported chart alike: a ratio drawn alone
reads as a win or a loss the measurement may not support."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from helpers import result_set

from workbench.views import matplotlib_charts as charts
from workbench.views.compare import WITHIN_NOISE, Baseline, Overlay, speedups


def with_intervals(spread: dict[str, float], times: dict[str, float]):
    """result_set() with a 95 % interval of +-spread around every median, and added CPU backends
    whose times are numpy's times a factor: ``times = {"twin": 1.0}`` is numpy's code again."""
    rs = result_set()
    f = rs.frame
    extra = []
    for name, factor in times.items():
        rows = f[(f["backend"] == "numpy") & (f["status"] == "ok")].copy()
        rows["backend"] = name
        for col in ("compute_median_s", "total_median_s"):
            rows[col] = rows[col] * factor
        extra.append(rows)
    f = pd.concat([f, *extra], ignore_index=True)
    for figure in ("compute", "total"):
        rel = f["backend"].map(lambda b: spread.get(b, 0.01))
        f[f"{figure}_ci_lo_s"] = f[f"{figure}_median_s"] * (1 - rel)
        f[f"{figure}_ci_hi_s"] = f[f"{figure}_median_s"] * (1 + rel)
    return dataclasses.replace(rs, frame=f)


def exported_rings(rs, baseline="numpy") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    with charts.style(charts.preset()):
        fig = charts.figure("speedup", [rs], baseline_name=baseline)
    rings = {ln.get_gid(): (np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float))
             for ln in fig.axes[0].get_lines() if (ln.get_gid() or "").startswith("series-speedup-within-noise")}
    legend = [" ".join(t.get_text().split()) for lg in [*fig.legends, *(lg for sub in fig.subfigs for lg in sub.legends)]
              for t in lg.get_texts()]
    return rings, legend


def test_a_twin_within_its_noise_is_ringed_and_a_clear_winner_is_not():
    # twin: numpy's own code; slight: 4 % slower with +-10 % intervals (cannot be told apart);
    # numba: 2x faster, cupy: 10x, both with +-1 %: decided, no ring.
    rs = with_intervals({"slight": 0.10}, {"twin": 1.0, "slight": 1.04})
    verdicts = {s.backend: set(g["verdict_compute"]) for s, g in speedups([rs], Baseline("numpy"))}
    assert verdicts["twin"] == {"same"} and verdicts["slight"] == {"undecided"}
    assert verdicts["numba"] == {"faster"} and verdicts["cupy"] == {"faster"}
    rings, legend = exported_rings(rs)
    assert set(rings) == {"series-speedup-within-noise-compute-twin", "series-speedup-within-noise-compute-slight"}
    x, y = rings["series-speedup-within-noise-compute-twin"]
    assert list(x) == [2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16] and y == pytest.approx([1.0] * 4)
    assert WITHIN_NOISE in legend


def test_a_file_without_intervals_rings_nothing():
    rs = result_set()           # an older file: medians, no interval, nothing to decide from
    rings, legend = exported_rings(rs)
    assert rings == {} and WITHIN_NOISE not in legend


def test_the_window_rings_the_points_the_export_rings(qtbot):
    from panels.charts import SpeedupChart
    rs = with_intervals({"slight": 0.10}, {"twin": 1.0, "slight": 1.04, "slower": 1.5})
    chart = SpeedupChart()
    qtbot.addWidget(chart)
    chart.set_baseline(Baseline("numpy"))
    chart.update_from(Overlay.of([rs]))
    drawn = chart.rings_drawn()
    exported, _ = exported_rings(rs)
    assert {f"series-speedup-within-noise-{role}-{backend}" for role, backend, _ in drawn} == set(exported)
    for (role, backend, _), (x, y) in drawn.items():
        ex, ey = exported[f"series-speedup-within-noise-{role}-{backend}"]
        assert np.allclose(x, ex) and np.allclose(y, ey)
    assert chart.ring_key_shown
    # A baseline against which nothing is within the noise: the rings and their key go.
    chart.set_baseline(Baseline("cupy"))
    chart.update_from(Overlay.of([rs]))
    assert chart.rings_drawn() == {} and not chart.ring_key_shown
