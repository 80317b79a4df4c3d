"""Energy of what the user asks about (issue 35): a GPU point's figure is its compute's, read while
the compute runs back to back; its whole call's is read beside it, named as such; each agrees with
its own draw. Held on a synthetic board (idle and working draws known) under a fake GPU whose
copies leave the board idle, as pageable copies leave a real one."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

from helpers import synthetic, use_fake_device
from workbench.catalog.workloads import Phases
from workbench.measure import energy, limits, protocol
from workbench.measure.engine import SweepSpec, run_sweep

IDLE_W, BUSY_W = 70.0, 470.0
COMPUTE_S, COPY_S = 0.5e-3, 2e-3


def spin(seconds: float) -> tuple[float, float]:
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        pass
    return start, time.perf_counter()


class Board(energy.Counter):
    """A board drawing IDLE_W, and BUSY_W while a kernel runs, read as NVML reads one: updated every
    ``step`` seconds, counting whole millijoules."""
    source = "synthetic board"
    unit_j = 1e-3

    def __init__(self, step: float = 0.005) -> None:
        self.step, self.t0 = step, time.perf_counter()
        self.spans: list[tuple[float, float]] = []

    def kernel(self, seconds: float) -> None:
        """The device works for ``seconds`` (the host waits that long at least: a busy machine may
        keep it longer, with the board idle meanwhile, as a real host's delays leave it)."""
        start, _ = spin(seconds)
        self.spans.append((start, start + seconds))

    def read(self) -> float:
        t = self.t0 + math.floor((time.perf_counter() - self.t0) / self.step) * self.step
        busy = sum(max(0.0, min(b, t) - a) for a, b in self.spans)
        joules = IDLE_W * (t - self.t0) + (BUSY_W - IDLE_W) * busy
        return math.floor(joules / self.unit_j) * self.unit_j


@pytest.fixture
def board(registry, monkeypatch):
    """The fake GPU (``fake-a``) on the synthetic board: its kernel works the board, its copies
    take host time while the board idles."""
    use_fake_device(monkeypatch)
    b = Board()
    monkeypatch.setattr(energy, "NvmlCounter", lambda clocks: b)
    monkeypatch.setattr(energy, "MIN_WINDOW_S", 0.1)
    w = registry.add(synthetic("boarded", bytes_moved=lambda n, isz: 2.0 * n * isz))

    def factory(inputs, ctx):
        (x,) = inputs
        s, out = ctx.session, np.zeros_like(x)

        def h2d():
            spin(COPY_S)
            s.run("upload", COPY_S)

        def compute():
            b.kernel(COMPUTE_S)
            s.run("compute", COMPUTE_S)

        def d2h():
            spin(COPY_S)
            s.run("download", COPY_S)
            np.multiply(x, 2, out=out)
            return out
        return Phases(h2d=h2d, compute=compute, d2h=d2h)
    w.implement("fake-a")(factory)
    yield b
    limits.forget()


def test_a_gpu_points_energy_is_its_computes_and_the_whole_calls_is_beside_it(board):
    spec = SweepSpec("boarded", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0, rounds=1, energy=True)
    (row,) = protocol.rows(run_sweep(spec))
    assert row["status"] == "ok", row["message"]
    idle = row["idle_w"]
    assert idle == pytest.approx(IDLE_W, rel=0.05)
    # The compute, back to back: the board works through most of the window (all of it on a quiet
    # host) and draws near its working power; a call costs the kernel's energy.
    assert row["power_w"] > (IDLE_W + BUSY_W) / 2
    assert row["energy_j"] == pytest.approx((BUSY_W - IDLE_W) * COMPUTE_S, rel=0.10)
    # Each figure agrees with its own draw over the time of its calls, and those calls ran as the
    # timed ones did, or the row says they did not (a busy host stretches them).
    assert row["energy_j"] == pytest.approx((row["power_w"] - idle) * row["energy_call_s"], rel=1e-9)
    assert row["energy_e2e_j"] == pytest.approx((row["power_e2e_w"] - idle) * row["energy_e2e_call_s"], rel=1e-9)
    for call, timed, what in ((row["energy_call_s"], row["compute_median_s"], "compute"),
                              (row["energy_e2e_call_s"], row["total_median_s"], "end-to-end call")):
        assert abs(call / timed - 1) <= 0.25 or f"the {what}s read ran" in row["energy_source"]
    # The whole call: the copies leave the board idle, so its draw is near idle, though it costs
    # the compute's energy and no less.
    assert row["power_e2e_w"] < (IDLE_W + BUSY_W) / 2
    assert row["energy_e2e_j"] == pytest.approx(row["energy_j"], rel=0.15)
    assert row["energy_lo_j"] <= row["energy_j"] <= row["energy_hi_j"]
    assert row["energy_e2e_lo_j"] <= row["energy_e2e_j"] <= row["energy_e2e_hi_j"]
    assert row["gflop_per_j"] == pytest.approx(64 / row["energy_j"] / 1e9)      # the compute's
    # The counter named by its update period and its resolution, apart.
    assert row["energy_source"].startswith("synthetic board: updated every 5 ms, counts in 1 mJ; idle"), \
        row["energy_source"]


def test_the_counter_is_named_by_its_period_and_its_resolution_not_by_a_steps_size():
    class Nvml(energy.Counter):
        source, unit_j = "GPU board (NVML)", 1e-3
    said = energy.describe(Nvml(), energy.Resolution(step_s=0.1, step_j=12.009), 120.0)
    assert said == "GPU board (NVML): updated every 100 ms, counts in 1 mJ; idle 120 W taken off"
    assert "12009" not in said and "12 J" not in said


def test_a_reading_is_its_draw_above_idle_times_its_call_on_a_quantised_counter():
    b = Board(step=0.004)
    idle = energy.watts(b, 0.05)
    r = energy.per_call(b, lambda: [b.kernel(COMPUTE_S) for _ in range(4)], 0.1, idle, calls_per=4)
    assert r.joules == pytest.approx((r.watts - r.idle_watts) * r.call_s, rel=1e-9)
    # Within the counter's resolution (1 mJ at each end of the span) and the idle draw's own error.
    slack = (2 * b.unit_j + abs(idle - IDLE_W) * r.seconds) / r.calls
    assert abs(r.joules - (BUSY_W - IDLE_W) * COMPUTE_S) <= slack + 0.05 * r.joules


def test_a_file_of_before_reads_its_gpu_rows_energy_as_the_whole_calls(tmp_path):
    """Schema 4 gave a GPU row the energy of its whole call under ``energy_j``: read back, that
    figure is the whole call's, and no compute figure is made up for it."""
    import json
    from workbench.results import files as result_files
    from workbench.results import rows as results
    rows = [results.empty_row(workload="w", backend=b, size=8, status="ok", host_memory=m, energy_j=j,
                              energy_lo_j=j, energy_hi_j=j, power_w=w, idle_w=120.0, gflop_per_j=1.2,
                              energy_source="GPU board (NVML)" if m else "CPU packages (RAPL)")
            for b, m, j, w in (("cupy", "pageable", 0.0134, 123.0), ("numpy", "", 0.5, 90.0))]
    doc = {"format": result_files.FORMAT, "schema": 4, "rows": rows}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc, allow_nan=True).replace("NaN", "null"))
    frame = result_files.open_results(path).frame.set_index("backend")
    gpu, cpu = frame.loc["cupy"], frame.loc["numpy"]
    assert gpu["energy_e2e_j"] == 0.0134 and gpu["power_e2e_w"] == 123.0
    assert math.isnan(gpu["energy_j"]) and math.isnan(gpu["power_w"]) and math.isnan(gpu["gflop_per_j"])
    assert "the whole call's energy only" in gpu["energy_source"]
    assert cpu["energy_j"] == 0.5 and cpu["power_w"] == 90.0        # a CPU call was all compute then too
    assert cpu["energy_e2e_j"] == 0.5 and cpu["power_e2e_w"] == 90.0  # and its whole call, as today's say
    # The same rows as a CSV of then whose sidecar was lost: its columns say it is of before.
    import pandas as pd
    old = [{k: v for k, v in r.items() if "_e2e" not in k} for r in rows]
    pd.DataFrame(old).to_csv(tmp_path / "old.csv", index=False)
    got = result_files.open_results(tmp_path / "old.csv")
    gpu = got.frame.set_index("backend").loc["cupy"]
    assert got.schema == 4 and gpu["energy_e2e_j"] == 0.0134 and math.isnan(gpu["energy_j"])


def test_a_points_hover_says_whose_energy_each_figure_is():
    from workbench.results import rows as results
    from workbench.views import point_text
    gpu = results.empty_row(backend="cupy-raw", size=2 ** 22, status="ok", host_memory="pageable", energy_j=0.005,
                            power_w=400.0, idle_w=120.0, energy_e2e_j=0.007, power_e2e_w=122.0, gflop_per_j=30.0)
    said = point_text.energy_text(gpu)
    assert said.startswith("energy of the compute: 5 mJ a call (400 W while running, 120 W idle taken off)")
    assert "end to end, copies and all: 7 mJ a call (122 W while running" in said and "30 GFLOP/J" in said
    old = dict(gpu, energy_j=math.nan, power_w=math.nan, gflop_per_j=math.nan,
               energy_source="GPU board (NVML); a file of schema 4: the whole call's energy only, the compute's "
                             "was not read apart")
    said = point_text.energy_text(old)
    assert said.startswith("energy end to end, copies and all: 7 mJ") and said.endswith("was not read apart)")
    # Today's row whose compute the counter could not resolve says that, not that it was never read.
    faint = dict(old, energy_source="GPU board (NVML); the compute's energy is below what the counter resolves "
                                    "over 1.2 s")
    said = point_text.energy_text(faint)
    assert said.endswith("(the compute's energy is below what the counter resolves over 1.2 s)"), said


@pytest.mark.gpu
def test_a_bandwidth_bound_kernel_at_2_26_draws_well_above_idle_and_has_a_figure(tmp_path):
    """On the board itself: cupy-fused's source_terms at 2^26 streams memory near the device's
    bandwidth, so its compute draws well above idle; each figure agrees with its own draw."""
    import subprocess
    import sys
    from pathlib import Path
    pytest.importorskip("cupy")
    from workbench.results.files import open_results
    out = tmp_path / "energy.json"
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", "-w", "source_terms", "-b", "cupy-fused,cupy-raw",
                           "-s", "2^22,2^26", "--energy", "--budget", "0.3", "--out", str(out), "--force", "-q"],
                          capture_output=True, text=True, timeout=400, cwd=str(Path(__file__).parents[1]))
    assert proc.returncode == 0, proc.stderr
    rows = open_results(out).frame.to_dict("records")
    for r in rows:
        assert r["status"] == "ok", r["message"]
        if r["energy_source"].startswith("not measured"):
            pytest.skip(r["energy_source"])
        assert r["energy_j"] > 0, r["energy_source"]
        assert r["energy_j"] == pytest.approx((r["power_w"] - r["idle_w"]) * r["energy_call_s"], rel=1e-6)
        assert r["energy_call_s"] == pytest.approx(r["compute_median_s"], rel=0.25), r["energy_source"]
        if r["size"] == 2 ** 26:
            assert r["power_w"] > r["idle_w"] + 50, r
            assert r["power_e2e_w"] < r["power_w"]           # pageable copies: the board waits on the host
    twins = {r["backend"]: r for r in rows if r["size"] == 2 ** 22}
    # The two kernels do the same work: neither is given twice the other's energy.
    assert 0.5 < twins["cupy-raw"]["energy_j"] / twins["cupy-fused"]["energy_j"] < 2.0
