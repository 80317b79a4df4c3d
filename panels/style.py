"""Colours, markers, pens and the look (font size, line width, theme) of every plot.

The palette itself (Okabe-Ito colours and a marker per backend) is
``workbench.views.palette``, shared with the exported charts. One ``Look`` (font size, line width, light or dark) is applied to
every plot at once: normal, or presentation for a projector.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import renderSymbol
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from workbench.views.palette import BACKEND_STYLE, PHASE_COLORS, PHASE_LABELS  # noqa: F401 - the panels read them here
from workbench.views import palette, spec

#: A chart spec's line styles (``workbench.views.spec``) as Qt's pens draw them.
PEN_STYLES = {spec.SOLID: Qt.PenStyle.SolidLine, spec.DASHED: Qt.PenStyle.DashLine,
              spec.DOTTED: Qt.PenStyle.DotLine, spec.DASHDOT: Qt.PenStyle.DashDotLine}
#: A compared set's bars are outlined in a line style of their own (the exports hatch them).
SET_LINES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)


@dataclass(frozen=True)
class Look:
    """Everything about how the plots look that a speaker may change."""

    font_pt: int = 10
    line_px: float = 2.0
    dark: bool = False

    @property
    def background(self) -> str:
        return "#1e1e1e" if self.dark else "#ffffff"

    @property
    def foreground(self) -> str:
        return "#e8e8e8" if self.dark else "#222222"

    @property
    def muted(self) -> str:
        return "#a0a0a0" if self.dark else "#666666"

    @property
    def marker_px(self) -> float:
        return max(6.0, self.font_pt * 0.7)


NORMAL = Look()
PRESENTATION_MIN_PT = 16
PRESENTATION = Look(font_pt=18, line_px=3.0)


def presentation(look: Look, font_pt: int) -> Look:
    """The presentation look: large text (never under 16 pt), lines at least 3 px."""
    return replace(look, font_pt=max(PRESENTATION_MIN_PT, font_pt), line_px=max(3.0, look.line_px))


def color(backend: str, look: Look = NORMAL) -> str:
    return palette.color(backend, look.foreground)


def ink(colour: str, look: Look = NORMAL) -> str:
    """A spec's colour on this look's background: its ink is the theme's text colour."""
    return look.foreground if colour == spec.INK else colour


marker = palette.marker


def pen(colour: str, look: Look = NORMAL, line: str = spec.SOLID, width: float | None = None):
    """A pen of a spec's colour and line style."""
    return pg.mkPen(ink(colour, look), width=look.line_px if width is None else width,
                    style=PEN_STYLES.get(line, Qt.PenStyle.SolidLine))


@lru_cache(maxsize=64)
def icon(backend: str, dark: bool = False, px: int = 14) -> QIcon:
    """The backend's marker in its colour: the same sign in the backend list as in the plots."""
    look = Look(dark=dark)
    c = color(backend, look)
    image = renderSymbol(marker(backend), px - 2, pg.mkPen(c, width=1.5), pg.mkBrush(c))
    return _icon_of(image, px)


def entry_pixmap(entry: spec.LegendEntry, look: Look, px: int) -> QPixmap:
    """A legend entry's sign as a chart spec describes it: a line in its style with its marker, a
    marker alone, a filled square (a band, a phase) or an outlined one (a transfer bar's series)."""
    pixmap = QPixmap(px, px)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    c = QColor(ink(entry.color, look))
    if entry.patch and entry.outline:
        painter.setPen(pg.mkPen(ink(entry.outline, look), width=2, style=SET_LINES[entry.pattern % len(SET_LINES)]))
        painter.setBrush(QColor(look.background))
        painter.drawRect(2, 2, px - 4, px - 4)
    elif entry.patch:
        c.setAlphaF(entry.alpha)
        painter.fillRect(0, 0, px, px, c)
    else:
        if entry.line:
            painter.setPen(pg.mkPen(c, width=max(2, px // 7), style=PEN_STYLES.get(entry.line, Qt.PenStyle.SolidLine)))
            painter.drawLine(0, px // 2, px, px // 2)
        if entry.marker:
            size = px - 2 if not entry.line else max(6, px * 2 // 3)
            image = renderSymbol(entry.marker, size, pg.mkPen(c, width=1.5), pg.mkBrush(c) if entry.filled else None)
            painter.drawImage((px - image.width()) // 2, (px - image.height()) // 2, image)
    painter.end()
    return pixmap


def _icon_of(image, px: int) -> QIcon:
    pixmap = QPixmap(px, px)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.drawImage(1, 1, image)
    painter.end()
    return QIcon(pixmap)


def setup_pyqtgraph() -> None:
    """Antialiasing, and a white background for plots made before a look is applied."""
    pg.setConfigOptions(antialias=True, background="w", foreground="#222")
