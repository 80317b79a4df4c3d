"""The window's charts: each draws the spec ``workbench.views.spec`` makes of the result sets on
screen, the same spec the exported chart draws.

A chart is fed the result sets (``workbench.views.compare.Overlay``: one live sweep, or several
sets compared), builds its kind's spec and draws it: the spec's series, bands, rings, marks,
axes (exactly the spec's ticks and labels, ``panels.axes.SpecAxis``), its key to the line styles
and its notes. Items are kept per series key and updated in place with ``setData`` as points
arrive (pyqtgraph's PlotSpeedTest pattern); nothing is cleared and redrawn. Who is who (each
series' colour and marker, what the band is) is in the panel's legend strip, from the same spec.
"""
from __future__ import annotations

import logging
import math
from typing import Callable, Iterator, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics

from panels import axes, style
from panels.style import Look
from workbench.views import bands, spec
from workbench.views.compare import Baseline, Overlay
from workbench.views.spec import ChartSpec

log = logging.getLogger(__name__)
HOVER_PX = 14            # how close the pointer must be to a point to show its values
MIN_CHART = (150, 120)   # charts shrink to this, so the window fits a 1280x720 projector
#: A chart at least this wide shows its key in the look's text size; a narrower one, smaller.
KEY_FULL_WIDTH = 340
#: The legend entries a chart shows in its own key; the others are the panel's strip's.
OWN_KEY = ("key", "ring")


def positive(a) -> np.ndarray:
    """Log axes cannot show zero or NaN: such values become NaN, and are left out when drawn."""
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, a, np.nan)


def fit_words(text: str, room: float, font: QFont, short: str = "") -> str:
    """``text`` where it fits ``room`` pixels, else its ``short`` form (the spec's), else as many
    first words of that as fit."""
    metrics = QFontMetrics(font)
    if metrics.horizontalAdvance(text) <= room:
        return text
    words = (short or text).split()
    while len(words) > 1 and metrics.horizontalAdvance(" ".join(words)) > room:
        words.pop()
    return " ".join(words)


def _width_free(label: pg.LabelItem) -> None:
    """A title label that asks for its height only: pyqtgraph's ``LabelItem`` makes its text's
    width its minimum again on every resize (``updateMin``), so a chart whose title was laid out
    wide could never shrink back below it at 1280x720 in presentation mode (441 px for a 422 px
    slot); :meth:`Titled._fit_title` shortens the text to the room instead."""
    measure = label.updateMin

    def height_only() -> None:
        measure()
        label.setMinimumWidth(0)
        label._sizeHint[Qt.SizeHint.MinimumSize] = (0, label._sizeHint[Qt.SizeHint.MinimumSize][1])
        label.updateGeometry()
    label.updateMin = height_only


class Titled:
    """Titles that fit, axis labels in the look's font, values on hover: for every chart."""

    def _labels(self) -> None:
        self._fit_title()
        self._fit_labels(force=True)
        self._fit_minimum()

    def _fit_labels(self, force: bool = False) -> bool:
        """The axis labels, shortened to the words that fit the plot's side (the spec's label is the
        export's: "times faster than numpy" on a slide, "times faster" on a small chart); whether
        they changed. Relabelling costs a layout pass: only on a change."""
        look = self.look
        font = QFont()
        font.setPointSize(look.font_pt)
        vb = self.getViewBox()
        left = fit_words(self.left_text, vb.height(), font, self.left_short)
        bottom = fit_words(self.bottom_text, vb.width(), font, self.bottom_short)
        shown = (left, bottom, look.foreground, look.font_pt)
        if not force and shown == getattr(self, "_shown_labels", None):
            return False
        self._shown_labels = shown
        label_style = {"color": look.foreground, "font-size": f"{look.font_pt}pt"}
        self.setLabel("left", left, **label_style)
        self.setLabel("bottom", bottom, **label_style)
        return True

    def _fit_title(self) -> None:
        """The title, or its first word where the chart is too narrow for it; never a minimum
        width: pyqtgraph makes a title's width the chart's minimum, and a chart that cannot
        shrink is cropped (the large sizes, where the GPU wins, were cut off)."""
        font = QFont()
        font.setPointSizeF(self.look.font_pt * 1.15)
        # The title is centred over the plot area, not over the axis: that is the room it has.
        room = self.width() - self.getAxis("left").width() - 24
        text = fit_words(self.title_text, room, font, self.short_title)
        label = self.getPlotItem().titleLabel
        if text != self._shown_title or label.opts.get("color") != self.look.foreground \
                or label.opts.get("size") != f"{font.pointSizeF():g}pt":
            self.setTitle(text, color=self.look.foreground, size=f"{font.pointSizeF():g}pt")
            self._shown_title = text

    def _fit_minimum(self) -> None:
        """Never smaller than what the chart's title, axes and key need: below that pyqtgraph
        lays the chart out larger than the view and the view crops it."""
        item = self.getPlotItem()
        item.layout.invalidate()     # the labels just changed: measure them anew, not from a cache
        item.layout.activate()
        need = item.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        frame = self.frameWidth() * 2
        self.setMinimumSize(max(MIN_CHART[0], math.ceil(need.width()) + frame),
                            max(MIN_CHART[1], math.ceil(need.height()) + frame))

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        if not hasattr(self, "look"):     # still in pyqtgraph's constructor
            return
        self._fit_title()
        self._fit_labels()
        self._fit_key()
        self._place_notes()
        # The layout's minimum can exceed its estimate by a few pixels (text metrics): if the
        # chart came out larger than its view, ask for that much, so that nothing is cropped.
        geo = self.getPlotItem().geometry()
        if geo.height() > self.viewport().height() + 0.5 or geo.width() > self.viewport().width() + 0.5:
            frame = self.frameWidth() * 2
            self.setMinimumSize(max(self.minimumWidth(), math.ceil(geo.width()) + frame),
                                max(self.minimumHeight(), math.ceil(geo.height()) + frame))

    def _mouse_moved(self, scene_pos) -> None:
        from PySide6.QtWidgets import QToolTip
        text = self.hover_text(scene_pos)
        if text:
            QToolTip.showText(self.mapToGlobal(self.mapFromScene(scene_pos)), text, self)
        else:
            QToolTip.hideText()


class SpecChart(Titled, pg.PlotWidget):
    """What every chart shares: the spec's axes, title, key, notes and what it says when empty."""

    def __init__(self, kind: str, name: str, log_axes: bool) -> None:
        super().__init__(axisItems={"left": axes.SpecAxis("left"), "bottom": axes.SpecAxis("bottom")})
        self.setObjectName(name)    # PlotWidget passes unknown keywords on to PlotItem.plot()
        self.kind = kind            # its name among workbench.views.presets.KINDS
        self.log_axes = log_axes
        self.setMinimumSize(*MIN_CHART)
        self.title_text, self.left_text, self.bottom_text = kind, "", ""
        self.short_title = self.left_short = self.bottom_short = ""
        self._shown_title = ""
        _width_free(self.getPlotItem().titleLabel)
        self.look = style.NORMAL
        self.spec: ChartSpec | None = None
        self.overlay = Overlay.of([])
        # The sets its points' rows are read from on a hover: a panel's own (made only then).
        self.overlay_of: Callable[[], Overlay] = lambda: self.overlay
        self.describe: Callable[[dict, int], str] = lambda row, set_index: ""
        self.lesson_marks: list[tuple[float, str]] | None = None   # None: those the sets carry
        self.lesson_caption: str | None = None
        self.notes_shown = True
        self.key_shown = True
        self._follow = True         # the view follows the spec's ranges until the user zooms
        self._ranged: tuple | None = None    # the (x, y) view range last set from a spec
        if log_axes:
            self.setLogMode(True, True)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.getPlotItem().hideButtons()       # the "A" button overlaps the axis on a small chart
        # The key to the line styles sits under the x axis, in the chart's own layout: inside the
        # plot area it covered points on a small chart.
        self.legend = pg.LegendItem(colCount=2, horSpacing=16, verSpacing=-4)
        # It spans the axis column too, and claims no minimum width: a chart must shrink, not crop.
        self.getPlotItem().layout.addItem(self.legend, 4, 0, 1, 3, alignment=Qt.AlignmentFlag.AlignHCenter)
        self.legend.setMinimumWidth(0)
        self._key: tuple = ()             # the entries the key shows now
        self.key_items: list = []
        # Notes (values a log axis cannot show) in the plot's lower right corner, and what the chart
        # says where it has nothing to draw, across its middle: in the view's pixels, not its data.
        vb = self.getViewBox()
        self.note = pg.TextItem("", color="#666", anchor=(1, 1))
        self.note.setParentItem(vb)
        self.hint = pg.TextItem("", color="#666", anchor=(0.5, 0.5))
        self.hint.setParentItem(vb)
        vb.sigResized.connect(self._place_notes)
        vb.sigRangeChangedManually.connect(self._user_zoomed)
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    # --- the spec -----------------------------------------------------------------------------

    def build(self, overlay: Overlay, shared=None) -> ChartSpec:
        shared = shared if shared is not None else spec.context(
            overlay.sets, labels=overlay.labels, marks=self.lesson_marks, caption=self.lesson_caption,
            series=overlay.series)
        return spec.build(self.kind, shared=shared)

    def update_from(self, overlay: Overlay, shared=None) -> None:
        """Draw the spec of ``overlay``'s sets; ``shared``: the ``workbench.views.spec.context`` of
        them the panel made once for its five charts."""
        self.overlay = overlay
        self.show_spec(self.build(overlay, shared))

    def show_spec(self, chart: ChartSpec) -> None:
        for _ in self.steps(chart):
            pass

    def steps(self, chart: ChartSpec) -> Iterator[None]:
        """:meth:`show_spec` a piece at a time (a series, a key entry, the labels), each a few ms:
        a live panel draws as many as fit a step of its own (``panels.plots``). The first draw of
        a sweep makes every item (25 to 45 ms a chart on a 2-core VM); at once, that was a dropped
        frame or two per chart (issue 19). A drawing left half done is made whole by the next."""
        self.spec = chart
        self.getAxis("left").show_axis(chart.y)
        self.getAxis("bottom").show_axis(chart.x)
        yield from self.draw_steps(chart)
        yield from self._key_steps([e for e in chart.legend if e.role in OWN_KEY])
        self.note.setText("\n".join(chart.notes))
        self.hint.setText(chart.empty)
        self.note.setVisible(self.notes_shown and bool(chart.notes))
        self._place_notes()
        self._range(chart)
        texts = (chart.title, chart.y.label, chart.x.label, chart.short_title, chart.y.short, chart.x.short)
        if texts != (self.title_text, self.left_text, self.bottom_text, self.short_title, self.left_short,
                     self.bottom_short):      # relabelling costs a layout pass: only on a change
            yield
            self.title_text, self.left_text, self.bottom_text = chart.title, chart.y.label, chart.x.label
            self.short_title, self.left_short, self.bottom_short = chart.short_title, chart.y.short, chart.x.short
            self._fit_title()
            self._fit_labels(force=True)
            yield                      # the chart's minimum, measured anew (a layout pass), apart
            self._fit_minimum()
        # pyqtgraph applies a new view range to the items (every curve's and marker set's geometry)
        # in the paint event, which then asks for a second paint of the whole chart (3-5 ms more):
        # applied now, the paint finds nothing left to change (issue 19).
        self.scene().prepareForPaint()

    def draw_steps(self, chart: ChartSpec) -> Iterator[None]:
        """The plot's content, in steps (one, unless a chart kind says otherwise)."""
        self.draw_content(chart)
        yield

    def draw_content(self, chart: ChartSpec) -> None:
        raise NotImplementedError

    def _view(self, a: spec.Axis) -> tuple[float, float] | None:
        if a.range is None:
            return None
        lo, hi = a.range
        return (math.log10(lo), math.log10(hi)) if a.log and self.log_axes else (lo, hi)

    def _range(self, chart: ChartSpec) -> None:
        """The spec's ranges, unless the user has zoomed (the next sweep follows the spec again)."""
        x, y = self._view(chart.x), self._view(chart.y)
        if not self._follow or x is None or y is None:
            return
        if (x, y) == self._ranged and self.getViewBox().viewRange() == [list(x), list(y)]:
            return             # as set last time: a range set again still updated every item in the view
        self._ranged = (x, y)
        self.getViewBox().setRange(xRange=x, yRange=y, padding=0)

    def _user_zoomed(self, *_) -> None:
        self._follow = False

    def follow(self) -> None:
        """Follow the spec's ranges again (a new sweep, sets opened)."""
        self._follow = True
        if self.spec is not None:
            self._range(self.spec)

    def _place_notes(self, *_) -> None:
        if not hasattr(self, "note"):
            return
        rect = self.getViewBox().boundingRect()
        # Wrapped within the plot: anchored at its right, a note wider than a small chart (1280x720
        # in presentation mode) ran off the plot's left edge and lost its first words.
        self.note.setTextWidth(-1)
        if self.note.textItem.boundingRect().width() > rect.width() - 8:
            self.note.setTextWidth(max(40.0, rect.width() - 8))
        self.note.setPos(rect.right() - 4, rect.bottom() - 4)
        self.hint.setPos(rect.center())

    def show_notes(self, on: bool) -> None:
        """The chart's notes (values a log axis cannot show) on or off: a small chart needs its room."""
        self.notes_shown = bool(on)
        self.note.setVisible(self.notes_shown and self.spec is not None and bool(self.spec.notes))

    def notes(self) -> list[str]:
        """The notes drawn now (tests compare them with the export's)."""
        return self.note.toPlainText().splitlines() if self.note.isVisible() else []

    # --- the key to the line styles -----------------------------------------------------------

    def _key_steps(self, entries: Sequence[spec.LegendEntry]) -> Iterator[None]:
        """The key holds the spec's entries for line styles and rings. Entries added after those it
        shows are added alone, with their labels made in the key's size and colour: rebuilt, every
        label laid out again and the plot with it (4-9 ms a label in a sweep's first second). One
        entry a step; ``_key`` is what the key holds, at every step."""
        key = tuple(entries)
        if key == self._key:
            return
        if key[:len(self._key)] != self._key:
            self.legend.clear()
            self.key_items = []
            self._key = ()
        look, pt = self.look, f"{self.key_pt()}pt"
        # The labels addItem makes take these: set once, never set again (setText lays them out).
        self.legend.opts["labelTextColor"], self.legend.opts["labelTextSize"] = look.foreground, pt
        for e in key[len(self._key):]:
            item = self._key_item(e)
            self._style_item(e, item)
            self.key_items.append((e, item))
            self.legend.addItem(item, e.label)
            self._key += (e,)
            yield

    @staticmethod
    def _key_item(e: spec.LegendEntry):
        if e.role == "ring":
            return pg.ScatterPlotItem(symbol="o", brush=None)
        # A point of data, never drawn (the item is in no plot): the legend's sample paints the
        # marker with the style of its scatter, which pyqtgraph sets only for data it has.
        return pg.PlotDataItem([0.0], [0.0])

    def key_pt(self) -> int:
        """The key's text size: the look's, smaller on a chart too narrow for it (never under 7 pt),
        so that a chart shrunk to a projector's corner keeps its plot rather than its key."""
        return max(7, min(self.look.font_pt, round(self.look.font_pt * self.width() / KEY_FULL_WIDTH)))

    def _fit_key(self) -> None:
        if self.key_items and self.legend.items and self.legend.items[0][1].opts.get("size") != f"{self.key_pt()}pt":
            self._style_key()

    def show_key(self, on: bool) -> None:
        """The chart's key to its line styles, shown or hidden (the export's legend says the same)."""
        self.key_shown = bool(on)
        self.legend.setVisible(self.key_shown)
        # A hidden item keeps its row in pyqtgraph's layout: give the row back to the plot.
        self.legend.setMaximumHeight(16777215 if self.key_shown else 0)
        self._fit_minimum()

    def _style_key(self) -> None:
        look = self.look
        pt = f"{self.key_pt()}pt"
        for e, item in self.key_items:
            self._style_item(e, item)
        self.legend.opts["labelTextColor"], self.legend.opts["labelTextSize"] = look.foreground, pt
        for _, label in self.legend.items:     # the setters reach only labels made later
            if label.opts.get("color") != look.foreground or label.opts.get("size") != pt:
                label.setText(label.text, color=look.foreground, size=pt)

    def _style_item(self, e: spec.LegendEntry, item) -> None:
        colour = self.look.muted if e.color == spec.KEY_COLOR else style.ink(e.color, self.look)
        if isinstance(item, pg.ScatterPlotItem):
            item.setPen(pg.mkPen(colour, width=1.5))
            item.setBrush(None)
        else:
            item.setPen(style.pen(colour, self.look, e.line) if e.line else None)
            item.setSymbol(e.marker or None)
            item.setSymbolPen(pg.mkPen(colour, width=1.5))
            item.setSymbolBrush(pg.mkBrush(colour) if e.filled else None)

    def key_labels(self) -> list[str]:
        """What the chart's own key says (tests compare it with the export's legend)."""
        return [label.text for _, label in self.legend.items]

    # --- the look -----------------------------------------------------------------------------

    def apply_look(self, look: Look) -> None:
        self.look = look
        fg, font = look.foreground, QFont()
        font.setPointSize(look.font_pt)
        self.setBackground(look.background)
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(fg)
            axis.setTextPen(fg)
            axis.setTickFont(font)
        self.legend.setLabelTextSize(f"{look.font_pt}pt")
        self.legend.setLabelTextColor(fg)
        self._style_key()
        small = QFont()
        small.setPointSize(max(6, look.font_pt - 2))
        for text in (self.note, self.hint):
            text.setColor(look.muted)
            text.setFont(small if text is self.note else font)
        self._labels()

    # --- hover --------------------------------------------------------------------------------

    def row_at(self, backend: str, variant: str, size: float, set_index: int) -> dict | None:
        """The ok row a drawn point stands for, as a dict (made only when hovered: to_dict is slow)."""
        sets = self.overlay_of().sets
        if not 0 <= set_index < len(sets):
            return None
        f = sets[set_index].frame
        hit = f[(f["status"] == "ok") & (f["backend"] == backend) & (f["variant"] == variant) & (f["size"] == size)]
        return hit.iloc[0].to_dict() if len(hit) else None


class Chart(SpecChart):
    """A log-log chart of series: lines with their markers, bands, rings and marks, one item per
    series key made once and updated in place."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(kind, name, log_axes=True)
        self.series: dict = {}          # key -> the series' curve
        self.meta: dict = {}            # key -> the spec.Series it last drew (its style)
        self.band_items: dict = {}      # key -> the filled outline of a series' band
        self.bands: dict = {}           # key -> the workbench.views.bands.Band it draws: for tests
        self._band_specs: dict = {}     # key -> what of the spec its band was drawn from
        self.rings: dict = {}           # key -> the rings around that series' points within the noise
        self.mark_items: dict = {}      # (kind, name) -> the line of a mark (a wall, a lesson's, 1x)
        self.marks_shown: dict = {}     # (kind, name) -> the spec.Mark it draws now
        self.apply_look(self.look)

    # --- drawing -----------------------------------------------------------------------------

    def draw_content(self, chart: ChartSpec) -> None:
        for _ in self.draw_steps(chart):
            pass

    def draw_steps(self, chart: ChartSpec) -> Iterator[None]:
        """One series a step (its curve, band and rings), then what is no longer drawn."""
        drawn = set()
        for s in chart.series:
            changed = self._curve(s)
            drawn.add(s.key)
            band_key = (f"band-{s.role}",) + s.key[1:]
            if s.band is not None:
                changed = self._band(band_key, s) or changed
                drawn.add(band_key)
            self._ring(s)
            if changed:
                yield
        for key in self.series:
            if key not in drawn:
                self.series[key].setData([], [])
                self.meta.pop(key, None)
        for key in self.band_items:
            if key not in drawn:
                self.band_items[key].setData([], [])
                self.bands.pop(key, None)
        for key, item in self.rings.items():
            if key not in drawn:
                item.setData([], [])
        self._marks(chart.marks)

    def _curve(self, s: spec.Series) -> bool:
        item = self.series.get(s.key)
        if item is None:
            item = self.plot([], [])
            # pyqtgraph re-made every curve's markers at each change of the y range, to clip values
            # far outside it (its dynamic range limit): the view is log10 and its range the spec's,
            # so nothing is that far, and a live update changed the range of every chart (issue 19).
            item.setDynamicRangeLimit(None)
            self.series[s.key] = item
        styled = self.meta.get(s.key)
        if styled == s and item.xData is not None:     # a live sweep's new point is in one series:
            return False                               # the others are as they were drawn
        self.meta[s.key] = s
        if styled is None or (styled.color, styled.marker, styled.line, styled.filled) != \
                (s.color, s.marker, s.line, s.filled):
            self._style_curve(s.key)
        connect = "all"
        if s.breaks:
            connect = np.ones(len(s.xs), dtype=bool)
            connect[list(s.breaks)] = False
        item.setData(np.asarray(s.xs, dtype=float), np.asarray(s.ys, dtype=float), connect=connect)
        item.setObjectName(f"{s.role}:{s.name}")     # what the export's id names: the same series
        return True

    def _style_curve(self, key) -> None:
        s, item, look = self.meta[key], self.series[key], self.look
        c = style.ink(s.color, look)
        item.setPen(style.pen(s.color, look, s.line))
        # Hollow markers on dashed lines: the two series of a backend stay apart where they touch.
        item.setSymbol(s.marker or None)       # a roof of the roofline chart has none
        item.setSymbolSize(look.marker_px)
        item.setSymbolPen(pg.mkPen(c, width=max(1.5, look.line_px / 2)))
        item.setSymbolBrush(pg.mkBrush(c) if s.filled else None)

    def _band(self, key, s: spec.Series) -> bool:
        """A series' band as one closed outline, filled (pyqtgraph's 'enclosed' fill level), under
        the lines; the item is made once and its data set in place."""
        item = self.band_items.get(key)
        if item is None:
            item = pg.PlotDataItem([], [], pen=None, fillLevel="enclosed")
            item.setDynamicRangeLimit(None)       # as the curves' (_curve)
            item.setZValue(-1)
            self.addItem(item)
            self.band_items[key] = item
        if key in self.bands and self._band_specs.get(key) == (s.band, s.color, s.name):
            return False                               # as drawn
        b = bands.Band(np.asarray(s.band.xs, dtype=float), np.asarray(s.band.lo, dtype=float),
                       np.asarray(s.band.hi, dtype=float), s.band.label)
        item.setFillBrush(self._band_brush(s.color))
        item.setData(*b.polygon())
        item.setObjectName(f"band-{s.role}:{s.name}")
        self.bands[key] = b
        self._band_specs[key] = (s.band, s.color, s.name)
        return True

    def _band_brush(self, colour: str) -> QColor:
        c = QColor(style.ink(colour, self.look))
        c.setAlphaF(bands.ALPHA)
        return c

    def _ring(self, s: spec.Series) -> None:
        """A grey ring around each point the noise cannot tell from the baseline's."""
        ringed = np.asarray(s.ringed, dtype=bool)
        item = self.rings.get(s.key)
        if item is None and not ringed.any():
            return
        if item is None:
            item = pg.ScatterPlotItem(symbol="o", brush=None)
            item.setZValue(5)
            self.addItem(item)
            self.rings[s.key] = item
        x, y = np.asarray(s.xs, dtype=float)[ringed], np.asarray(s.ys, dtype=float)[ringed]
        # The view is log-log: a scatter item, unlike a curve, is placed in the view's coordinates.
        item.setData(np.log10(x), np.log10(y), size=self.look.marker_px * 2.2,
                     pen=pg.mkPen(spec.RING_COLOR, width=max(1.5, self.look.line_px / 2)), brush=None)
        item.setObjectName(f"within-noise-{s.role}:{s.name}")

    def rings_drawn(self) -> dict:
        """{key: (x, y)} of the rings shown, in data units."""
        return {key: (10 ** np.asarray(item.data["x"]), 10 ** np.asarray(item.data["y"]))
                for key, item in self.rings.items() if len(item.data)}

    def _marks(self, marks: Sequence[spec.Mark]) -> None:
        """Each mark's line, made once per (kind, name) and moved; those not in the spec hidden."""
        wanted = {}
        for m in marks:
            wanted[(m.kind, m.name or f"{m.at:g}")] = m
        for key, line in self.mark_items.items():
            line.setVisible(key in wanted)
        self.marks_shown = wanted
        for key, m in wanted.items():
            line = self.mark_items.get(key)
            if line is None:
                line = pg.InfiniteLine(angle=90 if m.vertical else 0, movable=False, label="")
                line.setObjectName(f"mark:{m.kind}:{key[1]}")
                self.addItem(line, ignoreBounds=True)
                self.mark_items[key] = line
            line.setValue(math.log10(m.at) if m.at > 0 else 0.0)   # the view's coordinates are log10
            self._style_mark(key)

    def _style_mark(self, key) -> None:
        m, line, look = self.marks_shown.get(key), self.mark_items[key], self.look
        if m is None:
            return
        width = look.line_px if m.kind == "wall" else max(1.5, look.line_px / 2) if m.kind == "lesson" else 1
        colour = look.muted if m.kind == "reference" else style.ink(m.color, look)
        line.setPen(style.pen(colour, look, m.line, width))
        line.setZValue(-5 if m.kind == "lesson" else 0)
        line.label.setVisible(bool(m.label))
        if m.label:
            font = QFont()
            font.setPointSize(max(6, look.font_pt - 1))
            right = self._right_half(m.at)
            if m.kind == "lesson":    # upright along the line, left of it, from the top (as exported)
                line.label.setAngle(90)
                line.label.setPosition(0.99)
                line.label.anchors = [(1, 1), (1, 1)]
                line.label.fill = pg.mkBrush(look.background)
            else:     # a wall's label reads away from the nearer edge, its row below the last one's
                line.label.setPosition(0.94 - 0.08 * m.row)
                line.label.anchors = [(1, 0.5), (1, 0.5)] if right else [(0, 0.5), (0, 0.5)]
            line.label.setFormat(m.label)
            line.label.setColor(style.ink(m.label_color, look))
            line.label.setFont(font)
            line.label.updatePosition()

    def _right_half(self, x: float) -> bool:
        a = self.spec.x if self.spec is not None else None
        if a is None or a.range is None or x <= 0:
            return False
        lo, hi = a.range
        return math.log(x / lo) > 0.5 * math.log(hi / lo)

    def marks_drawn(self, kind: str) -> list[tuple[float, str]]:
        """(x, label) of the marks of ``kind`` shown ("wall", "lesson", "reference"): for tests."""
        return [(10 ** line.value(), m.label) for (k, _), m in self.marks_shown.items()
                if k == kind for line in [self.mark_items[(k, _)]] if line.isVisible()]

    def walls_drawn(self) -> dict:
        """{series: size} of the memory walls shown."""
        return {name: round(10 ** self.mark_items[(k, name)].value())
                for (k, name) in self.marks_shown if k == "wall"}

    def clear_series(self) -> None:
        """A new sweep: every series, band, ring and mark emptied (the items stay, for the next data)."""
        for item in (*self.series.values(), *self.band_items.values()):
            item.setData([], [])
        for item in self.rings.values():
            item.setData([], [])
        self.meta.clear()
        self.bands.clear()
        self._marks(())
        self.follow()

    def points(self) -> dict:
        """What each series draws: {key: (x, y)}, for tests and exports."""
        out = {}
        for key, item in self.series.items():
            x, y = item.xData, item.yData      # as given, before the log transform
            out[key] = (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))
        return out

    # --- the look -----------------------------------------------------------------------------

    def apply_look(self, look: Look) -> None:
        super().apply_look(look)
        for key in getattr(self, "meta", {}):         # none yet in the constructor
            self._style_curve(key)
        for key, item in getattr(self, "band_items", {}).items():
            if key in self.bands:
                s = self.meta.get(("compute" if key[0] == "band-compute" else "total",) + key[1:])
                item.setFillBrush(self._band_brush(s.color if s is not None else spec.INK))
        for key in getattr(self, "mark_items", {}):
            self._style_mark(key)
        for item in getattr(self, "rings", {}).values():
            if len(item.data):
                item.setSize(look.marker_px * 2.2)

    # --- hover --------------------------------------------------------------------------------

    def hover_text(self, scene_pos: QPointF) -> str:
        """The values of the point nearest the pointer, if one is within HOVER_PX."""
        vb = self.getViewBox()
        best, best_d = None, float(HOVER_PX)
        for key, item in self.series.items():
            if item.xData is None or not item.isVisible() or key not in self.meta:
                continue
            for x, y in zip(item.xData, item.yData):
                p = vb.mapViewToScene(QPointF(np.log10(x), np.log10(y)))
                d = float(np.hypot(p.x() - scene_pos.x(), p.y() - scene_pos.y()))
                if d <= best_d:
                    best, best_d = (key, x), d
        if best is None:
            return ""
        key, x = best
        s = self.meta[key]
        row = self.row_at(s.backend, s.variant, x, s.set_index)
        return self.describe(row, s.set_index) if row is not None else ""


class RuntimeChart(Chart):
    """Each series' median, and around it the band ``workbench.views.bands`` describes."""

    def __init__(self) -> None:
        super().__init__("runtime", "runtimePlot")


class MemoryChart(Chart):
    def __init__(self) -> None:
        super().__init__("memory", "memoryPlot")


class EnergyChart(Chart):
    """Each series' energy per call above the idle draw, with the band of its readings."""

    def __init__(self) -> None:
        super().__init__("energy", "energyPlot")


class FirstCallChart(Chart):
    def __init__(self) -> None:
        super().__init__("first-call", "firstCallPlot")


class SpeedupChart(Chart):
    """Each backend's speedup over the chosen baseline, compute solid and end-to-end dashed; a
    grey ring around each point whose verdict against the baseline is ``same`` or ``undecided``
    (``workbench.views.compare.within_noise``): a ratio of 1.04 drawn alone reads as a win the
    measurement does not support."""

    def __init__(self) -> None:
        super().__init__("speedup", "speedupPlot")
        self.choice = Baseline("")
        self.title_text = "Speedup"

    @property
    def baseline(self) -> str:
        """The baseline's backend."""
        return self.choice.backend

    def set_baseline(self, choice: Baseline, labels: Sequence[str] = ()) -> None:
        """Divide by ``choice``: a backend of each set's own, or of one set (``set_index``)."""
        self.choice = choice

    def build(self, overlay: Overlay, shared=None) -> ChartSpec:
        shared = shared if shared is not None else spec.context(
            overlay.sets, labels=overlay.labels, marks=self.lesson_marks, caption=self.lesson_caption,
            series=overlay.series)
        return spec.build("speedup", baseline=self.choice, shared=shared)

    @property
    def _ring_key_shown(self) -> bool:
        return any(e.role == "ring" for e, _ in self.key_items)
