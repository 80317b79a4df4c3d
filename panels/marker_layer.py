"""Every series' markers of a chart in one graphics item: each series' points stamped with its
one pre-rendered symbol in a single ``drawPixmapFragments`` call.

pyqtgraph's ScatterPlotItem draws the same stamps, but one item per series costs its paint
~0.16 ms of Python each time (culling masks, pixel vectors, bounds) for 0.01 ms of drawing: two
compared sets of ten series and their rings made 30 items and 5 of a chart's 16 ms repaint
(issue 38, docs/PERFORMANCE.md). One item with one style per series, the only kind of marker the
charts draw, pays that once. One ScatterPlotItem holding every series with a style per point was
tried before and cost 35 ms per ``setData``: styles here are per series, rendered once each.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import renderSymbol
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6.QtCore import QRectF
from PySide6.QtGui import QBrush, QPainter, QPen, QPixmap


class Stamp:
    """One series' points (in the view's coordinates) and the symbol each is drawn with."""

    def __init__(self, x, y, symbol, size: float, pen, brush, name: str = "") -> None:
        self.name = name                             # what the export's gid names: the same series
        self.x, self.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self.symbol, self.size, self.pen, self.brush = symbol, size, pen, brush
        self.pixmap: QPixmap | None = None           # rendered at the first paint, for its screen

    def same_style(self, other: "Stamp") -> bool:
        """Whether ``other``'s symbol is drawn as this one's: a series set again in the same style
        keeps its rendered pixmap (``MarkerLayer.set``). QPen and QBrush compare by value, every
        property that renders (width, cap, join, dashes, cosmetic)."""
        def pen(p):
            return None if p is None else QPen(p)

        def brush(b):
            return None if b is None else QBrush(b)
        return ((self.symbol, self.size) == (other.symbol, other.size) and pen(self.pen) == pen(other.pen)
                and brush(self.brush) == brush(other.brush))

    def render(self, dpr: float) -> QPixmap:
        if self.pixmap is None or self.pixmap.devicePixelRatio() != dpr:
            pen = self.pen if self.pen is not None else pg.mkPen(None)
            brush = self.brush if self.brush is not None else pg.mkBrush(None)
            self.pixmap = QPixmap.fromImage(renderSymbol(self.symbol, self.size, pen, brush, dpr=dpr))
        return self.pixmap


class MarkerLayer(pg.GraphicsObject):
    """The markers of many series, each with one symbol, size, pen and brush, keyed as the
    chart keys its series. Its place in the view box's coordinates (log10 on a log chart) is the
    caller's; sizes are in pixels, as a ScatterPlotItem's in ``pxMode``."""

    def __init__(self) -> None:
        super().__init__()
        self.stamps: dict = {}
        self._fragments = PrimitiveArray(QPainter.PixmapFragment, 10)
        self._bounds: QRectF | None = None

    def set(self, key, x, y, symbol, size: float, pen=None, brush=None, name: str = "") -> None:
        """Series ``key`` drawn at (x, y) with its own style; none of its points where x is empty.
        ``name``: what it is called ("role:name"), as a ScatterPlotItem's object name was."""
        if len(x) == 0:
            self.drop(key)
            return
        stamp = Stamp(x, y, symbol, size, pen, brush, name)
        was = self.stamps.get(key)
        if was is not None and was.pixmap is not None and was.same_style(stamp):
            # Every update sets each changed series again: its symbol is not rendered again.
            stamp.pixmap = was.pixmap
        self.stamps[key] = stamp
        self._changed()

    def drop(self, key) -> None:
        if self.stamps.pop(key, None) is not None:
            self._changed()

    def clear(self) -> None:
        if self.stamps:
            self.stamps.clear()
            self._changed()

    def resize(self, size: float) -> None:
        """Every series' markers ``size`` pixels wide (a new look)."""
        for s in self.stamps.values():
            s.size, s.pixmap = size, None
        self._changed()

    def points(self, key) -> tuple[np.ndarray, np.ndarray]:
        """The (x, y) that series ``key`` draws, in the view's coordinates."""
        s = self.stamps.get(key)
        return (s.x, s.y) if s is not None else (np.empty(0), np.empty(0))

    def _changed(self) -> None:
        self.prepareGeometryChange()
        self._bounds = None
        self.informViewBoundsChanged()
        self.update()

    # --- geometry: what the view box's auto range and Qt's culling read ---------------------------

    def _data_rect(self) -> QRectF | None:
        """The bounds of the points drawn (finite in x and y); None where there is none."""
        if self._bounds is None:
            drawn = [np.isfinite(s.x) & np.isfinite(s.y) for s in self.stamps.values()]
            x = np.concatenate([s.x[d] for s, d in zip(self.stamps.values(), drawn)] or [np.empty(0)])
            y = np.concatenate([s.y[d] for s, d in zip(self.stamps.values(), drawn)] or [np.empty(0)])
            self._bounds = QRectF(x.min(), y.min(), x.max() - x.min(), y.max() - y.min()) if len(x) else False
        return self._bounds or None

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        """What the view box's auto range reads: every point drawn (``frac`` and ``orthoRange``,
        which the charts never ask, are not honoured)."""
        r = self._data_rect()
        if r is None:
            return None, None
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def pixelPadding(self) -> float:
        """How far a marker reaches past its point, in pixels (the view box pads its range so)."""
        return max((s.size + (s.pen.widthF() if s.pen is not None else 1.0) for s in self.stamps.values()),
                   default=0.0) * 0.7072

    def boundingRect(self) -> QRectF:
        """The points' bounds, widened by a marker's reach in pixels (Qt culls by it)."""
        r = self._data_rect()
        if r is None:
            return QRectF()
        r = QRectF(r)
        px, py = self.pixelVectors()
        pad = self.pixelPadding()
        dx = 0.0 if px is None else px.length() * pad
        dy = 0.0 if py is None else py.length() * pad
        return r.adjusted(-dx, -dy, dx, dy)

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()            # the pixel padding is in the view's units
        super().viewTransformChanged()

    # --- drawing ---------------------------------------------------------------------------------

    def paint(self, p: QPainter, option, widget) -> None:
        if not self.stamps:
            return
        dpr = widget.devicePixelRatioF() if widget is not None else 1.0
        tr = p.transform()
        m11, m12, m21, m22, dx, dy = tr.m11(), tr.m12(), tr.m21(), tr.m22(), tr.dx(), tr.dy()
        p.resetTransform()                      # stamps are placed in device pixels
        for s in self.stamps.values():
            pixmap = s.render(dpr)
            with np.errstate(invalid="ignore", over="ignore"):    # inf x 0: NaN, not drawn
                px = np.clip(s.x * m11 + s.y * m21 + dx, -2 ** 30, 2 ** 30)   # Qt crashes far outside
                py = np.clip(s.x * m12 + s.y * m22 + dy, -2 ** 30, 2 ** 30)
            shown = np.isfinite(px) & np.isfinite(py)
            n = int(shown.sum())
            if not n:
                continue
            self._fragments.resize(n)
            frags = self._fragments.ndarray()
            frags[:, 0], frags[:, 1] = px[shown], py[shown]
            frags[:, 2:6] = (0.0, 0.0, pixmap.width(), pixmap.height())
            frags[:, 6:10] = (1 / dpr, 1 / dpr, 0.0, 1.0)   # scale x and y, rotation, opacity
            p.drawPixmapFragments(*self._fragments.drawargs(), pixmap)
        p.setTransform(tr)
