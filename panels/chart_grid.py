"""Where the plots panel's charts sit: a grid of two rows of three, one chart alone on demand,
and the transfer chart's cell given away where nothing moves between host and device."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QGridLayout, QWidget


class ChartGrid(QGridLayout):
    """The charts' grid, filled by the first ``arrange``. ``cells`` maps each chart to the widget it
    sits in (the speedup chart shares its cell with the baseline chooser), in reading order (runtime,
    speedup, transfer; memory, first call); ``alone`` the charts shown only alone to their actions."""

    def __init__(self, cells: dict[QWidget, QWidget], summary: QWidget, transfer: QWidget,
                 alone: dict[QWidget, QAction]) -> None:
        super().__init__()
        self.setSpacing(4)
        self.cells, self.summary, self.transfer, self.alone = cells, summary, transfer, alone
        self.solo: QWidget | None = None
        self.transfers_shown: bool | None = None     # arrange() gives the cell away without a GPU series
        for chart in cells:              # a double click shows a chart alone, or every chart again
            chart.viewport().installEventFilter(self)

    def toggle_solo(self, chart: QWidget) -> None:
        """Show ``chart`` alone in the panel, or, if it is alone, every chart again."""
        self.solo = None if self.solo is chart else chart
        for c, cell in self.cells.items():
            cell.setVisible((self.solo is None or c is self.solo) and (c is not self.transfer or self.transfers_shown)
                            and (c not in self.alone or self.solo is c))
        for alone, action in self.alone.items():
            if action.isChecked() != (self.solo is alone):
                action.setChecked(self.solo is alone)
        self.summary.setVisible(self.solo is None)
        # Rows and columns left empty would keep their stretch (and their share of the space).
        self.stretch(self.getItemPosition(self.indexOf(self.cells[chart])) if self.solo else None)

    def show_alone(self, chart: QWidget, on: bool) -> None:
        """``chart`` alone in the charts' place, or every other chart again."""
        if bool(on) != (self.solo is chart):
            self.toggle_solo(chart if on or self.solo is None else self.solo)

    def stretch(self, where: tuple | None = None) -> None:
        """Each chart's column and row an equal share; the summary's column, without the transfer
        chart, a smaller one; only the solo chart's row and column where one is shown alone."""
        shares = (1, 1, 1) if self.transfers_shown else (2, 2, 1)
        for col, share in enumerate(shares):
            self.setColumnStretch(col, share if where is None or col == where[1] else 0)
        for r in range(2):
            self.setRowStretch(r, 1 if where is None or r == where[0] else 0)

    def arrange(self, transfers: bool) -> None:
        """The transfer chart only where some series moves data between host and device: on a CPU
        sweep it would stay empty, so its cell goes to the other charts (two columns of two) and
        the summary takes the third column whole."""
        if transfers == self.transfers_shown:
            return
        solo = self.solo
        if solo is not None:                        # every chart again, placed anew ...
            self.toggle_solo(solo)
        self._place(transfers)
        # ... and the chart chosen alone alone again, where it is still placed: sets are drawn a
        # step per tick (issue 38), so a chart chosen alone as a file opens is chosen before this.
        if solo is not None and (solo is not self.transfer or transfers):
            self.toggle_solo(solo)

    def _place(self, transfers: bool) -> None:
        if self.transfers_shown is None:         # every chart into the panel, hidden or not
            self.addWidget(self.transfer, 0, 2)
            for chart in self.alone:             # only alone (show_alone)
                self.addWidget(chart, 0, 0, 2, 3)
                chart.setVisible(False)
        self.transfers_shown = transfers
        runtime, speed, memory, first = (c for c in self.cells if c is not self.transfer and c not in self.alone)
        for w in (runtime, speed, memory, first, self.transfer, self.summary):
            self.removeWidget(self.cells.get(w, w))
        self.addWidget(self.cells[runtime], 0, 0)
        self.addWidget(self.cells[speed], 0, 1)
        self.addWidget(self.cells[memory], 1, 0)
        self.addWidget(self.cells[first], 1, 1)
        if transfers:
            self.addWidget(self.transfer, 0, 2)
            self.addWidget(self.summary, 1, 2)
        else:
            self.addWidget(self.summary, 0, 2, 2, 1)
        self.transfer.setVisible(transfers)
        self.stretch()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonDblClick:
            for chart in self.cells:
                if chart.viewport() is watched:
                    self.toggle_solo(chart)
                    return True
        return super().eventFilter(watched, event)
