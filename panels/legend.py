"""The legend strip above the charts: who is who in every chart, from the charts' specs.

Each chart spec (``workbench.views.spec``) lists its legend entries; a chart keeps the key to its
line styles (and the ring) in itself, and the entries that name series (each backend's colour and
marker, each compared set's marker), the transfer phases and what the runtime band is come here,
once for all five charts: a legend inside a small chart covers the data, and five copies of the
same list waste what a projector has least of. The export draws the same entries beside each chart.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from panels import style
from panels.flow_layout import FlowLayout
from panels.style import Look
from workbench.views import spec
from workbench.views.presets import KINDS

#: The most characters of a name the strip shows (a plug-in's backend may be named with a sentence).
MOST_CHARACTERS = 48
BAND_PREFIX = "runtime band: "      # before a band's label: only the runtime chart draws bands
#: The entries a chart leaves to the strip.
STRIP_ROLES = ("series", "phase", "band")


class LegendStrip(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="legendStrip")
        self.layout_ = FlowLayout(self, spacing=14)     # wraps: seven backends fit 1280 pixels
        self.layout_.setContentsMargins(6, 0, 6, 0)
        self.look = style.NORMAL
        self.entries: list[str] = []      # what it shows, in order (tests read it)
        self.kinds: list[set[str]] = []   # for each entry, the charts whose spec lists it
        self._by_kind: dict[str, tuple[spec.LegendEntry, ...]] = {}
        self._shown: list[tuple[spec.LegendEntry, frozenset]] = []
        self._stale = False
        self._reserved = False            # shown, one row high, before its entries come (a sweep runs)

    def reserve(self, labels: Sequence[str] | None) -> None:
        """Shown, and as high as entries named ``labels`` need at its width, even before they come
        (a sweep begins: the charts below are not laid out anew when its first entries come, nor as
        they wrap onto a second and third row); None: shown only with entries, as high as they need."""
        self._reserved = labels is not None
        if labels is not None:
            px = round(self.look.font_pt * 1.4)
            sign = style.entry_pixmap(spec.LegendEntry("x", "series"), self.look, px)
            probe = QWidget()
            flow = FlowLayout(probe, spacing=14)
            margins = self.layout_.contentsMargins()
            flow.setContentsMargins(margins)
            for text in labels or ["x"]:
                flow.addWidget(self._entry(sign, text))
            # Not laid out yet (a window never shown): as if in one row, not one entry a row.
            self.setMinimumHeight(flow.heightForWidth(self.width() if self.width() > 100 else 1 << 20))
            probe.deleteLater()
        else:
            self.setMinimumHeight(0)
        self.setVisible(bool(self._shown) or self._reserved)

    def show_chart(self, kind: str, entries: Sequence[spec.LegendEntry], now: bool = True) -> None:
        """The entries of chart ``kind``'s spec that name series, phases and bands; ``now`` False:
        kept until :meth:`flush` (a new entry relays the window out: once per update, not per chart)."""
        mine = tuple(e for e in entries if e.role in STRIP_ROLES)
        if self._by_kind.get(kind) != mine:
            self._by_kind[kind] = mine
            self._stale = True
        if now:
            self.flush()

    def flush(self) -> None:
        """Show what the charts' entries are now, if they changed."""
        if self._stale:
            self._stale = False
            self._merge()

    def forget(self) -> None:
        """No chart's entries are known: the next :meth:`flush` shows only those given since, and
        until then the strip shows what it shows (charts held for sets to come)."""
        self._by_kind = {}
        self._stale = True

    def clear(self) -> None:
        self._by_kind = {}
        self._stale = False
        self._merge()

    def entries_of(self, kind: str) -> list[str]:
        """What the strip shows for chart ``kind``, as that chart's spec names it (no prefix)."""
        return [e.label for e, kinds in self._shown if kind in kinds]

    def _merge(self) -> None:
        """One entry per label across the charts, in the charts' order: a backend named by four charts
        is shown once."""
        merged: dict[tuple[str, str], tuple[spec.LegendEntry, set]] = {}
        for kind in KINDS:
            for e in self._by_kind.get(kind, ()):
                at = merged.setdefault((e.role == "band", e.label), (e, set()))
                at[1].add(kind)
        shown = [(e, frozenset(k)) for e, k in merged.values()]
        # Series first (who is who), then the phases, then what the band is.
        shown.sort(key=lambda item: STRIP_ROLES.index(item[0].role))
        if shown != self._shown:
            self._shown = shown
            self._fill()

    def _fill(self) -> None:
        """The entries shown made what ``_shown`` says: those already there are written over, in
        place, and only the rest are made or removed. Each entry made anew is shown by Qt in a
        posted call of its own, 3-5 ms each and all in one turn: a strip made anew for Compare
        with was 30 ms of the GUI thread (issue 38)."""
        look = self.look
        px = round(look.font_pt * 1.4)
        widgets = [self.layout_.itemAt(i).widget() for i in range(self.layout_.count())]
        self.entries, self.kinds = [], []
        for i, (e, kinds) in enumerate(self._shown):
            text = f"{BAND_PREFIX}{e.label}" if e.role == "band" else e.label
            pixmap = style.entry_pixmap(e, look, px)
            if i < len(widgets):
                self._write(widgets[i], pixmap, text, e.role == "series")
            else:
                self.layout_.addWidget(self._entry(pixmap, text, e.role == "series"))
            self.entries.append(text)
            self.kinds.append(set(kinds))
        for widget in widgets[len(self._shown):]:
            self.layout_.removeWidget(widget)
            widget.hide()                       # deleteLater waits for the event loop
            widget.deleteLater()
        self.layout_.invalidate()
        self.setVisible(bool(self._shown) or self._reserved)
        self.updateGeometry()

    def _entry(self, pixmap, text: str, name: bool = True) -> QWidget:
        """One entry: its sign and its text (:meth:`_write`)."""
        entry = QWidget()
        row = QHBoxLayout(entry)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        entry.sign, entry.text = QLabel(), QLabel(textFormat=Qt.TextFormat.PlainText)
        row.addWidget(entry.sign, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(entry.text, 0, Qt.AlignmentFlag.AlignVCenter)
        self._write(entry, pixmap, text, name)
        return entry

    def _write(self, entry: QWidget, pixmap, text: str, name: bool) -> None:
        """An entry's sign and text; a ``name`` (a backend's, a set's) elided past
        :data:`MOST_CHARACTERS`, the workbench's own words (what the band is) never: "runtime band:
        q1 to q3 of the samples (no inter…" hid what the band is (issue 38); the strip wraps."""
        entry.sign.setPixmap(pixmap)
        # A name, never markup; a very long one elided to a line's share of the strip, whole in its tooltip.
        shown = text if len(text) <= MOST_CHARACTERS or not name else text[:MOST_CHARACTERS - 1] + "…"
        entry.text.setText(shown)
        entry.text.setToolTip(text if shown != text else "")
        font = QFont()
        font.setPointSize(self.look.font_pt)
        entry.text.setFont(font)
        # The look's colours by palette, not style sheet: a style sheet here (or the strip's, which
        # its children inherit) had Qt polish each entry through its style sheet engine.
        palette = entry.text.palette()
        palette.setColor(QPalette.ColorRole.WindowText, QColor(self.look.foreground))
        entry.text.setPalette(palette)

    def apply_look(self, look: Look) -> None:
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Window, QColor(look.background))
        self.setPalette(palette)
        self.setAutoFillBackground(True)
        if look != self.look:
            self.look = look
            self._fill()
