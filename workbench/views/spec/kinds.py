"""One function per chart kind: result sets in, a :class:`ChartSpec` out.

Each takes what the exports and the window both have: the result sets, their labels
(``workbench.views.provenance.labels``), for the speedup chart the baseline
(``workbench.views.compare.Baseline``), and a lesson's marks and caption where they are given
(else those the single set's settings carry). Only ok points are drawn; the spec's footnote
counts the others.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Sequence

import numpy as np
from workbench.core.lazy import lazy_module

from workbench.core import units
from workbench.views import bands, palette
from workbench.views.chart_kinds import chart_kind, declared
from workbench.views.compare import WITHIN_NOISE, Baseline, is_baseline, series, speedups, within_noise
from workbench.views.compare import Series as Rows
from workbench.views.spec import marks as marks_mod
from workbench.views.spec import ticks
from workbench.views.spec.model import (DASHDOT, DASHED, DOTTED, INK, SOLID, Axis, Band, ChartSpec,
                                        LegendEntry, Mark, Series)
from workbench.results.files import ResultSet

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

#: The grey of the keys to line styles (a line in no backend's colour) and of the rings.
KEY_COLOR = "#555555"
RING_COLOR = "#888888"
#: A ring's diameter, in markers: a halo just wider than the point, drawn under its line. At 2.2
#: markers on top of the lines, rings round most points of seven backends hid the lines (issue 38).
RING_SCALE = 1.6


def shortened(chart: ChartSpec) -> ChartSpec:
    """The spec with its short title and labels (a renderer short of room takes them)."""
    kind = next((k for k in declared() if k.name == chart.kind), None)
    title, y = (kind.short_title, kind.short_y) if kind else (chart.title, chart.y.label)
    return replace(chart, short_title=title, y=replace(chart.y, short=y),
                   x=replace(chart.x, short=chart.x.label.split(";")[0]))


@dataclass
class Context:
    """What every chart kind reads, worked out once for all five charts of one update: the sets,
    their labels, their series, a lesson's marks and caption, where series ran out of memory, what
    was left out. A live window makes one per update and builds each chart's spec from it."""

    sets: Sequence[ResultSet]
    labels: Sequence[str]
    marks: Sequence[tuple[float, str]]
    caption: str
    compare: bool = False
    given_series: Sequence[Rows] | None = None      # the series where the caller has them (an Overlay's)
    #: The points whose value is 0, which a log axis cannot show, in the chart being built: (label, size)
    zeros: list = field(default_factory=list)
    #: The point a one-point chart (the timeline) is drawn for: (backend, size, variant), any of
    #: them None for "any"; None: the chart picks one (``workbench.views.timeline.pick``).
    point: tuple | None = None

    @classmethod
    def of(cls, sets, labels, marks=None, caption=None, series_=None) -> "Context":
        told = marks_mod.lesson_of(sets)
        if caption is None:
            caption = marks_mod.lesson_caption(told) if told else ""
        if marks is None:
            marks = marks_mod.lesson_marks(told)
        return cls(list(sets), list(labels), [(float(s), str(t)) for s, t in marks], caption, len(sets) > 1,
                   None if series_ is None else list(series_))

    @cached_property
    def series(self) -> list[Rows]:
        return list(self.given_series) if self.given_series is not None else series(self.sets, self.labels)

    def moves(self, s: Rows) -> bool:
        """Whether a series moves data between host and device (a GPU series), asked once per series."""
        key = (s.set_index, s.backend, s.variant)
        if key not in self._moves:
            self._moves[key] = s.moves_data
        return self._moves[key]

    @cached_property
    def _moves(self) -> dict:
        return {}

    @cached_property
    def variants(self) -> dict[str, int]:
        """Each variant's rank, in the order the series show them: the first solid, later ones dotted."""
        ranks: dict[str, int] = {}
        for s in self.series:
            ranks.setdefault(s.variant, len(ranks))
        return ranks

    @cached_property
    def ok_sizes(self) -> np.ndarray:
        parts = [s.rows["size"].to_numpy(float) for s in self.series]
        return np.concatenate(parts) if parts else np.array([])

    @cached_property
    def walls(self) -> list[Mark]:
        return marks_mod.walls(self.sets, self.labels, self.marks)

    @cached_property
    def wall_sizes(self) -> list[float]:
        return sorted({m.at for m in self.walls})

    @cached_property
    def left_out(self) -> str:
        return left_out(self.sets)

    @cached_property
    def size_label(self) -> tuple[str, bool]:
        return _size_label(self.sets)

    def key(self, role: str, s: Rows) -> tuple:
        return (role, s.backend, s.variant) + ((s.set_index,) if self.compare else ())

    def marker(self, s: Rows) -> str:
        return palette.SET_SYMBOLS[s.set_index % len(palette.SET_SYMBOLS)] if self.compare else palette.marker(s.backend)

    def line_style(self, s: Rows, dashed: bool) -> str:
        later = self.variants.get(s.variant, 0) > 0      # a second variant or run: dotted, its e2e dash-dotted
        return (DASHDOT if later else DASHED) if dashed else (DOTTED if later else SOLID)

    def line(self, s: Rows, role: str, x, y, dashed: bool = False, band: Band | None = None,
             ringed=None) -> Series:
        """A series of the points a log axis can show; the line breaks where one was left out."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        label = s.label + ("" if role in ("compute", "steady") else f" ({role})")
        self.zeros += [(label, float(v)) for v in x[y == 0]]
        y = ticks.positive(y)
        keep = np.isfinite(x) & (x > 0) & np.isfinite(y)
        where = np.flatnonzero(keep)
        breaks = tuple(int(j) for j in np.flatnonzero(np.diff(where) > 1))
        rings = tuple(bool(r) for r in np.asarray(ringed, dtype=bool)[keep]) if ringed is not None else ()
        return Series(self.key(role, s), s.label, role, s.backend, s.variant, s.set_index,
                      tuple(x[keep].tolist()), tuple(y[keep].tolist()), palette.color(s.backend, INK),
                      self.marker(s), self.line_style(s, dashed), not dashed, breaks, band, rings)

    def identities(self, drawn: Sequence[Rows]) -> list[LegendEntry]:
        """Who is who: each series' colour and marker; when sets are compared, each backend's
        colour and each set's marker (backends x sets entries would not fit a small chart)."""
        if not self.compare:
            out = {}
            for s in drawn:
                out.setdefault(s.label, LegendEntry(s.label, "series", palette.color(s.backend, INK),
                                                    self.line_style(s, False), palette.marker(s.backend)))
            return list(out.values())
        backends = dict.fromkeys(s.backend for s in drawn)
        sets = sorted({s.set_index for s in drawn})
        return ([LegendEntry(b, "series", palette.color(b, INK)) for b in backends]
                + [LegendEntry(self.labels[i] or f"set {i + 1}", "series", INK, "",
                               palette.SET_SYMBOLS[i % len(palette.SET_SYMBOLS)]) for i in sets])


def _key(solid: str, dashed: str | None) -> list[LegendEntry]:
    out = [LegendEntry(solid, "key", KEY_COLOR, SOLID)]
    if dashed:
        out.append(LegendEntry(dashed, "key", KEY_COLOR, DASHED, "o", filled=False))
    return out


def _size_label(sets: Sequence[ResultSet]) -> tuple[str, bool]:
    """The size axis' label (the workload's size unit, its parenthesis left out) and whether the
    size is a number of bytes."""
    from workbench.catalog.workloads import REGISTRY
    names = {w for rs in sets for w in rs.frame["workload"] if w}
    unit = "size"
    if len(names) == 1:
        try:
            unit = REGISTRY.get(names.pop()).size_unit or "size"
        except KeyError:   # a plug-in's workload, not loaded here
            pass
    return unit.split(" (")[0] or "size", unit.startswith("bytes")


def left_out(sets: Sequence[ResultSet]) -> str:
    """'3 points not drawn (2 error, 1 implausible)': only ok points are drawn, and the chart says so."""
    statuses = pd.concat([rs.frame["status"] for rs in sets]) if sets else pd.Series(dtype=object)
    counts = statuses[statuses != "ok"].value_counts()
    if counts.empty:
        return ""
    n = int(counts.sum())
    return f"{n} point{'s' if n > 1 else ''} not drawn (" + ", ".join(f"{c} {s}" for s, c in counts.items()) + ")"


def _finish(c: Context, kind: str, title: str, y_label: str, y_unit: str, drawn: list[Series],
            legend: list[LegendEntry], empty: str, y_base: int = 10, also: tuple[float, ...] = (),
            extra_marks: tuple[Mark, ...] = ()) -> ChartSpec:
    """The axes over what was drawn, the walls and a lesson's marks, the notes: the spec."""
    label, in_bytes = c.size_label
    values = [np.asarray(s.ys) for s in drawn]
    values += [np.asarray(v) for s in drawn if s.band is not None for v in (s.band.lo, s.band.hi)]
    if not any(len(v) for v in values[:len(drawn)]):
        return ChartSpec(kind, title, Axis(label, "count"), Axis(y_label, y_unit), legend=(), caption=c.caption,
                         footnote=c.left_out, empty=empty)
    shows_walls = kind in marks_mod.WALL_KINDS
    walls = c.wall_sizes if shows_walls else []
    x = ticks.size_axis(label, np.concatenate([c.ok_sizes, np.asarray(walls, dtype=float)]), in_bytes)
    y = ticks.value_axis(y_label, values + [np.asarray(also, dtype=float)], y_unit, y_base)
    marks = list(extra_marks)
    if shows_walls:
        marks += c.walls
    marks += marks_mod.lesson_lines(c.marks, x.range)
    notes = (zeros_note(c.zeros),) if c.zeros else ()
    short = (zeros_short(c.zeros),) if c.zeros else ()
    return ChartSpec(kind, title, x, y, series=tuple(drawn), marks=tuple(marks), legend=tuple(legend),
                     caption=c.caption, notes=notes, short_notes=short, footnote=c.left_out)


def zeros_note(zeros: Sequence[tuple[str, float]], most: int = 3) -> str:
    """'0 at numba (host) 2^16 and 2^18, not drawn on the log scale': which points a log axis
    leaves out, the first ``most`` series by name and the count of the rest."""
    by: dict[str, list[float]] = {}
    for label, x in zeros:
        by.setdefault(label, []).append(x)
    said = [f"{label} {', '.join(size_text(x) for x in sorted(xs))}" for label, xs in list(by.items())[:most]]
    rest = sum(len(xs) for xs in list(by.values())[most:])
    more = f" and {rest} more" if rest else ""
    return f"0 at {'; '.join(said)}{more}: not drawn on the log scale"


def zeros_short(zeros: Sequence[tuple[str, float]]) -> str:
    """'23 values of 0 not drawn on the log scale': the note where its list does not fit."""
    return f"{len(zeros)} value{'s' if len(zeros) > 1 else ''} of 0 not drawn on the log scale"


def size_text(x: float) -> str:
    return units.size(int(x)) if float(x).is_integer() else f"{x:g}"


def _band(b: bands.Band) -> Band | None:
    if not len(b):
        return None
    return Band(tuple(b.x.tolist()), tuple(ticks.held(b.lo).tolist()), tuple(ticks.held(b.hi).tolist()), b.label)


# The chart kinds ---------------------------------------------------------------------------------

@chart_kind("runtime", short_title="Runtime", short_y="time", order=1)
def runtime(c: Context) -> ChartSpec:
    """Each series' median against size, compute solid and (a GPU series) end-to-end dashed, each
    with its band (``workbench.views.bands``)."""
    drawn, found, any_device, rows = [], [], False, []
    for s in c.series:
        r, x = s.rows, s.rows["size"].to_numpy(float)
        rows.append(s)
        b = bands.band(r, "compute")
        found.append(b)
        drawn.append(c.line(s, "compute", x, r["compute_median_s"], band=_band(b)))
        if c.moves(s):   # a device backend: end-to-end adds the transfers
            any_device = True
            b = bands.band(r, "total")
            found.append(b)
            drawn.append(c.line(s, "total", x, r["total_median_s"], dashed=True, band=_band(b)))
    legend = c.identities(rows) + _key("compute", "end-to-end" if any_device else None)
    legend += [LegendEntry(text, "band", INK, "", patch=True, alpha=bands.ALPHA * 2) for text in bands.labels(found)]
    return _finish(c, "runtime", "Runtime", "time per call", "seconds", drawn, legend,
                   "No point to draw: no ok result")


@chart_kind("speedup", short_title="Speedup", short_y="times faster", order=2)
def speedup(c: Context, b: Baseline) -> ChartSpec:
    """Each series' speedup over the baseline, compute solid, end-to-end dashed (on a CPU series
    compute is end-to-end: one line); a ring around each point the noise cannot tell from the
    baseline's. The baseline itself is the line at 1."""
    title = f"Speedup over {b.describe(c.labels)}" if b.backend else "Speedup"
    y_label = f"times faster than {b.backend}" if b.backend else "times faster"
    drawn, rows, any_device, ringed = [], [], False, False
    for s, joined in (speedups(c.sets, b, c.labels, c.series) if b.backend else ()):
        if is_baseline(s, b):
            continue
        rows.append(s)
        x = joined["size"].to_numpy(float)
        for figure in ("compute", "total") if c.moves(s) else ("compute",):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                ratio = joined[f"{figure}_median_s_base"].to_numpy(float) / joined[f"{figure}_median_s"].to_numpy(float)
            line = c.line(s, figure, x, ratio, dashed=figure == "total", ringed=within_noise(joined, figure))
            ringed |= any(line.ringed)
            drawn.append(line)
        any_device |= c.moves(s)
    legend = c.identities(rows) + _key("compute", "end-to-end" if any_device else None)
    if ringed:
        legend.append(LegendEntry(WITHIN_NOISE, "ring", RING_COLOR, "", "o", filled=False))
    empty = ("No point to draw: no other backend's ok result to set against the "
             f"{b.backend} baseline" if b.backend else "No point to draw: no ok result")
    reference = (Mark("reference", 1.0, "", INK, DOTTED, vertical=False),)
    return _finish(c, "speedup", title, y_label, "speedup", drawn, legend, empty, also=(1.0,),
                   extra_marks=reference)


@chart_kind("memory", short_title="Peak memory", short_y="memory", order=4)
def memory(c: Context) -> ChartSpec:
    """Each series' peak host memory (solid) and, where measured, device memory (dashed)."""
    drawn, rows, any_device = [], [], False
    for s in c.series:
        rows.append(s)
        x = s.rows["size"].to_numpy(float)
        drawn.append(c.line(s, "host", x, s.rows["peak_host_bytes"]))
        device = ticks.positive(s.rows["peak_device_bytes"])
        if np.isfinite(device).any():
            any_device = True
            drawn.append(c.line(s, "device", x, s.rows["peak_device_bytes"], dashed=True))
    legend = c.identities(rows) + _key("host", "device" if any_device else None)
    return _finish(c, "memory", "Peak memory above each point's start", "peak memory", "bytes", drawn, legend,
                   "No point to draw: no ok result", y_base=2)


#: What the energy chart says where it has no point: how energy comes to be measured.
NO_ENERGY = "No energy measured: run with --energy (in the window: Energy per call)"


@chart_kind("energy", short_title="Energy", short_y="J a call", order=7)
def energy(c: Context) -> ChartSpec:
    """Each series' energy per call above the idle draw (``workbench.measure.energy``): its compute
    solid, with the band of its readings (lowest to highest), and a GPU series' whole call with its
    copies dashed, as the runtime chart draws their times. A series whose energy could not be read
    here is named in a note, never drawn from a guess."""
    drawn, rows, unread, any_device = [], [], [], False
    for s in c.series:
        r = s.rows
        whole = r["energy_e2e_j"] if c.moves(s) else r["energy_e2e_j"].iloc[:0]
        if not (r["energy_j"].notna().any() or whole.notna().any()):
            said = r["energy_source"].astype(str)
            if said.str.startswith("not measured").any():
                unread.append(s.label)
            continue
        rows.append(s)
        x = r["size"].to_numpy(float)
        lo, hi = r["energy_lo_j"].to_numpy(float), r["energy_hi_j"].to_numpy(float)
        has = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(x) & (lo > 0)
        band = Band(tuple(x[has].tolist()), tuple(lo[has].tolist()), tuple(hi[has].tolist()),
                    "lowest to highest reading") if has.any() else None
        drawn.append(c.line(s, "compute", x, r["energy_j"], band=band))
        if whole.notna().any():
            any_device = True
            drawn.append(c.line(s, "total", x, whole, dashed=True))
    legend = c.identities(rows) + _key("compute", "end-to-end, copies and all" if any_device else None)
    empty = (f"Energy not measured here for {', '.join(unread[:3])}{' and more' if len(unread) > 3 else ''}: "
             "no energy counter this machine exposes" if unread else NO_ENERGY)
    spec = _finish(c, "energy", "Energy per call of the compute, above the idle draw", "energy per call", "joules",
                   drawn, legend, empty)
    if unread and drawn:
        note = f"energy not measured here for {', '.join(unread)} (no counter this machine exposes)"
        spec = replace(spec, notes=(*spec.notes, note))
    return spec


@chart_kind("first-call", short_title="First call", short_y="time", order=5)
def first_call(c: Context) -> ChartSpec:
    """Each series' steady call (solid) against its first call (dashed: compilation, setup)."""
    drawn, rows = [], []
    for s in c.series:
        rows.append(s)
        x = s.rows["size"].to_numpy(float)
        drawn.append(c.line(s, "steady", x, s.rows["total_median_s"]))
        drawn.append(c.line(s, "first", x, s.rows["first_call_s"], dashed=True))
    legend = c.identities(rows) + _key("steady call", "first call")
    return _finish(c, "first-call", "First call vs steady call", "time per call", "seconds", drawn, legend,
                   "No point to draw: no ok result")
