"""The band around each runtime series, as plain data: what the window and the exported chart both draw.

``panels.charts`` (pyqtgraph) and ``workbench.views.matplotlib_charts`` (matplotlib) draw the band this module
returns, and label it with its ``label``: had each picked its own columns, the window could show
the interval while a slide showed the quartiles. No Qt and no matplotlib, so the window imports it
at start-up.

The band is the 95 % interval of each median (``workbench.core.stats``), which says how well the
median is known; the samples' q1 to q3 says how much one call varies, which is another thing.
Files written before the intervals were kept have NaN in those columns; a series none of whose
points has an interval is banded by its quartiles instead, and labelled so, never silently.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:        # annotations only: importing this module needs no pandas
    import pandas as pd

log = logging.getLogger(__name__)

#: How opaque a band is: the lines stay readable through it, and two overlapping bands still show.
ALPHA = 0.18
INTERVAL = "95 % interval of the median"
QUARTILES = "q1 to q3 of the samples (no interval in the file)"

#: Each runtime figure's interval columns, then the quartile columns an older file has instead.
COLUMNS = {
    "compute": (("compute_ci_lo_s", "compute_ci_hi_s"), ("compute_q1_s", "compute_q3_s")),
    "total": (("total_ci_lo_s", "total_ci_hi_s"), ("total_q1_s", "total_q3_s")),
}


@dataclass(frozen=True)
class Band:
    """The points of a series that have a band, sorted by size: x, and the band's lower and upper edge."""

    x: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    label: str          # INTERVAL or QUARTILES: what the band is, for the legend

    def __len__(self) -> int:
        return len(self.x)

    def polygon(self) -> tuple[np.ndarray, np.ndarray]:
        """The band as one closed outline: along the lower edge, back along the upper one."""
        return np.concatenate([self.x, self.x[::-1]]), np.concatenate([self.lo, self.hi[::-1]])


def _positive(values) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    return np.where(np.isfinite(a) & (a > 0), a, np.nan)


def band(rows: pd.DataFrame, figure: str = "compute") -> Band:
    """The band of ``figure`` ("compute" or "total") over ``rows`` (one series' ok rows): its
    interval where any row has one, else its quartiles. Points without both edges (or with an edge
    a log axis cannot show) are left out of it."""
    interval, quartiles = COLUMNS[figure]
    label, (lo_col, hi_col) = INTERVAL, interval
    lo, hi = _positive(rows[lo_col]), _positive(rows[hi_col])
    if not (np.isfinite(lo) & np.isfinite(hi)).any():
        label, (lo_col, hi_col) = QUARTILES, quartiles
        lo, hi = _positive(rows[lo_col]), _positive(rows[hi_col])
    x = np.asarray(rows["size"], dtype=float)
    keep = np.isfinite(x) & (x > 0) & np.isfinite(lo) & np.isfinite(hi)
    order = np.argsort(x[keep], kind="stable")
    return Band(x[keep][order], lo[keep][order], hi[keep][order], label)


def labels(bands) -> list[str]:
    """What the bands drawn are, each once, the interval first: the legend's entries."""
    found = {b.label for b in bands if len(b)}
    return [text for text in (INTERVAL, QUARTILES) if text in found]
