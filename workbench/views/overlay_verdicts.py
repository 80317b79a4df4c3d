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
#: How many runs of one verdict a series' line says before '... N more'.
MAX_RUNS = 6


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

    def lines(self, cap: int = MAX_RUNS) -> list[str]:
        """One line per series, its consecutive sizes of one verdict said once: 'numpy: slower from
        2^10 to 2^16 (4 sizes): 1.3x (1.27-1.33), same at 2^18 (0.98-1.02)'; past ``cap`` runs,
        '... N more'. Every size's own verdict is on its hover and in ``gpu-workbench compare``:
        listed here, 5,000 points made a summary no one reads (and 0.6 s of layout, issue 38)."""
        by_series: dict[str, list[dict[str, Any]]] = {}
        several = {k: len({p[k] for p in self.points}) > 1 for k in ("workload", "dtype")}
        for p in self.points:
            name = ", ".join(str(part) for part in (
                p["workload"] if several["workload"] else "", p["backend"],
                p["variant"], p["dtype"] if several["dtype"] else "") if part)
            by_series.setdefault(name, []).append(p)
        out = []
        for name, points in by_series.items():
            points = sorted(points, key=lambda p: int(p["size"]))
            # A size left undecided (a point without an interval) does not cut a run of the sizes
            # around it: said apart, once, so that the cap keeps the runs that carry the story.
            decided = [p for p in points if p["verdict"] != "undecided"]
            found = runs(decided or points)
            said = [run_text(r) for r in found[:cap]]
            if len(found) > cap:
                said.append(more_text(found[cap:]))
            if decided and len(decided) < len(points):
                said.append(undecided_text([p for p in points if p["verdict"] == "undecided"]))
            out.append(f"{name}: " + ", ".join(said))
        return out


@dataclass(frozen=True)
class Run:
    """Consecutive sizes of one series with the same verdict (their points, ascending by size)."""

    verdict: str
    points: tuple[dict[str, Any], ...]

    @property
    def sizes(self) -> str:
        first, last = int(self.points[0]["size"]), int(self.points[-1]["size"])
        if len(self.points) == 1:
            return f"at {fmt_size(first)}"
        return f"from {fmt_size(first)} to {fmt_size(last)} ({len(self.points)} sizes)"


def runs(points: Sequence[Mapping[str, Any]]) -> list[Run]:
    """``points`` (one series', ascending by size) as runs of consecutive sizes with one verdict."""
    out: list[Run] = []
    for p in points:
        if out and out[-1].verdict == p["verdict"]:
            out[-1] = Run(p["verdict"], (*out[-1].points, p))
        else:
            out.append(Run(p["verdict"], (p,)))
    return out


def _span(lo: float, hi: float) -> str:
    """'1.3' or '1.3-1.4' at three significant digits, as ``stats.describe`` writes a figure."""
    a, b = f"{lo:.3g}", f"{hi:.3g}"
    return a if a == b else f"{a}-{b}"


def _interval(lo: float, hi: float) -> str:
    """'0.98-1.02': at three significant digits as ``stats.describe``, more where those would say
    '1-1' of an interval that is not one value."""
    for digits in (3, 4, 5):
        a, b = f"{lo:.{digits}g}", f"{hi:.{digits}g}"
        if a != b:
            break
    return f"{a}-{b}"


def run_text(run: Run) -> str:
    """'slower from 2^10 to 2^16 (4 sizes): 1.3-1.4x (1.27-1.45)': the range of the run's factors,
    then the range its points' 95 % intervals cover (each point was decided with its own);
    'same ...: within 0.98-1.02'; 'undecided ...: why'."""
    ps, v = run.points, run.verdict
    if v in ("faster", "slower"):
        # Faster is said as a speedup (base / new), as stats.describe says it, its interval inverted.
        flip = (lambda x: 1 / x) if v == "faster" else (lambda x: x)
        times = [flip(p["ratio"]) for p in ps]
        ends = [flip(p["ratio_lo"]) for p in ps] + [flip(p["ratio_hi"]) for p in ps]
        return f"{v} {run.sizes}: {_span(min(times), max(times))}x ({_interval(min(ends), max(ends))})"
    if v == "same":
        lo, hi = min(p["ratio_lo"] for p in ps), max(p["ratio_hi"] for p in ps)
        return f"same {run.sizes} ({_interval(lo, hi)})"
    return f"{v} {run.sizes}{_whys(ps)}"


def _whys(points: Sequence[Mapping[str, Any]]) -> str:
    whys = list(dict.fromkeys(str(p.get("why") or "") for p in points if p.get("why")))
    return (f": {'; '.join(whys[:2])}" if whys else "") + \
        (f" and {len(whys) - 2} other reasons" if len(whys) > 2 else "")


def undecided_text(points: Sequence[Mapping[str, Any]]) -> str:
    """'undecided at 1,515 and 70,837: why', or 'undecided at 12 sizes (256 to 2^20): why'."""
    sizes = [fmt_size(int(p["size"])) for p in points]
    where = (" and ".join([", ".join(sizes[:-1]), sizes[-1]]) if len(sizes) > 1 else sizes[0]) \
        if len(sizes) <= 3 else f"{len(sizes)} sizes ({sizes[0]} to {sizes[-1]})"
    return f"undecided at {where}{_whys(points)}"


def more_text(rest: Sequence[Run]) -> str:
    """'... 37 more runs to 2^24 (5 slower, 12 same, 20 undecided)': what a capped line leaves
    out, its points counted by verdict."""
    counted = {v: sum(len(r.points) for r in rest if r.verdict == v) for v in stats.VERDICTS}
    said = ", ".join(f"{n} {v}" for v, n in counted.items() if n)
    last = int(rest[-1].points[-1]["size"])
    return f"... {len(rest)} more runs to {fmt_size(last)} ({said})"


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
