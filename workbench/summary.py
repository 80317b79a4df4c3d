"""What a result table shows, in a few plain sentences (for the report; Qt-free, so the window can use it too).

Statements about one backend beating another name every size range where it does, never a
single "from size N" that a later size contradicts.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from workbench.results import human_seconds

log = logging.getLogger(__name__)


def size_text(size: int) -> str:
    """Sizes as people read them: powers of two as 2^k, others with thousands separators."""
    return f"2^{size.bit_length() - 1}" if size > 0 and size & (size - 1) == 0 else f"{size:,}"


def ranges(sizes: list[int], wins: list[bool]) -> list[tuple[int, int]]:
    """Runs of consecutive measured sizes where ``wins`` holds, as (first, last) pairs."""
    out: list[tuple[int, int]] = []
    start = None
    for i, (size, win) in enumerate(zip(sizes, wins)):
        if win and start is None:
            start = size
        if start is not None and (not win or i == len(sizes) - 1):
            out.append((start, size if win else sizes[i - 1]))
            start = None
    return out


def _range_text(runs: list[tuple[int, int]]) -> str:
    parts = [size_text(a) if a == b else f"{size_text(a)} to {size_text(b)}" for a, b in runs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def sentences(frame: pd.DataFrame, baseline: str) -> list[str]:
    """The summary of one result set against ``baseline`` (a backend in it), end-to-end times."""
    if frame.empty:
        return ["No points."]
    ok = frame[frame["status"] == "ok"]
    bad = frame["status"][frame["status"] != "ok"].value_counts()
    out = [f"{len(frame)} points" + (": " + ", ".join(f"{n} {s}" for s, n in bad.items()) + "."
                                     if not bad.empty else ", all ok.")]
    if ok.empty:
        return out
    largest = int(ok["size"].max())
    best = ok[ok["size"] == largest].sort_values("total_median_s").iloc[0]
    out.append(f"Fastest end-to-end at the largest size ({size_text(largest)}): {best['backend']}, "
               f"{human_seconds(best['total_median_s'])}.")
    base = ok[ok["backend"] == baseline].set_index(["size", "variant"])["total_median_s"]
    base = base[~base.index.duplicated()]
    for backend in dict.fromkeys(ok["backend"]):
        if backend == baseline or base.empty:
            continue
        g = ok[ok["backend"] == backend].sort_values("size")
        pairs = [(int(s), t < base[(s, v)]) for s, v, t in zip(g["size"], g["variant"], g["total_median_s"])
                 if (s, v) in base.index]
        if not pairs:
            continue
        sizes, wins = [p[0] for p in pairs], [p[1] for p in pairs]
        if all(wins):
            out.append(f"{backend} is faster than {baseline} end-to-end at every size measured.")
        elif not any(wins):
            out.append(f"{backend} is slower than {baseline} end-to-end at every size measured.")
        else:
            out.append(f"{backend} is faster than {baseline} end-to-end at {_range_text(ranges(sizes, wins))}, "
                       f"slower elsewhere.")
    device = ok[ok["host_memory"] != ""]
    if not device.empty:
        share = _finite((device["h2d_s"] + device["d2h_s"]) / device["total_median_s"])
        if not share.empty:
            worst = device.loc[share.idxmax()]
            out.append(f"Transfers take up to {share.max() * 100:.0f} % of end-to-end time "
                       f"({worst['backend']}, size {size_text(int(worst['size']))}).")
    ratio = _finite(ok["first_call_s"] / ok["total_median_s"])
    if not ratio.empty:
        w = ok.loc[ratio.idxmax()]
        out.append(f"Slowest first call against a steady one (compilation, setup): {w['backend']} at size "
                   f"{size_text(int(w['size']))}, {human_seconds(w['first_call_s'])}, {ratio.max():,.0f}x a steady call.")
    return out


def _finite(values: pd.Series) -> pd.Series:
    """A ratio over a zero time is no statement: drop it with the NaNs."""
    return values[np.isfinite(values.to_numpy(float))]
