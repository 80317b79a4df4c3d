"""The charts' axes: exactly the ticks and labels a chart spec chose (``workbench.views.spec``),
the same the exported chart carries.

A spec's ticks suit a slide and a window alike (at most seven); on a chart shrunk to a
projector's corner their labels could still touch, so :class:`SpecAxis` then labels every
second (third, ...) tick of the spec's, counted from the first, and leaves the others bare:
labels never overlap, and every label shown is the spec's. Zoomed in past the spec's ticks (the
mouse wheel), an axis falls back to a ladder of its own in the same unit
(``workbench.core.units``): every decade or power of two, then every second, third, ...: the
densest whose widest label fits between two ticks. View coordinates are log10 of the data
(pyqtgraph's log mode) on a log axis.
"""
from __future__ import annotations

import math
from typing import Callable

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QFontMetricsF, QImage, QPainter

from workbench.core import units
from workbench.views import spec

LOG2 = math.log10(2.0)
GAP_PX = 12          # free space between two labels
#: No tick beyond 10^±100 (view coordinates are log10 of the data): a view reaching 1e308 or
#: 1e-320 (a frame not read from a file, which would have been checked) is labelled only up to
#: here, and 10.0 ** v never overflows.
VIEW_LIMIT = 100.0


def fmt_time(seconds: float) -> str:
    """A tick's time, as the table and the exported charts write it (``workbench.core.units``)."""
    return units.seconds(seconds)


def fmt_bytes(n: float) -> str:
    return units.nbytes(n)


def fmt_power_of_two(n: float) -> str:
    return units.power(n, 2, superscript=True)


def _data(view: float) -> float:
    """The data value at a view coordinate (log10), held within 10^±VIEW_LIMIT."""
    return 10.0 ** min(max(view, -VIEW_LIMIT), VIEW_LIMIT)


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


class SpecAxis(ReadableAxis):
    """The ticks and labels of a spec's axis; thinned (labels only) where they would overlap."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation, units.formatter(""), 10)
        self.axis: spec.Axis | None = None
        self._ticks: list[tuple[float, str]] = []     # (view coordinate, label)
        self._shown: dict[float, str] = {}            # the labels drawn now, by view coordinate
        self._ladder = False                          # zoomed past the spec's ticks: a ladder of our own

    #: How far a label at an end of the axis may reach past it (into the corner beside the plot), at
    #: least: pyqtgraph drops a label that does not fit the axis and the plot, where the export draws it.
    OVERHANG_PX = {"bottom": 24, "top": 24, "left": 10, "right": 10}

    def boundingRect(self):
        m = self._overhang()
        r = super().boundingRect()
        return r.adjusted(-m, 0, m, 0) if self.orientation in ("top", "bottom") else r.adjusted(0, -m, 0, m)

    def _overhang(self) -> float:
        """Half the spec's largest label along the axis, as pyqtgraph measures it: a tick at an end
        of the range (0 and 100 % of the transfer chart) keeps its label in presentation's font,
        whose half height passed the fixed 10 px (issue 38)."""
        along = self._spec_extent(0 if self.orientation in ("left", "right") else 1)
        return max(self.OVERHANG_PX[self.orientation], along / 2 + 2)

    def _spec_extent(self, which: int) -> float:
        """The spec's largest tick label in the tick font: its height (``which`` 0) or width (1),
        measured as pyqtgraph's ``generateDrawSpecs`` does (a bounding rect, its height times 0.8)."""
        if not getattr(self, "_ticks", None):       # none yet (pyqtgraph's constructor asks too)
            return 0.0
        metrics = QFontMetricsF(self.style["tickFont"] or QFont())
        rects = [metrics.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, text)
                 for _, text in self._ticks]
        return max(r.height() * 0.8 if which == 0 else r.width() for r in rects)

    def _updateMaxTextSize(self, x: int) -> None:
        # Room for every label of the spec from the first paint: pyqtgraph widens the axis only after
        # a paint that measured a label, so a label wider than the last (the roofline's "100,000" at
        # its top) was left out until the next one, and the window and the export differed.
        if getattr(self, "axis", None) is not None and not self._ladder:
            x = max(x, self._spec_extent(1 if self.orientation in ("left", "right") else 0))
        super()._updateMaxTextSize(x)

    def setTickFont(self, font) -> None:
        super().setTickFont(font)
        self._updateMaxTextSize(0)

    def show_axis(self, a: spec.Axis) -> None:
        if a == self.axis:
            return
        self.axis = a
        self.set_format(units.formatter(a.unit), a.base)
        view = (lambda v: math.log10(v)) if a.log else float
        self._ticks = [(view(t), label) for t, label in zip(a.ticks, a.tick_labels) if not a.log or t > 0]
        self.picture = None
        self.prepareGeometryChange()          # its overhang follows the labels
        self._updateMaxTextSize(0)
        self.update()

    def labels(self) -> list[str]:
        """The spec's tick labels this axis shows now, in order (tests compare them with the export's)."""
        return [text for _, text in sorted(self._shown.items()) if text]

    def tickValues(self, minVal: float, maxVal: float, size: float):
        lo, hi = sorted((minVal, maxVal))
        slack = (hi - lo) * 1e-6
        inside = [(v, text) for v, text in self._ticks if lo - slack <= v <= hi + slack]
        self._ladder = len(inside) < 2 and self.axis is not None and self.axis.log and bool(self._ticks)
        if self._ladder:
            self._shown = {}
            return super().tickValues(minVal, maxVal, size)
        if not inside or size <= 0:
            self._shown = {}
            return []
        per_px = (hi - lo) / size if hi > lo else 1.0
        gaps = [b[0] - a[0] for a, b in zip(inside, inside[1:])]
        step = 1
        if gaps:
            metrics = QFontMetrics(self.style["tickFont"] or QFont())
            need = (metrics.height() if self.orientation in ("left", "right")
                    else max(metrics.horizontalAdvance(text) for _, text in inside)) + GAP_PX / 2
            while step < len(inside) and step * min(gaps) / per_px < need:
                step += 1
        self._shown = {v: (text if i % step == 0 else "") for i, (v, text) in enumerate(inside)}
        self._major_spacing = 1.0
        return [(1.0, [v for v, _ in inside])]

    def tickStrings(self, values, scale, spacing):
        if self._ladder:
            return super().tickStrings(values, scale, spacing)
        return [self._shown.get(v, "") for v in values]
