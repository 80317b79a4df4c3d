"""The legend strip above the charts: each backend's colour and marker, the transfer phases and what
the runtime chart's band is; when result sets are compared, each backend's colour and each set's
marker and label.

One strip for all five charts, outside them: a legend inside a small chart covers
the data, and five copies of the same list waste what a projector has least of.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from panels import style
from panels.flow_layout import FlowLayout
from panels.style import Look
from workbench.views import bands
from workbench.catalog.backends import BACKENDS

BAND_PREFIX = "runtime band: "      # before a band's label: only the runtime chart draws bands


class LegendStrip(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="legendStrip")
        self.layout_ = FlowLayout(self, spacing=14)     # wraps: seven backends fit 1280 pixels
        self.layout_.setContentsMargins(6, 0, 6, 0)
        self.look = style.NORMAL
        self.entries: list[str] = []      # what it shows, in order (tests read it)
        self._backends: list[str] = []
        self._phases = False
        self._sets: list[str] = []
        self._bands: list[str] = []

    def show_backends(self, backends: list[str], phases: bool, look: Look, sets: list[str] | None = None) -> None:
        """``sets``: the labels of compared sets, whose markers then stand for the set, not the backend."""
        sets = list(sets or [])
        if (backends, phases, look, sets) == (self._backends, self._phases, self.look, self._sets):
            return
        self._backends, self._phases, self.look, self._sets = list(backends), phases, look, sets
        self._fill()

    def show_bands(self, labels: list[str]) -> None:
        """What the runtime chart's bands are (``workbench.views.bands``' labels). Here, not in that chart's
        own key: a row more there took a third of the chart's height at 1280x720."""
        if list(labels) != self._bands:
            self._bands = list(labels)
            self._fill()

    def _fill(self) -> None:
        look, sets = self.look, self._sets
        while self.layout_.count():
            item = self.layout_.takeAt(0)
            if item.widget() is not None:       # hidden now: deleteLater waits for the event loop
                item.widget().hide()
                item.widget().deleteLater()
        self.entries = []
        px = round(look.font_pt * 1.4)
        for b in self._backends:
            sign = style.line_icon(b, look.dark, px) if sets else style.icon(b, look.dark, px)
            self._add(sign.pixmap(px, px), BACKENDS[b].title if b in BACKENDS else b)
        for i, label in enumerate(sets):
            self._add(style.set_icon(i, look.dark, px).pixmap(px, px), label)
        if self._phases:
            for phase, colour in style.PHASE_COLORS.items():
                swatch = QPixmap(px, px)
                swatch.fill(QColor(colour))
                self._add(swatch, style.PHASE_LABELS[phase])
        for label in self._bands if self._backends else ():
            shade = QColor(look.foreground)
            shade.setAlphaF(2 * bands.ALPHA)      # as the bands are drawn: translucent over the background
            swatch = QPixmap(px, px)
            swatch.fill(shade)
            self._add(swatch, f"{BAND_PREFIX}{label}")
        self.setVisible(bool(self._backends))
        self.updateGeometry()

    def _add(self, pixmap: QPixmap, text: str) -> None:
        font = QFont()
        font.setPointSize(self.look.font_pt)
        sign = QLabel()
        sign.setPixmap(pixmap)
        label = QLabel(text, textFormat=Qt.TextFormat.PlainText)   # a name, never markup
        label.setFont(font)
        label.setStyleSheet(f"color: {self.look.foreground};")
        entry = QWidget()
        row = QHBoxLayout(entry)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(sign, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(label, 0, Qt.AlignmentFlag.AlignVCenter)
        self.layout_.addWidget(entry)
        self.entries.append(text)

    def apply_look(self, look: Look) -> None:
        self.setStyleSheet(f"background: {look.background};")
        self.setAutoFillBackground(True)
        self.show_backends(self._backends, self._phases, look, self._sets)
