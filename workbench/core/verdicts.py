"""Verdicts between result rows: two points' medians compared with their intervals.

``workbench.core.stats`` decides between two estimates; this module reads them out of result rows (a
figure's median and interval columns, and the ``noisy`` flag), and matches the points of two
result sets for ``gpu-workbench compare`` and the window's overlays, as nvbench's compare script
and asv's ``compare`` match benchmarks by name and parameters.
"""
from __future__ import annotations

import functools
import json
import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from workbench.core import stats

if TYPE_CHECKING:        # annotations only: importing this module needs no pandas
    import pandas as pd

#: Two points whose canaries differ by more than this were measured on a machine running at
#: different speeds: no unpaired verdict is drawn between them.
CANARY_SPREAD = 1.05

#: How the ``noisy`` reason of a point whose rounds ran in no one machine state begins
#: (``workbench.measure.load.kept_rounds``). It keeps the point from unpaired verdicts only: a paired
#: verdict pairs the rounds two points ran in the same state (:func:`_pairs`), so the state cancels.
STATE_CHANGED = "the machine changed speed during the point"

#: A figure's median column and its interval's columns.
FIGURES = {
    "total_median_s": ("total_ci_lo_s", "total_ci_hi_s"),
    "compute_median_s": ("compute_ci_lo_s", "compute_ci_hi_s"),
}
#: What identifies a point across result sets.
KEYS = ("workload", "backend", "size", "dtype", "variant")


def estimate_of(row: Mapping[str, Any], column: str = "total_median_s") -> stats.Estimate:
    """The estimate of ``column`` in a result row: its median, interval and the machine's flag."""
    lo_col, hi_col = FIGURES[column]

    def num(key: str) -> float:
        try:
            v = float(row.get(key, math.nan))
        except (TypeError, ValueError):
            return math.nan
        return v
    noisy = row.get("noisy", "")
    noisy = noisy if isinstance(noisy, str) else ""
    return stats.Estimate(num(column), num(lo_col), num(hi_col), int(num("repeats")) if num("repeats") >= 0 else 0,
                          noisy, stats.slack_of(noisy))


def compare_rows(new: Mapping[str, Any], base: Mapping[str, Any], column: str = "total_median_s",
                 min_effect: float = stats.DEFAULT_MIN_EFFECT) -> stats.Verdict:
    """``new`` against ``base``; undecided where the same machine ran at another speed for each
    (their canaries disagree: ``workbench.measure.load.Canary``), for then the machine, not the code,
    may be what differs."""
    pairs = _pairs(new, base, column)
    if pairs is not None:
        noisy = "; ".join(part for n in (new.get("noisy"), base.get("noisy")) if isinstance(n, str) and n
                          for part in n.split("; ") if not part.startswith(STATE_CHANGED))
        v = stats.paired(pairs, min_effect, noisy)
        if v is not None:
            return v
    v = stats.compare(estimate_of(new, column), estimate_of(base, column), min_effect)
    # 'same' too: a point measured in the slow state against one in the fast state can look the
    # same while its code does 1.3x the work (docs/PERFORMANCE.md).
    if v.verdict != "undecided" and new.get("device") == base.get("device"):
        ca, cb = (_number(r.get("canary_s")) for r in (new, base))
        if ca > 0 and cb > 0 and max(ca, cb) / min(ca, cb) > CANARY_SPREAD:
            # Undecided within what that speed could do (the canary's factor, at least the busy
            # machine's): a 500x speedup stands whatever the canary said, a 1.1x does not.
            spread = max(ca, cb) / min(ca, cb)
            why = f"the machine ran at another speed for each (a fixed kernel took {spread:.2f}x as long for one)"
            if v.verdict == "same":
                return stats.Verdict("undecided", v.ratio, v.lo, v.hi, why)
            w = stats.decide(v.ratio, v.lo, v.hi, min_effect, why, max(spread, stats.BUSY_SLACK))
            return w if w.decided else stats.Verdict("undecided", v.ratio, v.lo, v.hi, why)
    return v


#: Every column a verdict between two rows reads (:func:`compare_rows`): two rows that agree on these
#: get the same verdict, which is what lets :func:`compare_frames` keep each point's verdict.
READS = ("total_median_s", "total_ci_lo_s", "total_ci_hi_s", "compute_median_s", "compute_ci_lo_s",
         "compute_ci_hi_s", "repeats", "noisy", "rounds", "device", "canary_s")


def compare_frames(new: pd.DataFrame, base: pd.DataFrame, column: str = "total_median_s",
                   min_effect: float = stats.DEFAULT_MIN_EFFECT, base_suffix: str = "") -> list[stats.Verdict]:
    """:func:`compare_rows` for each row of ``new`` against the row of ``base`` in the same place
    (``base`` may be ``new`` itself, its columns named with ``base_suffix``).

    A live chart asks again for the verdicts of every point each time a point arrives: each one is
    kept (by the values it is decided from), so that an update decides only the points that are new,
    rather than hundreds of them in the GUI thread between two frames."""
    return compare_frames_by(new, base, (column,), min_effect, base_suffix)[column]


def compare_frames_by(new: pd.DataFrame, base: pd.DataFrame, columns: Sequence[str],
                      min_effect: float = stats.DEFAULT_MIN_EFFECT, base_suffix: str = ""
                      ) -> dict[str, list[stats.Verdict]]:
    """:func:`compare_frames` for several figures at once (the rows' keys are read once)."""
    names = tuple(c for c in READS if c in new.columns and f"{c}{base_suffix}" in base.columns)
    mine = [new[c].tolist() for c in names]
    theirs = [base[f"{c}{base_suffix}"].tolist() for c in names]
    pairs = [(_key(a), _key(b)) for a, b in zip(zip(*mine) if names else [()] * len(new),
                                                 zip(*theirs) if names else [()] * len(new))]
    return {column: [_decided(column, min_effect, names, a, b) for a, b in pairs] for column in columns}


def compare_records(new: Sequence[Mapping[str, Any]], base: Sequence[Mapping[str, Any]],
                    column: str = "total_median_s", min_effect: float = stats.DEFAULT_MIN_EFFECT
                    ) -> list[stats.Verdict]:
    """:func:`compare_frames` for rows as mappings: each of ``new`` against the one of ``base`` in
    the same place, each verdict kept."""
    names = tuple(c for c in READS if new and c in new[0] and base and c in base[0])
    return [_decided(column, min_effect, names, _key([n.get(c) for c in names]), _key([b.get(c) for c in names]))
            for n, b in zip(new, base)]


def _key(values) -> tuple:
    """The values a verdict reads as a key: NaN as None, for NaN is unequal to itself and a key
    holding one would never be found again (every reader here takes None as 'not measured')."""
    return tuple([None if v != v else v for v in values])      # only NaN differs from itself


@functools.lru_cache(maxsize=16_384)
def _decided(column: str, min_effect: float, names: tuple, new: tuple, base: tuple) -> stats.Verdict:
    return compare_rows(dict(zip(names, new)), dict(zip(names, base)), column, min_effect)


def _pairs(new: Mapping[str, Any], base: Mapping[str, Any], column: str) -> list[float] | None:
    """Round-by-round ratios new / base where both points ran their rounds interleaved (the same
    group of one sweep: ``workbench.measure.point``), else None."""
    a, b = _rounds(new.get("rounds")), _rounds(base.get("rounds"))
    if not a or not b or a.get("group") != b.get("group") or new is base:
        return None
    key = "compute" if column == "compute_median_s" else "total"
    # A round each point ran in another machine state (the canary's: ``workbench.measure.load``),
    # or one during which the state changed, is no pair: the slow state slows two workloads unalike
    # (twin-a x1.46, twin-slow x1.54 at 2^14), and the pair's ratio would be the machine's.
    sa, sb = a.get("states") or [], b.get("states") or []
    return [x / y for r, (x, y) in enumerate(zip(a.get(key) or [], b.get(key) or []))
            if isinstance(x, (int, float)) and isinstance(y, (int, float)) and x > 0 and y > 0
            and (r >= len(sa) or r >= len(sb) or (sa[r] == sb[r] and sa[r] != "changed"))]


def _rounds(text: Any) -> dict:
    if not isinstance(text, str) or not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


#: The columns of each of compare_sets' rows, in order.
COMPARED = (*KEYS, "figure", "base_s", "new_s", "ratio", "ratio_lo", "ratio_hi", "verdict", "why", "described",
            "bound_base", "bound_new")


def compare_sets(base: pd.DataFrame, new: pd.DataFrame, column: str = "total_median_s",
                 min_effect: float = stats.DEFAULT_MIN_EFFECT) -> list[dict[str, Any]]:
    """Per point measured ok in both sets (matched on ``KEYS``): the two medians, the ratio new/base
    with its interval, and the verdict of ``new`` against ``base``; in ``base``'s order."""
    def ok(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["status"] == "ok"].drop_duplicates(list(KEYS))
    merged = ok(base).merge(ok(new), on=list(KEYS), suffixes=("_base", "_new"))
    out = []
    for r in merged.to_dict("records"):
        b = {k[:-5]: v for k, v in r.items() if k.endswith("_base")}
        n = {k[:-4]: v for k, v in r.items() if k.endswith("_new")}
        v = compare_rows(n, b, column, min_effect)
        out.append({**{k: r[k] for k in KEYS}, "figure": column, "base_s": b[column], "new_s": n[column],
                    "ratio": v.ratio, "ratio_lo": v.lo, "ratio_hi": v.hi, "verdict": v.verdict,
                    "why": v.why, "described": stats.describe(v),
                    # What limits each (workbench.core.bounds): a change is worth saying; '' in older files.
                    "bound_base": _bound(b), "bound_new": _bound(n)})
    return out


def _bound(row: dict) -> str:
    value = row.get("bound", "")
    return value if isinstance(value, str) else ""
