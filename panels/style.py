"""Colours and pens: one colour per backend, the same in every plot, table and export."""
from __future__ import annotations

import pyqtgraph as pg

BACKEND_COLORS = {
    "numpy": "#1f77b4",          # blue
    "numba": "#ff7f0e",          # orange
    "pandas": "#8c564b",         # brown
    "cupy": "#2ca02c",           # green
    "cupy-fused": "#17becf",     # teal
    "cupy-raw": "#0b5d1e",       # dark green
    "numba-cuda": "#d62728",     # red
    "numba-cuda-x4": "#9467bd",  # purple
    "cudf": "#e377c2",           # pink
}
FALLBACK = ("#7f7f7f", "#bcbd22", "#aec7e8", "#ffbb78")
PHASE_COLORS = {"h2d": "#f28e2b", "compute": "#4e79a7", "d2h": "#e15759"}
VARIANT_SYMBOLS = {"": "o", "random": "o", "sorted": "t"}


def color(backend: str) -> str:
    if backend in BACKEND_COLORS:
        return BACKEND_COLORS[backend]
    return FALLBACK[hash(backend) % len(FALLBACK)]


def pen(backend: str, dashed: bool = False, width: float = 2.0):
    from PySide6.QtCore import Qt
    return pg.mkPen(color(backend), width=width, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)


def setup_pyqtgraph() -> None:
    """White background and antialiasing: charts that read well on a projector and in a paper."""
    pg.setConfigOptions(antialias=True, background="w", foreground="#222")
