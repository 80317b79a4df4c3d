"""How the summary says a later set's verdicts against the first: sizes of one verdict said once as
a range, long lines capped (issue 38: two sets of 5,000 points made 100 kB of summary). Qt-free:
what the window shows is what an export would say. The verdicts themselves are decided with each
point's interval (``workbench.core.verdicts``); these tests only read how they are said."""
from __future__ import annotations

import math
import re

from helpers import measured

from workbench.core import stats, verdicts
from workbench.core.sizes import fmt_size
from workbench.results import rows as results
from workbench.results.files import ResultSet
from workbench.views import live, overlay_verdicts
from workbench.views.compare import Overlay


def a_set(factors: dict[str, list[float]], source: str) -> ResultSet:
    """One point per size for each backend, its times multiplied by the factor for that size
    (intervals +-1 %, so a factor of 1.5 is decided 'slower', 1.0 'same')."""
    rows = []
    for backend, by_size in factors.items():
        for i, f in enumerate(by_size):
            t = 1e-3 * (i + 1) * f
            rows.append(measured(workload="source_terms", backend=backend, device="CPU: Test CPU",
                                 size=2 ** 10 + 64 * i, dtype="float32", host_memory="", compute_median_s=t,
                                 total_median_s=t, status="ok"))
    return ResultSet(results.to_frame(rows), source=source)


def said(base: ResultSet, new: ResultSet) -> overlay_verdicts.SetVerdicts:
    (sv,) = overlay_verdicts.of_sets([base, new], ["monday", "tuesday"])
    return sv


def test_sizes_of_one_verdict_are_one_range_with_their_factors_and_intervals():
    """Ten sizes the same, ten 1.5x slower, one 2x faster, ten the same: four runs, each sized and
    with the span its points' intervals cover; a lone size between two runs is not merged away."""
    n = 31
    base = a_set({"numpy": [1.0] * n}, "/x/monday.json")
    factors = [1.0] * 10 + [1.5] * 10 + [0.5] + [1.0] * 10
    sv = said(base, a_set({"numpy": factors}, "/x/tuesday.json"))
    (line,) = sv.lines()
    sizes = [2 ** 10 + 64 * i for i in range(n)]
    # Each verdict is compare_sets' own, point by point: the runs only group them.
    decided = [p["verdict"] for p in sorted(sv.points, key=lambda p: p["size"])]
    assert decided == ["same"] * 10 + ["slower"] * 10 + ["faster"] + ["same"] * 10
    slower = [p for p in sv.points if p["verdict"] == "slower"]
    lo, hi = min(p["ratio_lo"] for p in slower), max(p["ratio_hi"] for p in slower)
    assert line.startswith(f"numpy: same from {fmt_size(sizes[0])} to {fmt_size(sizes[9])} (10 sizes) (")
    assert f"slower from {fmt_size(sizes[10])} to {fmt_size(sizes[19])} (10 sizes): 1.5x ({lo:.3g}-{hi:.3g})" in line
    (fast,) = [p for p in sv.points if p["verdict"] == "faster"]
    one = stats.describe(stats.Verdict("faster", fast["ratio"], fast["ratio_lo"], fast["ratio_hi"]))
    times, interval = re.fullmatch(r"(\S+)x faster \((.+)\)", one).groups()
    assert f"faster at {fmt_size(sizes[20])}: {times}x ({interval})" in line     # as the hover says it
    assert line.endswith(f"same from {fmt_size(sizes[21])} to {fmt_size(sizes[30])} (10 sizes) "
                         f"({min(p['ratio_lo'] for p in sv.points[21:]):.3g}-"
                         f"{max(p['ratio_hi'] for p in sv.points[21:]):.3g})")
    assert line.count(" from ") + line.count(" at ") == 4


def test_factors_that_differ_are_said_as_a_range():
    base = a_set({"numba": [1.0] * 4}, "/x/a.json")
    (line,) = said(base, a_set({"numba": [1.4, 2.0, 3.1, 2.2]}, "/x/b.json")).lines()
    assert line.startswith(f"numba: slower from {fmt_size(2 ** 10)} to {fmt_size(2 ** 10 + 192)} (4 sizes): 1.4-3.1x (")


def test_undecided_sizes_say_why():
    base = a_set({"numpy": [1.0] * 3}, "/x/a.json")
    new = a_set({"numpy": [1.0] * 3}, "/x/b.json")
    for column in ("total_ci_lo_s", "total_ci_hi_s"):
        new.frame[column] = math.nan          # a file from before intervals were kept
    (line,) = said(base, new).lines()
    assert line == f"numpy: undecided from {fmt_size(2 ** 10)} to {fmt_size(2 ** 10 + 128)} (3 sizes): {stats.NO_INTERVAL}"


def test_a_long_line_is_capped_and_says_what_it_left_out():
    """500 sizes whose verdict alternates: the first runs, then how many more and their points by
    verdict; nothing is lost from the counts."""
    n = 500
    base = a_set({"numpy": [1.0] * n, "numba": [1.0] * n}, "/x/a.json")
    sv = said(base, a_set({"numpy": [1.0, 1.5] * (n // 2), "numba": [1.5] * n}, "/x/b.json"))
    alternating, steady = sv.lines()
    shown = overlay_verdicts.MAX_RUNS
    assert alternating.count("same at") + alternating.count("slower at") == shown
    left = n - shown
    assert alternating.endswith(f", ... {left} more runs to {fmt_size(2 ** 10 + 64 * (n - 1))} "
                                f"({left // 2} slower, {left // 2} same)")
    assert steady.startswith(f"numba: slower from {fmt_size(2 ** 10)} to {fmt_size(2 ** 10 + 64 * (n - 1))} "
                             f"({n} sizes): 1.5x")
    assert sv.counts() == f"{n + n // 2} slower, {n // 2} same"


def test_the_summary_of_two_large_sets_stays_short():
    """Ten series x 500 sizes compared: every size listed made 100 kB of rich text that took the
    window 0.6 s to lay out; said by runs and capped, it is a few lines per series."""
    n, series = 500, [f"numba x{k}" for k in range(10)]
    base = a_set({s: [1.0] * n for s in series}, "/x/a.json")
    new = a_set({s: [1.0, 1.0, 1.5, 0.5] * (n // 4) for s in series}, "/x/b.json")
    o = Overlay.of([base, new])
    text = live.summary_text(o, "numba x0", overlay_verdicts.of_sets(o.sets, o.labels))
    compared = text.split("<br><br>")[-1]
    assert compared.count("<br>") == len(series)           # the head, then one line per series
    assert len(compared) < 400 * len(series)
    assert f"{len(series) * n // 2} same" in compared        # the counts still cover every point


def test_the_matched_points_are_those_compare_decides():
    """The runs are made of compare_sets' records: nothing re-decided from two medians."""
    base = a_set({"numpy": [1.0] * 5}, "/x/a.json")
    new = a_set({"numpy": [1.0, 1.005, 1.5, 1.5, 0.9]}, "/x/b.json")
    sv = said(base, new)
    assert [p["verdict"] for p in sv.points] == \
        [p["verdict"] for p in verdicts.compare_sets(base.frame, new.frame, overlay_verdicts.FIGURE)]
    runs = overlay_verdicts.runs(sorted(sv.points, key=lambda p: p["size"]))
    assert [r.verdict for r in runs] == [p["verdict"] for p in sv.points][:1] + \
        [b["verdict"] for a, b in zip(sv.points, sv.points[1:]) if a["verdict"] != b["verdict"]]
    assert sum(len(r.points) for r in runs) == len(sv.points)


def test_a_size_left_undecided_does_not_cut_a_run_and_is_said_apart():
    base = a_set({"numpy": [1.0] * 9}, "/x/a.json")
    new = a_set({"numpy": [1.5] * 9}, "/x/b.json")
    for column in ("total_ci_lo_s", "total_ci_hi_s"):
        new.frame.loc[new.frame["size"].isin([2 ** 10 + 64, 2 ** 10 + 320]), column] = math.nan
    (line,) = said(base, new).lines()
    assert line.startswith(f"numpy: slower from {fmt_size(2 ** 10)} to {fmt_size(2 ** 10 + 512)} (7 sizes): 1.5x")
    assert line.endswith(f", undecided at {fmt_size(2 ** 10 + 64)} and {fmt_size(2 ** 10 + 320)}: {stats.NO_INTERVAL}")
