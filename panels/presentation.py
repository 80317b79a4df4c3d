"""Presentation mode, the theme and the text size: how the window reads from the back of a room.

One state (presenting or not, dark or light, a font size for each mode, mouse
zoom) held here and applied to the whole window at once: the charts, the legend
strip, the summary and the run toolbar take the same look; the Qt palette
follows the theme. Presentation folds the experiment and results docks away
and brings back exactly the docks that were shown before.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QDockWidget, QMainWindow

from panels import style
from panels.style import Look

log = logging.getLogger(__name__)
MIN_PT, MAX_PT = 7, 40


class Presentation(QObject):
    changed = Signal(object)    # the Look now in force

    def __init__(self, window: QMainWindow, docks: tuple[QDockWidget, ...], plots: Any, toolbar: Any) -> None:
        super().__init__(window)
        self.window = window            # the window it styles: its palette and its font
        self.plots = plots              # panels.plots.PlotsPanel
        self.toolbar = toolbar          # panels.toolbar.RunToolBar
        self.docks = docks
        self.presenting = False
        self.dark = False
        self.normal_pt = style.NORMAL.font_pt
        self.presentation_pt = style.PRESENTATION.font_pt
        self.mouse_zoom = True
        self._shown_before: dict[QDockWidget, bool] = {}

    @property
    def look(self) -> Look:
        if self.presenting:
            return style.presentation(replace(style.NORMAL, dark=self.dark), self.presentation_pt)
        return replace(style.NORMAL, font_pt=self.normal_pt, dark=self.dark)

    # --- the actions -------------------------------------------------------------------------

    def set_presenting(self, on: bool) -> None:
        on = bool(on)
        if on == self.presenting:
            return
        self.presenting = on
        if on:
            self._shown_before = {d: d.isVisible() for d in self.docks}
            for d in self.docks:
                d.hide()
        else:
            for d in self.docks:
                d.setVisible(self._shown_before.get(d, True))
        self.apply()

    def set_dark(self, on: bool) -> None:
        self.dark = bool(on)
        self.apply()

    def larger(self) -> None:
        self._step(+1)

    def smaller(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if self.presenting:    # never under 16 pt on a projector
            self.presentation_pt = min(MAX_PT, max(style.PRESENTATION_MIN_PT, self.presentation_pt + delta))
        else:
            self.normal_pt = min(MAX_PT, max(MIN_PT, self.normal_pt + delta))
        self.apply()

    def set_mouse_zoom(self, on: bool) -> None:
        self.mouse_zoom = bool(on)
        self.plots.set_mouse_zoom(self.mouse_zoom)

    # --- applying ----------------------------------------------------------------------------

    def apply(self) -> None:
        look = self.look
        self.window.setPalette(palette(look))
        self.plots.apply_look(look)
        self.toolbar.set_font_pt(look.font_pt if self.presenting else self.window.font().pointSize())
        self.plots.set_mouse_zoom(self.mouse_zoom)
        self.changed.emit(look)         # the menus' check marks and the timeline follow it

    # --- settings ----------------------------------------------------------------------------

    def save(self, settings) -> None:
        settings.setValue("darkTheme", self.dark)
        settings.setValue("fontPt", self.normal_pt)
        settings.setValue("presentationFontPt", self.presentation_pt)
        settings.setValue("mouseZoom", self.mouse_zoom)
        settings.setValue("chartKeys", self.plots.keysAction.isChecked())
        settings.setValue("chartCaptions", self.plots.captionsAction.isChecked())

    def restore(self, settings) -> None:
        def flag(key: str, default: bool) -> bool:
            return str(settings.value(key, default)).lower() in ("true", "1")
        self.dark = flag("darkTheme", False)
        self.mouse_zoom = flag("mouseZoom", True)
        self.normal_pt = min(MAX_PT, max(MIN_PT, int(settings.value("fontPt", self.normal_pt))))
        self.presentation_pt = min(MAX_PT, max(style.PRESENTATION_MIN_PT,
                                               int(settings.value("presentationFontPt", self.presentation_pt))))
        self.apply()
        self.plots.show_keys(flag("chartKeys", True))
        self.plots.show_captions(flag("chartCaptions", True))


def palette(look: Look) -> QPalette:
    """The Qt palette of the theme: the default light one, or a dark one of the same roles."""
    p = QPalette()
    if not look.dark:
        return p
    roles = {
        QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: look.foreground,
        QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.AlternateBase: "#262626",
        QPalette.ColorRole.Text: look.foreground, QPalette.ColorRole.Button: "#353535",
        QPalette.ColorRole.ButtonText: look.foreground, QPalette.ColorRole.Highlight: "#3d6fa5",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#333333",
        QPalette.ColorRole.ToolTipText: look.foreground, QPalette.ColorRole.PlaceholderText: look.muted,
    }
    for role, colour in roles.items():
        p.setColor(role, QColor(colour))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(look.muted))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(look.muted))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor(look.muted))
    return p
