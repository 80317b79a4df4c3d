"""Titles and axis labels that fit a chart's room, in the look's font; values on hover."""
from __future__ import annotations

import html
import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

MIN_CHART = (150, 120)   # charts shrink to this, so the window fits a 1280x720 projector


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


def width_free(label: pg.LabelItem) -> None:
    """A title label that asks for its height only: pyqtgraph's ``LabelItem`` makes its text's
    width its minimum again on every resize (``updateMin``), so a chart whose title was laid out
    wide could never shrink back below it (a title wider than its slot in presentation mode);
    :meth:`Titled._fit_title` shortens the text to the room instead."""
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
            # Text from data (a variant, a workload named in a plug-in) is text: pyqtgraph's title is
            # rich text, where "<i>pinned</i>" came out in italics.
            self.setTitle(html.escape(text, quote=False), color=self.look.foreground, size=f"{font.pointSizeF():g}pt")
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
        # Still in pyqtgraph's constructor, or closed (PlotWidget.close drops its plot item, then its
        # viewport's removal resizes the widget once more).
        if not hasattr(self, "look") or getattr(self, "plotItem", None) is None:
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
