"""Each later result set on the window's axes against the first, point by point, with its verdict.

Two lines on one chart invite a reading ("float64 is slower there"), and two medians alone cannot
carry it: the verdicts come from ``workbench.core.verdicts.compare_sets``, which decides with the
points' intervals, as ``gpu-workbench compare`` does. Plain text and plain data, no Qt: the window
escapes every name it shows (a backend or a file may be named ``numba<!--``) and lays it out.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from workbench.core.lazy import lazy_module

from workbench.core import stats
from workbench.core import verdicts
from workbench.results.files import ResultSet
from workbench.core.sizes import fmt_size

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

#: The figure decided on: end-to-end, what ``gpu-workbench compare`` decides on unless told otherwise.
FIGURE = "total_median_s"
FIGURE_NAME = {"total_median_s": "end-to-end", "compute_median_s": "compute"}


@dataclass(frozen=True)
class SetVerdicts:
    """One later set against the first: each point both measured ok, with its verdict."""

    set_index: int
    label: str
    base_label: str
    points: tuple[dict[str, Any], ...]      # verdicts.compare_sets' records, in the first set's order
    across_dtypes: bool = False             # matched ignoring the dtype (the sets differ by it)

    def counts(self) -> str:
        """'4 slower, 1 undecided': how many points got each verdict, the ones that got none left out."""
        found = pd.Series([p["verdict"] for p in self.points], dtype=object).value_counts()
        return ", ".join(f"{found[v]} {v}" for v in stats.VERDICTS if v in found)

    def lines(self) -> list[str]:
        """One line per series: 'numpy: 2¹⁰ 1.3x slower (1.28-1.32), 2¹² same (0.98-1.02)'."""
        by_series: dict[str, list[str]] = {}
        for p in self.points:
            name = f"{p['backend']} ({p['variant']})" if p["variant"] else str(p["backend"])
            by_series.setdefault(name, []).append(f"{fmt_size(int(p['size']))} {p['described']}")
        return [f"{name}: " + ", ".join(said) for name, said in by_series.items()]


def _one_dtype(frame: pd.DataFrame) -> str | None:
    dtypes = set(frame.loc[frame["status"] == "ok", "dtype"])
    return dtypes.pop() if len(dtypes) == 1 else None


def _matched(base: pd.DataFrame, new: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """``new`` as compared with ``base``: where each set is of one dtype and they differ, the dtype
    is what the overlay compares (float64 against float32), so the points are matched without it."""
    a, b = _one_dtype(base), _one_dtype(new)
    if a is not None and b is not None and a != b:
        return new.assign(dtype=a), True
    return new, False


def of_sets(sets: Sequence[ResultSet], labels: Sequence[str], column: str = FIGURE) -> list[SetVerdicts]:
    """Every set after the first against the first ([] for fewer than two sets)."""
    if len(sets) < 2:
        return []
    base = sets[0].frame
    out = []
    for i, rs in enumerate(sets[1:], start=1):
        new, across = _matched(base, rs.frame)
        points = verdicts.compare_sets(base, new, column)
        out.append(SetVerdicts(i, labels[i], labels[0], tuple(points), across))
    return out


def point(found: Sequence[SetVerdicts], row: Mapping[str, Any], set_index: int) -> dict[str, Any] | None:
    """The verdict record of ``row`` (a point of set ``set_index``) against the first set, if any."""
    for sv in found:
        if sv.set_index != set_index:
            continue
        for p in sv.points:
            if all(p[k] == row.get(k) for k in ("workload", "backend", "size", "variant")) and \
                    (sv.across_dtypes or p["dtype"] == row.get("dtype")):
                return p
    return None
