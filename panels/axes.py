"""Log axes that people read: times in ns/µs/ms/s, memory in KiB/MiB/GiB, sizes as 2¹⁰ or 10k.

pyqtgraph's log axes label ticks 10^-5 and thin them by its own text-fill rule,
which still lets labels touch on a small plot. Here each axis picks its ticks
from a ladder of candidates (every decade or power of two, then every second,
third, ...) and takes the densest one whose widest label fits the pixels
between two ticks: labels never overlap, at any window size. View coordinates
are log10 of the data (pyqtgraph's log mode).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter

from workbench.core import units

LOG2 = math.log10(2.0)
GAP_PX = 12          # free space between two labels
#: No tick beyond 10^±100 (view coordinates are log10 of the data): a view reaching 1e308 or
#: 1e-320 (a frame not read from a file, which would have been checked) is labelled only up to
#: here, and 10.0 ** v never overflows.
VIEW_LIMIT = 100.0
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_time(seconds: float) -> str:
    """A tick's time, as the table and the exported charts write it (``workbench.core.units``)."""
    return units.seconds(seconds)


def fmt_bytes(n: float) -> str:
    return units.nbytes(n)


def fmt_count(n: float) -> str:
    return units.count(n)


def fmt_power_of_two(n: float) -> str:
    if not (math.isfinite(n) and n > 0):
        return f"{n:g}"
    return "2" + str(round(math.log2(n))).translate(_SUPERSCRIPT)


def _data(view: float) -> float:
    """The data value at a view coordinate (log10), held within 10^±VIEW_LIMIT."""
    return 10.0 ** min(max(view, -VIEW_LIMIT), VIEW_LIMIT)


def fmt_ratio(r: float) -> str:
    return units.speedup(r)


class ReadableAxis(pg.AxisItem):
    """A log axis whose ticks sit at decades (base 10) or powers of two (base 2)."""

    def __init__(self, orientation: str, formatter: Callable[[float], str], base: int = 10) -> None:
        super().__init__(orientation)
        self.formatter = formatter
        self.base = base
        self._major_spacing = 1.0
        self.enableAutoSIPrefix(False)
        # pyqtgraph drops a level's labels once they fill 80 % of the axis; the ladder below
        # already keeps a gap between labels, so let them all be drawn.
        self.setStyle(textFillLimits=[(0, 0.99)])

    def set_format(self, formatter: Callable[[float], str], base: int) -> None:
        if (formatter, base) != (self.formatter, self.base):
            self.formatter, self.base = formatter, base
            self.picture = None
            self.update()

    def _label_extent(self, values: list[float]) -> float:
        """Pixels one label needs along the axis (its width, or its height on a vertical axis)."""
        metrics = QFontMetrics(self.style["tickFont"] or QFont())
        if self.orientation in ("left", "right"):
            return metrics.height()
        return max((metrics.horizontalAdvance(self.formatter(_data(v))) for v in values), default=0)

    def tickValues(self, minVal: float, maxVal: float, size: float):
        lo, hi = sorted((minVal, maxVal))
        lo, hi = max(lo, -VIEW_LIMIT), min(hi, VIEW_LIMIT)
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo < 1e-9 or size <= 0 or hi - lo > 60:
            return []
        unit = LOG2 if self.base == 2 else 1.0           # one power of two, or one decade
        first, last = math.ceil(lo / unit - 1e-9), math.floor(hi / unit + 1e-9)
        if last < first:                                  # less than one step shown: label both ends
            self._major_spacing = hi - lo
            return [(hi - lo, [lo, hi])]
        per_px = (hi - lo) / size
        for step in (1, 2, 3, 4, 5, 10, 20, 50, 100):
            exps = [k for k in range(first, last + 1) if k % step == 0] or [first]
            values = [k * unit for k in exps]
            self._major_spacing = step * unit
            if step * unit / per_px >= self._label_extent(values) + GAP_PX or step == 100:
                minor = [k * unit for k in range(first, last + 1) if k % step] if step <= 10 else []
                return [(step * unit, values), (unit, minor)]
        return []

    def tickStrings(self, values, scale, spacing):
        # The second level (minor ticks) carries grid lines, never text.
        if not math.isclose(spacing, self._major_spacing):
            return [""] * len(values)
        return [self.formatter(_data(v)) for v in values]


def text_rects(axis: pg.AxisItem) -> list:
    """The rectangles of the tick labels this axis draws now (tests check that none overlap)."""
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [] if specs is None else [(rect, text) for rect, _, text in specs[2] if text]


def size_format(sizes: np.ndarray, unit: str) -> tuple[Callable[[float], str], int]:
    """How to label the size axis: bytes as KiB/MiB, powers of two as 2¹⁰, else 10k/1M."""
    sizes = np.asarray(sizes, dtype=float)
    pow2 = sizes.size > 0 and bool(np.all(np.exp2(np.round(np.log2(sizes))) == sizes))
    if unit.startswith("bytes"):
        return fmt_bytes, 2
    if pow2:
        return fmt_power_of_two, 2
    return fmt_count, 10


class PercentAxis(pg.AxisItem):
    """0 to 100 %, every 25, 50 or 100 as the height allows (labels never touch)."""

    def tickValues(self, minVal: float, maxVal: float, size: float):
        per_px = (maxVal - minVal) / size if size > 0 else 1.0
        height = QFontMetrics(self.style["tickFont"] or QFont()).height()
        for step in (25, 50, 100):
            if step / per_px >= height + GAP_PX / 2 or step == 100:
                return [(step, [v for v in range(0, 101, step) if minVal <= v <= maxVal])]
        return []

    def tickStrings(self, values, scale, spacing):
        return [f"{v:g}" for v in values]
