"""The device and environment panel, and the log panel fed by a logging handler."""
from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QPlainTextEdit

from workbench.measure.environment import format_record


class EnvironmentPanel(QPlainTextEdit):
    def __init__(self, parent=None) -> None:
        super().__init__(parent, objectName="environmentPanel")
        self.setReadOnly(True)
        self.setFont(QFont("monospace", 9))
        self.setPlainText("Reading the machine (CPU, memory, libraries, GPUs)...")
        self.record: dict = {}
        self._sources: list[tuple[str, dict]] = []

    @Slot(object)
    def show_record(self, record: dict) -> None:
        """This machine's record: the one a sweep measured here is kept with."""
        self.record = record
        self.show_sources(self._sources)

    def show_sources(self, sources: list[tuple[str, dict]]) -> None:
        """Above this machine's record, the records of result sets measured elsewhere (opened files)."""
        self._sources = list(sources)
        parts = [f"{title}\n{'=' * len(title)}\n{format_record(rec)}" for title, rec in self._sources]
        if self.record:
            parts.append(("This machine\n============\n" if parts else "") + format_record(self.record))
        self.setPlainText("\n\n".join(parts) or "Reading the machine (CPU, memory, libraries, GPUs)...")


class _Emitter(QObject):
    message = Signal(str)


class QtLogHandler(logging.Handler):
    """Forwards log records to the GUI thread through a queued signal (any thread may log)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.emitter = _Emitter()
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.emitter.message.emit(self.format(record))
        except RuntimeError:   # the panel is gone while a thread still logs
            pass


class LogPanel(QPlainTextEdit):
    def __init__(self, parent=None) -> None:
        super().__init__(parent, objectName="logPanel")
        self.setReadOnly(True)
        self.setMaximumBlockCount(5000)
        self.setFont(QFont("monospace", 9))

    @Slot(str)
    def append_line(self, line: str) -> None:
        self.appendPlainText(line)
