"""The offer to restore a session that ended without closing (the window was killed, the machine
went down): every point measured before the end is in the journal (``workbench.results.journal``)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QToolBar, QWidget

from workbench.core.sizes import fmt_size


class RestoreBar(QToolBar):
    """A bar under the run toolbar: what was found, Restore, Discard. Not a dialog: nothing blocks."""

    restoreRequested = Signal()
    discardRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Restore", parent, objectName="restoreBar")
        self.setMovable(False)
        # Names come from a journal on disk: never markup.
        self.label = QLabel(objectName="restoreLabel", textFormat=Qt.TextFormat.PlainText)
        self.restoreButton = QPushButton("Restore", objectName="restoreButton")
        self.discardButton = QPushButton("Discard", objectName="discardButton")
        self.addWidget(self.label)
        self.addWidget(self.restoreButton)
        self.addWidget(self.discardButton)
        self.restoreButton.clicked.connect(self.restoreRequested)
        self.discardButton.clicked.connect(self.discardRequested)
        self.hide()

    def offer(self, settings: dict, rows: list[dict]) -> None:
        workloads = sorted({str(r.get("workload", "?")) for r in rows})
        sizes = sorted({int(r["size"]) for r in rows if isinstance(r.get("size"), int)})
        span = f", sizes {fmt_size(sizes[0])} to {fmt_size(sizes[-1])}" if sizes else ""
        self.label.setText(f"The last session ended without closing: {len(rows)} point(s) of "
                           f"{', '.join(workloads)}{span} were measured.  ")
        self.show()
