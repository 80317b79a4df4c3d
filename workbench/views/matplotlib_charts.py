"""The window's five plots without Qt: matplotlib figures of a result table, to PNG, SVG and PDF.

pyqtgraph's SVG exporter fails on this PySide6 stack, and a screen grab is only as large
as the window. matplotlib renders the same series to real vector files (curves as paths,
text as text) at a size chosen for the slide or the paper, from the same DataFrame the
window plots. Only ``Figure`` objects are used, never ``pyplot``: no GUI backend is
selected and no global figure state is kept, so exporting from the window's thread or
from the command line is the same code. The engine never imports this module, and the
window imports it only when something is exported.
"""
from __future__ import annotations

import logging
import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from workbench.core import atomic
from workbench.views import bands
from workbench.views import palette
from workbench.views import provenance
from workbench.core import units
from workbench.views.compare import (DEFAULT_BASELINES, WITHIN_NOISE, Baseline, Series, baseline,  # noqa: F401 - the API
                               is_baseline, series, speedups, within_noise)
from workbench.views.presets import FORMATS, KINDS, PAPER, Preset, output_paths, parse_size, preset  # noqa: F401 - the API
from workbench.results.files import ResultSet

log = logging.getLogger(__name__)

SET_MARKERS = palette.SET_MARKERS
SET_HATCHES = ("", "//", "..", "xx", "\\\\", "++")
VARIANT_MARKERS = {"": "o", "random": "o", "sorted": "^", "pageable": "o", "pinned": "^", "float32": "o", "float64": "^"}


def _rc(p: Preset) -> dict:
    f = p.font_pt
    return {
        "svg.fonttype": "none",        # SVG text stays text: searchable, editable in a vector editor
        "svg.hashsalt": "gpu-workbench",   # stable ids: the same chart gives the same file
        "pdf.fonttype": 42,            # TrueType in the PDF: text can be selected and copied
        "font.family": "DejaVu Sans",  # ships with matplotlib: the same glyphs on every machine
        "font.size": f, "axes.titlesize": 1.2 * f, "axes.labelsize": f,
        "xtick.labelsize": 0.9 * f, "ytick.labelsize": 0.9 * f, "legend.fontsize": 0.85 * f,
        "lines.linewidth": p.line_pt, "lines.markersize": p.marker_pt,
        "axes.linewidth": p.line_pt / 3, "grid.linewidth": p.line_pt / 4,
        "xtick.major.width": p.line_pt / 3, "ytick.major.width": p.line_pt / 3,
        "xtick.major.size": p.line_pt * 1.5, "ytick.major.size": p.line_pt * 1.5,
        "axes.grid": True, "grid.alpha": 0.35, "axes.axisbelow": True,
        "figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white",
        "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
        # Every text comes from data (backend names, environment values, lesson statements, stamps):
        # a "$" in one is a dollar sign, never mathtext (which misdrew it, or raised on an odd count).
        "text.parse_math": False, "text.usetex": False,
    }


def _marker(s: Series, compare: bool) -> str:
    if compare:
        return SET_MARKERS[s.set_index % len(SET_MARKERS)]
    device = palette.device_marker(s.backend)      # 'cupy @ node2:GPU1': its device's marker
    return palette.DEVICE_MPL_MARKERS[device] if device is not None else VARIANT_MARKERS.get(s.variant, "o")


def _left_out(sets: Sequence[ResultSet]) -> str:
    """'3 points not drawn (2 error, 1 implausible)': only ok points are drawn, and the chart says so."""
    statuses = pd.concat([rs.frame["status"] for rs in sets]) if sets else pd.Series(dtype=object)
    counts = statuses[statuses != "ok"].value_counts()
    if counts.empty:
        return ""
    n = int(counts.sum())
    return f"{n} point{'s' if n > 1 else ''} not drawn (" + ", ".join(f"{c} {s}" for s, c in counts.items()) + ")"


# Axes: log scales with ticks people read ------------------------------------------------------

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_BYTE_UNITS = ((2 ** 40, "TiB"), (2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB"), (1, "B"))


def time_label(seconds: float) -> str:
    """1e-05 -> '10 µs': each tick in the unit that fits it (``workbench.core.units``, as the table)."""
    return units.seconds(seconds)


def bytes_label(n: float) -> str:
    """262144 -> '256 KiB'."""
    for scale, unit in _BYTE_UNITS:
        if abs(n) >= scale or unit == "B":
            return f"{n / scale:.3g} {unit}"
    return str(n)


def power_label(value: float, base: int) -> str:
    """1024 -> '2¹⁰' (base 2), 1e6 -> '10⁶' (base 10); other values as plain numbers."""
    k = math.log(value, base) if value > 0 else float("nan")
    if math.isfinite(k) and abs(k - round(k)) < 1e-9:
        return f"{base}{str(round(k)).translate(_SUPERSCRIPT)}"
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


#: No log axis reaches past these: a value beyond them (1e308, 1e-320; files are checked when read,
#: a frame handed in is not) is drawn at the edge, so that no tick or limit overflows a float.
AXIS_LO, AXIS_HI = 1e-100, 1e100


def _clamp(values: np.ndarray) -> np.ndarray:
    return np.clip(values, AXIS_LO, AXIS_HI)


def log_ticks(lo: float, hi: float, base: int, most: int = 8) -> list[float]:
    """Powers of ``base`` inside [lo, hi], every k-th one so there are at most ``most``.

    In base 10, an axis too narrow for three powers gets 2 and 5 times them as well, and if
    that is still too few, 1.5, 3 and 7: a narrow axis still carries labels. [lo, hi] is held
    within [AXIS_LO, AXIS_HI]; NaN, zero or a negative end gives no ticks.
    """
    if not (lo > 0 and hi > lo):
        return []
    lo, hi = max(lo, AXIS_LO), min(hi, AXIS_HI)
    if not hi > lo:
        return []
    exps = range(math.floor(math.log(lo, base) + 1e-9), math.ceil(math.log(hi, base) - 1e-9) + 1)
    steps = ((1,), (1, 2, 5), (1, 1.5, 2, 3, 5, 7)) if base == 10 else ((1,),)
    for subs in steps:
        inside = [(k, s) for k in exps for s in subs if lo * (1 - 1e-9) <= _power(base, k, s) <= hi * (1 + 1e-9)]
        if len(inside) >= 3:
            break
    if not inside:
        return []
    stride = max(1, math.ceil(len(inside) / most))
    if subs == (1,) and stride > 1:    # aligned strides (2^10, 2^12, ...), not whatever the edge gives
        first = inside[0][0]
        return [_power(base, k) for k, _ in inside if (k - first) % stride == 0]
    return [_power(base, k, s) for k, s in inside[::stride]]


def _power(base: int, k: int, factor: int = 1) -> float:
    """factor * base**k, dividing for negative k so that 5e-06 is 5e-06 and not 4.999...e-06."""
    return factor * float(base) ** k if k >= 0 else factor / float(base) ** -k


def _log_axis(axis, lo: float, hi: float, base: int, label: Callable[[float], str], most: int = 8) -> None:
    axis.set_major_locator(FixedLocator(log_ticks(lo, hi, base, most)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: label(v)))
    axis.set_minor_locator(NullLocator())


def _size_axis(ax: Axes, sets: Sequence[ResultSet], sizes: np.ndarray) -> None:
    """Log x axis named by the workload's size unit; powers of two where every size is one."""
    sizes = _clamp(sizes[np.isfinite(sizes) & (sizes > 0)])
    pow2 = len(sizes) > 0 and all(int(s) & (int(s) - 1) == 0 for s in sizes)
    base = 2 if pow2 else 10
    ax.set_xscale("log", base=base)
    ax.set_xlabel(_size_unit(sets))
    if len(sizes):
        lo, hi = float(sizes.min()), float(sizes.max())
        ax.set_xlim(lo / base ** 0.3, hi * base ** 0.3)
        _log_axis(ax.xaxis, lo, hi, base, lambda v: power_label(v, base), most=7)
        measured = sorted(set(sizes.tolist()))
        if pow2 and len(measured) <= 7:      # ticks where the sizes are, not at powers never measured
            ax.xaxis.set_major_locator(FixedLocator(measured))


def _size_unit(sets: Sequence[ResultSet]) -> str:
    from workbench.catalog.registry import REGISTRY
    names = {w for rs in sets for w in rs.frame["workload"] if w}
    if len(names) == 1:
        try:
            return REGISTRY.get(names.pop()).size_unit
        except KeyError:   # a plug-in's workload, not loaded here
            pass
    return "size"


def _value_axis(ax: Axes, values: list[np.ndarray], label: Callable[[float], str], base: int = 10) -> None:
    ax.set_yscale("log", base=base)
    data = np.concatenate(values) if values else np.array([])
    data = _clamp(data[np.isfinite(data) & (data > 0)])
    if len(data):
        lo, hi = float(data.min()), float(data.max())
        if hi / lo < 1.5:                      # a flat line: give it room, and ticks
            lo, hi = lo / 1.5, hi * 1.5
        pad = (hi / lo) ** 0.06                # at most 1e12: the range is clamped
        ax.set_ylim(lo / pad, hi * pad)
        _log_axis(ax.yaxis, lo / pad, hi * pad, base, label, most=7)


def _held(a) -> np.ndarray:
    """Positive values (an infinity too) held within [AXIS_LO, AXIS_HI]; the others as they are."""
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, np.clip(a, AXIS_LO, AXIS_HI), a)


def _positive(a) -> np.ndarray:
    a = _held(a)
    return np.where(np.isfinite(a) & (a > 0), a, np.nan)


def _gid(kind: str, role: str, label: str) -> str:
    """An SVG id per drawn series, so a test (or a person in a vector editor) finds each curve."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"series-{kind}-{role}-{label}")


# The five plots ---------------------------------------------------------------------------------

@dataclass
class _Chart:
    """What one drawing function needs, and what it leaves for the legend."""

    ax: Axes
    sets: Sequence[ResultSet]
    labels: Sequence[str]
    preset: Preset
    baseline: Baseline | None
    kind: str
    compare: bool = False
    handles: list = None   # legend entries after the series': what solid and dashed mean
    zeros: int = 0         # values of 0 a log axis cannot show (a peak that did not rise)
    walled: dict = None    # {size: backends a lesson's wall mark there names}: their walls need no second label

    def line(self, s: Series, role: str, x, y, dashed: bool = False, legend: bool = True) -> np.ndarray:
        """A curve of ``s``: solid with filled markers, or dashed with hollow ones; the values it drew."""
        self.zeros += int((np.asarray(y, dtype=float) == 0).sum())
        y = _positive(y)    # NaN where a log axis cannot go: the line breaks there rather than bridging the gap
        self.ax.plot(np.asarray(x, float), y, color=s.color, marker=_marker(s, self.compare),
                     linestyle="--" if dashed else "-", markerfacecolor="white" if dashed else s.color,
                     markeredgewidth=self.preset.line_pt / 2, label=s.label if legend else "_nolegend_",
                     gid=_gid(self.kind, role, s.label))
        return y[np.isfinite(y)]

    def key(self, solid: str, dashed: str | None) -> None:
        grey = "#555"
        self.handles = [Line2D([], [], color=grey, label=solid)]
        if dashed:
            self.handles.append(Line2D([], [], color=grey, linestyle="--", marker="o", markerfacecolor="white",
                                       label=dashed))

    def empty(self, text: str) -> None:
        self.ax.text(0.5, 0.5, text, ha="center", va="center", transform=self.ax.transAxes, color="#666",
                     wrap=True)
        self.ax.set_xticks([])
        self.ax.set_yticks([])
        self.ax.grid(False)


def _runtime(c: _Chart) -> None:
    c.ax.set_title("Runtime")
    c.ax.set_ylabel("time per call")
    ys, any_device, drawn = [], False, []
    for s in series(c.sets, c.labels):
        x, r = s.rows["size"].to_numpy(float), s.rows
        ys.append(c.line(s, "compute", x, r["compute_median_s"]))
        for which in ("compute", "total") if s.moves_data else ("compute",):
            b = bands.band(r, which)    # what the window draws too, around each line
            c.ax.fill_between(b.x, _held(b.lo), _held(b.hi), color=s.color, alpha=bands.ALPHA, linewidth=0,
                              gid=_gid(c.kind, f"band-{which}", s.label))
            drawn.append(b)
            ys += [b.lo, b.hi]          # the axis reaches the band's edges, not only the medians
        if s.moves_data:   # a device backend: end-to-end adds the transfers
            any_device = True
            ys.append(c.line(s, "total", x, r["total_median_s"], dashed=True, legend=False))
    c.key("compute (median)", "end-to-end, with transfers" if any_device else None)
    c.handles += [Patch(facecolor="#555", alpha=bands.ALPHA * 2, linewidth=0, label=text)
                  for text in bands.labels(drawn)]
    _axes(c, ys, time_label)


def _speedup(c: _Chart) -> None:
    b = c.baseline
    c.ax.set_title(f"Speedup over {b.describe(c.labels)}")
    c.ax.set_ylabel(f"times faster than {b.backend}")
    ys, any_device, ringed = [], False, False
    for s, joined in speedups(c.sets, b, c.labels):
        if is_baseline(s, b):
            continue                            # the baseline itself: the line at 1
        x = joined["size"].to_numpy(float)
        # Compute solid, end-to-end dashed, as in the window and the README; on a CPU backend
        # compute is end-to-end: one line, not two on top of each other.
        figures = ("compute", "total") if s.moves_data else ("compute",)
        for figure in figures:
            y = c.line(s, figure, x, joined[f"{figure}_median_s_base"] / joined[f"{figure}_median_s"],
                       dashed=figure == "total", legend=figure == "compute")
            ys.append(y)
            ringed |= _rings(c, s, figure, x, joined)
        any_device |= s.moves_data
    c.ax.axhline(1.0, color="#333", linewidth=c.preset.line_pt / 2, linestyle=":", zorder=1)
    c.key("compute", "end-to-end" if any_device else None)
    if ringed:
        c.handles.append(Line2D([], [], linestyle="none", marker="o", markersize=c.preset.marker_pt * 2.2,
                                markerfacecolor="none", markeredgecolor=RING_COLOR, label=WITHIN_NOISE))
    _axes(c, ys, lambda v: f"{v:.3g}×", also=(1.0,))


#: The ring around a speedup point its noise cannot tell from the baseline (the window's too).
RING_COLOR = "#888"


def _rings(c: _Chart, s: Series, figure: str, x: np.ndarray, joined) -> bool:
    """A grey ring around each point of ``s`` whose ``figure`` is within the noise of the
    baseline's (``workbench.views.compare.within_noise``); whether any was drawn."""
    y = _positive(joined[f"{figure}_median_s_base"] / joined[f"{figure}_median_s"])
    mask = within_noise(joined, figure) & np.isfinite(y)
    if not mask.any():
        return False
    c.ax.plot(x[mask], y[mask], linestyle="none", marker="o", markersize=c.preset.marker_pt * 2.2,
              markerfacecolor="none", markeredgecolor=RING_COLOR, markeredgewidth=c.preset.line_pt / 2,
              label="_nolegend_", gid=_gid(c.kind, f"within-noise-{figure}", s.label), zorder=4)
    return True


def _memory(c: _Chart) -> None:
    c.ax.set_title("Peak memory")
    c.ax.set_ylabel("peak above the point's start")
    ys, any_device = [], False
    for s in series(c.sets, c.labels):
        x = s.rows["size"].to_numpy(float)
        ys.append(c.line(s, "host", x, s.rows["peak_host_bytes"]))
        device = _positive(s.rows["peak_device_bytes"])
        if np.isfinite(device).any():
            any_device = True
            ys.append(c.line(s, "device", x, device, dashed=True, legend=False))
    c.key("host", "device" if any_device else None)
    _axes(c, ys, bytes_label, base=2)


def _first_call(c: _Chart) -> None:
    c.ax.set_title("First call vs steady call")
    c.ax.set_ylabel("time per call")
    ys = []
    for s in series(c.sets, c.labels):
        x = s.rows["size"].to_numpy(float)
        ys.append(c.line(s, "steady", x, s.rows["total_median_s"]))
        ys.append(c.line(s, "first", x, s.rows["first_call_s"], dashed=True, legend=False))
    c.key("steady call (median, end-to-end)", "first call (compilation, setup)")
    _axes(c, ys, time_label)


def _axes(c: _Chart, ys: list[np.ndarray], label: Callable[[float], str], base: int = 10,
          also: tuple[float, ...] = ()) -> None:
    """Log axes over what was drawn (and the values in ``also``); a note where nothing was."""
    if not any(len(y) for y in ys):
        c.empty("No point to draw: no ok result"
                + (f" beside a {c.baseline.backend} baseline" if c.kind == "speedup" and c.baseline.backend else ""))
        return
    sizes = np.concatenate([rs.frame.loc[rs.frame["status"] == "ok", "size"].to_numpy(float) for rs in c.sets])
    walls = _walls(c) if c.kind in WALL_KINDS else []
    _size_axis(c.ax, c.sets, np.concatenate([sizes, np.array(walls, dtype=float)]))
    _value_axis(c.ax, ys + [np.array(also, dtype=float)], label, base)
    if c.zeros:   # say why a series has gaps, rather than let them pass for missing measurements
        c.ax.text(0.99, 0.01, f"{c.zeros} value{'s' if c.zeros > 1 else ''} of 0 not shown on the log scale",
                  transform=c.ax.transAxes, ha="right", va="bottom", color="#666", fontsize=0.75 * c.preset.font_pt)


#: The charts that mark where each series ran out of device memory (the memory wall).
WALL_KINDS = ("runtime", "memory")


def _walls(c: _Chart) -> list[int]:
    """A dotted vertical line in the series' colour at each series' first out-of-memory size, and
    one label per size at the top naming every series that hit the wall there (several backends
    at one size were four labels stacked over each other); returns the sizes, which the size axis
    must then reach."""
    from workbench.results.rows import memory_walls
    at: dict[int, list[tuple[str, str]]] = {}
    walls: set[int] = set()
    for rs, set_label in zip(c.sets, c.labels):
        for (backend, variant), size in memory_walls(rs.frame).items():
            name = f"{backend} ({variant})" if variant else backend
            label = f"{name}, {set_label}" if c.compare and set_label else name
            color = palette.color(backend)
            c.ax.axvline(size, color=color, linestyle=":", linewidth=c.preset.line_pt,
                         gid=_gid(c.kind, "wall", label))
            if backend not in (c.walled or {}).get(float(size), ()):   # else a lesson's mark says it
                at.setdefault(size, []).append((label, color))
            walls.add(size)
    last = max(at, default=0)
    for k, (size, named) in enumerate(sorted(at.items())):
        colors = {color for _, color in named}
        # The label reads away from the plot's right edge, so that the last wall's stays inside.
        right = size == last and len(at) > 1
        c.ax.text(size, 0.98 - 0.06 * (k % 4), (f"{', '.join(n for n, _ in named)}: out of memory "
                                                 if right else f" {', '.join(n for n, _ in named)}: out of memory"),
                  color=colors.pop() if len(colors) == 1 else "#333", transform=c.ax.get_xaxis_transform(),
                  ha="right" if right else "left", va="top", fontsize=0.75 * c.preset.font_pt,
                  bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.0})
    return sorted(walls)


def _walled(marks: Sequence[tuple[float, str]]) -> dict[float, set[str]]:
    """{size: the backends named by a lesson's wall marks there} ("float64 wall (cupy, numba-cuda)")."""
    out: dict[float, set[str]] = {}
    for size, label in marks:
        head, names = _label_parts(label)
        if names and re.search(r"\bwall$", head):
            out.setdefault(float(size), set()).update(names)
    return out


def _label_parts(label: str) -> tuple[str, list[str]]:
    """A mark's label as its head and the names in its tail: "float64 wall (cupy, numba-cuda)" is
    ("float64 wall", ["cupy", "numba-cuda"]); a label without a tail has none."""
    m = re.fullmatch(r"(.+) \((.+)\)", label)
    return (m.group(1), [n.strip() for n in m.group(2).split(",")]) if m else (label, [])


def _transfer(c: _Chart) -> None:
    """Per size, one bar per GPU series: its end-to-end time split into h2d, compute, d2h, in %."""
    c.ax.set_title("Where GPU end-to-end time goes")
    phases = ("h2d", "compute", "d2h")
    columns = {"h2d": "h2d_s", "compute": "compute_median_s", "d2h": "d2h_s"}
    drawn = [s for s in series(c.sets, c.labels) if s.moves_data]
    drawn = [s for s in drawn
              if np.isfinite(s.rows[list(columns.values())].to_numpy(float)).all(axis=1).any()]
    if not drawn:
        c.empty("No GPU backend in these results:\nCPU backends move no data, all their time is compute.")
        return
    sizes = sorted({int(v) for s in drawn for v in s.rows["size"]})
    width = 0.84 / len(drawn)
    for j, s in enumerate(drawn):
        r = s.rows[np.isfinite(s.rows[list(columns.values())].to_numpy(float)).all(axis=1)]
        parts = {p: r[columns[p]].to_numpy(float) for p in phases}
        total = sum(parts.values())
        total = np.where(total > 0, total, np.nan)
        x = np.array([sizes.index(int(v)) for v in r["size"]]) - 0.42 + width * (j + 0.5)
        bottom = np.zeros(len(r))
        for p in phases:
            share = np.nan_to_num(100 * parts[p] / total)
            c.ax.bar(x, share, width * 0.92, bottom=bottom, color=palette.PHASE_COLORS[p], edgecolor=s.color,
                     linewidth=c.preset.line_pt * 0.8, hatch=SET_HATCHES[s.set_index % len(SET_HATCHES)] or None,
                     gid=_gid(c.kind, p, s.label))
            bottom = bottom + share
    c.ax.set_ylim(0, 100)
    c.ax.set_ylabel("share of end-to-end time (%)")
    c.ax.set_xlabel(_size_unit(c.sets) + "; one bar per GPU backend, outlined in its colour")
    c.ax.grid(axis="x", visible=False)
    step = max(1, math.ceil(len(sizes) / 10))
    c.ax.set_xticks(range(0, len(sizes), step), [power_label(v, 2) if v & (v - 1) == 0 else power_label(v, 10)
                                                 for v in sizes[::step]])
    c.ax.set_xlim(-0.6, len(sizes) - 0.4)
    c.handles = [Patch(facecolor=palette.PHASE_COLORS[p], label=palette.PHASE_LABELS[p]) for p in phases]
    c.handles += [Patch(facecolor="white", edgecolor=s.color, linewidth=c.preset.line_pt * 0.8,
                        hatch=SET_HATCHES[s.set_index % len(SET_HATCHES)] or None, label=s.label) for s in drawn]


_DRAW = {"runtime": _runtime, "speedup": _speedup, "transfer": _transfer, "memory": _memory,
         "first-call": _first_call}


# Figures and files ------------------------------------------------------------------------------

def figure(kind: str, sets: Sequence[ResultSet], p: Preset = None, *, stamp: bool = True,
           baseline_name: str | None = None, labels: Sequence[str] | None = None, caption: str | None = None,
           marks: Sequence[tuple[float, str]] | None = None) -> Figure:
    """One chart of ``sets`` (several: overlaid, each labelled by what differs) as a matplotlib Figure.

    ``caption`` is written under the chart, ``marks`` (size, label) are vertical lines on its size
    axis; left out, both come from the lesson a single set's settings carry (``gpu-workbench lesson``).
    Call it inside :func:`style` (as :func:`render` and :func:`export` do) for the preset's fonts.
    """
    if kind not in _DRAW:
        raise ValueError(f"unknown chart {kind!r}: use one of {', '.join(KINDS)}")
    p = p or preset()
    labels = list(labels) if labels is not None else provenance.labels(sets)
    b = baseline(sets, baseline_name, labels) if kind == "speedup" else None
    told = lesson_of(sets)
    if caption is None:
        caption = lesson_caption(told) if told else ""
    if marks is None:
        marks = [(float(size), str(label)) for size, label in told.get("marks", [])] if told else []
    note = _left_out(sets)
    text = provenance.stamp(sets, note) if stamp else note
    # The caption and the stamp get a strip of their own below the chart and its legend, so neither
    # covers them. A caption too long for a slide's height makes the figure taller, not the chart tiny.
    lines = _stamp_lines(text, p)
    said = _wrap(caption, p, _caption_pt(p))
    strip_in = ((len(lines) * 1.3 * _stamp_pt(p) + len(said) * 1.3 * _caption_pt(p) + 8) / 72
                if lines or said else 0.0)
    height = max(p.height_in, strip_in / 0.4) if said else p.height_in
    fig = Figure(figsize=(p.width_in, height), dpi=p.dpi, layout="constrained")
    strip = strip_in / height
    top, bottom = fig.subfigures(2, 1, height_ratios=[1 - strip, strip]) if strip else (fig, None)
    ax = top.add_subplot()
    chart = _Chart(ax, sets, labels, p, b, kind, compare=len(sets) > 1, walled=_walled(marks))
    _DRAW[kind](chart)
    _marks(chart, marks)
    _legend(top, ax, chart)
    if bottom is not None:
        if said:
            bottom.text(0.01, 0.98, "\n".join(said), fontsize=_caption_pt(p), color="#222", ha="left",
                        va="top", linespacing=1.3, gid="caption")
        if lines:
            bottom.text(0.01, 0.02, "\n".join(lines), fontsize=_stamp_pt(p), color="#666", ha="left",
                        va="bottom", linespacing=1.3, gid="stamp")
    return fig


def lesson_of(sets: Sequence[ResultSet]) -> dict | None:
    """The lesson statement a single result set carries in its settings, if any."""
    if len(sets) != 1:
        return None
    told = sets[0].settings.get("lesson")
    return told if isinstance(told, dict) and told.get("statement") else None


def lesson_caption(told: dict) -> str:
    """A lesson's statement as a caption: its title, the verdict, the sentences with their numbers."""
    head = f"Lesson: {told.get('title') or told.get('name', '')}."
    return " ".join(x for x in (head, told.get("verdict", ""), told.get("statement", "")) if x)


def merge_labels(labels: Sequence[str]) -> str:
    """Labels of marks at one size as one: "float64 wall (cupy)" and "float64 wall (numba-cuda)"
    become "float64 wall (cupy, numba-cuda)"; labels without such a tail are joined with "; "."""
    heads: dict[str, list[str]] = {}
    for label in labels:
        head, names = _label_parts(label)
        heads.setdefault(head, []).extend(names)
    return "; ".join(f"{h} ({', '.join(t)})" if t else h for h, t in heads.items())


def _marks(c: _Chart, marks: Sequence[tuple[float, str]]) -> None:
    """Vertical lines at sizes (a break-even, a memory wall), labelled, on charts whose x axis is size."""
    if c.kind == "transfer" or c.ax.get_xscale() != "log":
        return
    lo, hi = c.ax.get_xlim()
    merged: dict[float, list[str]] = {}       # one line and one label per size (two walls at one size)
    for size, label in marks:
        if label not in merged.setdefault(size, []):
            merged[size].append(label)
    for size, labels in merged.items():
        label = merge_labels(labels)
        if not lo <= size <= hi:
            continue
        c.ax.axvline(size, color="#222", linestyle=(0, (4, 3)), linewidth=c.preset.line_pt * 0.6, zorder=1.5,
                     gid=_gid(c.kind, "mark", label))
        c.ax.text(size, 0.98, f"{label} ", transform=c.ax.get_xaxis_transform(), rotation=90, ha="right",
                  va="top", fontsize=0.7 * c.preset.font_pt, color="#222", gid=_gid(c.kind, "mark-label", label),
                  bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})


def _legend(fig, ax: Axes, chart: _Chart) -> None:
    handles, names = ax.get_legend_handles_labels()
    extra = chart.handles or []
    handles, names = handles + extra, names + [h.get_label() for h in extra]
    if not handles:
        return
    if chart.preset.legend == "right":
        fig.legend(handles, names, loc="outside right upper")
    else:
        fig.legend(handles, names, loc="outside lower center", ncols=2)


def _stamp_pt(p: Preset) -> float:
    return max(5.0, 0.62 * p.font_pt)     # under 5 pt nobody reads it in print


def _stamp_lines(text: str, p: Preset) -> list[str]:
    """The stamp wrapped to the figure's width."""
    return _wrap(text, p, _stamp_pt(p))


def _caption_pt(p: Preset) -> float:
    return max(5.5, 0.72 * p.font_pt)


def _wrap(text: str, p: Preset, pt: float) -> list[str]:
    """Text wrapped to the figure's width (DejaVu Sans averages about 0.55 em a character)."""
    chars = max(20, int(p.width_in * 72 * 0.97 / (0.55 * pt)))
    return textwrap.wrap(text, chars) if text else []


def style(p: Preset):
    """The preset's matplotlib settings, for the time a figure is made and saved."""
    return matplotlib.rc_context(_rc(p))


def render(kind: str, sets: Sequence[ResultSet], fmt: str = "png", p: Preset | None = None, **options) -> bytes:
    """One chart as PNG, SVG or PDF bytes (the report embeds these; the window may show them)."""
    p = p or preset()
    fmt = fmt.lstrip(".").lower()
    if f".{fmt}" not in FORMATS:
        raise ValueError(f"cannot render {fmt!r}: use png, svg or pdf")
    import io
    with style(p):
        fig = figure(kind, sets, p, **options)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=p.dpi, metadata=_metadata(fmt))
    return buf.getvalue()


def _metadata(fmt: str) -> dict:
    """No creation date in vector files: the same chart gives the same bytes (its date is in the stamp)."""
    return {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}


def export(sets: Sequence[ResultSet], path: str | Path, kind: str = "all", p: Preset | None = None,
           **options) -> list[Path]:
    """Write one chart, or all of them, to ``path`` (PNG, SVG or PDF by its suffix); the files written."""
    p = p or preset()
    paths = output_paths(path, kind)
    kinds = KINDS if kind == "all" else (kind,)
    with style(p):
        if len(kinds) > 1 and paths[0].suffix.lower() == ".pdf":
            with atomic.replacing(paths[0]) as f, PdfPages(f, metadata=_metadata("pdf")) as pdf:
                for k in kinds:
                    pdf.savefig(figure(k, sets, p, **options))
        else:
            for k, out in zip(kinds, paths):
                fmt = out.suffix.lower().lstrip(".")
                fig = figure(k, sets, p, **options)      # drawn before the file is begun
                with atomic.replacing(out) as f:
                    fig.savefig(f, format=fmt, dpi=p.dpi, metadata=_metadata(fmt))
    return paths
