"""A dense series' line, 2 or 3 px wide, drawn as 1 px lines side by side.

Qt's raster engine draws a 1 px cosmetic line with its own line stepper, and a wider one by
outlining it as a polygon and filling it: for the lines of a chart of thousands of points, most of
its repaint (docs/PERFORMANCE.md, issue 38). The same line drawn 1 px wide once per device pixel
of a square as wide as the pen, each pass shifted by a device pixel, covers what the wide pen
covers to within a pixel at any slope, and keeps the line as wide as the look asks (a talk's 3 px).

Only where the passes draw what the pen would: an opaque, unsmoothed, cosmetic pen of a whole
width, on a curve with no fill or shadow (drawn once per pass) and drawn fully opaque (passes
over each other would darken a translucent one). Any other curve is drawn by pyqtgraph as before.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPen, QTransform

#: Pen widths drawn in passes: beyond 3 px the passes (16 and more) cost what the outline does.
WIDTHS = (2, 3)


def passes(width: float) -> list[tuple[int, int]]:
    """The device-pixel shifts of the 1 px passes that make a line ``width`` px wide: the square of
    ``width`` x ``width`` pixels around the line, where the wide pen's outline puts its pixels."""
    n = round(width)
    lo = -(n // 2)
    return [(dx, dy) for dx in range(lo, lo + n) for dy in range(lo, lo + n)]


def thin(pen: QPen) -> QPen:
    """``pen`` 1 px wide, its dashes as long on the device as the wide pen draws them. Qt counts a
    pattern in pen widths and squares each dash's ends off by half a width: a dash of ``d`` widths
    covers ``d * w + w`` pixels, its gap ``g * w - w``. The square of passes lengthens each dash of
    the thin pen by ``w - 1`` pixels and shortens its gap as much."""
    out = QPen(pen)
    w = round(pen.widthF())
    out.setWidthF(1.0)
    if pen.style() not in (Qt.PenStyle.SolidLine, Qt.PenStyle.NoPen):
        out.setDashPattern([v * w + 1 if i % 2 == 0 else max(1.0, v * w - 1)
                            for i, v in enumerate(pen.dashPattern())])
        out.setDashOffset(pen.dashOffset() * w)
    return out


class DenseLine(pg.PlotCurveItem):
    """A PlotCurveItem that draws an unsmoothed wide line in 1 px passes (see the module)."""

    def in_passes(self) -> bool:
        """Whether this curve's line is drawn in passes now (the module says when)."""
        pen, o = self.opts["pen"], self.opts
        aa = self._exportOpts.get("antialias", True) if self._exportOpts is not False else o["antialias"]
        width = pen.widthF() if pen is not None else 0.0
        fill = o["fillLevel"] is not None and o["brush"] is not None and \
            pg.mkBrush(o["brush"]).style() != Qt.BrushStyle.NoBrush
        return (pen is not None and pen.style() != Qt.PenStyle.NoPen and pen.isCosmetic() and not aa
                and round(width) in WIDTHS and abs(width - round(width)) < 1e-6 and pen.color().alphaF() == 1.0
                and pen.isSolid() and not fill and o["shadowPen"] is None and self.effectiveOpacity() == 1.0)

    def paint(self, p, opt, widget):
        if not self.in_passes():
            super().paint(p, opt, widget)
            return
        pen = self.opts["pen"]
        base = p.transform()
        # The painter's transform is in logical pixels: a device pixel is 1 / dpr of one (a 1 px
        # cosmetic pen is one device pixel wide at any ratio).
        step = 1.0 / p.device().devicePixelRatioF()
        self.opts["pen"] = thin(pen)
        try:
            for dx, dy in passes(pen.widthF()):
                p.setTransform(base * QTransform.fromTranslate(dx * step, dy * step))
                super().paint(p, opt, widget)
        finally:
            self.opts["pen"] = pen
            p.setTransform(base)


class DenseCurve(pg.PlotDataItem):
    """A PlotDataItem whose line is a :class:`DenseLine` (added with ``PlotItem.addItem``, as
    ``plot()`` would add it)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        made = self.curve
        made.setParentItem(None)
        self.curve = DenseLine()
        self.curve.setParentItem(self)
        self.curve.stackBefore(self.scatter)          # the line under its markers, as plot() makes it
        self.curve.sigClicked.connect(self.sigClicked)           # as PlotDataItem wires its own
        if made.scene() is not None:
            made.scene().removeItem(made)
        self.updateItems(styleUpdate=True)


def prepare(item: pg.PlotDataItem) -> None:
    """What pyqtgraph makes at a curve's first paint after ``setData`` (its path, its bounds), made
    now: in a drawing step of its own (``panels.chart_drawing``), not in the chart's first repaint,
    where they were a third of it with a set compared (docs/PERFORMANCE.md, issue 38)."""
    curve = item.curve
    if curve.xData is not None and len(curve.xData):
        curve.getPath()
        curve.boundingRect()
