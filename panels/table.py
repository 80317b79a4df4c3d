"""The results table: every column of the result rows, sortable, failures highlighted."""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from workbench.results import COLUMNS, human_bytes, human_seconds

FAILED = {"wrong": QColor("#ffd6d6"), "implausible": QColor("#f3d6ff"), "error": QColor("#ffe4c4"), "cancelled": QColor("#eeeeee"),
          "skipped": QColor("#eeeeee")}


class ResultsModel(QAbstractTableModel):
    """Rows appended as they arrive (plain dicts from the worker)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[dict] = []

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        col = COLUMNS[index.column()]
        value = row[col]
        if role == Qt.ItemDataRole.DisplayRole:
            if col in ("h2d_s", "d2h_s") and not row["host_memory"]:
                return "-"                      # CPU backends have no transfer phase
            return _display(col, value)
        if role == Qt.ItemDataRole.UserRole:          # the sort key: the raw value
            return value if not (isinstance(value, float) and math.isnan(value)) else -math.inf
        if role == Qt.ItemDataRole.BackgroundRole:
            return FAILED.get(row["status"])
        if role == Qt.ItemDataRole.ToolTipRole and row["message"]:
            return f"{row['status']}: {row['message']}"
        return None

    def append(self, row: dict) -> None:
        n = len(self.rows)
        self.beginInsertRows(QModelIndex(), n, n)
        self.rows.append(row)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.rows = []
        self.endResetModel()


def _display(col: str, value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    if col.endswith("_s"):
        return human_seconds(value)
    if col.endswith("_bytes"):
        return human_bytes(value)
    if col in ("gflops", "gbps"):
        return f"{value:.4g}"
    if col == "max_rel_error":
        return f"{value:.2e}"
    return str(value)


class ResultsTable(QTableView):
    def __init__(self, parent=None) -> None:
        super().__init__(parent, objectName="resultsTable")
        self.results = ResultsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.results)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setDefaultSectionSize(22)
