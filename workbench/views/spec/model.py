"""What a chart is, as plain data: axes with their ticks, series with their points and styles,
bars, marks, legend entries and text. No Qt and no matplotlib.

A spec says everything a renderer needs and nothing about how it draws: colours are palette
strings (or :data:`INK`, the theme's text colour), markers are pyqtgraph's symbol names (the
palette's vocabulary; the matplotlib renderer maps them), line styles are words whose meaning
the legend states. The window (``panels.charts``) and the exports
(``workbench.views.matplotlib_charts``) only draw specs: what one shows, the other shows.
"""
from __future__ import annotations

from dataclasses import dataclass

#: The theme's text colour: dark on the light background of an export, light in the dark theme.
INK = "ink"
#: How a line is drawn; a chart's legend says what each one means there.
SOLID, DASHED, DOTTED, DASHDOT = "solid", "dashed", "dotted", "dashdot"


@dataclass(frozen=True)
class Axis:
    """One axis: its label, the kind of number it carries (a ``workbench.core.units.FORMATS``
    name), its scale and range in data units, and the ticks both renderers put on it, labelled."""

    label: str
    unit: str = ""                           # "seconds", "bytes", "speedup", "power-of-two", ...
    scale: str = "log"                       # "log", "linear", or "category" (bars at 0, 1, 2, ...)
    base: int = 10                           # a log axis' ticks are powers of this (2 or 10)
    range: tuple[float, float] | None = None  # (lo, hi) in data units; None: nothing to show
    ticks: tuple[float, ...] = ()
    tick_labels: tuple[str, ...] = ()
    short: str = ""                          # the label where the full one does not fit (a small chart)

    @property
    def log(self) -> bool:
        return self.scale == "log"


@dataclass(frozen=True)
class Band:
    """The spread around a series' line: lower and upper edge at each x that has both."""

    xs: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    label: str                               # what the band is (``workbench.views.bands``)


@dataclass(frozen=True)
class Series:
    """One line of points. ``key`` names it across updates, so the window moves its curve rather
    than making a new one: (role, backend, variant), and the set's index when sets are compared."""

    key: tuple
    name: str                                # "numpy", "numpy (sorted)", "numba, float64"
    role: str                                # "compute", "total", "host", "device", "steady", "first"
    backend: str
    variant: str
    set_index: int
    xs: tuple[float, ...]                    # only points the axes can show (positive and finite)
    ys: tuple[float, ...]
    color: str
    marker: str                              # a pyqtgraph symbol name ("o", "s", "t1", "star", ...)
    line: str = SOLID
    filled: bool = True                      # solid lines have filled markers, dashed ones hollow
    breaks: tuple[int, ...] = ()             # the line stops after these indices (a point left out)
    band: Band | None = None
    ringed: tuple[bool, ...] = ()            # per point: within the noise of the baseline (a ring)
    sizes: tuple[float, ...] = ()            # the size each point stands for, where x is not the size (hover)
    # Markers that would overlap (``workbench.views.spec.density``): the line through every point,
    # a marker only on the points of ``marked`` (indices into xs).
    dense: bool = False
    marked: tuple[int, ...] = ()

    @property
    def marker_indices(self) -> tuple[int, ...]:
        """The points drawn with a marker: every one, unless the series is dense."""
        return self.marked if self.dense else tuple(range(len(self.xs))) if self.marker else ()


@dataclass(frozen=True)
class Bars:
    """One stack of bars per category for one series (the transfer chart): each phase's share."""

    key: tuple
    name: str
    backend: str
    set_index: int
    positions: tuple[float, ...]             # x of each bar (categories are 0, 1, 2, ...)
    width: float
    segments: tuple[tuple[str, tuple[float, ...]], ...]    # (phase, height of each bar), bottom first
    outline: str                             # the series' colour, around each bar
    pattern: int = 0                         # which set: 0 plain, then a hatch (export) or a pen style
    sizes: tuple[float, ...] = ()            # the size each bar stands for (hover)


#: A timeline bar's height, of the one unit between lanes: both renderers draw it so.
SPAN_HEIGHT = 0.6


@dataclass(frozen=True)
class Span:
    """A bar across x from ``start`` to ``end`` in one lane of a category y axis (a timeline's
    activity: lane 0 at the top), filled in ``color``, named in its hover."""

    lane: int
    start: float
    end: float
    color: str
    group: str                               # what it stands for (the legend's entry of its colour)
    hover: str


@dataclass(frozen=True)
class Mark:
    """A line across the chart with its label: a lesson's break-even or wall (``lesson``), where a
    series ran out of device memory (``wall``), or a reference value (``reference``, the speedup of 1)."""

    kind: str
    at: float                                # x of a vertical line, y of a horizontal one
    label: str = ""
    color: str = INK
    line: str = DASHED
    vertical: bool = True
    label_color: str = INK
    row: int = 0                             # labels at one height would overlap: each takes a row
    name: str = ""                           # what the line stands for (a wall's series)


@dataclass(frozen=True)
class Label:
    """Text at a place in the data, just above or below it: the name of the line it sits on (a roof
    of the roofline chart), read where the line is rather than in a legend."""

    x: float
    y: float
    text: str
    align: str = "left"                      # the end of the text at x: "left" or "right"
    above: bool = True                       # the text above y (its bottom there), else below it
    color: str = INK


@dataclass(frozen=True)
class LegendEntry:
    """One line of a legend. ``role`` says what it stands for: ``series`` (a backend, variant or
    set: colour and marker), ``key`` (what a line style means), ``band``, ``ring``, ``phase``."""

    label: str
    role: str
    color: str = INK
    line: str = SOLID                        # "" where the sign is no line
    marker: str = ""
    filled: bool = True
    patch: bool = False                      # a filled square (a band, a phase) rather than a line
    alpha: float = 1.0
    outline: str = ""                        # a bar's outline colour
    pattern: int = 0


@dataclass(frozen=True)
class ChartSpec:
    """A chart: what both renderers draw, and nothing of how."""

    kind: str
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...] = ()
    bars: tuple[Bars, ...] = ()
    marks: tuple[Mark, ...] = ()
    legend: tuple[LegendEntry, ...] = ()
    caption: str = ""                        # a lesson's statement, under the chart
    short_title: str = ""                    # the title where the full one does not fit (a small chart)
    notes: tuple[str, ...] = ()              # said under the plot, never over it: values a log axis cannot show
    short_notes: tuple[str, ...] = ()        # each note's short form, where the full one does not fit (a small chart)
    footnote: str = ""                       # points not drawn (failed), with the stamp in an export
    empty: str = ""                          # said across the chart where nothing could be drawn
    labels: tuple[Label, ...] = ()           # text on the lines it names (the roofline's roofs)
    spans: tuple[Span, ...] = ()             # a timeline's bars, in lanes of the y axis' categories
