"""What limits a point, from its own figures: its launch, its transfers, a memory level, the
arithmetic peak, or nothing that explains it.

A row carries what this needs: the kernel's time (``compute_median_s``) and, on a GPU, the Python
call around it (``call_median_s``) and the transfers (``h2d_s``, ``d2h_s``) beside the end-to-end
time; its rates (``gbps``, ``gflops``) and the ceilings of the device it ran on (``gbps_limit``
for the memory level that holds its working set, ``gflops_limit``).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

#: A GPU call whose device work fills less than this share of it waits on its launch.
LAUNCH_SHARE = 0.5
#: Transfers taking at least this share of the end-to-end time bound it.
TRANSFER_SHARE = 0.5
#: A roof is the bound from this share of it up; below every roof, the bound is ``unknown``.
NEAR = 0.5


def _number(row: Mapping[str, Any], key: str) -> float:
    try:
        value = float(row.get(key, math.nan))
    except (TypeError, ValueError):
        return math.nan
    return value if math.isfinite(value) else math.nan


def classify(row: Mapping[str, Any], level: str = "", end_to_end: bool = False) -> tuple[str, float]:
    """(bound, of_bound): what limits the point's figure and how close it comes, as a fraction.

    The figure is the kernel's (warm GPU time, or a CPU call) unless ``end_to_end`` (a workload
    whose rate is counted over its transfers: ``transfer``): a kernel at the device's bandwidth is
    memory-bound however long the copies around it take, and their share is said beside it
    (:func:`transfer_share`). ``launch``: the share of the call that the device works;
    ``transfer``: the transfers' share of the end-to-end time; ``memory`` (with ``level``, the memory level its ceiling is from) and
    ``compute``: the achieved rate over that ceiling; ``unknown``: the nearest roof's share, where
    none is NEAR. ('', NaN) where the row has no time."""
    comp = _number(row, "compute_median_s")
    if not comp > 0:
        return "", math.nan
    gpu = bool(row.get("host_memory"))
    call = _number(row, "call_median_s")
    if gpu and call > 0 and comp / call < LAUNCH_SHARE:
        return "launch", comp / call
    total = _number(row, "total_median_s")
    moved = sum(v for v in (_number(row, "h2d_s"), _number(row, "d2h_s")) if v == v)
    if end_to_end and gpu and total > 0 and moved / total >= TRANSFER_SHARE:
        return "transfer", moved / total
    shares = {}
    for name, rate, limit in (("memory", "gbps", "gbps_limit"), ("compute", "gflops", "gflops_limit")):
        achieved, roof = _number(row, rate), _number(row, limit)
        if achieved > 0 and roof > 0:
            shares[name] = achieved / roof
    if not shares:
        return "unknown", math.nan
    name, share = max(shares.items(), key=lambda item: item[1])
    if share < NEAR:
        return "unknown", share
    return (f"memory ({level})" if name == "memory" and level else name), share


def transfer_share(row: Mapping[str, Any]) -> float:
    """The transfers' share of a GPU row's end-to-end time; NaN on a CPU row or without figures."""
    total = _number(row, "total_median_s")
    if not row.get("host_memory") or not total > 0:
        return math.nan
    return sum(v for v in (_number(row, "h2d_s"), _number(row, "d2h_s")) if v == v) / total


def text(bound: Any, of_bound: Any) -> str:
    """'memory (L3) 85 %', 'launch 12 %', '' where the row has none (a file from before bounds)."""
    if not isinstance(bound, str) or not bound:
        return ""
    try:
        share = float(of_bound)
    except (TypeError, ValueError):
        share = math.nan
    return f"{bound} {100 * share:.0f} %" if math.isfinite(share) else bound
