"""How close a call with copies comes to its limit: ``max(h2d, compute, d2h)``, and the copies
both ways at once where the device measured that (issue 37).

A GPU call that copies its input in, computes and copies the result out takes their sum when
each waits for the last; overlapped on several streams from pinned memory (the ``overlap``
workload's variants), it approaches the longest of the three. Each row's own phases, timed
alone over the whole array, give its limit; its end-to-end median against it says how much of
the overlap was had. Sentences for the summary and the lesson compare a variant with the
sequential one of the same host memory, decided with both rows' noise (``verdicts.compare_rows``).
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from workbench.core import stats, units, verdicts

PHASE_COLUMNS = (("h2d", "h2d_s"), ("compute", "compute_median_s"), ("d2h", "d2h_s"))


def _known(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _limits(row: Mapping[str, Any]) -> dict[str, float]:
    """The phases alone, and where the device measured it, the copies both ways at once."""
    values = {name: row.get(c) for name, c in PHASE_COLUMNS}
    if not all(_known(v) for v in values.values()) or not (values["h2d"] > 0 or values["d2h"] > 0):
        return {}
    together = row.get("copies_together_s")
    if _known(together) and together > 0:
        values["copies at once"] = together
    return {k: float(v) for k, v in values.items()}


def is_overlapped(row: Mapping[str, Any]) -> bool:
    """Whether the row's end to end is one overlapped call (its ``overlapped`` flag; False for an
    older file's row, and for NaN, which a frame holds where the column was missing)."""
    flag = row.get("overlapped")
    return isinstance(flag, (bool, np.bool_)) and bool(flag)


def limit_s(row: Mapping[str, Any]) -> float:
    """What an overlapped call of this row cannot beat: ``max(h2d, compute, d2h)``, and the copies
    in and out at once where the device's rate for that is known (on the H100 host of
    docs/PERFORMANCE.md 0.75 of their sum, not the longer one); NaN for a row that copies nothing."""
    values = _limits(row)
    return max(values.values()) if values else math.nan


def limiting(row: Mapping[str, Any]) -> str:
    """Which is the limit: 'h2d', 'compute', 'd2h' or 'copies at once' ('' where none)."""
    values = _limits(row)
    return max(values, key=values.get) if values else ""


def limit_text(row: Mapping[str, Any]) -> str:
    """'end to end 1.15x its limit, max(h2d 4.9 ms, compute 2.5 ms, d2h 4.9 ms) = 4.9 ms' ('' where none)."""
    limit, total = limit_s(row), row.get("total_median_s")
    if not (_known(limit) and limit > 0 and _known(total)):
        return ""
    parts = ", ".join(f"{name} {units.seconds(v)}" for name, v in _limits(row).items())
    return f"end to end {total / limit:.2f}x its limit, max({parts}) = {units.seconds(limit)}"


def sequential_of(variant: str) -> str:
    """The sequential variant of the same host memory: 'pinned 4 streams' -> 'pinned sequential'."""
    return variant.split(" ")[0] + " sequential" if variant else ""


def comparisons(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One sentence per backend and overlapped variant at the largest size both it and its
    sequential variant measured: '4 streams (pinned): 1.7x faster than sequential end to end at
    2^26, at 1.2x its limit', said as the verdict found it (faster, slower, the same, or undecided)."""
    # GPU rows: a CPU backend's variants name streams it has none of (it runs each the same)
    ok = [r for r in rows if r.get("status") == "ok" and isinstance(r.get("variant"), str) and r.get("host_memory")]
    index = {(r["backend"], r["variant"], int(r["size"])): r for r in ok}
    out = []
    for backend in dict.fromkeys(r["backend"] for r in ok):
        variants = dict.fromkeys(r["variant"] for r in ok if r["backend"] == backend)
        for variant in variants:
            if variant.endswith("sequential") or sequential_of(variant) not in variants:
                continue
            sizes = [s for (b, v, s) in index if b == backend and v == variant
                     and (backend, sequential_of(variant), s) in index]
            if not sizes:
                continue
            s = max(sizes)
            new, base = index[(backend, variant, s)], index[(backend, sequential_of(variant), s)]
            out.append(_sentence(backend, variant, s, new, base))
    return out


def _sentence(backend: str, variant: str, size: int, new: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    v = verdicts.compare_rows(new, base, "total_median_s")
    ratio = base["total_median_s"] / new["total_median_s"] if new["total_median_s"] > 0 else math.nan
    limit = limit_s(new)
    at_limit = f", at {new['total_median_s'] / limit:.2f}x its limit" if _known(limit) and limit > 0 else ""
    where = f"{backend} {variant}"
    head = f"{where}: "
    if v.verdict == "faster":
        said = f"{ratio:.2f}x faster than sequential end to end at {units.size(size)}{at_limit}"
    elif v.verdict == "slower":
        said = f"{1 / ratio:.2f}x slower than sequential end to end at {units.size(size)}{at_limit}"
    elif v.verdict == "same":
        said = f"no faster than sequential end to end at {units.size(size)} (within the noise){at_limit}"
    else:
        said = f"undecided against sequential at {units.size(size)} ({stats.describe(v)}){at_limit}"
    return head + said
