"""A dense series' line, 2 or 3 px wide, drawn as 1 px lines side by side.

Qt's raster engine draws a 1 px cosmetic line with its own line stepper, and a wider one by
outlining the line as a polygon and filling it. For the lines of a chart of 5,000 points (ten series
of 500 sizes, and as many again compared), the outlines were 9-12 ms of a 14-19 ms repaint; the
charts at 1 px took 7 ms whole (docs/PERFORMANCE.md, issue 38). The same line drawn 1 px wide
once per pixel of a square as wide as the pen (four passes for 2 px, nine for 3 px), each pass
shifted by a device pixel, covers what the wide pen covers to within a pixel at any slope, and
keeps the line as wide as the look asks (a talk's 3 px).

Only where the square's passes draw the same pixels the pen would: an opaque, unsmoothed, cosmetic
pen of a whole width, on a curve with no fill or shadow (its fill would be drawn once per pass).
Any other curve is drawn by pyqtgraph as before.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPen, QTransform

#: Pen widths drawn in passes: beyond 3 px the passes (16 and more) cost what the outline does.
WIDTHS = (2, 3)


def passes(width: float) -> list[tuple[int, int]]:
    """The device-pixel shifts of the 1 px passes that make a line ``width`` px wide: the square of
    ``width`` x ``width`` pixels around the line, as the wide pen's outline is."""
    n = round(width)
    lo = -((n - 1) // 2)
    return [(dx, dy) for dx in range(lo, lo + n) for dy in range(lo, lo + n)]


def thin(pen: QPen) -> QPen:
    """``pen`` 1 px wide, its dashes as the wide pen draws them. The dash pattern stays as it is:
    a cosmetic 2 px pen's dashes came out as long as a 1 px pen's. The passes lengthen each dash
    along the line; beyond 2 px that closed the gaps, so a pixel is taken off each dash and given
    to its gap (the pixels of a dashed sine drawn both ways: within 1 % in number, at 2 px and at 3 px)."""
    out = QPen(pen)
    out.setWidthF(1.0)
    if pen.style() not in (Qt.PenStyle.SolidLine, Qt.PenStyle.NoPen):
        spread = (round(pen.widthF()) - 1) // 2
        out.setDashPattern([max(1.0, v - spread) if i % 2 == 0 else v + spread
                            for i, v in enumerate(pen.dashPattern())])
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
                and pen.isSolid() and not fill and o["shadowPen"] is None)

    def paint(self, p, opt, widget):
        if not self.in_passes():
            super().paint(p, opt, widget)
            return
        pen = self.opts["pen"]
        base = p.transform()
        self.opts["pen"] = thin(pen)
        try:
            for dx, dy in passes(pen.widthF()):
                p.setTransform(base * QTransform.fromTranslate(dx, dy))     # shifted on the device
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
        self.curve.sigClicked.connect(self.curveClicked)
        if made.scene() is not None:
            made.scene().removeItem(made)
        self.updateItems(styleUpdate=True)


def prepare(item: pg.PlotDataItem) -> None:
    """What pyqtgraph makes at a curve's first paint after ``setData`` (its path, its bounds), made
    now: in a drawing step of its own (``panels.chart_drawing``), not in the chart's repaint. A
    compared set's first repaints took 19-26 ms with them, 7-12 ms without (issue 38)."""
    curve = item.curve
    if curve.xData is not None and len(curve.xData):
        curve.getPath()
        curve.boundingRect()
