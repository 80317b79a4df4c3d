"""A bar under the toolbar for what went wrong with a file (it could not be opened, or written):
where the user looks, with the reason and what to do, and no dialog that blocks."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QToolBar, QWidget


class NoticeBar(QToolBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Notice", parent, objectName="noticeBar")
        self.setMovable(False)
        self.toggleViewAction().setVisible(False)
        # What is said names files and backends, shown as they are, never as markup.
        self.label = QLabel(objectName="noticeLabel", wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.label.setStyleSheet("color: #b00020; padding: 2px 6px;")
        self.dismissButton = QPushButton("Dismiss", objectName="noticeDismiss")
        self.addWidget(self.label)
        self.addWidget(self.dismissButton)
        self.dismissButton.clicked.connect(self.hide)
        self.hide()

    def show_problem(self, text: str) -> None:
        self.label.setText(text)
        self.show()
