"""One colour per backend and per transfer phase, the same in the window, the charts and the report.

Plain hex strings and no Qt, so that the window's pens (``panels/style.py``) and the
matplotlib charts (``workbench/charts.py``) read the same table.
"""
from __future__ import annotations

import zlib

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
PHASE_LABELS = {"h2d": "host to device", "compute": "compute", "d2h": "device to host"}


def color(backend: str) -> str:
    """The backend's colour; a plug-in backend gets a fallback colour that is the same in every run.

    ``zlib.crc32`` rather than ``hash``: Python salts string hashes per process, so a plug-in's
    colour would change between the window and an export made from the command line.
    """
    if backend in BACKEND_COLORS:
        return BACKEND_COLORS[backend]
    return FALLBACK[zlib.crc32(backend.encode()) % len(FALLBACK)]
