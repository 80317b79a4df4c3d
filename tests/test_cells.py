"""A column's cells checked at once (``cells.column``) are what checking each (``cells.value``)
makes of them, and a column with any cell the check refuses is left to the cell by cell check,
which names it: a journal of 5,000 rows, read before the window's first frame, took 0.6 s cell by
cell (issue 38)."""
from __future__ import annotations

import itertools
import math

import pytest

from workbench.results import cells

COLUMNS = ("workload", "kernels", "size", "repeats", "converged", "verified", "compute_median_s",
           "compute_ci_lo_s", "gbps_limit", "peak_host_bytes", "energy_j", "others_cores")
VALUES = ("", None, math.nan, "nan", "NaN", "inf", "-inf", math.inf, -math.inf, "1.5", " 2 ", "2", 2, 2.5, 0,
          "0", -1, "-1", True, False, "true", " False ", "1", "yes", "x", 1e-31, 1e-6, 1e7, 2 ** 63, 2 ** 62,
          "9223372036854775807", "1e400", 1e300, {"a": 1}, [1, 2], "[1,2]", 3.0, "3.0", "3.5")


class Wrong(Exception):
    pass


def one_by_one(name, values):
    """Each cell through ``cells.value``: its results, or None where it refuses any."""
    def wrong(expected):
        return Wrong(expected)
    try:
        return [cells.value(name, v, wrong) for v in values]
    except Wrong:
        return None


def same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(type(x) is type(y) and (x == y or (x != x and y != y)) for x, y in zip(a, b))


@pytest.mark.parametrize("name", COLUMNS)
def test_a_column_at_once_is_the_column_cell_by_cell_or_left_to_it(name):
    lists = [[v] for v in VALUES] + [list(p) for p in itertools.combinations(VALUES, 2)]
    for values in lists:
        at_once, each = cells.column(name, values), one_by_one(name, values)
        if at_once is not None:        # vouched for: exactly what each cell's check makes
            assert same(at_once, each), (name, values, at_once, each)
        elif each is not None:         # left to the cell-by-cell check: only what it could not vouch for
            assert any(isinstance(v, (int, dict, list)) and not isinstance(v, bool) for v in values) \
                or name in ("kernels",), (name, values, each)


def test_the_plain_columns_of_a_file_are_vouched_for_at_once():
    """What files of ours hold, as text (CSV) and as numbers (JSON), never falls back."""
    assert same(cells.column("compute_median_s", ["1.5e-06", "", "0", "2"]), [1.5e-06, math.nan, 0.0, 2.0])
    assert same(cells.column("compute_median_s", [1.5e-06, math.nan, 0.0]), [1.5e-06, math.nan, 0.0])
    assert cells.column("size", ["1024", "2048"]) == [1024, 2048]
    assert cells.column("repeats", ["", "5"]) == [0, 5]
    assert cells.column("converged", ["", "False", "true"]) == [True, False, True]
    assert cells.column("verified", [True, False, None]) == [True, False, False]
    assert cells.column("workload", ["a", "", None, math.nan]) == ["a", "", "", ""]
    assert cells.column("gbps_limit", ["inf", ""]) is not None
    for name, bad in (("compute_median_s", "nan"), ("compute_median_s", "1e7"), ("size", "0"), ("size", "1.5"),
                      ("gbps", "-1"), ("converged", "maybe"), ("workload", 3), ("compute_median_s", True)):
        assert cells.column(name, ["1", bad]) is None, (name, bad)
