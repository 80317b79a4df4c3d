"""The statistics behind every verdict, tested on synthetic samples of known distributions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.core import stats

#: Benchmark times are skewed and heavy-tailed: the interval must hold for these, not only a normal.
DISTRIBUTIONS = {
    "normal": lambda rng, n: rng.normal(1.0, 0.05, n),
    "lognormal": lambda rng, n: rng.lognormal(0.0, 0.3, n),
    "exponential tail": lambda rng, n: 1.0 + rng.exponential(0.1, n),
    "pareto tail": lambda rng, n: 1.0 + rng.pareto(2.5, n) * 0.05,
}
MEDIANS = {"normal": 1.0, "lognormal": 1.0, "exponential tail": 1.0 + 0.1 * math.log(2),
           "pareto tail": 1.0 + 0.05 * (2 ** (1 / 2.5) - 1)}


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("n", [6, 10, 30, 300])
def test_the_interval_covers_the_true_median_at_its_nominal_rate(name, n):
    rng = np.random.default_rng(17)
    trials = 2000
    hits = 0
    for _ in range(trials):
        lo, hi = stats.median_ci(DISTRIBUTIONS[name](rng, n))
        hits += lo <= MEDIANS[name] <= hi
    rate = hits / trials
    # Order statistics cover at least 95 %; 2000 trials put 3 standard errors at 1.5 %.
    assert rate >= 0.95 - 0.015
    if n >= 300:
        assert rate <= 0.975      # and not by making the interval needlessly wide


def test_too_few_samples_give_no_interval_and_no_verdict():
    lo, hi = stats.median_ci([1.0, 1.1, 0.9, 1.0, 1.05])     # 5: [min, max] covers only 94 %
    assert (lo, hi) == (-math.inf, math.inf)
    v = stats.compare(stats.estimate([1.0] * 5), stats.estimate([2.0] * 5))
    assert v.verdict == "undecided"


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_an_a_a_pair_is_never_called_faster_or_slower(name):
    rng = np.random.default_rng(5)
    seen = {v: 0 for v in stats.VERDICTS}
    for _ in range(500):
        a, b = DISTRIBUTIONS[name](rng, 40), DISTRIBUTIONS[name](rng, 40)
        seen[stats.compare(stats.estimate(a), stats.estimate(b)).verdict] += 1
    # The ratio's interval is conservative: a false "faster" or "slower" needs the ratio beyond
    # the 5 % minimum effect too. Allow 1 in 100 over 500 pairs (an expected count far below 1).
    assert seen["faster"] + seen["slower"] <= 5, seen


def test_a_quiet_a_a_pair_is_the_same():
    rng = np.random.default_rng(2)
    a, b = rng.normal(1.0, 0.01, 200), rng.normal(1.0, 0.01, 200)
    v = stats.compare(stats.estimate(a), stats.estimate(b))
    assert v.verdict == "same" and v.lo < 1 < v.hi


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_thirty_percent_slower_is_slower(name):
    rng = np.random.default_rng(11)
    for _ in range(100):     # 200 samples: even a 30 % spread (the lognormal) pins the medians down
        base = DISTRIBUTIONS[name](rng, 200)
        new = DISTRIBUTIONS[name](rng, 200) * 1.3
        v = stats.compare(stats.estimate(new), stats.estimate(base))
        assert v.verdict == "slower", (v, name)
        assert v.lo <= 1.3 <= v.hi
        back = stats.compare(stats.estimate(base), stats.estimate(new))
        assert back.verdict == "faster" and back.speedup == pytest.approx(1 / back.ratio)


def test_a_busy_machine_leaves_a_real_difference_undecided():
    rng = np.random.default_rng(3)
    base = stats.estimate(rng.normal(1.0, 0.01, 50), noisy="other processes kept 1.0 of 2 cores busy")
    new = stats.estimate(rng.normal(1.5, 0.01, 50))
    v = stats.compare(new, base)
    assert v.verdict == "undecided" and "busy" in v.why
    assert stats.compare(new, stats.estimate(rng.normal(1.0, 0.01, 50))).verdict == "slower"


def test_a_busy_machine_is_no_ground_for_same_either():
    """Samples of one known distribution, one set taken on a busy machine: 'same' would be the
    load's coincidence told as a tie of the code."""
    rng = np.random.default_rng(5)
    quiet = stats.estimate(rng.normal(1.0, 0.002, 500))
    busy = stats.estimate(rng.normal(1.0, 0.002, 500), noisy="other processes kept 1.0 of 2 cores busy")
    assert stats.compare(quiet, stats.estimate(rng.normal(1.0, 0.002, 500))).verdict == "same"
    v = stats.compare(busy, quiet)
    assert v.verdict == "undecided" and "busy" in v.why


def test_a_small_but_certain_difference_is_the_same_within_the_minimum_effect():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1.02, 0.002, 500), rng.normal(1.0, 0.002, 500)
    assert stats.compare(stats.estimate(a), stats.estimate(b)).verdict == "same"
    assert stats.compare(stats.estimate(a), stats.estimate(b), min_effect=0.005).verdict == "slower"


def test_rel_noise_is_the_standard_deviation_of_a_normal_over_its_median():
    rng = np.random.default_rng(9)
    assert stats.rel_noise(rng.normal(10.0, 0.5, 200_000)) == pytest.approx(0.05, rel=0.02)


def test_describe_says_the_ratio_and_its_interval():
    v = stats.Verdict("faster", 0.5, 0.4, 0.625)
    assert stats.describe(v) == "2x faster (1.6-2.5)"
    assert stats.describe(stats.Verdict("undecided", 1.1, 0.9, 1.3, "why")) == "undecided: why"


def _row(median, lo, hi, rounds, group="s:0", noisy=""):
    import json
    return {"total_median_s": median, "total_ci_lo_s": lo, "total_ci_hi_s": hi, "repeats": 50, "noisy": noisy,
            "device": "CPU", "rounds": json.dumps({"group": group, "total": rounds, "compute": rounds})}


def test_interleaved_rounds_decide_where_the_drift_makes_each_interval_wide():
    """The machine runs 30 % slower in every other round: each point's own interval spans that
    drift, but round by round the pairs were measured side by side, and their ratio is steady."""
    from workbench.core import verdicts
    rng = np.random.default_rng(1)
    drift = np.array([1.0, 1.3, 1.0, 1.3, 1.0])
    for _ in range(50):
        base = drift * rng.normal(1.0, 0.01, 5)
        slow = drift * 1.3 * rng.normal(1.0, 0.01, 5)
        twin = drift * rng.normal(1.0, 0.01, 5)
        b = _row(1.0, 0.8, 1.4, list(base))
        assert verdicts.compare_rows(_row(1.3, 1.04, 1.82, list(slow)), b).verdict == "slower"
        assert verdicts.compare_rows(_row(1.0, 0.8, 1.4, list(twin)), b).verdict in ("same", "undecided")
        # The same rows from two sweeps (different groups) cannot pair: their intervals overlap.
        other = _row(1.3, 1.04, 1.82, list(slow), group="t:0")
        assert verdicts.compare_rows(other, b).verdict == "undecided"


def test_a_pair_measured_on_a_busy_machine_stays_undecided():
    from workbench.core import verdicts
    base = _row(1.0, 0.99, 1.01, [1.0] * 5, noisy="other processes kept 1.0 of 2 cores busy")
    assert verdicts.compare_rows(_row(1.3, 1.29, 1.31, [1.3] * 5), base).verdict == "undecided"


def test_an_interval_from_rounds_stays_within_the_samples_when_one_round_is_wild():
    """Rounds of a known distribution (lognormal around 2 us), one of them replaced by two samples
    of 8 ms (a preempted round): the interval widens, never below the fastest sample."""
    rng = np.random.default_rng(11)
    rounds = [rng.lognormal(np.log(2e-6), 0.02, 60) for _ in range(2)] + [np.array([8e-3, 8.01e-3])]
    samples = np.concatenate(rounds)
    lo, hi = stats.rounds_ci(samples, [float(np.median(r)) for r in rounds])
    assert samples.min() <= lo <= np.median(samples) <= hi <= samples.max()
    quiet = [rng.lognormal(np.log(2e-6), 0.02, 60) for _ in range(5)]
    qlo, qhi = stats.rounds_ci(np.concatenate(quiet), [float(np.median(r)) for r in quiet])
    assert 1.9e-6 < qlo < 2e-6 < qhi < 2.1e-6      # quiet rounds: a narrow interval, as before


def _bimodal_point(rng, rounds: int, slow_share: float, per_round: int = 60) -> stats.Estimate:
    """A point of ``rounds`` rounds, each in one of two modes (1.0 or 1.15: a layout that aliases or
    not), each round's samples lognormal around its mode with a tail of preempted ones."""
    modes = np.where(rng.random(rounds) < slow_share, 1.15, 1.0)
    parts = [m * rng.lognormal(0.0, 0.02, per_round) * (1 + (rng.random(per_round) < 0.05) * rng.exponential(0.3, per_round))
             for m in modes]
    samples = np.concatenate(parts)
    lo, hi = stats.rounds_ci(samples, [float(np.median(r)) for r in parts])
    return stats.Estimate(float(np.median(samples)), lo, hi, samples.size)


@pytest.mark.parametrize("rounds,slow_share", [(5, 0.5), (5, 0.2), (10, 0.5), (10, 0.2)])
def test_rounds_in_two_modes_keep_identical_code_from_a_verdict(rounds, slow_share):
    """Identical code measured twice, its rounds each in one of two modes 15 % apart (what a layout
    does to twin-a at 2^14). The pooled median jumps between the modes; the interval, centred on
    the rounds' mean, must cover that jump: false verdicts stay within the 95 % intervals' own rate
    (centred on the pooled median they reached 20 % at 10 rounds, half in each mode)."""
    rng = np.random.default_rng(rounds * 100 + int(slow_share * 10))
    found = [stats.compare(_bimodal_point(rng, rounds, slow_share), _bimodal_point(rng, rounds, slow_share)).verdict
             for _ in range(1000)]
    assert sum(v in ("faster", "slower") for v in found) / len(found) <= 0.03


def test_rounds_in_two_modes_still_tell_a_real_difference():
    """The same two-mode rounds, one point doing 1.4x the work: the wider interval must not hide it."""
    rng = np.random.default_rng(5)
    slow = 0
    for _ in range(200):
        a, b = _bimodal_point(rng, 5, 0.5), _bimodal_point(rng, 5, 0.5)
        b = stats.Estimate(b.median * 1.4, b.lo * 1.4, b.hi * 1.4, b.n)
        slow += stats.compare(b, a).verdict == "slower"
    assert slow / 200 >= 0.9


def test_a_busy_machine_leaves_undecided_only_what_its_load_could_explain():
    """Samples of known distributions, the base measured on a busy machine: a 9x difference is
    beyond any time-sharing of a core (at most about 2x) and stands; a 1.5x one does not."""
    rng = np.random.default_rng(21)
    busy = stats.estimate(rng.normal(1.0, 0.01, 200), noisy="the machine changed speed during the point")
    far = stats.compare(stats.estimate(rng.normal(9.0, 0.09, 200)), busy)
    assert far.verdict == "slower" and "busy" in far.why
    near = stats.compare(stats.estimate(rng.normal(1.5, 0.015, 200)), busy)
    assert near.verdict == "undecided" and "busy" in near.why
    assert stats.compare(busy, stats.estimate(rng.normal(9.0, 0.09, 200))).verdict == "faster"


def test_canaries_that_disagree_leave_undecided_only_what_that_speed_could_explain():
    from workbench.core import verdicts

    def row(median, canary):
        return {"total_median_s": median, "total_ci_lo_s": median * 0.99, "total_ci_hi_s": median * 1.01,
                "repeats": 100, "noisy": "", "device": "cpu", "canary_s": canary}
    base = row(1.0, 1.5e-6)
    assert verdicts.compare_rows(row(1 / 500, 2.8e-6), base).verdict == "faster"      # 1.87x apart
    v = verdicts.compare_rows(row(1.3, 2.8e-6), base)
    assert v.verdict == "undecided" and "another speed" in v.why
    assert verdicts.compare_rows(row(1.0, 2.8e-6), base).verdict == "undecided"         # never 'same'


def test_other_processes_leave_even_a_large_difference_undecided():
    """Time-sharing has no bound for parallel code (a barrier waits out whole time slices: 3000x
    seen), so a point busy with other processes keeps no verdict, however large the ratio."""
    rng = np.random.default_rng(22)
    busy = stats.estimate(rng.normal(1.0, 0.01, 200), noisy="other processes kept 1.2 of 2 cores busy")
    v = stats.compare(stats.estimate(rng.normal(9.0, 0.09, 200)), busy)
    assert v.verdict == "undecided" and "busy" in v.why
