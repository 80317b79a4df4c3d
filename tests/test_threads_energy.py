"""Threads named and swept, energy per call from a counter, kernels per call (issue 29).

The energy arithmetic is held to a synthetic counter of known draw (idle and running watts, a step
every few milliseconds, as NVML's board counter moves); RAPL's reading to a fake powercap tree
that wraps; the thread series to a sweep through the command line, each row's threads read back.
"""
from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.catalog import backends
from workbench.measure import energy, threads
from workbench.measure.gpu import kernels
from workbench.results.files import open_results

ROOT = Path(__file__).resolve().parents[1]


# Threads ---------------------------------------------------------------------------------------

def test_thread_counts_are_read_in_order_without_repeats_and_all_is_every_core_here():
    n = threads.available()
    assert threads.counts("1,all") == ((1, n) if n > 1 else (1,))
    assert threads.counts(" 1 , 1, all,") == threads.counts("1,all")
    for bad, said in (("0", "1 or more"), ("x", "not a thread count"), ("", "no thread count"),
                      (str(n + 1), f"run on {n}")):
        with pytest.raises(ValueError, match=said):
            threads.counts(bad)


def test_a_series_at_set_threads_is_its_backend_everywhere_the_backend_is_asked():
    assert backends.split_threads("numba x4") == ("numba", 4)
    assert backends.split_threads("numba-cuda-x4") == ("numba-cuda-x4", 0)      # a backend, not a series
    assert backends.split_threads("numba x0") == ("numba x0", 0)
    assert not backends.is_gpu("numba x2") and backends.is_gpu("cupy")


def test_only_backends_whose_threads_can_be_set_become_series():
    from workbench.catalog.workloads import REGISTRY
    w = REGISTRY.get("source_terms")
    assert threads.series(("numpy", "numba"), (1, 2), w.implementations) == ("numpy", "numba x1", "numba x2")
    m = REGISTRY.get("matmul")
    assert threads.series(("numpy",), (1, 2), m.implementations) == ("numpy x1", "numpy x2")     # BLAS


def _run(tmp_path, *args):
    out = tmp_path / "out.csv"
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", *args, "--out", str(out), "--force", "-q",
                           "-r", "3", "--budget", "0.02"], capture_output=True, text=True, timeout=300,
                          cwd=str(ROOT))
    return proc, out


@pytest.mark.skipif(threads.available() < 2, reason="one core: no second thread count to sweep")
def test_threads_sweep_gives_a_series_per_count_each_row_running_on_its_count(tmp_path):
    proc, out = _run(tmp_path, "-w", "source_terms", "-b", "numpy,numba", "-s", "2^16", "--threads", "1,2")
    assert proc.returncode == 0, proc.stderr
    rows = {r["backend"]: r for r in open_results(out).frame.to_dict("records")}
    assert set(rows) == {"numpy", "numba x1", "numba x2"}
    assert [rows[b]["threads"] for b in ("numpy", "numba x1", "numba x2")] == [1, 1, 2]
    assert all(r["status"] == "ok" for r in rows.values())
    # The closing sentence names each side's threads once: 'numba x2 ... numpy x1'.
    assert "numba x2 x2" not in proc.stdout and "numpy x1" in proc.stdout


def test_threads_that_cannot_be_had_are_refused_before_anything_runs(tmp_path):
    proc, out = _run(tmp_path, "-w", "source_terms", "-b", "numba", "-s", "2^10",
                     "--threads", str(threads.available() + 1))
    assert proc.returncode == 2 and "--threads" in proc.stderr and not out.exists()


# Energy ----------------------------------------------------------------------------------------

class SyntheticBoard(energy.Counter):
    """A board drawing ``idle`` watts, ``busy`` while a call runs, read as a counter that steps
    every ``step`` seconds (its value: the energy up to its last step)."""
    source = "synthetic"

    def __init__(self, idle: float, busy: float, step: float) -> None:
        self.idle, self.busy, self.step = idle, busy, step
        self.t0 = time.perf_counter()
        self.spans: list[tuple[float, float]] = []

    def call(self, seconds: float) -> None:
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            pass
        self.spans.append((start - self.t0, time.perf_counter() - self.t0))

    def read(self) -> float:
        t = math.floor((time.perf_counter() - self.t0) / self.step) * self.step
        busy = sum(max(0.0, min(b, t) - a) for a, b in self.spans)
        return self.idle * t + (self.busy - self.idle) * busy


def test_energy_per_call_is_the_running_draw_above_idle_times_the_call():
    board = SyntheticBoard(idle=70.0, busy=470.0, step=0.005)
    res = energy.resolution(board, steps=4)
    assert res.step_s == pytest.approx(0.005, rel=0.5)
    idle = energy.watts(board, 0.1)
    assert idle == pytest.approx(70.0, rel=0.02)
    r = energy.per_call(board, lambda: board.call(0.002), 0.3, idle)
    mean_call = sum(b - a for a, b in board.spans[-r.calls:]) / r.calls
    assert r.joules == pytest.approx(400.0 * mean_call, rel=0.10)
    assert 70.0 < r.watts <= 470.0 and r.idle_watts == idle and r.seconds >= 0.3


def test_a_counter_that_never_moves_is_said_not_read_forever(monkeypatch):
    class Stuck(energy.Counter):
        def read(self):
            return 5.0
    monkeypatch.setattr(energy, "STEP_TIMEOUT_S", 0.05)
    with pytest.raises(OSError, match="did not move"):
        energy.resolution(Stuck())


def test_rapl_sums_the_packages_and_goes_on_across_a_wrap(tmp_path):
    for i, (value, top) in enumerate(((1_000, 10_000), (9_500, 10_000))):
        d = tmp_path / f"intel-rapl:{i}"
        d.mkdir()
        (d / "energy_uj").write_text(f"{value}\n")
        (d / "max_energy_range_uj").write_text(f"{top}\n")
        (tmp_path / f"intel-rapl:{i}:0").mkdir()         # a sub-domain (core, dram): not summed again
    counter, why = energy.cpu_counter(str(tmp_path))
    assert why == "" and counter.read() == 0.0
    (tmp_path / "intel-rapl:0" / "energy_uj").write_text("3000\n")      # +2000 uJ
    (tmp_path / "intel-rapl:1" / "energy_uj").write_text("500\n")       # wrapped: +1000 uJ
    assert counter.read() == pytest.approx(3000e-6)


def test_no_rapl_is_said_and_the_rows_carry_no_figure(tmp_path):
    counter, why = energy.cpu_counter(str(tmp_path))
    assert counter is None and why.startswith("not measured here")
    if Path("/sys/class/powercap").exists():
        pytest.skip("this machine exposes RAPL: the sweep below would measure")
    proc, out = _run(tmp_path, "-w", "source_terms", "-b", "numpy", "-s", "2^12", "--energy")
    assert proc.returncode == 0, proc.stderr
    (row,) = open_results(out).frame.to_dict("records")
    assert math.isnan(row["energy_j"]) and row["energy_source"].startswith("not measured here")


# Kernels ---------------------------------------------------------------------------------------

def test_kernel_records_round_trip_through_the_row_and_read_as_a_sentence():
    acts = [kernels.Activity("copy", "htod", 2e-6), kernels.Activity("kernel", "cupy_multiply", 5e-6),
            kernels.Activity("kernel", "cupy_power", 4e-6)]
    assert kernels.decode(kernels.encode(acts)) == acts
    assert kernels.decode("") == [] and kernels.decode("[1, 2") == [] and kernels.decode(float("nan")) == []
    said = kernels.summary(acts)
    assert said.startswith("2 kernels (9 µs): cupy_multiply 5 µs, cupy_power 4 µs") and "1 copy" in said


@pytest.mark.gpu
def test_plain_cupy_launches_several_kernels_a_call_and_the_fused_one(tmp_path):
    pytest.importorskip("cupy")
    if kernels.unavailable():
        pytest.skip(kernels.unavailable())
    proc, out = _run(tmp_path, "-w", "source_terms", "-b", "cupy,cupy-fused", "-s", "2^20")
    assert proc.returncode == 0, proc.stderr
    rows = {r["backend"]: r for r in open_results(out.with_suffix(".csv")).frame.to_dict("records")}
    assert rows["cupy"]["kernel_count"] > 1 and rows["cupy-fused"]["kernel_count"] == 1


class ProcessBoard(energy.Counter):
    """A package drawing 10 W idle and 50 W more for each second of this process's CPU time, read
    in steps of 5 ms: what a sweep's calls cost shows as they run, as a RAPL counter would show it."""
    source = "synthetic package"

    def __init__(self) -> None:
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def read(self) -> float:
        t = math.floor((time.perf_counter() - self.t0) / 0.005) * 0.005
        return 10.0 * t + 50.0 * (time.process_time() - self.c0)


def test_a_sweep_with_energy_gives_each_point_its_joules_between_its_lowest_and_highest(monkeypatch):
    from workbench.measure import protocol
    from workbench.measure.engine import SweepSpec, run_sweep
    monkeypatch.setattr(energy, "cpu_counter", lambda root="": (ProcessBoard(), ""))
    monkeypatch.setattr(energy, "MIN_WINDOW_S", 0.1)
    spec = SweepSpec("source_terms", ("numpy",), (2 ** 16, 2 ** 20), "float32", min_repeats=3, budget_s=0.05,
                     rounds=1, energy=True)
    rows = protocol.rows(run_sweep(spec))
    assert [r["status"] for r in rows] == ["ok", "ok"]
    for r in rows:
        assert 0 < r["energy_lo_j"] <= r["energy_j"] <= r["energy_hi_j"], r
        assert r["idle_w"] == pytest.approx(10.0, abs=5.0) and r["power_w"] > r["idle_w"]
        assert r["energy_source"].startswith("synthetic package: updated every") and r["gflop_per_j"] > 0
        # A CPU call has no copies: its whole call is its compute, one reading for both.
        assert (r["energy_e2e_j"], r["power_e2e_w"]) == (r["energy_j"], r["power_w"])
        assert r["energy_j"] == pytest.approx((r["power_w"] - r["idle_w"]) * r["energy_call_s"], rel=1e-9)
    small, large = rows
    assert large["energy_j"] > 4 * small["energy_j"]          # 16x the cells: more than 4x the joules
