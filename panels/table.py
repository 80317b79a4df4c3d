"""The results table: every column of the result rows, with the compute median's 95 % interval and
sample count beside it, sortable, failures highlighted; when result sets are compared, the rows of
every set, each named by its set's label."""
from __future__ import annotations

import bisect
import math
from html import escape
from typing import TYPE_CHECKING, Any, Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from workbench.results.rows import COLUMNS
from workbench.views.table_text import cell_text, interval_text

if TYPE_CHECKING:        # annotations only: the table is shown before pandas is imported
    import pandas as pd

# Every status but "ok" is a failed point and highlighted; "implausible" (a time beyond what the
# hardware can do) has its own colour, and a status added later still gets OTHER.
FAILED = {"wrong": QColor("#ffd6d6"), "error": QColor("#ffe4c4"), "implausible": QColor("#dcd0ff"),
          "cancelled": QColor("#eeeeee")}
OTHER = QColor("#fff2a8")
DARK_TEXT = QColor("#111111")   # highlighted rows stay readable in the dark theme


#: Columns the table adds for reading, each after the column it reads beside: the compute median's 95 %
#: interval as one cell, and the count of samples it rests on (``n``, the terminal table's names).
DERIVED = {"compute_median_s": ("95 % CI", "n")}
SHOWN = tuple(c for column in COLUMNS for c in (column, *DERIVED.get(column, ())))


#: How many rows fitting the columns to their contents reads (resizeColumnsToContents).
FIT_ROWS = 40
#: How many columns one turn of the event loop fits (``ResultsTable.fit_columns``), and how far
#: apart (ms): two back to back, beside the charts' last update, stalled the GUI thread.
FIT_COLUMNS_PER_TURN = 1
FIT_EVERY_MS = 10
#: How soon rows laid out are repainted (ms): a turn later, not in the same turn (0 would be).
REPAINT_AFTER_MS = 1


def status_color(status: str) -> QColor | None:
    return None if status == "ok" else FAILED.get(status, OTHER)


#: How many rows of a compared set's table :class:`FrameRows` turns into dicts at a time.
BLOCK_ROWS = 64


class FrameRows(Sequence):
    """A compared set's rows as dicts, made from its table only where the view asks for one, a
    block of rows at a time: all of them at once (``to_dict("records")``) held the GUI thread for
    seconds as 5,000 compared rows were shown (issue 38), when a view shows some forty."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._blocks: dict[int, list[dict]] = {}

    def __len__(self) -> int:
        return len(self.frame)

    def __getitem__(self, n):
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(len(self)))]
        if n < 0:
            n += len(self)
        if not 0 <= n < len(self):
            raise IndexError(n)
        block, at = divmod(n, BLOCK_ROWS)
        rows = self._blocks.get(block)
        if rows is None:
            start = block * BLOCK_ROWS
            rows = self._blocks[block] = self.frame.iloc[start:start + BLOCK_ROWS].to_dict("records")
        return rows[at]


#: The roles ``ResultsModel.data`` answers.
_ROLES = frozenset((Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole, Qt.ItemDataRole.BackgroundRole,
                    Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.ToolTipRole))


class ResultsModel(QAbstractTableModel):
    """The main set's rows, then the rows of the sets compared with it; a first column, ``set``,
    names each row's set when there are several.

    The main set's rows are read in place from the list they live in (the window's workspace:
    :meth:`attach`), never copied: a point that arrives is announced (:meth:`appended`) and shown
    as one more row, the others left as they are."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list = []                        # the main set's: the live sweep's, or the file opened
        self._shown = 0                             # how many of them the views know of
        self.others: list[Sequence[dict]] = []      # each compared set's rows (the second set's first)
        self._starts: list[int] = [0]               # where each set's rows begin after the main set's
        self._columns = SHOWN
        self.labels = []                            # each set's label; [] for a single set

    # Qt asks these thousands of times a repaint or an insert (each index it makes asks both): made
    # once, not per call.
    @property
    def labels(self) -> list[str]:
        return self._labels

    @labels.setter
    def labels(self, labels: list[str]) -> None:
        self._labels = labels
        self._columns = (("set",) if labels else ()) + SHOWN

    def columns(self) -> tuple[str, ...]:
        return self._columns

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shown + self._starts[-1]

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._columns)

    def index(self, row: int, column: int, parent=QModelIndex()) -> QModelIndex:
        # Qt's own asks rowCount and columnCount, two calls into Python for every index it makes.
        if 0 <= row < self._shown + self._starts[-1] and 0 <= column < len(self._columns) and not parent.isValid():
            return self.createIndex(row, column)
        return QModelIndex()

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns()[section]
        return None

    def row_of(self, n: int) -> tuple[int, dict]:
        """(set index, row) of the table's ``n``-th row."""
        if n < self._shown:
            return 0, self.rows[n]
        n -= self._shown
        i = bisect.bisect_right(self._starts, n) - 1
        return i + 1, self.others[i][n - self._starts[i]]

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole) -> Any:
        # A repaint asks every visible cell for some eight roles, through Python: the five answered
        # here are told from the rest before any work (the table's repaint, 10-30 ms, shared the
        # GUI thread's turn with a chart's).
        if role not in _ROLES or not index.isValid():
            return None
        try:
            set_index, row = self.row_of(index.row())
        except IndexError:
            # A row the list no longer holds (replaced in place, the model told later): an
            # exception out of here, inside Qt's own call, can take the process down (rc 139).
            return None
        col = self._columns[index.column()]
        if col == "set":
            value = self.labels[set_index] if set_index < len(self.labels) else ""
        elif col == "95 % CI":
            value = row.get("compute_ci_lo_s", float("nan"))    # sorted by its lower end
        elif col == "n":
            value = row.get("repeats", 0)
        else:
            value = row.get(col, float("nan"))   # a column added after this row was made
        if role == Qt.ItemDataRole.DisplayRole:
            if col in ("h2d_s", "d2h_s") and not row["host_memory"]:
                return "-"                      # CPU backends have no transfer phase
            if col == "95 % CI":
                return interval_text(row.get("compute_ci_lo_s"), row.get("compute_ci_hi_s"))
            return _display(col, value)
        if role == Qt.ItemDataRole.UserRole:          # the sort key: the raw value
            return value if not (isinstance(value, float) and math.isnan(value)) else -math.inf
        if role == Qt.ItemDataRole.BackgroundRole:
            return status_color(row["status"])
        if role == Qt.ItemDataRole.ForegroundRole and row["status"] != "ok":
            return DARK_TEXT
        if role == Qt.ItemDataRole.ToolTipRole and row["message"]:
            # A tooltip is rich text when it looks like it: the message is escaped inside rich text
            # of our own, so that a name in it (numba<!--, <b>) shows as it is.
            return f"<p style='white-space:pre-wrap'>{escape(str(row['status']))}: {escape(str(row['message']))}</p>"
        return None

    def attach(self, rows: list) -> None:
        """Show ``rows`` (a list owned elsewhere, read in place) as the main set's; compared sets stay."""
        self.beginResetModel()
        self.rows, self._shown = rows, len(rows)
        self.endResetModel()

    def appended(self) -> None:
        """Rows were added at the end of the main set's list: shown after the others, before the
        compared sets'."""
        n = len(self.rows)
        if n > self._shown:
            self.beginInsertRows(QModelIndex(), self._shown, n - 1)
            self._shown = n
            self.endInsertRows()

    def append(self, row) -> None:
        """A point of the main set, for a model that owns its list (a table on its own)."""
        self.rows.append(row)
        self.appended()

    def set_rows(self, rows: list) -> None:
        """The main set's rows, all at once (a copy the model owns); compared sets stay."""
        self.attach(list(rows))

    def clear(self) -> None:
        """The main set's rows go (a list of its own from now on); compared sets stay."""
        if self._shown:
            self.beginRemoveRows(QModelIndex(), 0, self._shown - 1)
            self.rows, self._shown = [], 0
            self.endRemoveRows()
        else:
            self.rows = []

    def show_sets(self, rows: list, others: Sequence[Sequence[dict]], labels: list[str]) -> None:
        """Every row at once: the main set's (read in place), and each compared set's, read where
        the view asks for a row (a list of dicts, or :class:`FrameRows` of its table); ``labels``:
        one per set, or []."""
        self.beginResetModel()
        self.rows, self._shown = rows, len(rows)
        self.others = list(others)
        self._starts = [0]
        for set_rows in self.others:
            self._starts.append(self._starts[-1] + len(set_rows))
        self.labels = list(labels) if self.others else []
        self.endResetModel()

    def set_labels(self, labels: list[str]) -> None:
        """The sets' labels changed (a live set's facets are known once its first points are in)."""
        labels = list(labels) if self._starts[-1] else []
        if labels == self.labels:
            return
        if bool(labels) != bool(self.labels):
            self.beginResetModel()
            self.labels = labels
            self.endResetModel()
        else:
            self.labels = labels
            if self.rowCount():
                self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 0))


def _display(col: str, value: Any) -> str:
    """A cell's text, by the unit its column declares (``workbench.results.rows.Row``)."""
    return cell_text(col, value)


class ResultsTable(QTableView):
    #: A row activated: (backend, variant, size, set index) of its point (the window opens its timeline).
    pointClicked = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent, objectName="resultsTable")
        # Activated (a double click, or Enter): a single click selects a row, to copy it, without a
        # window opening over the table each time.
        self.activated.connect(self._row_clicked)
        self.results = ResultsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.results)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        # Rows in the order they were measured (and the sets in theirs) until a header is clicked.
        self.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setDefaultSectionSize(22)
        # The model names no row, so the rows' header showed nothing (2 px): shown, each row added
        # had it measure 200 rows' headers through the proxy, in Python (2-3 ms an update).
        self.verticalHeader().hide()
        # The scroll bars there from the start: one that appears as rows come resizes the viewport,
        # lays the table out again and repaints it whole, in one turn.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        # Columns fitted to the first rows only: Qt's default measures up to 1000 rows, every cell of
        # each through data() in Python, 2 s of the GUI thread at the end of a 500-point sweep.
        self.horizontalHeader().setResizeContentsPrecision(FIT_ROWS)
        self._to_fit: list[int] = []
        #: While this says so (the charts are being drawn: the window sets it), no column is fitted:
        #: a fit and a chart's step in one turn made the longest stall of a sweep's end.
        self.wait_while: Callable[[], bool] = lambda: False
        self._fitting = QTimer(self, interval=FIT_EVERY_MS, objectName="columnFitting")
        self._fitting.timeout.connect(self.fit_some)
        self._unseen = False        # the layout Qt has due is of rows appended below those shown
        for signal in (self.proxy.modelReset, self.proxy.layoutChanged, self.proxy.rowsInserted,
                       self.proxy.rowsRemoved, self.proxy.rowsMoved):
            signal.connect(self._seen)

    def _row_clicked(self, index) -> None:
        source = self.proxy.mapToSource(index)
        if not source.isValid():
            return
        set_index, row = self.results.row_of(source.row())
        self.pointClicked.emit((row.get("backend", ""), row.get("variant", "") or "", row.get("size", 0), set_index))

    def take_rows(self) -> None:
        """Rows added to the main set's list are shown: laid out now, repainted in a turn of their
        own (the table's layout, 5-7 ms, and its repaint, 8-10 ms, came in one turn, issue 19);
        rows that land below those in view change only the scroll bar: nothing is repainted."""
        before = self.results.rowCount()
        unseen = self._below_view(before)
        self.results.appended()
        if self.results.rowCount() == before or not self.updatesEnabled():
            return
        if unseen:
            self._unseen = True     # after appended(): its rowsInserted clears the flag
            self.updateGeometries()
            return
        self.doItemsLayout()
        self.setUpdatesEnabled(False)
        QTimer.singleShot(REPAINT_AFTER_MS, self, lambda: self.setUpdatesEnabled(True))

    def _below_view(self, first: int) -> bool:
        """Whether a row inserted at ``first`` (of the main set's: before any compared set's) is
        below every row in view, in the model's order (no column sorted)."""
        if self.proxy.sortColumn() >= 0 or not self.isVisible():
            return False
        last = self.rowAt(self.viewport().height() - 1)
        return 0 <= last < first        # -1: the rows end within the view, and the new ones show

    @Slot()
    def _seen(self) -> None:
        self._unseen = False

    def doItemsLayout(self) -> None:
        """Qt's layout of the rows, which repaints the whole view (every cell's data through Python:
        6-8 ms at 1600x1000); where what changed is only rows appended out of view, the scroll bar's
        range alone (``updateGeometries``): Qt's own, at the next turn, would repaint it all."""
        if self._unseen:
            self._unseen = False
            self.updateGeometries()
            return
        super().doItemsLayout()

    def fit_columns(self) -> None:
        """Fit every column to its contents, a few columns per turn of the event loop: the fifty
        columns at once held the GUI thread for 100 ms and more after a sweep of 500 points."""
        self._to_fit = list(range(self.model().columnCount()))
        self._fitting.start()

    def stop_fitting(self) -> None:
        """The columns left as they are (the window closes)."""
        self._to_fit = []
        self._fitting.stop()
        self._show_fitted()

    @property
    def columns_to_fit(self) -> tuple[int, ...]:
        """The columns a later turn of the fitting will fit, in order."""
        return tuple(self._to_fit)

    @Slot()
    def fit_some(self) -> None:
        """One turn of the fitting (the timer's): a few columns, none while ``wait_while`` says so."""
        if self.wait_while():             # the timer comes back in FIT_EVERY_MS
            self._show_fitted()           # what is fitted so far, while the charts are drawn
            return
        # Each column widened repainted the whole table in the next turn: thirty columns fitted
        # one a turn were thirty repaints of 10-28 ms after a compare of 2 x 5,000 points (issue
        # 38). The rows stay as painted until the last column is fitted, then repaint once.
        self.viewport().setUpdatesEnabled(False)
        for column in self._to_fit[:FIT_COLUMNS_PER_TURN]:
            self.resizeColumnToContents(column)
        del self._to_fit[:FIT_COLUMNS_PER_TURN]
        if not self._to_fit:
            self._fitting.stop()
            self._show_fitted()

    def _show_fitted(self) -> None:
        if not self.viewport().updatesEnabled():
            self.viewport().setUpdatesEnabled(True)     # one repaint, of every column fitted
