"""The engine's rounds: each makes the implementation anew, disagreeing rounds, the stopping rule and
stops mid-round, tiny calls timed in batches, the inputs' layout drawn per round, host memory, copies
both ways at once. (Statistics, phases, errors and memory: tests/test_engine.py.)"""
from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import synthetic
from test_engine import fake_device, no_memory_pass, rows_of  # noqa: F401 - the fixtures
from workbench.measure.engine import StopFlag, SweepFinished, SweepSpec, run_sweep
from workbench.catalog.workloads import Phases
from workbench.measure import protocol
from workbench.measure import sampling


def test_each_round_makes_the_implementation_anew_and_only_the_first_call_counts(fake_device, no_memory_pass):
    made, calls = [], []

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        made.append(len(calls))

        def run():
            ctx.session.run("compute", 0.05 if not calls else 0.001)   # the first call "compiles"
            calls.append(1)
            return inputs[0] * 2
        return run

    (row,) = rows_of(SweepSpec("synthetic", ("fake-cpu",), (16,), "float64", min_repeats=6, budget_s=0.0, rounds=3))
    assert len(made) == 3                                   # one implementation per round
    assert row["repeats"] == 6 and len(calls) == 3 + 6      # a first call per round, 2 samples each
    assert row["first_call_s"] == pytest.approx(0.05) and row["compute_max_s"] == pytest.approx(0.001)


def test_rounds_that_disagree_widen_the_interval(fake_device):
    rounds = []

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        cost = (0.001, 0.0013)[len(rounds) % 2]      # where a round's buffers land changes its speed
        rounds.append(cost)
        return lambda: (ctx.session.run("compute", cost), inputs[0] * 2)[1]

    (row,) = rows_of(SweepSpec("synthetic", ("fake-cpu",), (16,), "float64", min_repeats=30, budget_s=0.0, rounds=2))
    # Each round alone is exact; pooled, the interval must still hold both rounds' medians (and stays within the samples).
    # (two rounds: a t-interval of 12.7 standard errors each side of the pooled median)
    assert row["compute_ci_lo_s"] <= 0.001 and row["compute_ci_hi_s"] >= 0.0013
    assert not row["converged"]


def test_typical_stages_come_from_the_lower_median_repeat():
    from workbench.measure.cpu import typical_stages
    stages = [{"a": float(k)} for k in range(4)]
    assert typical_stages([3.0, 1.0, 2.0], stages[:3]) == {"a": 2.0}        # odd: the median repeat
    assert typical_stages([4.0, 1.0, 3.0, 2.0], stages) == {"a": 3.0}       # even: the lower middle one
    assert typical_stages([1.0, 2.0], []) == {}
    assert typical_stages([1.0, 2.0], stages[:1]) == {}                     # not one per repeat: none


def test_counts_that_depend_on_the_variant_are_used(registry):
    w = registry.add(synthetic(variants=("small", "large"),
                               counts=lambda n, isz, v: (n * (1.0 if v == "small" else 10.0),
                                                         n * isz * (2.0 if v == "small" else 20.0))))
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
    rows = rows_of(SweepSpec("synthetic", ("numpy",), (64,), "float64", min_repeats=1, budget_s=0.0))
    by = {r["variant"]: r for r in rows}
    for variant, f in (("small", 1.0), ("large", 10.0)):
        r = by[variant]
        assert r["gflops"] * r["compute_median_s"] * 1e9 == pytest.approx(64 * f)
        assert r["gbps"] * r["compute_median_s"] * 1e9 == pytest.approx(64 * 8 * 2 * f)


def test_time_left_comes_from_the_stopping_rule():
    from workbench.measure.engine import time_left
    spec = SweepSpec("synthetic", ("numpy",), (16,), "float64", budget_s=0.5)
    assert time_left(spec, 0, 10, 0.0) == (5.0, 5.0)            # before any point: the ceiling
    assert time_left(spec, 5, 10, 1.0) == (1.0, 2.5)            # quick points: their pace
    assert time_left(spec, 5, 10, 20.0) == (2.5, 2.5)           # never past the ceiling
    assert time_left(spec, 10, 10, 3.0) == (0.0, 0.0)


@pytest.fixture
def engine_heap():
    """The heap as the engine's own process has it: what the tests before made is frozen out of
    the collections each measuring scope starts with (``host_memory``: ``gc.collect()``). With the
    windows of the tests before in it, this test's hundreds of sweeps took 200-300 s, not 30."""
    import gc
    gc.freeze()
    yield
    gc.unfreeze()


def test_stop_at_every_moment_of_interleaved_rounds_leaves_whole_points(registry, engine_heap):
    """Two backends whose rounds interleave, stopped after the k-th call for every k until the
    sweep ends on its own: each time the sweep says it was cancelled (or finished), the points of
    finished sizes are ok and whole (every round, every repeat they asked for), the size in
    progress gives one row per backend it began, marked cancelled, and no point comes twice."""
    w = registry.add(synthetic())
    calls, stop_at, flag = [0], [0], [StopFlag()]

    def counting(inputs, ctx):
        def run():
            calls[0] += 1
            if calls[0] == stop_at[0]:
                flag[0].stop()
            return inputs[0] * 2
        return run
    w.implement("numpy")(counting)
    w.implement("numba", note="the same code: only the name differs")(counting)
    spec = SweepSpec("synthetic", ("numpy", "numba"), (4, 8, 16), "float64", min_repeats=6, rounds=3,
                     budget_s=0.0, min_time_s=0.0)
    calls[0], stop_at[0] = 0, -1
    whole = protocol.rows(run_sweep(spec))
    per_run, seen = calls[0], set()
    assert [r["status"] for r in whole] == ["ok"] * 6
    for k in range(1, per_run + 1):
        calls[0], stop_at[0] = 0, k
        flag[0] = StopFlag()
        events = list(run_sweep(spec, flag[0]))
        rows = protocol.rows(events)
        keys = [(r["size"], r["backend"]) for r in rows]
        assert len(keys) == len(set(keys)), (k, keys)
        finished = events[-1]
        assert isinstance(finished, SweepFinished)
        sizes = sorted({r["size"] for r in rows})
        for r in rows:
            if r["size"] < sizes[-1] or not finished.cancelled:
                assert r["status"] == "ok" and r["repeats"] >= spec.min_repeats, (k, r["status"], r["repeats"])
            else:
                assert r["status"] in ("ok", "cancelled"), (k, r["status"])
        assert finished.cancelled or len(rows) == 6
        seen.update(r["status"] for r in rows)
    assert seen == {"ok", "cancelled"}      # both kinds of moment were hit


@pytest.mark.parametrize("one,calls", [(1e-6, 20), (0.4e-6, 50), (1e-9, 100), (25e-6, 1), (0.0, 1), (math.nan, 1)])
def test_a_tiny_cpu_call_is_timed_in_batches(one, calls):
    assert sampling.cpu_batch(one) == calls


def test_batched_cpu_samples_are_the_mean_call_of_their_batch(registry, monkeypatch, no_memory_pass):
    """After a first sample of one call, each sample times a batch and divides by its size: the
    calls made are the first call, the sizing sample, and a batch per later sample."""
    monkeypatch.setattr(sampling, "CPU_BATCH_S", 1.0)      # every call here is 'tiny': batches of 100
    w = registry.add(synthetic())
    calls = []

    @w.implement("numpy")
    def _(inputs, ctx):
        return lambda: calls.append(1) or inputs[0] * 2
    (row,) = rows_of(SweepSpec("synthetic", ("numpy",), (16,), "float64", min_repeats=3, budget_s=0.0,
                               rounds=1, noise=0.0))
    assert row["status"] == "ok" and row["repeats"] == 3
    assert len(calls) == 1 + 1 + 2 * sampling.MAX_CPU_BATCH


@pytest.mark.parametrize("stop_after,status", [(2, "cancelled"), (7, "ok")])
def test_stop_keeps_the_point_in_progress_once_it_has_its_fewest_samples(registry, stop_after, status):
    """Stopped after its first call and one sample, a point has nothing to show (cancelled, not
    verified); stopped after five samples of the three it needs, it is kept, verified, and says so."""
    w = registry.add(synthetic())
    calls, flag = [], StopFlag()

    @w.implement("numpy")
    def _(inputs, ctx):
        def run():
            calls.append(1)
            if len(calls) == stop_after:
                flag.stop()
            return inputs[0] * 2
        return run
    spec = SweepSpec("synthetic", ("numpy",), (16, 32), "float64", min_repeats=3, rounds=1, budget_s=60.0,
                     noise=0.0, min_time_s=0.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sampling, "CPU_BATCH_S", 0.0)      # one call a sample: the flag is seen after each
        rows = protocol.rows(run_sweep(spec, flag))
    assert [r["status"] for r in rows] == [status]
    if status == "ok":
        assert rows[0]["verified"] and rows[0]["repeats"] == stop_after - 1
        assert "stopped after" in rows[0]["message"]


def test_each_round_places_the_inputs_anew_at_another_page_offset(fake_device, no_memory_pass):
    """The layout is sampled: each round's inputs are a fresh copy at a random offset in its page
    (``sampling.layout``), equal to the engine's, so rounds do not share one process's layout."""
    seen = []

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        seen.append((inputs[0].ctypes.data, inputs[0].copy()))
        return lambda: (ctx.session.run("compute", 0.001), inputs[0] * 2)[1]

    (row,) = rows_of(SweepSpec("synthetic", ("fake-cpu",), (4096,), "float64", min_repeats=10, budget_s=0.0, rounds=5))
    assert row["status"] == "ok" and len(seen) == 5
    assert all(np.array_equal(x, np.arange(4096, dtype=np.float64)) for _, x in seen)
    offsets = {address % 4096 for address, _ in seen}
    assert len(offsets) >= 3, offsets          # 5 draws of 256: fewer than 3 offsets has p < 1e-5
    assert all(address % sampling.PLACE_ALIGN == 0 for address, _ in seen)


def test_what_an_implementation_allocates_itself_lands_elsewhere_round_after_round():
    """An output made by the implementation (np.empty_like, as the twins and most NumPy code do)
    is not placed by the engine; the round's decoys keep it from the one freed place of its size.
    Without them: 2 to 9 page offsets in 24 rounds (glibc, this VM); with them 13 to 21.
    Measured in a process of its own, as an engine is: inside this suite's process the heap's
    history from hundreds of earlier tests decides where a block lands (9 offsets once in CI)."""
    import subprocess
    import sys
    script = """
import numpy as np
from workbench.measure import sampling
x0 = np.random.default_rng(0).random(2 ** 16).astype(np.float32)
offsets = []
for r in range(24):
    placed = sampling.layout((x0,), sampling.layout_rng("decoys", r))
    out = np.empty_like(placed.inputs[0])
    out[::1024] = 1.0
    offsets.append(out.ctypes.data % 4096)
    del out, placed
print(*offsets)
"""
    # A user's process, not one an earlier test's Dask nanny set MALLOC_TRIM_THRESHOLD_ in: glibc then
    # maps every such buffer on a page of its own, at one offset (CI: 9 offsets; the cluster's start
    # now puts the environment back, workbench.cluster.connect.start_local).
    import os
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    offsets = [int(v) for v in done.stdout.split()]
    assert len(offsets) == 24 and len(set(offsets)) >= 12, offsets


def test_the_backends_of_one_round_share_its_layout_and_another_process_draws_its_own():
    """A paired comparison compares code on one layout; a rerun elsewhere draws layouts anew."""
    import subprocess
    import sys
    inputs = (np.arange(1000, dtype=np.float32), np.ones((8, 8)), "not an array")
    a = sampling.layout(inputs, sampling.layout_rng("s:0", 1))
    b = sampling.layout(inputs, sampling.layout_rng("s:0", 1))
    assert [x.ctypes.data % 4096 for x in a.inputs[:2]] == [x.ctypes.data % 4096 for x in b.inputs[:2]]
    assert a.inputs[2] == "not an array" and a.inputs[1].shape == (8, 8) and type(a.inputs) is tuple
    assert all(np.array_equal(x, y) for x, y in zip(a.inputs[:2], inputs[:2]))
    assert all(x.ctypes.data != y.ctypes.data for x, y in zip(a.inputs[:2], inputs[:2]))
    code = ("from workbench.measure import sampling; "
            "print([int(sampling.layout_rng('s:0', r).integers(1 << 30)) for r in range(4)])")
    draws = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
             for _ in range(2)}
    assert len(draws) == 2


def test_layouts_drawn_per_round_keep_identical_code_from_a_verdict():
    """Synthetic: a kernel whose time is 1.0 or 1.3 by its layout (bimodal, 1 in 4 slow), a second
    process measuring the same code. One layout per process (the rounds all alike) gives a false
    verdict often; a layout drawn per round lets the rounds' disagreement cover it."""
    from workbench.core import stats
    rng = np.random.default_rng(7)

    def point(per_round: bool) -> stats.Estimate:
        modes = rng.random(5 if per_round else 1) < 0.25
        medians = np.where(np.resize(modes, 5), 1.3, 1.0) * np.exp(rng.normal(0, 0.003, 5))
        samples = np.concatenate([m * np.exp(rng.normal(0, 0.01, 40)) for m in medians])
        lo, hi = stats.rounds_ci(samples, medians)
        return stats.Estimate(float(np.median(samples)), lo, hi, samples.size)

    def false_verdicts(per_round: bool) -> float:
        found = [stats.compare(point(per_round), point(per_round)).verdict for _ in range(400)]
        return sum(v in ("faster", "slower") for v in found) / len(found)
    assert false_verdicts(per_round=False) > 0.25
    assert false_verdicts(per_round=True) <= 0.05      # the 95 % intervals' own error rate


def test_a_variant_that_names_its_host_memory_is_the_rows_whatever_the_sweep_chose():
    """overlap's 'pinned 4 streams' holds pinned buffers in a pageable sweep: its row says pinned."""
    from workbench.catalog.workloads import REGISTRY
    from workbench.measure import engine
    w = REGISTRY.get("overlap")
    spec = SweepSpec("overlap", ("cupy",), (16,), "float32")
    assert engine.host_memory(w, spec, "pinned 4 streams", "cupy") == "pinned"
    assert engine.host_memory(w, spec, "pageable sequential", "cupy") == "pageable"
    assert engine.host_memory(w, spec, "pinned 4 streams", "numba") == ""
    assert engine.host_memory(REGISTRY.get("transfer"), dataclasses_replace(spec, host_memory="pinned"), "", "cupy") == "pinned"


def dataclasses_replace(obj, **kw):
    import dataclasses
    return dataclasses.replace(obj, **kw)


@pytest.mark.parametrize("duplex, together", [((1e-3, 1e-3, 1.5e-3), 0.75), ((1e-3, 1e-3, 2.4e-3), 1.0),
                                              ((1e-3, 1e-3, 0.7e-3), 0.5), ("fails", None), (None, None)])
def test_copies_both_ways_at_once_bound_an_overlapped_call_where_the_device_measured_them(
        registry, monkeypatch, duplex, together):
    """A device whose copies in and out take 0.75 of their sum together: an overlapped call's copies
    cannot beat that, and the row's limit says so (on the H100 host: 7.35 ms against 4.87 ms each
    alone). A session that fails the measurement, or has none, loses the figure, never the point."""
    from helpers import FakeClock, FakeGpuSession, fake_backends
    from workbench.catalog import backends
    from workbench.measure import limits
    from workbench.views import overlap
    for name, backend in fake_backends().items():
        monkeypatch.setitem(backends.BACKENDS, name, backend)
    monkeypatch.setattr(FakeGpuSession, "instances", [])
    monkeypatch.setattr(sampling, "clock", FakeClock.now)
    limits.forget()

    def measured(self, nbytes):
        if duplex == "fails":
            raise MemoryError("out of pinned memory")
        return duplex
    if duplex is not None:
        monkeypatch.setattr(FakeGpuSession, "duplex_seconds", measured, raising=False)
    w = registry.add(synthetic())

    @w.implement("fake-a")
    def _(inputs, ctx):
        (x,) = inputs
        s = ctx.session
        return Phases(h2d=lambda: s.run("upload", 0.003), compute=lambda: s.run("compute", 0.001),
                      d2h=lambda: s.run("download", 0.003) or x * 2,
                      whole=lambda: (s.run("overlapped", 0.0047), x * 2)[1])
    spec = SweepSpec("synthetic", ("fake-a",), (16,), "float64", min_repeats=5, budget_s=0.0, host_memory="pinned")
    (row,) = rows_of(spec)
    (pageable,) = rows_of(dataclasses_replace(spec, host_memory="pageable"))
    limits.forget()
    assert row["status"] == "ok", row["message"]
    assert row["overlapped"] is True or row["overlapped"] == True  # noqa: E712 - a numpy bool from the frame
    # A pageable copy waits on the host: the pinned both-at-once rate says nothing of it.
    assert math.isnan(pageable["copies_together_s"])
    if together is None:
        assert math.isnan(row["copies_together_s"]) and overlap.limit_s(row) == pytest.approx(0.003)
        return
    # Clamped to [0.5, 1]: a noisy reading past either end is no rate a link has.
    assert row["copies_together_s"] == pytest.approx(together * 0.006)
    assert overlap.limit_s(row) == pytest.approx(max(0.003, together * 0.006))
    if together == 0.75:
        assert overlap.limiting(row) == "copies at once"
        assert "1.04x its limit" in overlap.limit_text(row) and "copies at once 4.5 ms" in overlap.limit_text(row)
