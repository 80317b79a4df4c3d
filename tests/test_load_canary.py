"""The canary's machine states (``workbench.measure.load``): a point keeps the rounds of one state.

The readings here are drawn from known distributions, as the project's 2-core VM gave them
(2026-12-04): a fast state around 1.6 us with a few % of jitter, a slow one 1.4-1.8x that."""
from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.core import verdicts
from workbench.measure import load
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.measure import protocol

FAST = 1.6e-6


def _readings(rng, states):
    """A (before, after) pair per round: 'fast' both near FAST, 'slow' both at 1.4-1.8x it,
    'changed' one of each (in either order)."""
    def one(slow):
        return FAST * rng.lognormal(0, 0.03) * (rng.uniform(1.4, 1.8) if slow else 1.0)
    out = []
    for s in states:
        pair = {"fast": (False, False), "slow": (True, True), "changed": tuple(rng.permutation([False, True]))}[s]
        out.append([one(p) for p in pair])
    return out


def test_quiet_rounds_all_keep_their_state():
    """A machine that stays in one state: no round is dropped, in any of many draws."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        readings = _readings(rng, ["fast"] * 5)
        best = min(min(p) for p in readings)
        states = load.round_states(readings, best)
        assert states == ["fast"] * 5
        assert load.kept_rounds(states) == [0, 1, 2, 3, 4]


def test_a_canary_that_slows_in_two_rounds_drops_those_rounds():
    rng = np.random.default_rng(1)
    for _ in range(500):
        slow = sorted(rng.choice(5, 2, replace=False))
        truth = ["slow" if r in slow else "fast" for r in range(5)]
        readings = _readings(rng, truth)
        best = min(min(p) for p in readings)
        states = load.round_states(readings, best)
        assert states == truth
        assert load.kept_rounds(states) == [r for r in range(5) if r not in slow]


def test_a_point_mostly_in_the_slow_state_keeps_its_slow_rounds():
    """The sweep saw the fast state earlier (``best``); this point ran 4 of 5 rounds slow: it keeps
    those (its canary_s then says the slow state: an unpaired verdict against a fast point is
    refused)."""
    rng = np.random.default_rng(2)
    readings = _readings(rng, ["slow", "slow", "fast", "slow", "slow"])
    states = load.round_states(readings, FAST * 0.97)
    assert load.kept_rounds(states) == [0, 1, 3, 4]


def test_a_state_that_changed_during_a_round_is_no_state():
    rng = np.random.default_rng(3)
    readings = _readings(rng, ["fast", "changed", "slow", "fast", "changed"])
    states = load.round_states(readings, FAST * 0.97)
    assert states == ["fast", "changed", "slow", "fast", "changed"]
    # Two rounds in one state are too few to stand for the point: none kept, the point is noisy.
    assert load.kept_rounds(states) == []
    # ... unless the point has only two rounds in all.
    assert load.kept_rounds(states, need=2) == [0, 3]


def test_failed_rounds_have_no_state_and_no_best_keeps_every_round():
    assert load.round_states([None, [1e-6, 1e-6]], 1e-6) == [None, "fast"]
    assert load.round_states([[1e-6, 9e-6], [1e-6, 1e-6]], float("inf")) == ["fast", "fast"]


@pytest.fixture
def fake_device(registry, monkeypatch):
    from helpers import synthetic, use_fake_device
    use_fake_device(monkeypatch)
    yield registry.add(synthetic())


@pytest.mark.parametrize("slow_rounds", [(1, 3), (1, 2, 3), ()])
def test_a_point_drops_the_rounds_its_canary_saw_slow(fake_device, monkeypatch, slow_rounds):
    """Rounds in the slow state run the kernel 1.4x as long and read the canary 1.6x: with two of
    five slow, the point's figures are those of the three fast rounds; with three of five slow,
    the slow state's; with none, all five rounds are kept."""
    made, reads = [], []
    rng = np.random.default_rng(4)

    def timed(self):
        r = len(reads) // 2                       # read before and after each round
        reads.append(1)
        return FAST * rng.lognormal(0, 0.02) * (1.6 if r in slow_rounds else 1.0)
    monkeypatch.setattr(load.Canary, "_timed", timed)

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        cost = 0.001 * (1.4 if len(made) in slow_rounds else 1.0)
        made.append(cost)
        return lambda: (ctx.session.run("compute", cost), inputs[0] * 2)[1]

    (row,) = protocol.rows(run_sweep(SweepSpec("synthetic", ("fake-cpu",), (16,), "float64", min_repeats=50,
                                               budget_s=0.0, rounds=5)))
    rounds = json.loads(row["rounds"])
    kept_cost = 0.0014 if len(slow_rounds) >= 3 else 0.001
    kept = [r for r in range(5) if (r in slow_rounds) == (len(slow_rounds) >= 3)]
    assert row["status"] == "ok" and "changed speed" not in row["noisy"]   # (a busy machine may say so too)
    assert row["compute_median_s"] == pytest.approx(kept_cost, rel=1e-6)
    assert rounds["kept"] == kept and all(m is not None for m in rounds["compute"])
    assert rounds["states"] == ["slow" if r in slow_rounds else "fast" for r in range(5)]
    assert row["canary_s"] == pytest.approx(FAST * (1.6 if len(slow_rounds) >= 3 else 1.0), rel=0.1)
    assert ("rounds dropped: the machine changed speed" in row["message"]) == (0 < len(slow_rounds) < 5)


def test_a_point_whose_canary_never_settles_is_noisy(fake_device, monkeypatch):
    states = ["fast", "slow", "changed", "fast", "slow"]
    reads = []
    seq = {"fast": (1, 1), "slow": (1.7, 1.7), "changed": (1, 1.7)}

    def timed(self):
        r, k = divmod(len(reads), 2)
        reads.append(1)
        return FAST * seq[states[r]][k] if r < 5 else FAST
    monkeypatch.setattr(load.Canary, "_timed", timed)

    @fake_device.implement("fake-cpu")
    def _(inputs, ctx):
        return lambda: (ctx.session.run("compute", 0.001), inputs[0] * 2)[1]

    (row,) = protocol.rows(run_sweep(SweepSpec("synthetic", ("fake-cpu",), (16,), "float64", min_repeats=50,
                                               budget_s=0.0, rounds=5)))
    assert "the machine changed speed during the point: a fixed kernel took 1.70x" in row["noisy"]
    assert all(m is not None for m in json.loads(row["rounds"])["compute"])   # nothing dropped: nothing stands


def _row(rounds, states):
    return {"total_median_s": float(np.median(rounds)), "total_ci_lo_s": min(rounds), "total_ci_hi_s": max(rounds),
            "repeats": 50, "noisy": "", "device": "CPU",
            "rounds": json.dumps({"group": "s:0", "total": rounds, "compute": rounds, "states": states})}


def test_rounds_run_in_different_states_are_no_pair():
    """Identical code, its rounds 3 and 4 run in the slow state for one backend and not the other
    (the state switched between them): the three rounds in one state pair, and say 'same'; with
    all five paired, the slow rounds' 1.4x would leave it undecided (or worse)."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        base = list(rng.normal(1.0, 0.005, 5))
        new = list(rng.normal(1.0, 0.005, 5) * np.array([1, 1, 1, 1.4, 1.4]))
        v = verdicts.compare_rows(_row(new, ["fast", "fast", "fast", "slow", "slow"]), _row(base, ["fast"] * 5))
        assert v.verdict == "same"
        assert verdicts.compare_rows(_row(new, ["fast"] * 5), _row(base, ["fast"] * 5)).verdict != "same"


def test_same_is_refused_between_points_measured_in_two_machine_states():
    """1.3x the work measured in the fast state against the twin in the slow state: the medians
    agree, the code does not; nor does the machine (the canaries 1.6 and 2.8 us)."""
    rng = np.random.default_rng(6)
    for _ in range(100):
        slow_state = rng.normal(7.47, 0.02, 5)
        fast_state = rng.normal(7.47, 0.02, 5)
        base, new = _row(list(slow_state), ["slow"] * 5), _row(list(fast_state), ["fast"] * 5)
        base["rounds"], new["rounds"] = (r["rounds"].replace('"s:0"', g) for r, g in ((base, '"s:0"'), (new, '"t:0"')))
        assert verdicts.compare_rows(new, base).verdict == "same"           # no canaries: nothing to tell
        base["canary_s"], new["canary_s"] = 2.8e-6, 1.6e-6
        v = verdicts.compare_rows(new, base)
        assert v.verdict == "undecided" and "another speed" in v.why


def test_a_pair_still_decides_where_one_point_had_no_state_of_its_own():
    """The state noisy reason keeps a point from unpaired verdicts, not from the rounds it shares
    a state with its pair: those three pairs say 'slower' for 1.3x the work."""
    rng = np.random.default_rng(7)
    states = ["fast", "changed", "fast", "slow", "fast"]
    for _ in range(100):
        base = _row(list(rng.normal(1.0, 0.005, 5)), states)
        new = _row(list(rng.normal(1.3, 0.005, 5)), states)
        new["noisy"] = verdicts.STATE_CHANGED + ": a fixed kernel took 1.60x as long in one round as in another"
        assert verdicts.compare_rows(new, base).verdict == "slower"
        new["noisy"] += "; other processes kept 1.0 of 2 cores busy"
        assert verdicts.compare_rows(new, base).verdict == "undecided"


def test_other_processes_make_a_point_noisy_only_where_they_compete_for_its_cores():
    from workbench.measure.load import Load
    assert Load(0.7, 2, own_cores=1.0).noisy          # the 2-core VM: one core each
    assert not Load(0.7, 16, own_cores=1.0).noisy     # a 16-core host: 14 cores idle
    assert Load(0.7, 16, own_cores=15.0).noisy        # a parallel point that wants them all
    assert not Load(0.3, 2, own_cores=1.5).noisy      # the background hum
