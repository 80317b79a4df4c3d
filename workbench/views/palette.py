"""One colour and one marker per backend, and a colour per transfer phase: the same in the window,
the charts and the report.

Backends get the Okabe-Ito palette, which stays apart under deuteranopia and protanopia, and
each a marker of its own, so that they stay apart in grey scale and in a black-and-white print
as well. The transfer phases use colours no backend uses. Plain strings and no Qt, so that the
window's pens (``panels/style.py``) and the matplotlib charts (``workbench/views/matplotlib_charts.py``) read the
same table.
"""
from __future__ import annotations

import zlib

from workbench.catalog.backends import split_threads

OKABE_ITO = {"orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7"}
INK = "ink"   # Okabe-Ito's black: the theme's text colour, so it shows on a dark background too
LIGHT_INK = "#222222"

# (colour, marker, in pyqtgraph's symbol names). pandas and cudf share colours with numpy and
# cupy: no workload runs them together, and their markers still differ.
BACKEND_STYLE = {
    "numpy": ("blue", "o"),
    "pandas": ("blue", "p"),
    "numba": ("orange", "s"),
    "cupy": ("green", "t1"),
    "cudf": ("green", "t2"),
    "cudf-pandas": ("vermillion", "d"),         # beside pandas (blue) and cudf (green): the dataframe workloads
    "cupy-fused": ("sky", "d"),
    "cupy-raw": ("purple", "h"),
    "numba-cuda": ("vermillion", "t"),
    "numba-cuda-x4": (INK, "star"),
    "numba-cuda-warp": ("purple", "star"),      # spmv: no cupy-raw there
    "scipy": ("blue", "o"),                      # spmv: no numpy there
    "cpu-stack": ("blue", "o"),                  # the pipeline's three stacks
    "gpu-zero-copy": ("green", "t1"),
    "gpu-round-trips": ("vermillion", "t"),
    # The drop-ins (workbench.catalog.dropin), drawn beside NumPy: their library's colour where it
    # has one apart from NumPy's, and shapes no built-in backend has (a crc pick gave both Numba
    # drop-ins orange crosses).
    "numba.njit (drop-in)": ("orange", "x"),
    "numba.njit parallel (drop-in)": ("vermillion", "+"),
    "cupy (drop-in)": ("green", "t3"),
    "cudf.pandas (drop-in)": ("purple", "star"),   # beside pandas (blue pentagons) or numpy
}
# A plug-in's backend is most often drawn beside NumPy, its reference: a colour apart from NumPy's
# blue (sky is too near it) and from the yellow of host-to-device copies.
PLUGIN_COLORS = tuple(name for name in OKABE_ITO if name not in ("blue", "sky", "yellow"))
# A plug-in's backend: shapes no backend of the table has, in either renderer (pyqtgraph's arrows
# are matplotlib's triangles, which cupy and numba-cuda have).
FALLBACK_MARKERS = ("+", "x", "t3")     # not "crosshair": pyqtgraph fills it into a dot, matplotlib draws a plus
# Yellow (unused by backends), a mid grey and Paul Tol's wine: apart from every backend colour,
# and apart from each other in grey scale (light, middle, dark).
PHASE_COLORS = {"h2d": "#F0E442", "compute": "#7A7A7A", "d2h": "#882255"}
PHASE_LABELS = {"h2d": "host to device", "compute": "compute", "d2h": "device to host"}
#: A timeline's bars: the three phases as the transfer chart colours them, then what else a call does.
TIMELINE_COLORS = {**PHASE_COLORS, "memset": "#BBBBBB", "device copy": "#CC79A7", "API call": "#56B4E9",
                   "host phase": "#009E73"}
TIMELINE_LABELS = {**PHASE_LABELS, "compute": "compute", "memset": "memset", "device copy": "device copy",
                   "API call": "API call (host)", "host phase": "host phase or stage"}

# Result sets compared on one chart keep their backends' colours and take a marker each: the
# same shapes in the same order in matplotlib's names (the exports) and pyqtgraph's (the window).
SET_MARKERS = ("o", "s", "^", "D", "v", "P", "X", ">", "<", "p", "h", "*")
SET_SYMBOLS = ("o", "s", "t1", "d", "t", "+", "x", "t2", "t3", "p", "h", "star")
#: The most result sets one chart tells apart: past this their markers would repeat, and a ninth
#: set drawn as the first one's circles is two sets no reader can tell apart.
MOST_SETS = len(SET_SYMBOLS)


def _stable_pick(backend: str, n: int) -> int:
    """``zlib.crc32`` rather than ``hash``: Python salts string hashes per process, so a plug-in's
    colour would change between the window and an export made from the command line."""
    return zlib.crc32(backend.encode()) % n


#: A series measured on a named device is called ``cupy @ node2:GPU1`` (``workbench.cluster.places``):
#: it keeps its backend's colour, and takes a marker of its device's.
DEVICE_SEP = " @ "
DEVICE_MARKERS = ("o", "s", "t", "d", "h", "star", "p", "t1", "t2")          # pyqtgraph's names


def device_marker(name: str) -> int | None:
    """Which of the device markers a series named by its device takes (None for a plain backend)."""
    return _stable_pick(name.split(DEVICE_SEP, 1)[1], len(DEVICE_MARKERS)) if DEVICE_SEP in name else None


#: A series at a set number of threads ('numba x4', ``workbench.catalog.backends.THREADS_SEP``) keeps
#: its backend's colour and takes a marker by its count, from few threads to many.
THREAD_MARKERS = ("t", "s", "d", "star", "h", "p", "o")


def color(backend: str, ink: str = LIGHT_INK) -> str:
    """The backend's colour; ``ink`` is the text colour of the background it is drawn on."""
    backend = split_threads(backend.split(DEVICE_SEP, 1)[0])[0]
    name = BACKEND_STYLE.get(backend, (None, None))[0]
    if name is None:   # a plug-in's backend: a stable pick among the palette, never NumPy's blue
        name = PLUGIN_COLORS[_stable_pick(backend, len(PLUGIN_COLORS))]
    return ink if name == INK else OKABE_ITO[name]


def marker(backend: str) -> str:
    if DEVICE_SEP in backend:     # devices of one backend share its colour: their markers tell them apart
        return DEVICE_MARKERS[device_marker(backend)]
    base, count = split_threads(backend)
    if count:
        return THREAD_MARKERS[min(count.bit_length() - 1, len(THREAD_MARKERS) - 1)]
    if backend in BACKEND_STYLE:
        return BACKEND_STYLE[backend][1]
    return FALLBACK_MARKERS[_stable_pick(backend, len(FALLBACK_MARKERS))]

