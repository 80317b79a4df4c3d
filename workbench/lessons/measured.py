"""A lesson's measured rows, read as its ``explain`` asks: :class:`Measured` looks them up by backend,
size and run; :func:`crossing` finds where one backend overtakes another, each size decided with its
noise. Data in, data out: no wording here but a break-even's size as the sweep writes sizes."""
from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
from workbench.core.lazy import lazy_module

from workbench.core import stats, verdicts
from workbench.lessons.say import approx_size
from workbench.views.summary import Comparison, comparisons

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)


class Measured:
    """The ok rows of a lesson's sweeps, looked up by backend, size and variant (run label)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.ok = frame[frame["status"] == "ok"]

    def rows(self, backend: str, variant: str | None = None) -> pd.DataFrame:
        r = self.ok[self.ok["backend"] == backend]
        if variant is not None:
            r = r[r["variant"] == variant]
        return r.drop_duplicates("size").sort_values("size")

    def has(self, backend: str, variant: str | None = None) -> bool:
        return not self.rows(backend, variant).empty

    def value(self, backend: str, size: int, column: str, variant: str | None = None) -> float:
        r = self.rows(backend, variant)
        r = r[r["size"] == size]
        return float(r[column].iloc[0]) if len(r) else float("nan")

    def row(self, backend: str, size: int, variant: str | None = None) -> pd.Series | None:
        r = self.rows(backend, variant)
        r = r[r["size"] == size]
        return r.iloc[0] if len(r) else None

    def common(self, backends: Iterable[str], variant: str | None = None) -> list[int]:
        """Sizes every one of ``backends`` measured (ok), ascending."""
        sets = [set(self.rows(b, variant)["size"]) for b in backends]
        return sorted(set.intersection(*sets)) if sets else []

    def largest(self, backends: Iterable[str], variant: str | None = None) -> int | None:
        common = self.common(list(backends), variant)
        return common[-1] if common else None

    def across(self, backend: str, variants: Iterable[str]) -> int | None:
        """The largest size ``backend`` measured (ok) in every one of ``variants`` (runs)."""
        sets = [set(self.rows(backend, v)["size"]) for v in variants]
        both = set.intersection(*sets) if sets else set()
        return max(both) if both else None

    def backends(self, among: Iterable[str], variant: str | None = None) -> list[str]:
        return [b for b in among if self.has(b, variant)]

    def verdict(self, new: str, base: str, size: int, column: str = "total_median_s",
                new_variant: str | None = None, base_variant: str | None = None) -> stats.Verdict:
        """``new``'s time against ``base``'s at ``size``, decided with both intervals (``workbench.core.stats``)."""
        a, b = self.row(new, size, new_variant), self.row(base, size, base_variant)
        if a is None or b is None:
            return stats.Verdict("undecided", math.nan, math.nan, math.nan, "not measured")
        return verdicts.compare_rows(a, b, column)

    def takes_at_least(self, factor: float, new: str, base: str, size: int, column: str = "compute_median_s",
                       new_variant: str | None = None, base_variant: str | None = None
                       ) -> tuple[bool | None, stats.Verdict]:
        """Does ``new`` take at least ``factor`` times ``base``'s time? True or False where the ratio's
        interval lies on one side of ``factor``, None where it straddles it or a point was measured on
        a busy machine (the load, not the code, may be what the ratio shows)."""
        v = self.verdict(new, base, size, column, new_variant, base_variant)
        if not math.isfinite(v.lo) or not math.isfinite(v.hi):
            return None, v
        if v.lo >= factor:
            busy = [r["noisy"] for r in (self.row(new, size, new_variant), self.row(base, size, base_variant))
                    if r is not None and r["noisy"]]
            return (None if busy else True), v
        if v.hi < factor:
            return False, v
        return None, v


@dataclass(frozen=True)
class Crossing:
    """Where ``challenger`` overtakes ``opponent``, size by size, on one time column, each size
    decided with its noise: a break-even only where it is slower at every size up to one, faster
    at every size from a later one on, and neither (the same, or undecided) in between."""

    comparison: Comparison
    size: float | None           # the break-even, between the last size lost and the first won
    last_loss: int | None
    first_win: int | None

    @property
    def always(self) -> bool:
        return set(self.comparison.verdicts) == {"faster"}

    @property
    def never(self) -> bool:
        return not self.comparison.wins

    @property
    def holds(self) -> bool:
        """Loses up to a size and wins at every size from a later one on, to the largest."""
        return self.size is not None

    @property
    def near(self) -> str:
        """The break-even as text, written as the sweep's sizes are."""
        pow2 = all(s & (s - 1) == 0 for s in self.comparison.sizes)
        return approx_size(self.size, pow2) if self.size is not None else ""


def crossing(m: Measured, challenger: str, opponent: str, column: str = "total_median_s",
             variant: str | None = None) -> Crossing | None:
    """The break-even of ``challenger`` against ``opponent``: from which size on it is faster at
    every larger size measured, beyond the noise (``workbench.views.summary.comparisons``), estimated where
    the ratio of their medians crosses 1 between the last size lost and the first won."""
    rows = m.ok[m.ok["backend"].isin([challenger, opponent])]
    if variant is not None:
        rows = rows[rows["variant"] == variant]
    rows = rows[(rows[column] > 0) & np.isfinite(rows[column].to_numpy(float))]
    found = [c for c in comparisons(rows.assign(variant=""), opponent, column) if c.backend == challenger]
    if not found:
        return None
    c = dataclasses.replace(found[0], variant=variant or "")
    v, sizes = c.verdicts, c.sizes
    wins = c.wins
    last_win_run = wins[-1] if wins and wins[-1][1] == sizes[-1] else None
    first_win = last_win_run[0] if last_win_run else None
    if first_win is None or first_win == sizes[0]:
        return Crossing(c, None, None, first_win)
    k = sizes.index(first_win)
    losses = [i for i in range(k) if v[i] == "slower"]
    # One break-even only where every size below the last winning run is lost or undecided, and it
    # lost at least once: a backend that changes sides more than once has none.
    if not losses or any(v[i] == "faster" for i in range(k)):
        return Crossing(c, None, None, first_win)
    j = losses[-1]
    # Between the last loss and the first win the two may be the same within the noise: the estimate
    # lies where the ratio of the medians crosses 1, between the two sizes around that crossing.
    i = next((i for i in range(k - 1, j - 1, -1) if c.ratios[i] >= 1), j)
    r0, r1 = math.log(c.ratios[i]), math.log(c.ratios[i + 1])      # >= 0 before, < 0 after
    s0, s1 = sizes[i], sizes[i + 1]
    t = r0 / (r0 - r1) if r0 != r1 else 0.5
    t = min(1.0, max(0.0, t))
    size = math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    return Crossing(c, size, sizes[j], sizes[k])
