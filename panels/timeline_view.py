"""The timeline of one point, in a window of its own: opened by a click on a point of any chart or
on a row of the table (``MainWindow`` wires those clicks here). It shows the point's call lane by
lane (``panels.timeline_chart``), the key to its colours, and offers the chart's export, PNG to
Chrome trace, for the same point."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from panels.style import Look
from panels.timeline_chart import TimelineChart

#: At first showing: room for a host lane, a driver lane and four streams, and the key.
START_SIZE = (900, 420)


class TimelineView(QWidget):
    """A window of its own, owned by the main window; ``exportAsked`` carries the point shown."""

    exportAsked = Signal(object)      # (backend, size, variant, set index)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window, objectName="timelineView")
        self.setWindowTitle("Timeline")
        self.chart = TimelineChart()
        self.key = QLabel(objectName="timelineKey", wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.about = QLabel(objectName="timelineAbout", wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.about.setStyleSheet("color: #666;")
        self.exportButton = QPushButton("Export...", objectName="timelineExport")
        self.exportButton.setToolTip("This timeline as PNG, SVG or PDF, or as a Chrome trace (JSON) for "
                                     "Perfetto or chrome://tracing")
        self.exportButton.clicked.connect(lambda: self.exportAsked.emit(self.chart.point))
        bottom = QHBoxLayout()
        bottom.addWidget(self.about, 1)
        bottom.addWidget(self.exportButton)
        layout = QVBoxLayout(self)
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.key)
        layout.addLayout(bottom)
        self.resize(*START_SIZE)

    def show_point(self, sets, point: tuple) -> None:
        """The timeline of ``point`` (backend, variant, size, set index, as a chart's click gives it)."""
        backend, variant, size, set_index = point
        self.chart.show_point(sets, (backend, int(size), variant, set_index))
        chart = self.chart.spec
        self.setWindowTitle(chart.title if chart is not None else "Timeline")
        entries = chart.legend if chart is not None else ()
        self.key.setText("&nbsp;&nbsp;".join(
            f"<span style='color: {e.color}'>&#9632;</span>&nbsp;{escape(e.label)}" for e in entries))
        self.about.setText(chart.caption if chart is not None else "")
        self.show()
        self.raise_()

    def apply_look(self, look: Look) -> None:
        self.chart.apply_look(look)
