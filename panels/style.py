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
from workbench.views import palette

# A second variant of a workload (divergence: sorted input), or the second run of a lesson (pinned host
# memory, float64), is drawn dotted, the first solid.
VARIANT_DOTTED = {"sorted", "pinned", "float64"}


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


marker = palette.marker


def pen(backend: str, look: Look = NORMAL, dashed: bool = False, dotted: bool = False, width: float | None = None):
    if dotted:
        line = Qt.PenStyle.DashDotLine if dashed else Qt.PenStyle.DotLine
    else:
        line = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    return pg.mkPen(color(backend, look), width=look.line_px if width is None else width, style=line)


@lru_cache(maxsize=64)
def icon(backend: str, dark: bool = False, px: int = 14) -> QIcon:
    """The backend's marker in its colour: the same sign in the backend list as in the plots."""
    look = Look(dark=dark)
    c = color(backend, look)
    image = renderSymbol(marker(backend), px - 2, pg.mkPen(c, width=1.5), pg.mkBrush(c))
    return _icon_of(image, px)


def set_symbol(set_index: int) -> str:
    """The marker of a compared set: the exported charts use the same shapes (``workbench.views.palette``)."""
    return palette.SET_SYMBOLS[set_index % len(palette.SET_SYMBOLS)]


@lru_cache(maxsize=64)
def set_icon(set_index: int, dark: bool = False, px: int = 14) -> QIcon:
    """A compared set's marker in the theme's text colour, for the legend strip."""
    ink = Look(dark=dark).foreground
    image = renderSymbol(set_symbol(set_index), px - 2, pg.mkPen(ink, width=1.5), pg.mkBrush(ink))
    return _icon_of(image, px)


@lru_cache(maxsize=64)
def line_icon(backend: str, dark: bool = False, px: int = 14) -> QIcon:
    """The backend's colour as a short thick line: its sign where markers stand for sets."""
    pixmap = QPixmap(px, px)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setPen(pg.mkPen(color(backend, Look(dark=dark)), width=max(3, px // 4)))
    painter.drawLine(1, px // 2, px - 1, px // 2)
    painter.end()
    return QIcon(pixmap)


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
