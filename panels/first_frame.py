"""The window's first frame: what waits for it, and when it was on screen.

A launch is the time from the process's start to the window painted. Work the first frame does not
draw (the backends' deep probe, which starts an engine process and imports the GPU libraries in it)
waits for that frame: started during the launch, it took the GIL and the second of this machine's
two cores from the window being built.

``GPU_WORKBENCH_FIRST_FRAME=FILE gpu-workbench`` writes the wall-clock time (``time.time()``) of the
first frame to FILE and closes the window: the parent that started the process read the same clock
just before, so the difference is the launch as a user sees it (``benchmarks/gui_responsiveness.py``
takes the median of five with a fresh settings folder). Qt delivers the window's first Paint event
after ``show()`` and after a zero timer armed with it, so a timer alone reads the clock too early.
"""
from __future__ import annotations

import os
import time
from typing import Callable

from PySide6.QtCore import QEvent, QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

VARIABLE = "GPU_WORKBENCH_FIRST_FRAME"


class FirstFrame(QObject):
    """Emits ``painted`` once, in the event loop's turn after the window's first paint; at once in the
    loop's first turn if the window is not shown by then (a test's window, never painted)."""

    painted = Signal()

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.done = False
        window.installEventFilter(self)
        QTimer.singleShot(0, self._unless_shown)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Paint and not self.done:
            self.done = True
            self.window.removeEventFilter(self)
            QTimer.singleShot(0, self.painted.emit)      # the paint itself completes first
        return False

    @Slot()
    def _unless_shown(self) -> None:
        if not self.done and not self.window.isVisible():
            self.done = True
            self.window.removeEventFilter(self)
            self.painted.emit()


def after_first_frame(window: QWidget, then: Callable[[], None]) -> FirstFrame:
    """Call ``then`` once the window's first frame is painted (see :class:`FirstFrame`)."""
    frame = FirstFrame(window)
    frame.painted.connect(then)
    return frame


def report_if_asked(window: QWidget) -> None:
    """Where the variable names a file: the first frame's time into it, then the window closes."""
    path = os.environ.get(VARIABLE)
    if path:
        after_first_frame(window, lambda: _report(window, path))


def _report(window: QWidget, path: str) -> None:
    shown = time.time()
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{shown:.6f}\n")
    window.close()
