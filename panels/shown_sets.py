"""The result sets on screen: the charts, the table and the environments they were measured in,
as a file opened, a session restored or compared sets show them; and a point's timeline, in a
window of its own, when a point of a chart or a row of the table is chosen."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

from panels.table import FrameRows
from workbench.results.files import ResultSet
from workbench.views import provenance
from workbench.workspace import events as ev

if TYPE_CHECKING:
    from panels.info import EnvironmentPanel
    from panels.plots import PlotsPanel
    from panels.presentation import Presentation
    from panels.table import ResultsTable
    from panels.timeline_view import TimelineView
    from panels.toolbar import RunToolBar
    from workbench.workspace import Workspace

log = logging.getLogger(__name__)


class ShownSets(QObject):
    """The workspace's sets on the charts, the table and the environment tab (a sweep's own points
    are ``SweepProgress``'s to show while it runs), and the timeline window, made at its first use."""

    shown = Signal()                # other sets are on screen, the table filled and the charts asked for
    timelineExportAsked = Signal(object)    # the timeline window's Export... (the point)

    def __init__(self, parent: QWidget, workspace: Workspace, plots: PlotsPanel, table: ResultsTable,
                 environment: EnvironmentPanel, toolbar: RunToolBar, presentation: Presentation) -> None:
        super().__init__(parent)
        self.timeline_parent = parent
        self.workspace, self.plots, self.table, self.environment = workspace, plots, table, environment
        self.progressBar, self.progressLabel, self.etaLabel = toolbar.progressBar, toolbar.progressLabel, toolbar.etaLabel
        self.presentation = presentation
        # A point clicked in any chart, or a row of the table: its timeline, in a window of its own
        # made at the first click (no start-up cost for a part most sessions never open).
        self.timeline: TimelineView | None = None
        plots.pointClicked.connect(self.show_timeline)
        table.pointClicked.connect(self.show_timeline)
        # What showing other sets leaves to later turns of the event loop (on_sets_shown).
        self.labels: list[str] = []             # the labels of the sets shown, for the table's step
        self._steps: list[Callable[[], None]] = []
        self._step = QTimer(self, singleShot=True, interval=0)
        self._step.timeout.connect(self._next_step)

    @Slot(object)
    def show_timeline(self, point: tuple) -> TimelineView:
        """The timeline of ``point`` (backend, variant, size, set index), in its window."""
        if self.timeline is None:
            from panels.timeline_view import TimelineView
            self.timeline = TimelineView(self.timeline_parent)
            self.timeline.apply_look(self.presentation.look)     # the look of now, and every later one
            self.presentation.changed.connect(self.timeline.apply_look)
            self.timeline.exportAsked.connect(self.timelineExportAsked)
        self.timeline.show_point(self.workspace.result_sets(), point)
        return self.timeline

    def forget_timeline(self) -> None:
        """Other sets on screen: the timeline shown was of a point of the ones before (its Export
        would find another file's point at its set's index), so it goes."""
        if self.timeline is not None:
            self.timeline.hide()

    def close(self) -> None:
        self._steps = []
        self._step.stop()
        if self.timeline is not None:
            self.timeline.close()

    def on_sets_shown(self, e: ev.SetsShown) -> None:
        """The workspace shows other sets: the table's model and what reads them in a glance (the
        chooser, the environments, the progress bar) now, then the table's columns fitted, then the
        charts, each in a turn of the event loop of its own: all at once, a compare of 2 x 5,000
        points held the GUI thread twice a frame (issue 38). The charts are made off the GUI thread and drawn a step per tick
        (``PlotsPanel.show_sets``); the table reads the compared rows only where it shows them."""
        ws = self.workspace
        # The workspace has just replaced the rows in the list the table's model reads in place
        # (``RowTable.replace``): the model is told now, in this call, and once (a sorted table
        # sorts anew at each reset: 0.3 s at 5,000 rows). Told only at the table's step, a turn
        # later, a column fitted (or a row painted) meanwhile asked the model for a row no longer
        # in the list: an IndexError in its ``data``, raised inside Qt's resizeColumnToContents,
        # crashed the process (rc 139 in ``ResultsTable.fit_some``).
        if e.restored:              # the interrupted session's points, beside the sets compared
            self.table.results.attach(ws.rows)
            self._steps = []
            self.plots.show_sets(ws.parts, ws.result_sets)
            return
        self.forget_timeline()
        sets = ws.result_sets()                 # the table the workspace was shown: not made again
        main = sets[0]
        self.labels = provenance.labels(sets)
        self.table.results.show_sets(ws.rows, [FrameRows(rs.frame) for rs in ws.compared], self.labels)
        self.plots.offer_baselines(sets, self.labels)
        self.show_environments(sets, self.labels)
        bar = self.progressBar
        # setValue repaints the bar at once, and with it the window (10 ms offscreen); disabled, it
        # waits for the window's next paint.
        bar.setUpdatesEnabled(False)
        bar.setRange(0, 1)
        bar.setValue(1 if ws.rows else 0)
        bar.setFormat(f"{len(ws.rows)} points shown")
        bar.setUpdatesEnabled(True)
        self.progressLabel.setText(f"Showing {where(main)}" + (f" and {len(ws.compared)} compared set(s)"
                                                                  if ws.compared else ""))
        self.etaLabel.setText("")
        self._steps = [self.table.fit_columns, self._show_charts]     # those of the sets shown before go
        self._step.start()

    @Slot()
    def _next_step(self) -> None:
        """The next step of showing the sets; none once a sweep has begun (it shows its own rows)."""
        if self.workspace.busy:
            self._steps = []
        if self._steps:
            self._steps.pop(0)()
        if self._steps:
            self._step.start()

    def _show_charts(self) -> None:
        self.plots.clear(held=True)
        self.plots.show_sets(self.workspace.parts, self.workspace.result_sets)
        self.shown.emit()

    def show_environments(self, sets: list[ResultSet], labels: list[str]) -> None:
        """The records the sets were measured with, where they are not this machine's."""
        self.environment.show_sources([(f"{label or 'Results'} ({where(rs)})", rs.environment)
                                       for rs, label in zip(sets, labels)
                                       if rs.environment != self.workspace.environment])


def where(rs: ResultSet) -> str:
    """Where a set comes from, in a few words: its file, else its host and date."""
    if rs.source:
        return Path(rs.source).name
    return ", ".join(x for x in (rs.host, rs.written[:10]) if x) or "this sweep"
