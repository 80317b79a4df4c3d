"""The run toolbar: Run, Stop, the progress bar and the time left, always in view.

They used to sit under the experiment panel's scroll area, below the fold at
1600x1000 and under: a speaker had to scroll to start a sweep. The toolbar
cannot be moved, floated or hidden, and its contents sit in one widget whose
only stretchy part is the text of what is being measured, so that Qt never
moves Run or Stop into the toolbar's overflow menu on a narrow window.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy, QToolBar, QWidget


class RunToolBar(QToolBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run", parent, objectName="runToolBar")
        self.setMovable(False)
        self.setFloatable(False)
        self.toggleViewAction().setVisible(False)      # not in the context menu: it never goes away
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.PreventContextMenu)
        self.runButton = QPushButton("Run", objectName="runButton")
        self.runButton.setToolTip("Run the sweep (Ctrl+R)")
        self.stopButton = QPushButton("Stop", objectName="stopButton")
        self.stopButton.setToolTip("Stop after the current repeat, keeping what was measured (Esc)")
        self.stopButton.setEnabled(False)
        self.progressBar = QProgressBar(objectName="progressBar")
        self.progressBar.setFormat("idle")
        self.progressBar.setValue(0)
        self.etaLabel = QLabel(objectName="etaLabel")
        self.etaLabel.setToolTip("Time left in this sweep, from the points measured so far")
        self.progressLabel = QLabel(objectName="progressLabel")
        # The only part that gives way on a narrow window: what is being measured.
        self.progressLabel.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        box = QWidget(objectName="runControls")
        lay = QHBoxLayout(box)
        lay.setContentsMargins(4, 2, 4, 2)
        for w in (self.runButton, self.stopButton, self.progressBar, self.etaLabel):
            lay.addWidget(w)
        lay.addWidget(self.progressLabel, 1)
        box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(box)
        self.set_font_pt(QFont().pointSize())

    def set_font_pt(self, pt: int) -> None:
        """Larger controls in presentation mode: the audience sees the progress too."""
        font = QFont()
        font.setPointSize(pt)
        for w in (self.runButton, self.stopButton, self.progressBar, self.etaLabel, self.progressLabel):
            w.setFont(font)
        metrics = QFontMetrics(font)
        self.progressBar.setFixedWidth(metrics.horizontalAdvance("stopped: 000 / 000 points") + 24)
        self.etaLabel.setMinimumWidth(metrics.horizontalAdvance("about 9999 s left") + 8)
        for b in (self.runButton, self.stopButton):
            b.setMinimumWidth(metrics.horizontalAdvance("Stop") + 40)
