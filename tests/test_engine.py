"""The engine's measurement: statistics, first call, verification, errors, stopping, memory (its rounds,
batches and layouts: tests/test_engine_rounds.py)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import synthetic
from workbench.measure.engine import (PointStarted, StopFlag, SweepError, SweepFinished,
                              SweepSpec, run_sweep)
from workbench.measure.cpu import summarize
from workbench.catalog.workloads import Phases
from workbench.measure import protocol
from workbench.measure import sampling
from workbench.results.rows import COLUMNS


@pytest.fixture
def no_memory_pass(monkeypatch):
    """Counts of calls and implementations without the memory pass's one of each after the rounds
    (``Point.measure_memory``: tested on its own in tests/test_memory_truth.py)."""
    from workbench.measure.point import Point
    monkeypatch.setattr(Point, "measure_memory", lambda self: None)


def rows_of(spec, stop=None):
    return protocol.rows(run_sweep(spec, stop))


@pytest.fixture
def fake_device(registry, monkeypatch):
    """The fake backends on the synthetic clock: budgets and first calls read it too."""
    from helpers import use_fake_device
    use_fake_device(monkeypatch)
    yield registry.add(synthetic())


def test_statistics_of_a_known_duration(fake_device):
    costs = [0.001, 0.002, 0.003, 0.004, 0.005]          # a repeat's cost cycles through these
    calls = []

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        def run():
            ctx.session.run("compute", costs[len(calls) % 5])
            calls.append(1)
            return inputs[0] * 2
        return run

    (row,) = rows_of(SweepSpec("synthetic", ("fake-cpu",), (16,), "float64", min_repeats=5, budget_s=0.05,
                               rounds=1))
    assert row["status"] == "ok"
    assert (row["compute_min_s"], row["compute_q1_s"], row["compute_median_s"], row["compute_q3_s"],
            row["compute_max_s"]) == pytest.approx((0.001, 0.002, 0.003, 0.004, 0.005), abs=2e-4)
    # The budget is reached as well as the minimum count: repeats until 50 ms have passed.
    spent, n = 0.0, 0
    while spent < 0.05 - 1e-12:
        spent += costs[(n + 1) % 5]                       # call 0 was the first call
        n += 1
    assert row["repeats"] == n
    assert row["gflops"] == pytest.approx(16 / row["compute_median_s"] / 1e9)


def test_first_call_is_kept_out_of_the_statistics(fake_device, no_memory_pass):
    calls = []

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        def run():
            ctx.session.run("compute", 0.05 if not calls else 0.001)   # the first call "compiles"
            calls.append(1)
            return inputs[0] * 2
        return run

    (row,) = rows_of(SweepSpec("synthetic", ("fake-cpu",), (16,), "float64", min_repeats=3, budget_s=0.0,
                               rounds=1))
    assert row["first_call_s"] == pytest.approx(0.05)
    assert row["compute_max_s"] == pytest.approx(0.001)
    assert row["repeats"] == 3 and len(calls) == 4


def test_phases_are_timed_apart(fake_device):
    @fake_device.implement("fake-a")
    def _(inputs, ctx):
        (x,) = inputs
        s = ctx.session
        return Phases(h2d=lambda: s.run("upload", 0.003), compute=lambda: s.run("compute", 0.001),
                      d2h=lambda: (s.run("download", 0.002), x * 2)[1])

    (row,) = rows_of(SweepSpec("synthetic", ("fake-a",), (16,), "float64", min_repeats=5, budget_s=0.0))
    assert row["h2d_s"] == pytest.approx(0.003)
    assert row["compute_median_s"] == pytest.approx(0.001)
    assert row["d2h_s"] == pytest.approx(0.002)
    assert row["total_median_s"] == pytest.approx(0.006)


def test_a_wrong_result_is_reported_wrong(registry):
    w = registry.add(synthetic())
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2 + 1))

    (row,) = rows_of(SweepSpec("synthetic", ("numpy",), (16,), "float32", min_repeats=1, budget_s=0.0))
    assert row["status"] == "wrong" and not row["verified"]
    assert row["max_rel_error"] == pytest.approx(1 / 30)
    assert "exceeds the float32 tolerance" in row["message"]


def test_a_failing_point_does_not_end_the_sweep(registry):
    w = registry.add(synthetic())

    @w.implement("numpy")
    def _(inputs, ctx):
        if ctx.size == 8:
            raise MemoryError("pretend the device is full")
        return lambda: inputs[0] * 2

    rows = rows_of(SweepSpec("synthetic", ("numpy",), (4, 8, 16), "float64", min_repeats=1, budget_s=0.0))
    assert [r["status"] for r in rows] == ["ok", "error", "ok"]
    assert rows[1]["message"] == "MemoryError: pretend the device is full"
    assert all(set(r) == set(COLUMNS) for r in rows)


def test_stop_is_honoured_between_repeats(registry, monkeypatch):
    monkeypatch.setattr(sampling, "CPU_BATCH_S", 0.0)     # one call a sample: the flag is seen after each
    w = registry.add(synthetic())
    stop = StopFlag()
    calls = []

    @w.implement("numpy")
    def _(inputs, ctx):
        def run():
            calls.append(1)
            if len(calls) == 4:
                stop.stop()
            return inputs[0] * 2
        return run

    events = list(run_sweep(SweepSpec("synthetic", ("numpy",), (4, 8, 16), "float64",
                                      min_repeats=100, budget_s=0.0), stop))
    rows = protocol.rows(events)
    assert len(rows) == 1 and rows[0]["status"] == "cancelled"
    assert rows[0]["repeats"] == 3          # first call + 3 repeats, then the flag was seen
    assert len(calls) == 4
    assert isinstance(events[-1], SweepFinished) and events[-1].cancelled


def test_events_are_plain_data_in_order(registry):
    w = registry.add(synthetic())
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
    events = list(run_sweep(SweepSpec("synthetic", ("numpy",), (4, 8), "float64", min_repeats=1, budget_s=0)))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["SweepStarted", "MakingInputs", "PointStarted", "PointFinished", "MakingInputs", "PointStarted",
                     "PointFinished", "SweepFinished"]
    started = [e for e in events if isinstance(e, PointStarted)]
    assert [(e.index, e.total, e.size) for e in started] == [(0, 2, 4), (1, 2, 8)]
    import pickle
    from workbench.results.rows import to_frame
    back = pickle.loads(pickle.dumps(events))                # crosses a process unchanged
    assert [type(e) for e in back] == [type(e) for e in events] and back[-1] == events[-1]
    assert to_frame(protocol.rows(back)).equals(to_frame(protocol.rows(events)))      # (NaN != NaN: compare as frames)
    assert events[-1].points == 2 and not events[-1].cancelled


def test_a_sweep_resumes_at_a_given_point(registry):
    """What a supervisor does after its engine died: the same plan, from the next index on."""
    w = registry.add(synthetic())
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
    spec = SweepSpec("synthetic", ("numpy",), (4, 8, 16), "float64", min_repeats=1, budget_s=0)
    events = list(run_sweep(spec, first=1))
    assert [e.index for e in events if isinstance(e, PointStarted)] == [1, 2]
    assert [r["size"] for r in protocol.rows(events)] == [8, 16]
    assert events[0].total == 3


def test_bad_sweep_yields_an_error_event():
    events = list(run_sweep(SweepSpec("no-such-workload", ("numpy",), (4,))))
    assert isinstance(events[0], SweepError) and "valid:" in events[0].message


def test_peak_host_memory_sees_an_allocation(registry):
    w = registry.add(synthetic())
    nbytes = 200 * 2**20

    @w.implement("numpy")
    def _(inputs, ctx):
        def run():
            scratch = np.ones(nbytes // 8)     # touched, so resident
            return inputs[0] * 2 + scratch[0] - 1
        return run

    (row,) = rows_of(SweepSpec("synthetic", ("numpy",), (16,), "float64", min_repeats=1, budget_s=0.0))
    if np.isnan(row["peak_host_bytes"]):
        pytest.skip("peak host memory needs Linux /proc/self/clear_refs")
    assert 0.95 * nbytes <= row["peak_host_bytes"] < 2 * nbytes   # pages, not bytes: a little slack


def test_summarize_quartiles():
    s = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["min"], s["q1"], s["median"], s["q3"], s["max"]) == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert np.isnan(summarize([])["median"])


def _device_workload(registry, monkeypatch, compute_cost):
    """A workload on the fake device whose compute costs ``compute_cost(state)`` synthetic seconds."""
    from helpers import FakeClock, FakeGpuSession, fake_backends
    from workbench.catalog import backends
    from workbench.measure import sampling
    for name, backend in fake_backends().items():
        monkeypatch.setitem(backends.BACKENDS, name, backend)
    monkeypatch.setattr(FakeGpuSession, "instances", [])
    monkeypatch.setattr(sampling, "clock", FakeClock.now)
    w = registry.add(synthetic())
    state = {"cold": False}

    @w.implement("fake-a")
    def _(inputs, ctx):
        (x,) = inputs
        s = ctx.session

        def h2d():
            s.run("upload", 0.002)
            state["cold"] = True

        def compute():
            s.run("compute", compute_cost(state))
            state["cold"] = False
        return Phases(h2d=h2d, compute=compute, d2h=lambda: s.run("download", 0.0005) or x * 2)
    return FakeGpuSession


def test_device_compute_is_timed_back_to_back(registry, monkeypatch):
    """With transfer phases, compute statistics come from back-to-back computes; the end-to-end
    total keeps the compute that ran right after the upload (a GPU that idled through a copy)."""
    _device_workload(registry, monkeypatch, lambda state: 0.004 if state["cold"] else 0.001)
    (row,) = rows_of(SweepSpec("synthetic", ("fake-a",), (16,), "float64", min_repeats=5, budget_s=0.0))
    assert row["status"] == "ok"
    assert row["compute_median_s"] == pytest.approx(0.001)
    assert row["total_median_s"] == pytest.approx(0.002 + 0.004 + 0.0005)
    assert row["h2d_s"] == pytest.approx(0.002) and row["d2h_s"] == pytest.approx(0.0005)


def test_an_overlapped_call_is_the_end_to_end_figure_and_the_phases_alone_its_limit(registry, monkeypatch):
    """Phases.whole (the overlap workload's chunked call on several streams): its time is the
    row's end to end and its result the one verified; h2d, compute and d2h are still timed alone,
    and their max is the limit the table and the hover state (workbench.views.overlap)."""
    from helpers import FakeClock, FakeGpuSession, fake_backends
    from workbench.catalog import backends
    from workbench.views import overlap
    for name, backend in fake_backends().items():
        monkeypatch.setitem(backends.BACKENDS, name, backend)
    monkeypatch.setattr(FakeGpuSession, "instances", [])
    monkeypatch.setattr(sampling, "clock", FakeClock.now)
    w = registry.add(synthetic())
    wholes = []

    @w.implement("fake-a")
    def _(inputs, ctx):
        (x,) = inputs
        s = ctx.session

        def whole():
            s.run("overlapped call", 0.0031)
            wholes.append(1)
            return x * 2
        # the phases alone return a wrong result: only the overlapped call's may be verified
        return Phases(h2d=lambda: s.run("upload", 0.003), compute=lambda: s.run("compute", 0.001),
                      d2h=lambda: s.run("download", 0.003) or x * 0, whole=whole)
    (row,) = rows_of(SweepSpec("synthetic", ("fake-a",), (16,), "float64", min_repeats=5, budget_s=0.0))
    assert row["status"] == "ok" and row["verified"], row["message"]
    assert row["total_median_s"] == pytest.approx(0.0031)
    assert (row["h2d_s"], row["compute_median_s"], row["d2h_s"]) == pytest.approx((0.003, 0.001, 0.003))
    assert overlap.limit_s(row) == pytest.approx(0.003) and overlap.limiting(row) == "h2d"
    assert "1.03x its limit" in overlap.limit_text(row)
    assert len(wholes) >= 1 + 5 + 1        # the first call, each end-to-end sample, the one verified


def test_short_device_computes_are_timed_in_warmed_up_bursts(registry, monkeypatch, no_memory_pass):
    """A 0.1 ms kernel is timed in bursts of 10 (1 ms), after 20 ms of unrecorded warm-up."""
    fake = _device_workload(registry, monkeypatch, lambda state: 1e-4)
    (row,) = rows_of(SweepSpec("synthetic", ("fake-a",), (16,), "float64", min_repeats=5, budget_s=0.0, rounds=1))
    assert row["compute_median_s"] == pytest.approx(1e-4)
    assert row["host_issue_s"] == pytest.approx(1e-4)        # the fake device works as it is issued
    assert row["repeats"] == 5                               # samples: one per burst
    (session,) = fake.instances
    computes = sum(what == "compute" for what, _ in session.log)
    burst = round(sampling.BURST_S / 1e-4)
    warmup_bursts = round(sampling.WARMUP_S / sampling.BURST_S)
    # first call, end to end, warm-up, samples, the final one verified, then 5 calls timed with their wait
    assert computes == 1 + 5 + burst * (warmup_bursts + 5) + 5


def _staged(w, transfers: bool):
    """An implementation of two stages, each timed with the session's clock, as a pipeline does."""
    @w.implement("numpy")
    def _(inputs, ctx):
        (x,) = inputs
        last = {}

        def compute():
            last.clear()
            last["double"], y = ctx.session.timed(lambda: x * 2)
            last["double->copy"], y = ctx.session.timed(lambda: y.copy())
            return y
        return Phases(compute=compute, stages=lambda: last,
                      **(dict(h2d=lambda: None, d2h=lambda: x * 2) if transfers else {}))


@pytest.mark.parametrize("transfers", [False, True])
def test_stages_of_a_typical_repeat_are_reported(registry, transfers):
    from workbench.results.rows import decode_stages
    _staged(registry.add(synthetic()), transfers)
    (row,) = rows_of(SweepSpec("synthetic", ("numpy",), (4096,), "float64", min_repeats=7, budget_s=0.0))
    assert row["status"] == "ok"
    stages = decode_stages(row["stages"])
    assert list(stages) == ["double", "double->copy"]               # in the order they ran
    assert all(s > 0 for s in stages.values())
    # Stages of one repeat, timed inside its compute: they add up to no more than the median compute.
    assert sum(stages.values()) <= row["compute_median_s"]


def test_rows_without_stages_say_so_with_an_empty_cell(registry):
    w = registry.add(synthetic())
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
    (row,) = rows_of(SweepSpec("synthetic", ("numpy",), (8,), "float64", min_repeats=1, budget_s=0.0))
    assert row["stages"] == ""
