"""The results table while points arrive: rows appended below those in view change only the scroll
bar, so nothing of the view is laid out or repainted for them (issue 38: the table's layout and
repaint, every visible cell's data through Python, made the longest stall while 5,000 points came)."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, QObject, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from workbench.results import rows as results  # noqa: E402


def row(size: int) -> dict:
    t = 1e-6 * size
    return results.empty_row(workload="source_terms", backend="numpy", device="cpu", size=size, dtype="float32",
                             compute_median_s=t, total_median_s=t, status="ok")


class Paints(QObject):
    """Counts the Paint events a widget gets, and what asked the model for data meanwhile."""

    def __init__(self, widget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _settle() -> None:
    """What the last change posted (Qt's delayed layout, a 0 ms timer; the repaint it asks for) is handled."""
    for _ in range(5):
        QApplication.processEvents()


@pytest.fixture
def table(qtbot):
    from PySide6.QtWidgets import QVBoxLayout, QWidget
    from panels.table import ResultsTable
    # In a window, as the window holds it: a top-level view whose updates were turned off and on
    # again is not repainted on the offscreen platform.
    box = QWidget()
    qtbot.addWidget(box)
    t = ResultsTable()
    QVBoxLayout(box).addWidget(t)
    box.resize(600, 200)            # some five rows in view
    box.show()
    qtbot.waitExposed(box)
    yield t
    box.close()


def test_rows_appended_below_the_view_repaint_nothing_but_are_in_the_table(qtbot, table):
    live = [row(1024 + i) for i in range(50)]
    table.results.attach(live)
    _settle()
    paints, reads = Paints(table.viewport()), []
    data = table.results.data
    table.results.data = lambda *a: reads.append(a) or data(*a)
    bar = table.verticalScrollBar()
    before = bar.maximum()
    live.extend(row(4096 + i) for i in range(10))
    table.take_rows()
    assert table.updatesEnabled()                       # nothing held for a repaint a turn later
    assert table.model().rowCount() == 60 and bar.maximum() > before     # the scroll bar knows them
    _settle()
    assert paints.count == 0 and not reads
    table.scrollToBottom()                              # and they are there to see
    qtbot.waitUntil(lambda: table.rowAt(table.viewport().height() - 1) == 59, timeout=2_000)
    assert table.model().index(59, table.results.columns().index("size")).data() == "4105"


def test_rows_that_land_in_view_are_laid_out_and_repainted(qtbot, table):
    """A short table (the rows end in view) and a sorted one (a new row may land anywhere): the
    new rows are laid out now and the view repainted a turn later, as before."""
    live = [row(1024 + i) for i in range(3)]
    table.results.attach(live)
    _settle()
    paints = Paints(table.viewport())
    live.append(row(2048))
    table.take_rows()
    assert not table.updatesEnabled() and table.rowViewportPosition(3) >= 0
    qtbot.waitUntil(lambda: table.updatesEnabled() and paints.count > 0, timeout=2_000)

    live.extend(row(4096 + i) for i in range(50))
    table.take_rows()
    qtbot.waitUntil(table.updatesEnabled, timeout=2_000)
    table.sortByColumn(table.results.columns().index("size"), Qt.SortOrder.AscendingOrder)
    _settle()
    paints.count = 0
    live.append(row(1))                                 # sorted first: at the top, in view
    table.take_rows()
    assert not table.updatesEnabled()
    qtbot.waitUntil(lambda: table.updatesEnabled() and paints.count > 0, timeout=2_000)
    assert table.model().index(0, table.results.columns().index("size")).data() == "1"


def test_a_row_the_list_no_longer_holds_is_empty_to_qt_not_an_exception(qtbot, table):
    """The model reads the workspace's list in place; a cell asked for after the list shrank and
    before the model is told (a column fitted, a row painted) is empty: an exception out of
    ``data``, inside Qt's resizeColumnToContents, took the process down (rc 139, issue 38)."""
    rows = [row(2 ** i) for i in range(10, 20)]
    model = table.results
    model.attach(rows)
    table.take_rows()
    assert model.rowCount() == 10
    rows[:] = rows[:3]                              # replaced in place; the model not told yet
    last = model.index(9, 0)
    assert last.isValid() and model.data(last) is None
    for column in range(model.columnCount()):
        table.resizeColumnToContents(column)         # what fit_some does: no exception, no crash
    model.attach(rows)
    assert model.rowCount() == 3
