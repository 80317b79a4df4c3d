"""Sets on the same axes, without Qt or matplotlib: series, baselines and speedups."""
from __future__ import annotations

import pytest
from helpers import result_set

from workbench.views import compare
from workbench.views import provenance


def test_series_are_the_ok_rows_of_each_backend_of_each_set():
    sets = [result_set("float32"), result_set("float64")]
    drawn = compare.series(sets)
    assert [(s.backend, s.set_index, s.set_label) for s in drawn] == [
        (b, i, dt) for i, dt in enumerate(("float32", "float64")) for b in ("numpy", "numba", "cupy")]
    assert all((s.rows["status"] == "ok").all() and len(s.rows) == 4 for s in drawn)
    assert drawn[0].label == "numpy, float32" and compare.series(sets[:1])[0].label == "numpy"
    assert [s.moves_data for s in drawn[:3]] == [False, False, True]


def test_baseline_choices_offer_each_sets_own_and_every_set_of_a_backend():
    sets = [result_set("float32"), result_set("float64")]
    labels = provenance.labels(sets)
    choices = compare.baseline_choices(sets, labels)
    assert [b.text for b in choices][:3] == ["numpy", "numpy@1", "numpy@2"]
    assert [b.describe(labels) for b in choices][:3] == ["numpy (each set's own)", "numpy (float32)",
                                                         "numpy (float64)"]
    assert [b.text for b in compare.baseline_choices(sets[:1])] == ["numpy", "numba", "cupy"]
    for b in choices:        # every choice reads back as itself
        assert compare.baseline(sets, b.text, labels) == b


def test_speedups_over_another_sets_baseline():
    sets = [result_set("float32"), result_set("float64", scale=2.0)]
    b = compare.baseline(sets, "numpy@2")
    ratios = {(s.backend, s.set_index): (j["total_median_s_base"] / j["total_median_s"]).tolist()
              for s, j in compare.speedups(sets, b)}
    assert ratios[("numpy", 0)] == pytest.approx([2.0] * 4)     # float64 numpy over float32 numpy
    assert ratios[("numpy", 1)] == pytest.approx([1.0] * 4)     # the baseline itself
    assert compare.is_baseline(next(s for s in compare.series(sets) if s.set_index == 1), b)
    own = {(s.backend, s.set_index): j for s, j in compare.speedups(sets, compare.baseline(sets))}
    assert (own[("numba", 1)]["total_median_s_base"] / own[("numba", 1)]["total_median_s"]).tolist() \
        == pytest.approx([2.0] * 4)                               # each set over its own numpy
