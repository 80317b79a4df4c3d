"""What bounds a point (issue 29): classified from the row's own figures, on synthetic rows of
known figures; a row from a file without the columns gets none invented."""
from __future__ import annotations

import math

import pytest

from workbench.core import bounds
from workbench.results.rows import Row, to_frame
from workbench.views.table_text import readable_table


def row(**kw):
    base = dict(compute_median_s=1e-3, total_median_s=1e-3, gbps=50.0, gbps_limit=100.0, gflops=1.0,
                gflops_limit=1000.0, host_memory="")
    base.update(kw)
    return base


@pytest.mark.parametrize("figures,level,expect,share", [
    (row(gbps=90.0), "L3", "memory (L3)", 0.9),                                  # near the bandwidth roof
    (row(gbps=5.0, gflops=800.0), "", "compute", 0.8),                            # near the arithmetic peak
    (row(gbps=10.0, gflops=10.0), "L2", "unknown", 0.1),                          # under every roof
    (row(host_memory="pageable", compute_median_s=3e-6, call_median_s=30e-6), "", "launch", 0.1),
    (row(host_memory="pinned", compute_median_s=1e-3, call_median_s=1.1e-3, h2d_s=3e-3, d2h_s=1e-3,
         total_median_s=5e-3), "", "transfer", 0.8),
    (row(host_memory="pinned", gbps=95.0, call_median_s=1.05e-3, h2d_s=1e-4, d2h_s=1e-4,
         total_median_s=1.2e-3), "device memory", "memory (device memory)", 0.95),
])
def test_each_bound_from_known_figures(figures, level, expect, share):
    got, of = bounds.classify(figures, level, end_to_end=expect == "transfer")
    assert got == expect and of == pytest.approx(share)


def test_a_kernel_at_the_devices_bandwidth_is_memory_bound_however_long_its_copies_take():
    # The H200's plain source_terms at 2^26 (2026-12-05): a kernel at 100 % of the copy rate inside
    # a pageable end to end where copies took 99 %: the kernel's bound, and the copies said beside.
    h200 = row(host_memory="pageable", compute_median_s=187e-6, call_median_s=201e-6, gbps=4299.0,
               gbps_limit=4301.0, h2d_s=60e-3, d2h_s=40e-3, total_median_s=100.2e-3)
    assert bounds.classify(h200, "device memory") == ("memory (device memory)", pytest.approx(4299 / 4301))
    assert bounds.classify(h200, "device memory", end_to_end=True)[0] == "transfer"
    assert bounds.transfer_share(h200) == pytest.approx(0.998, abs=1e-3)
    assert math.isnan(bounds.transfer_share(row()))


def test_a_cpu_point_has_no_launch_bound_and_a_row_without_a_time_has_none():
    assert bounds.classify(row(call_median_s=1.0))[0] == "memory"     # a CPU row: its call is its compute
    assert bounds.classify(row(compute_median_s=math.nan)) == ("", pytest.approx(math.nan, nan_ok=True))


def test_an_older_row_gets_no_bound_invented():
    old = Row.of({"workload": "w", "backend": "numpy", "size": 8, "compute_median_s": 1e-3, "gbps": 90.0,
                  "gbps_limit": 100.0, "status": "ok"})
    assert old["bound"] == "" and math.isnan(old["of_bound"])
    assert readable_table(to_frame([old]))["bound"].tolist() == ["-"]


def test_the_table_says_the_bound_and_how_close():
    r = Row.of({**row(gbps=90.0), "workload": "w", "backend": "numpy", "size": 8, "status": "ok",
                "bound": "memory (L3)", "of_bound": 0.9})
    assert readable_table(to_frame([r]))["bound"].tolist() == ["memory (L3) 90 %"]


def test_every_cpu_row_records_the_threads_it_ran_on():
    """A speedup over a CPU baseline means nothing without its threads (issue 29): Numba's parallel
    loop runs on Numba's threads, a BLAS call on the BLAS pool's, plain NumPy on one."""
    import numba

    from workbench.measure import protocol, threads
    from workbench.measure.engine import SweepSpec, run_sweep
    got = {}
    for workload, size in (("source_terms", 4096), ("matmul", 32)):
        spec = SweepSpec(workload, ("numpy", "numba"), (size,), "float64", min_repeats=1, budget_s=0.0, rounds=1)
        got.update({(r["workload"], r["backend"]): r["threads"] for r in protocol.rows(run_sweep(spec))})
    assert got == {("source_terms", "numpy"): 1, ("source_terms", "numba"): numba.get_num_threads(),
                   ("matmul", "numpy"): threads.blas_threads(), ("matmul", "numba"): threads.blas_threads()}
    assert all(n >= 1 for n in got.values())


def test_an_implementation_names_whose_threads_it_runs_on_from_a_known_list():
    from helpers import synthetic
    w = synthetic()
    with pytest.raises(ValueError, match="threads must be one of"):
        w.implement("numpy", threads="all of them")


def test_a_cpu_point_is_held_to_the_peak_of_the_threads_it_ran_on(monkeypatch):
    """A one-thread sgemm on a 2-core machine cannot pass half the every-core peak: held to it, it
    read 'unknown' at a core's full speed (issue 29). Its ceiling is its threads' share."""
    from workbench.measure import limits, protocol
    from workbench.measure.engine import SweepSpec, run_sweep
    monkeypatch.setattr(limits, "cpu_cores", lambda: 4)
    assert limits.threads_flops_limit(400.0, 1) == 100.0 and limits.threads_flops_limit(400.0, 8) == 400.0
    assert limits.threads_flops_limit(400.0, None) == 400.0 and limits.threads_flops_limit(400.0, 0) == 400.0
    spec = SweepSpec("matmul", ("numpy x1",), (32,), "float64", min_repeats=1, budget_s=0.0, rounds=1)
    r, = protocol.rows(run_sweep(spec))
    peak = limits.recorded()[0]["peak_gflops"]["float64"]
    assert r["threads"] == 1 and r["gflops_limit"] == pytest.approx(peak / 4, rel=1e-3)
    assert r["of_bound"] == pytest.approx(max(r["gflops"] / r["gflops_limit"], r["gbps"] / r["gbps_limit"]))
