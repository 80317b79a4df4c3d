"""What every chart of the window shares: it draws its kind's spec (``workbench.views.spec``), the
same spec the exported chart draws: the spec's axes (``panels.axes.SpecAxis``), title, key to the
line styles, notes, and what it says when empty."""
from __future__ import annotations

import html
import logging
import math
from typing import Callable, Iterator, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics

from panels import axes, style
from panels.chart_text import MIN_CHART, Titled, width_free
from panels.style import Look
from workbench.views import spec
from workbench.views.compare import Overlay
from workbench.views.point_rows import PointRows
from workbench.views.spec import ChartSpec

log = logging.getLogger(__name__)
#: A chart at least this wide shows its key in the look's text size; a narrower one, smaller.
KEY_FULL_WIDTH = 340
#: The legend entries a chart shows in its own key; the others are the panel's strip's.
OWN_KEY = ("key", "ring")
#: Entries of the key side by side, where the chart is wide enough (else one a row).
KEY_COLUMNS = 2


class SpecChart(Titled, pg.PlotWidget):
    """What every chart shares: the spec's axes, title, key, notes and what it says when empty."""

    #: A left click on a drawn point: (backend, variant, size, set index) of its row (its timeline opens).
    pointClicked = Signal(object)

    def __init__(self, kind: str, name: str, log_axes: bool) -> None:
        super().__init__(axisItems={"left": axes.SpecAxis("left"), "bottom": axes.SpecAxis("bottom")})
        self.setObjectName(name)    # PlotWidget passes unknown keywords on to PlotItem.plot()
        self.kind = kind            # its name among workbench.views.presets.KINDS
        self.log_axes = log_axes
        self.setMinimumSize(*MIN_CHART)
        self.title_text, self.left_text, self.bottom_text = kind, "", ""
        self.short_title = self.left_short = self.bottom_short = ""
        self._shown_title = ""
        width_free(self.getPlotItem().titleLabel)
        self.look = style.NORMAL
        self.spec: ChartSpec | None = None
        self.overlay = Overlay.of([])
        # Its points' rows, read on a hover: a panel's own (indexed as they come, the sets' tables
        # not made for it).
        self.rows_of: Callable[[], PointRows] = self._own_rows
        self._rows: tuple = (None, None)        # (the overlay, its PointRows)
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
        self.legend = pg.LegendItem(colCount=KEY_COLUMNS, horSpacing=16, verSpacing=-4)
        # It spans the axis column too, and claims no minimum width: a chart must shrink, not crop.
        self.getPlotItem().layout.addItem(self.legend, 4, 0, 1, 3, alignment=Qt.AlignmentFlag.AlignHCenter)
        self.legend.setMinimumWidth(0)
        self._key: tuple = ()             # the entries the key shows now
        self.key_items: list = []
        # Notes (values a log axis cannot show) in a row of their own under the key, below the plot:
        # in its corner they lay over the lines (issue 38). Under the plot's column, as wide as it.
        self.note = pg.LabelItem("", color="#666", justify="right")
        width_free(self.note)
        self.getPlotItem().layout.addItem(self.note, 5, 1)
        self._note_shown: tuple = ()
        self._show_note_row(False)
        # What the chart says where it has nothing to draw, across its middle.
        vb = self.getViewBox()
        self.hint = pg.TextItem("", color="#666", anchor=(0.5, 0.5))
        self.hint.setParentItem(vb)
        vb.sigResized.connect(self._place_notes)
        vb.sigRangeChangedManually.connect(self._user_zoomed)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)

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
        self._fit_key_columns()
        self.hint.setText(chart.empty)
        self._show_note_row(self.notes_shown and bool(chart.notes))
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
        # pyqtgraph applies a new view range to the items in the paint event, which then asks for a
        # second paint of the whole chart: applied now, the paint finds nothing left to change.
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
        # pyqtgraph applies a new range to the items in the paint event, whose changes then ask for a
        # second paint of the whole chart in the same turn: applied now, the one paint finds
        # nothing left to change.
        self.scene().prepareForPaint()

    def follow(self) -> None:
        """Follow the spec's ranges again (a new sweep, sets opened)."""
        self._follow = True
        if self.spec is not None:
            self._range(self.spec)

    def _place_notes(self, *_) -> None:
        """The notes in their row, in full where they fit the plot's width, else their short form
        (the spec's), cut with an ellipsis if even that is too long; the full text on hover."""
        if not hasattr(self, "note"):
            return
        self.hint.setPos(self.getViewBox().boundingRect().center())
        if self.spec is None or not self.note.isVisible():
            return
        font = QFont()
        font.setPointSize(max(6, self.look.font_pt - 2))
        room = max(40.0, self.getViewBox().width() - 4)
        full = "; ".join(self.spec.notes)
        short = "; ".join(self.spec.short_notes[i] if i < len(self.spec.short_notes) else n
                          for i, n in enumerate(self.spec.notes))
        metrics = QFontMetrics(font)
        text = full if metrics.horizontalAdvance(full) <= room else \
            metrics.elidedText(short, Qt.TextElideMode.ElideRight, int(room))
        shown = (text, self.look.muted, font.pointSize())
        if shown == self._note_shown:
            return
        self._note_shown = shown
        self.note.setText(html.escape(text, quote=False), color=self.look.muted, size=f"{font.pointSize()}pt")
        self.note.setToolTip(full)

    def _show_note_row(self, on: bool) -> None:
        self.note.setVisible(on)
        # A hidden item keeps its row in pyqtgraph's layout: give the row back to the plot.
        self.note.setMaximumHeight(16777215 if on else 0)

    def show_notes(self, on: bool) -> None:
        """The chart's notes (values a log axis cannot show) on or off: a small chart needs its room."""
        self.notes_shown = bool(on)
        self._show_note_row(self.notes_shown and self.spec is not None and bool(self.spec.notes))
        self._place_notes()

    def notes(self) -> list[str]:
        """The notes the chart says now, in full (tests compare them with the export's)."""
        return list(self.spec.notes) if self.spec is not None and self.note.isVisible() else []

    # --- the key to the line styles -----------------------------------------------------------

    def _key_steps(self, entries: Sequence[spec.LegendEntry]) -> Iterator[None]:
        """The key holds the spec's entries for line styles and rings. Entries added after those it
        shows are added alone, with their labels made in the key's size and colour: rebuilt, every
        label laid out again and the plot with it (4-9 ms a label in a sweep's first second). One
        entry a step; ``_key`` is what the key holds, at every step."""
        key = tuple(entries)
        if key == self._key:
            return
        if key[:len(self._key)] != self._key or not self._key:
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
        self._fit_key_columns()

    def key_width(self, columns: int) -> float:
        """The key's width in pixels laid out in ``columns`` columns: each column as wide as its
        widest sample and label (pyqtgraph's grid), with the legend's spacing between them."""
        widths = [0.0] * columns
        for i, (sample, label) in enumerate(self.legend.items):
            text = label.item.boundingRect().width()
            widths[i % columns] = max(widths[i % columns], sample.boundingRect().width() + text + 6)
        return sum(widths) + self.legend.layout.horizontalSpacing() * (columns - 1)

    def _fit_key_columns(self) -> None:
        """Two entries a row where both fit the chart's width, else one: side by side, the transfer
        chart's "copies (the rest: compute)" and "host to device" ran past a 1280x720 window's
        chart and were cut ("host to d", issue 38)."""
        if not self.legend.items:
            return
        columns = KEY_COLUMNS if self.key_width(KEY_COLUMNS) <= self.width() - 2 * self.frameWidth() - 8 else 1
        if columns == self.legend.columnCount:
            return
        self.legend.columnCount = columns      # pyqtgraph's setColumnCount leaves the grid's old columns
        entries, self._key = self._key, ()
        for _ in self._key_steps(entries):
            pass
        self._fit_minimum()

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
        # Not the legend's setLabelTextSize/Color: they change each label's options without drawing
        # it again, and _style_key, which draws a label whose options differ, then saw nothing to
        # do: a key left presentation mode at its presentation size (issue 38's screenshots).
        self._style_key()
        self.hint.setColor(look.muted)
        self.hint.setFont(font)
        self._place_notes()
        self._labels()

    # --- hover and click ----------------------------------------------------------------------

    def point_at(self, scene_pos: QPointF) -> tuple | None:
        """(backend, variant, size, set index) of the point drawn under ``scene_pos``; None where
        there is none (a chart of points says; one without, as this, has none)."""
        return None

    def _mouse_clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        hit = self.point_at(event.scenePos())
        if hit is not None:
            self.pointClicked.emit(hit)

    def _own_rows(self) -> PointRows:
        if self._rows[0] is not self.overlay:
            self._rows = (self.overlay, PointRows.of_sets(self.overlay.sets))
        return self._rows[1]

    def row_at(self, backend: str, variant: str, size: float, set_index: int) -> dict | None:
        """The ok row a drawn point stands for, as a dict (made only when hovered: to_dict is slow)."""
        return self.rows_of().row(set_index, backend, variant, size)
