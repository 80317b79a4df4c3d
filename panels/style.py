"""Colours, markers, pens and the look (font size, line width, theme) of every plot.

Backends get the Okabe-Ito palette, which stays apart under deuteranopia and
protanopia, and each a marker of its own, so that they stay apart in grey scale
and in a black-and-white print as well. The transfer phases use colours no
backend uses. One ``Look`` (font size, line width, light or dark) is applied to
every plot at once: normal, or presentation for a projector.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

OKABE_ITO = {"orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7"}
INK = "ink"   # Okabe-Ito's black: the theme's text colour, so it shows on a dark background too

# (colour, marker). pandas and cudf share colours with numpy and cupy: no workload runs them
# together, and their markers still differ.
BACKEND_STYLE = {
    "numpy": ("blue", "o"),
    "pandas": ("blue", "p"),
    "numba": ("orange", "s"),
    "cupy": ("green", "t1"),
    "cudf": ("green", "t2"),
    "cupy-fused": ("sky", "d"),
    "cupy-raw": ("purple", "h"),
    "numba-cuda": ("vermillion", "t"),
    "numba-cuda-x4": (INK, "star"),
}
_FALLBACK_MARKERS = ("+", "x", "arrow_up", "arrow_down", "crosshair")
# Yellow (unused by backends), a mid grey and Paul Tol's wine: apart from every backend colour,
# and apart from each other in grey scale (light, middle, dark).
PHASE_COLORS = {"h2d": "#F0E442", "compute": "#7A7A7A", "d2h": "#882255"}
PHASE_LABELS = {"h2d": "host to device", "compute": "compute", "d2h": "device to host"}
# A second variant of a workload (divergence: sorted input) is drawn dotted, the first solid.
VARIANT_DOTTED = {"sorted"}


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
    name = BACKEND_STYLE.get(backend, (None, None))[0]
    if name is None:   # a plug-in's backend: a stable pick among the palette
        name = list(OKABE_ITO)[sum(map(ord, backend)) % len(OKABE_ITO)]
    return look.foreground if name == INK else OKABE_ITO[name]


def marker(backend: str) -> str:
    if backend in BACKEND_STYLE:
        return BACKEND_STYLE[backend][1]
    return _FALLBACK_MARKERS[sum(map(ord, backend)) % len(_FALLBACK_MARKERS)]


def pen(backend: str, look: Look = NORMAL, dashed: bool = False, dotted: bool = False, width: float | None = None):
    if dotted:
        line = Qt.PenStyle.DashDotLine if dashed else Qt.PenStyle.DotLine
    else:
        line = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    return pg.mkPen(color(backend, look), width=look.line_px if width is None else width, style=line)


@lru_cache(maxsize=64)
def icon(backend: str, dark: bool = False, px: int = 14) -> QIcon:
    """The backend's marker in its colour: the same sign in the backend list as in the plots."""
    from pyqtgraph.graphicsItems.ScatterPlotItem import renderSymbol
    look = Look(dark=dark)
    c = color(backend, look)
    image = renderSymbol(marker(backend), px - 2, pg.mkPen(c, width=1.5), pg.mkBrush(c))
    pixmap = QPixmap(px, px)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.drawImage(1, 1, image)
    painter.end()
    return QIcon(pixmap)


def setup_pyqtgraph() -> None:
    """Antialiasing, and a white background for plots made before a look is applied."""
    pg.setConfigOptions(antialias=True, background="w", foreground="#222")
