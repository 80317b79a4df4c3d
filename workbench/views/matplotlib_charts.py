"""The window's charts without Qt: matplotlib figures of chart specs, to PNG, SVG and PDF.

pyqtgraph's SVG exporter fails on this PySide6 stack, and a screen grab is only as large
as the window. matplotlib renders the same charts to real vector files (curves as paths,
text as text) at a size chosen for the slide or the paper. What is drawn is decided once, in
``workbench.views.spec`` (points, styles and what they mean, axes with their ticks and labels,
marks, legend, caption); the window's charts (``panels.charts``) draw the same specs, and
``tests/test_chart_parity.py`` compares the two. Only ``Figure`` objects are used, never
``pyplot``: no GUI backend is selected and no global figure state is kept, so exporting from the
window's thread or from the command line is the same code. The engine never imports this module,
and the window imports it only when something is exported.
"""
from __future__ import annotations

import io
import logging
import math
import re
import textwrap
from pathlib import Path
from typing import Sequence

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from workbench.core import atomic
from workbench.views import bands, palette, provenance, spec
from workbench.views.compare import (DEFAULT_BASELINES, WITHIN_NOISE, Baseline, Series, baseline,  # noqa: F401 - the API
                                     is_baseline, series, speedups, within_noise)
from workbench.views import presets
from workbench.views.presets import FORMATS, KINDS, PAPER, Preset, output_paths, parse_size, preset  # noqa: F401 - the API
from workbench.views.spec import (AXIS_HI, AXIS_LO, RING_COLOR, SIZE_KINDS, WALL_KINDS, ChartSpec,  # noqa: F401 - the API
                                  LegendEntry, lesson_caption, lesson_of, log_ticks, merge_labels)
from workbench.results.files import ResultSet

log = logging.getLogger(__name__)

SET_MARKERS = palette.SET_MARKERS
SET_HATCHES = ("", "//", "..", "xx", "\\\\", "++")
#: pyqtgraph's symbol names (the palette's and the specs' vocabulary) as matplotlib's markers.
MARKERS = {"o": "o", "s": "s", "t": "v", "t1": "^", "t2": ">", "t3": "<", "d": "D", "p": "p", "h": "h",
           "star": "*", "+": "P", "x": "X", "arrow_up": "^", "arrow_down": "v", "crosshair": "+"}
LINES = {spec.SOLID: "-", spec.DASHED: "--", spec.DOTTED: ":", spec.DASHDOT: "-."}
#: The colour a spec calls ink: text on the exports' white.
INK = palette.LIGHT_INK


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


def _ink(color: str) -> str:
    return INK if color == spec.INK else color


def _marker(name: str) -> str:
    return MARKERS.get(name, "o") if name else "none"


def _gid(kind: str, role: str, label: str) -> str:
    """An SVG id per drawn series, so a test (or a person in a vector editor) finds each curve."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"series-{kind}-{role}-{label}")


# Drawing a spec ---------------------------------------------------------------------------------

def _axis(ax: Axes, which: str, a: spec.Axis) -> None:
    """The axis' scale, range and exactly the spec's ticks and labels."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(a.label)
    if a.log:
        (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=a.base)
    if a.range is not None:
        (ax.set_xlim if which == "x" else ax.set_ylim)(*a.range)
    axis.set_major_locator(FixedLocator(list(a.ticks)))
    axis.set_major_formatter(FixedFormatter(list(a.tick_labels)))
    axis.set_minor_locator(NullLocator())
    if a.scale == "category":
        ax.grid(axis=which, visible=False)


def _with_breaks(values: Sequence[float], breaks: Sequence[int]) -> np.ndarray:
    """The values with a NaN after each break: matplotlib stops the line there."""
    out = list(values)
    for i in sorted(breaks, reverse=True):
        out.insert(i + 1, float("nan"))
    return np.asarray(out, dtype=float)


def _marked(s: spec.Series) -> list[int] | None:
    """A dense series' marked points as indices into the line ``_with_breaks`` draws (each gap's
    NaN shifts the points after it); None, every point, where it is not dense."""
    if not s.dense:
        return None
    breaks = np.asarray(sorted(s.breaks), dtype=int)
    return [int(i + np.searchsorted(breaks, i)) for i in s.marked]


def _series(ax: Axes, kind: str, s: spec.Series, p: Preset) -> None:
    color = _ink(s.color)
    if s.band is not None:
        ax.fill_between(s.band.xs, s.band.lo, s.band.hi, color=color, alpha=bands.ALPHA, linewidth=0,
                        gid=_gid(kind, f"band-{s.role}", s.name))
    ax.plot(_with_breaks(s.xs, s.breaks), _with_breaks(s.ys, s.breaks), color=color, marker=_marker(s.marker),
            linestyle=LINES[s.line], markerfacecolor=color if s.filled else "white",
            markeredgewidth=p.line_pt / 2, label="_nolegend_", gid=_gid(kind, s.role, s.name),
            markevery=_marked(s))
    ringed = np.asarray(s.ringed, dtype=bool)
    if ringed.any():
        ax.plot(np.asarray(s.xs)[ringed], np.asarray(s.ys)[ringed], linestyle="none", marker="o",
                markersize=p.marker_pt * spec.RING_SCALE, markerfacecolor="none", markeredgecolor=RING_COLOR,
                markeredgewidth=p.line_pt / 3, label="_nolegend_", gid=_gid(kind, f"within-noise-{s.role}", s.name),
                zorder=1.9)     # under the lines (2): a ring never hides one


def _bars(ax: Axes, kind: str, b: spec.Bars, p: Preset) -> None:
    bottom = np.zeros(len(b.positions))
    hatch = SET_HATCHES[b.pattern % len(SET_HATCHES)] or None
    for phase, heights in b.segments:
        ax.bar(b.positions, heights, b.width, bottom=bottom, color=palette.PHASE_COLORS[phase],
               edgecolor=_ink(b.outline), linewidth=p.line_pt * 0.8, hatch=hatch, gid=_gid(kind, phase, b.name))
        bottom = bottom + np.asarray(heights, dtype=float)


def _spans(ax: Axes, kind: str, spans: Sequence[spec.Span]) -> None:
    """A timeline's bars, one ``barh`` call per colour (a Rectangle per bar, each with the colour's gid)."""
    by: dict[str, list] = {}
    for s in spans:
        by.setdefault(s.color, []).append(s)
    for color, group in by.items():
        ax.barh([s.lane for s in group], [max(s.end - s.start, 0.0) for s in group], height=spec.SPAN_HEIGHT,
                left=[s.start for s in group], color=_ink(color), edgecolor="none", gid=_gid(kind, "span", group[0].group))


def _mark(ax: Axes, kind: str, m: spec.Mark, p: Preset) -> None:
    if not m.vertical:
        ax.axhline(m.at, color="#333", linewidth=p.line_pt / 2, linestyle=LINES[m.line], zorder=1,
                   gid=_gid(kind, m.kind, m.name or str(m.at)))
        return
    if m.kind == "lesson":
        ax.axvline(m.at, color=_ink(m.color), linestyle=(0, (4, 3)), linewidth=p.line_pt * 0.6, zorder=1.5,
                   gid=_gid(kind, "mark", m.name))
        if m.label:
            ax.text(m.at, 0.98, f"{m.label} ", transform=ax.get_xaxis_transform(), rotation=90, ha="right",
                    va="top", fontsize=0.7 * p.font_pt, color=_ink(m.label_color), gid=_gid(kind, "mark-label", m.label),
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
        return
    ax.axvline(m.at, color=_ink(m.color), linestyle=LINES[m.line], linewidth=p.line_pt, gid=_gid(kind, m.kind, m.name))
    if m.label:
        right = _right_half(ax, m.at)     # the label reads away from the nearer edge, so it stays inside
        ax.text(m.at, 0.98 - 0.06 * m.row, f"{m.label} " if right else f" {m.label}", color=_ink(m.label_color),
                transform=ax.get_xaxis_transform(), ha="right" if right else "left", va="top",
                fontsize=0.75 * p.font_pt, bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.0})


def _right_half(ax: Axes, x: float) -> bool:
    lo, hi = ax.get_xlim()
    if ax.get_xscale() == "log" and lo > 0 and x > 0:
        return math.log(x / lo) > 0.5 * math.log(hi / lo)
    return x - lo > 0.5 * (hi - lo)


def _handle(e: LegendEntry, p: Preset):
    """A legend sign as the spec's entry describes it."""
    color = _ink(e.color)
    if e.patch:
        if e.outline:
            return Patch(facecolor="white", edgecolor=_ink(e.outline), linewidth=p.line_pt * 0.8,
                         hatch=SET_HATCHES[e.pattern % len(SET_HATCHES)] or None, label=e.label)
        return Patch(facecolor=color, alpha=e.alpha, linewidth=0, label=e.label)
    size = p.marker_pt * spec.RING_SCALE if e.role == "ring" else p.marker_pt
    return Line2D([], [], color=color, linestyle=LINES.get(e.line, "none") if e.line else "none",
                  marker=_marker(e.marker), markersize=size, markerfacecolor=color if e.filled else "none",
                  markeredgecolor=color, label=e.label)


def draw(chart: ChartSpec, p: Preset | None = None, stamp: str | None = None) -> Figure:
    """A chart spec as a matplotlib Figure, with its caption and ``stamp`` under it (where it was
    measured and the spec's footnote, ``provenance.stamp``; None: the footnote alone). Call it
    inside :func:`style` for the preset's fonts."""
    p = p or preset()
    text = chart.footnote if stamp is None else stamp
    # The caption and the stamp get a strip of their own below the chart and its legend, so neither
    # covers them. A caption too long for a slide's height makes the figure taller, not the chart tiny.
    lines = _stamp_lines(text, p)
    said = _wrap(chart.caption, p, _caption_pt(p))
    # Notes (values a log axis cannot show) go in that strip too: in the plot's corner they lay
    # over the lines, and a long one pushed the plot aside (issue 38).
    noted = [] if chart.empty else [w for n in chart.notes for w in _wrap(n, p, _note_pt(p))]
    stamp_in = len(lines) * 1.3 * _stamp_pt(p) / 72
    strip_in = ((len(lines) * 1.3 * _stamp_pt(p) + len(said) * 1.3 * _caption_pt(p)
                 + len(noted) * 1.3 * _note_pt(p) + 8) / 72 if lines or said or noted else 0.0)
    height = max(p.height_in, strip_in / 0.4) if said else p.height_in
    texts, columns = _legend_texts(chart, p)
    shrink, below = 1.0, p.legend == "below"
    if below and texts:
        # A paper column grows downwards: many compared sets' legend under the plot had left it a
        # tenth of the figure. The plot, its title and its axes keep seven tenths of the preset's height.
        height = max(height, 0.7 * p.height_in + _legend_in(texts, columns, p) + strip_in)
    elif texts:
        columns, shrink = _legend_fit(texts, p, 0.97 * (height - strip_in))
        if not columns:     # too tall beside the plot even set smaller: under it, in three columns
            below, columns, shrink = True, 3, 0.8
            texts = [_legend_label(e, _legend_chars(p, columns, shrink)) for e in chart.legend]
    fig = Figure(figsize=(p.width_in, height), dpi=p.dpi, layout="constrained")
    strip = strip_in / height
    top, bottom = fig.subfigures(2, 1, height_ratios=[1 - strip, strip]) if strip else (fig, None)
    ax = top.add_subplot()
    ax.set_title(chart.title)
    if chart.empty:
        ax.text(0.5, 0.5, chart.empty, ha="center", va="center", transform=ax.transAxes, color="#666", wrap=True)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        ax.set_xlabel(chart.x.label)
        ax.set_ylabel(chart.y.label)
    else:
        _axis(ax, "x", chart.x)
        _axis(ax, "y", chart.y)
        for s in chart.series:
            _series(ax, chart.kind, s, p)
        for b in chart.bars:
            _bars(ax, chart.kind, b, p)
        _spans(ax, chart.kind, chart.spans)
        for m in chart.marks:
            _mark(ax, chart.kind, m, p)
        for t in chart.labels:
            ax.text(t.x, t.y, f" {t.text} ", ha=t.align, va="bottom" if t.above else "top", color=_ink(t.color), fontsize=0.7 * p.font_pt,
                    gid=_gid(chart.kind, "label", t.text), clip_on=True)
    if texts:
        handles = [_handle(e, p) for e in chart.legend]
        top.legend(handles, texts, ncols=columns, fontsize=shrink * _legend_pt(p),
                   loc="outside lower center" if below else "outside right upper")
    if bottom is not None:
        if said:
            bottom.text(0.01, 0.98, "\n".join(said), fontsize=_caption_pt(p), color="#222", ha="left",
                        va="top", linespacing=1.3, gid="caption")
        if lines:
            bottom.text(0.01, 0.02, "\n".join(lines), fontsize=_stamp_pt(p), color="#666", ha="left",
                        va="bottom", linespacing=1.3, gid="stamp")
        if noted:       # just above the stamp
            bottom.text(0.01, 0.02 + (stamp_in + 2 / 72) / strip_in if lines else 0.02, "\n".join(noted),
                        fontsize=_note_pt(p), color="#444", ha="left", va="bottom", linespacing=1.3, gid="note")
    return fig


# Figures and files ------------------------------------------------------------------------------

def figure(kind: str, sets: Sequence[ResultSet], p: Preset = None, *, stamp: bool = True,
           baseline_name: str | None = None, labels: Sequence[str] | None = None, caption: str | None = None,
           marks: Sequence[tuple[float, str]] | None = None, point: tuple | None = None) -> Figure:
    """One chart of ``sets`` (several: overlaid, each labelled by what differs) as a matplotlib Figure:
    the spec ``workbench.views.spec.build`` makes of them, drawn.

    ``caption`` is written under the chart, ``marks`` (size, label) are vertical lines on its size
    axis; left out, both come from the lesson a single set's settings carry (``gpu-workbench lesson``).
    Call it inside :func:`style` (as :func:`render` and :func:`export` do) for the preset's fonts.
    """
    chart = spec.build(kind, sets, labels=labels, baseline=baseline_name, marks=marks, caption=caption, point=point)
    return draw(chart, p, provenance.stamp(sets, chart.footnote) if stamp else None)


def _stamp_pt(p: Preset) -> float:
    return max(5.0, 0.62 * p.font_pt)     # under 5 pt nobody reads it in print


def _stamp_lines(text: str, p: Preset) -> list[str]:
    """The stamp wrapped to the figure's width."""
    return _wrap(text, p, _stamp_pt(p))


def _note_pt(p: Preset) -> float:
    return max(5.5, 0.7 * p.font_pt)


def _caption_pt(p: Preset) -> float:
    return max(5.5, 0.72 * p.font_pt)


#: A legend beside the plot wraps its labels at this many characters: the band's "q1 to q3 of the
#: samples (no interval in the file)" in one line took two fifths of a slide from the plot (issue 38).
LEGEND_CHARS = 28
#: What a legend entry takes beside its text, in ems (matplotlib's handle length, its pad to the
#: text, the spacing between columns).
_HANDLE_EM, _COLUMN_EM = 2.8, 2.0


def _wrapped(label: str, chars: int) -> str:
    return "\n".join(textwrap.wrap(label, chars, break_on_hyphens=False, break_long_words=False)) or label


def _legend_texts(chart: ChartSpec, p: Preset) -> tuple[list[str], int]:
    """The legend's entries as written, and in how many columns: the workbench's own words wrap;
    a name (a backend's, a set's) is never split."""
    if not chart.legend:
        return [], 1
    if p.legend == "right":
        return [_legend_label(e, LEGEND_CHARS) for e in chart.legend], 1
    columns = _legend_columns([e.label for e in chart.legend], p)
    chars = _legend_chars(p, columns)
    return [_legend_label(e, chars) for e in chart.legend], columns


def _legend_fit(texts: Sequence[str], p: Preset, room_in: float) -> tuple[int, float]:
    """(columns, font scale) of a legend beside a slide's plot that fits ``room_in`` inches: a slide
    has its size, so a legend taller than the plot is set smaller, down to three fifths; (0, 0.6)
    where even that does not fit (a second column beside the plot left it a tenth of the width)."""
    for shrink in (1.0, 0.9, 0.8, 0.7, 0.6):
        if _legend_in(texts, 1, p, shrink) <= room_in:
            return 1, shrink
    return 0, 0.6


def _legend_in(texts: Sequence[str], columns: int, p: Preset, shrink: float = 1.0) -> float:
    """About how tall a legend of ``texts`` is, in inches: each entry as tall as its text (an em) or
    its sign (which keeps its size whatever the font), 1.2 em each further line (a text's line
    spacing), half an em between entries (matplotlib's labelspacing), its border; a column holds its
    share of the entries. Six sets' legend at 1920x1080 measured 461 pt against 469 pt said."""
    em = shrink * _legend_pt(p)
    per = -(-len(texts) // columns)
    more = max(sum(t.count("\n") for t in texts[c * per:(c + 1) * per]) for c in range(columns))
    return (per * max(em, 1.1 * p.marker_pt) + (1.2 * more + 0.5 * (per - 1) + 0.8) * em) / 72


def _legend_label(e: LegendEntry, chars: int) -> str:
    """A legend entry's text wrapped at ``chars``: the workbench's own words anywhere between words;
    a series' name never (a backend's "cupy-fused"), unless it is a compared set's list of what
    differs ("pageable host memory, CPU: ..., numba 0.68.0"), which breaks only between its items.
    Unwrapped, such a list was wider than a slide: the legend fell over the plot without its
    signs (issue 38)."""
    if e.role != "series":
        return _wrapped(e.label, chars)
    lines: list[str] = []
    if ", " not in e.label:
        return e.label
    for item in e.label.split(", "):
        if len(item) > chars:      # one thing that differs, longer than a line: between its words
            lines[-1:] = [lines[-1] + ","] if lines else []
            lines += textwrap.wrap(item, chars, break_on_hyphens=False, break_long_words=False)
            continue
        if lines and len(lines[-1]) + 2 + len(item) <= chars:
            lines[-1] += ", " + item
        else:
            if lines:
                lines[-1] += ","
            lines.append(item)
    return "\n".join(lines)


def _legend_pt(p: Preset) -> float:
    return 0.85 * p.font_pt          # legend.fontsize in _rc


def _legend_columns(names: Sequence[str], p: Preset) -> int:
    """Two entries a row under the plot where both fit the figure's width, else one (DejaVu Sans
    averages about 0.55 em a character)."""
    em = _legend_pt(p)
    widest = [max((len(n) for n in names[c::2]), default=0) for c in range(2)]
    need = sum((0.55 * w + _HANDLE_EM) * em for w in widest) + _COLUMN_EM * em
    return 2 if need <= 0.95 * p.width_in * 72 else 1


def _legend_chars(p: Preset, columns: int, shrink: float = 1.0) -> int:
    """The most characters of a label in a legend of ``columns`` under the plot: it stays in the figure."""
    em = shrink * _legend_pt(p)
    room = 0.95 * p.width_in * 72 / columns - (_HANDLE_EM + _COLUMN_EM) * em
    return max(12, int(room / (0.55 * em)))


def _wrap(text: str, p: Preset, pt: float) -> list[str]:
    """Text wrapped to the figure's width (DejaVu Sans averages about 0.55 em a character)."""
    chars = max(20, int(p.width_in * 72 * 0.97 / (0.55 * pt)))
    # Never within a name: "cupy-fused" split at its hyphen reads as two backends.
    return textwrap.wrap(text, chars, break_on_hyphens=False) if text else []


def style(p: Preset):
    """The preset's matplotlib settings, for the time a figure is made and saved."""
    return matplotlib.rc_context(_rc(p))


def render(kind: str, sets: Sequence[ResultSet], fmt: str = "png", p: Preset | None = None, **options) -> bytes:
    """One chart as PNG, SVG or PDF bytes (the report embeds these; the window may show them)."""
    p = p or preset()
    fmt = fmt.lstrip(".").lower()
    if f".{fmt}" not in FORMATS:
        raise ValueError(f"cannot render {fmt!r}: use png, svg or pdf")
    with style(p):
        fig = figure(kind, sets, p, **options)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=p.dpi, metadata=_metadata(fmt))
    return buf.getvalue()


def _trace(sets: Sequence[ResultSet], path: Path, point: tuple | None) -> None:
    """The timeline's point as a Chrome trace (``workbench.views.trace``); ValueError where none fits."""
    from workbench.views import trace
    from workbench.views.spec.timeline import chosen
    row, i = chosen(sets, point)
    if row is None:
        raise ValueError("no point of the results fits " + ", ".join(str(v) for v in (point or ()) if v is not None))
    trace.write(row, path, sets[i].source or "")


def _metadata(fmt: str) -> dict:
    """No creation date in vector files: the same chart gives the same bytes (its date is in the stamp)."""
    return {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}


def export(sets: Sequence[ResultSet], path: str | Path, kind: str = "all", p: Preset | None = None,
           **options) -> list[Path]:
    """Write one chart, or all of them, to ``path`` (PNG, SVG or PDF by its suffix); the files written."""
    p = p or preset()
    paths = output_paths(path, kind)
    if paths[0].suffix.lower() == presets.TRACE_FORMAT:
        _trace(sets, paths[0], options.get("point"))
        return paths
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
