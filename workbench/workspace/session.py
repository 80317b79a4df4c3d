"""The workspace: what a session is, held once, without Qt.

As napari's ``ViewerModel`` and Orange's ``TaskState``: the window only shows a :class:`Workspace`
and sends it commands, and the command line drives the same object, so a sweep is checked, its
rows collected and saved in one place. It holds the sweep (its spec, settings and rows), the result
sets beside it, the environment record, the journal or results file, the run state, a lesson in
progress and its listeners (``workbench.workspace.events``). It does not run the engine: its
driver passes ``start`` and ``stop`` (the window's worker thread, or :meth:`Workspace.drive`) and
feeds every message the engine sends to :meth:`Workspace.handle`.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from workbench.catalog.workloads import REGISTRY
from workbench.core.lazy import lazy_module
from workbench.core import atomic
from workbench.measure import engine, protocol
from workbench.measure.environment import merged
from workbench.results.files import ResultSet
from workbench.results.journal import Journal, Journals, Orphan
from workbench.results.out import ResultsOut
from workbench.results.rows import Row
from workbench.results.sets import SetParts, sets_of
from workbench.results.table import RowTable
from workbench.workspace import events as ev
from workbench.workspace.events import RunState
from workbench.workspace.experiment import Checked, Experiment, check, memory_notes

if TYPE_CHECKING:
    import pandas as pd

    from workbench.measure.engine import SweepSpec
    from workbench.measure.runner import Runner

# The lessons (a dozen modules, the summary's sentences) load at a lesson's first use: the window's
# first frame shows their titles in a menu filled after it, not their statements.
lessons = lazy_module("workbench.lessons")
log = logging.getLogger(__name__)


def points_of(spec: SweepSpec) -> list[tuple]:
    """The points of a checked sweep as results files key them (workload, backend, size, dtype,
    variant), in the order they run: planned, not checked again (``experiment.check`` did)."""
    workload = REGISTRY.get(spec.workload)
    return [(spec.workload, b, n, spec.dtype, v) for n, v, b in engine.plan(spec, workload)]


def rows_of(frame: pd.DataFrame) -> list[Row]:
    """A result table's rows as the workspace keeps them (:meth:`Workspace.show_sets`), made where the
    caller chooses: the window's file job makes them off the GUI thread (0.7 s at 5,000 rows)."""
    return [Row.of(r) for r in frame.to_dict("records")]


class Busy(RuntimeError):
    """A command a running sweep does not allow (open, show, restore, run another)."""


@dataclasses.dataclass
class LessonRun:
    """A lesson being run: its plan, the run being measured, when it began."""

    plan: lessons.Plan
    run: int = 0
    t0: float = dataclasses.field(default_factory=time.perf_counter)


class Workspace:
    """One session: settings, rows, sets, journal or results file, run state, events."""

    def __init__(self, *, start: Callable[[SweepSpec], None] | None = None, stop: Callable[[], None] | None = None,
                 journals: Journals | None = None, out: ResultsOut | None = None,
                 environment: Mapping[str, Any] | None = None) -> None:
        self._start = start
        self._stop = stop
        self._queued: list[tuple[SweepSpec, tuple[int, ...]]] = []     # specs for drive(), where no start is given
        self.listeners = ev.Listeners()
        self.table = RowTable()
        self.origin: ResultSet | None = None     # where the rows come from: None for a sweep measured here
        self.compared: list[ResultSet] = []      # the sets overlaid on the main one
        self.environment: dict = dict(environment or {})   # this machine's record, as the engine read it
        self.spec: SweepSpec | None = None                    # the sweep being measured (or last measured)
        self.settings: dict = {}                 # its settings, as result files keep them
        self.state = RunState.IDLE
        self.total = 0
        self.run_start = 0                       # where this run's rows begin (a lesson's runs add up)
        self.troubles: list[str] = []
        self.cancelled = False
        self.lesson: LessonRun | None = None
        self.statement: lessons.Statement | None = None
        self.out = out
        self.journals = journals
        # What killed sessions left is read before this one's journal exists (another live
        # window's journal is locked and left alone).
        self.orphans: list[Orphan] = journals.orphans() if journals is not None else []
        #: What was found at start and could not be used, one line each: the window logs them.
        self.notes: list[str] = list(journals.notes) + [o.said for o in self.orphans if o.said] \
            if journals is not None else []
        self.journal: Journal | None = None
        if journals is not None:
            try:
                self.journal = journals.new()
            except OSError as exc:       # the journals folder is a file, a dangling link, gone read-only
                self.notes.append(f"no journal this session (its points are not kept through a kill): "
                                  f"{atomic.why(exc)}")
        self._t0 = 0.0
        self._handlers = {
            protocol.SweepStarted: self._sweep_started, protocol.PointStarted: self._point_started,
            protocol.PointFinished: self._point_finished, protocol.SweepFinished: self._sweep_finished,
            protocol.SweepError: self._trouble, protocol.EngineDied: self._trouble,
            protocol.EngineFailed: self._trouble, protocol.ClusterLost: self._trouble,
            protocol.Environment: self._environment,
        }

    # --- what it holds -------------------------------------------------------------------------

    @property
    def rows(self) -> list[Row]:
        """The main set's rows: the live sweep's, or those of the file opened."""
        return self.table.rows

    @property
    def busy(self) -> bool:
        return self.state is not RunState.IDLE

    @property
    def done(self) -> int:
        """Points of the run in progress (or last run) finished."""
        return len(self.table) - self.run_start

    def result_sets(self) -> list[ResultSet]:
        """Every set shown, the main one first: what the plots, the table and every export show."""
        if not self.table.rows and self.origin is None and not self.compared:
            return []
        return sets_of(self.table.frame(), self.origin, self.compared, self.environment, self.settings)

    def parts(self) -> SetParts:
        """What :meth:`result_sets` makes them of, unmade: taken in an instant (the window's plots
        send them to the process that makes the charts, ``workbench.views.spec_process``)."""
        rows = self.table.rows
        return SetParts(rows, len(rows), self.table.epoch, self.origin, tuple(self.compared),
                        self.environment, self.settings)

    def listen(self, listener: Callable[[Any], Any]) -> None:
        self.listeners.add(listener)

    # --- checking and running ------------------------------------------------------------------

    @staticmethod
    def check(experiment: Experiment, usable=None) -> Checked:
        """Whether ``experiment`` can run, every problem named by its setting (``experiment.check``)."""
        return check(experiment) if usable is None else check(experiment, usable)

    def run(self, spec: SweepSpec, *, skip: Sequence[int] = (), journal_settings: Mapping[str, Any] | None = None,
            lesson: LessonRun | None = None) -> None:
        """Start a sweep of ``spec`` (checked: ``check``): its rows replace the main set's; the
        sets compared stay. ``skip``: indices of points not to run (a resumed file's)."""
        if self.busy:
            raise Busy("a sweep is running")
        self.lesson = lesson
        self.statement = None
        self.table.clear()
        self.origin = None
        self.spec = spec
        self.settings = engine.settings_of(spec)
        self.troubles = []
        self.cancelled = False
        self._t0 = time.perf_counter()
        if self.journal is not None:
            self.journal.sweep(dict(journal_settings or self.settings))
        if self.out is not None:
            self.out.begin(set(points_of(spec)))
        self._begin(spec, first=True, skip=skip)

    def run_lesson(self, plan: lessons.Plan) -> None:
        """A lesson's sweeps one after another, their rows one set; its statement when they end."""
        if self.busy:
            raise Busy("a sweep is running")
        lesson = LessonRun(plan)
        if not plan.specs:                   # nothing of it runs here: say what a GPU would show
            self.lesson, self.statement = lesson, None
            self.table.clear()
            self.origin, self.cancelled, self.troubles = None, False, []
            self._end(0.0)
            return
        first = plan.specs[0]
        self.run(first, journal_settings={**engine.settings_of(first), "lesson": plan.lesson.name}, lesson=lesson)

    def _begin(self, spec: SweepSpec, first: bool, skip: Sequence[int] = ()) -> None:
        self.spec = spec
        self.run_start = len(self.table)
        self.total = 0
        self._set_state(RunState.RUNNING)
        notes = tuple(memory_notes(spec))
        self.listeners.emit(ev.SweepBegan(spec, first, notes))
        if self._start is not None:
            self._start(spec) if not skip else self._start(spec, tuple(skip))
        else:
            self._queued.append((spec, tuple(skip)))

    def stop(self) -> None:
        """Ask the sweep to stop: the point in progress ends (kept, if it has its samples), then the sweep."""
        if self.state is RunState.RUNNING:
            self._set_state(RunState.STOPPING)
            if self._stop is not None:
                self._stop()

    def drive(self, runner: Runner) -> None:
        """Run what was started through ``runner`` (``Supervisor``, ``InProcess``) here, feeding its
        messages to :meth:`handle`, until nothing is left to run: for a caller without an event loop
        (the command line, tests). The window drives its workspace from its worker thread instead."""
        while self._queued:
            spec, skip = self._queued.pop(0)
            t0, ended = time.perf_counter(), False
            for message in (runner.run(spec, list(skip)) if skip else runner.run(spec)):
                ended = ended or isinstance(message, protocol.SweepFinished)
                self.handle(message)
            if not ended:           # a runner that stopped short still ends the sweep: the file is written
                self.handle(protocol.SweepFinished(True, time.perf_counter() - t0))

    def handle(self, message: Any) -> None:
        """A message of the engine (``workbench.measure.protocol``). Those the workspace keeps nothing
        of (a log line, the backends' probes) go on to its listeners as they are."""
        handler = self._handlers.get(type(message))
        if handler is not None:
            handler(message)
        else:
            self.listeners.emit(message)

    # --- the engine's messages -----------------------------------------------------------------

    def _sweep_started(self, m: protocol.SweepStarted) -> None:
        self.total = m.total
        self.listeners.emit(ev.SweepPlanned(m.spec, m.total))

    def _point_started(self, m: protocol.PointStarted) -> None:
        self.listeners.emit(ev.PointBegan(m.backend, m.size, m.variant, self.done, self.total))

    def _point_finished(self, m: protocol.PointFinished) -> None:
        """Row collection, once: tagged with its lesson run, made a Row, kept, saved, announced."""
        row = m.row if self.lesson is None else lessons.tag(m.row, self.lesson.plan, self.lesson.run)
        row = self.table.append(row)
        if self.out is not None:
            problem = self.out.add(row, self.environment, self.settings)
            if problem:
                self.listeners.emit(ev.SaveFailed(problem))
        self.listeners.emit(ev.PointAdded(row, len(self.table) - 1, self.done, self.total))

    def _sweep_finished(self, m: protocol.SweepFinished) -> None:
        self.cancelled = m.cancelled
        p = self.lesson
        if p is not None and not m.cancelled and self.state is RunState.RUNNING and p.run + 1 < len(p.plan.specs):
            p.run += 1                       # the lesson goes on: its next run joins these rows
            self._begin(p.plan.specs[p.run], first=False)
            return
        elapsed = time.perf_counter() - p.t0 if p is not None else m.elapsed_s
        self._end(elapsed)

    def _end(self, elapsed: float) -> None:
        p = self.lesson
        if p is not None:
            frame = self.table.frame()
            # Stopped, or short of points (an engine that died took some): the statement says so.
            planned = sum(len(points_of(spec)) for spec in p.plan.specs)
            self.statement = lessons.explain(p.plan, frame, stopped=self.cancelled or len(frame) < planned)
            # In the sweep's settings, every export of this set (results, charts, report) carries it.
            self.settings = dict(self.settings, lesson=self.statement.as_settings())
        # A lesson's file is the record of its statement: one that measured nothing writes none.
        if self.out is not None and (p is None or len(self.table)):
            problem = self.out.finish(self.environment, self.settings)
            if problem:
                self.listeners.emit(ev.SaveFailed(problem, final=True, unsaved=len(self.out.all_rows())))
        self._set_state(RunState.IDLE)
        self.listeners.emit(ev.SweepEnded(self.cancelled, elapsed, self.done, self.total, tuple(self.troubles),
                                          self.statement))
        self.lesson = None

    def _trouble(self, m: Any) -> None:
        text = m.message
        self.troubles.append(text)
        what = {protocol.SweepError: "refused", protocol.EngineDied: "died",
                protocol.ClusterLost: "lost"}.get(type(m), "failed")
        self.listeners.emit(ev.Trouble(text, getattr(m, "traceback", ""), what))

    def _environment(self, m: protocol.Environment) -> None:
        # Merged, not replaced: a sweep with cudf-pandas ends in its own engine, whose record lacks
        # the limits the shared engine measured for the other backends' points.
        self.environment = merged(self.environment, m.record)
        self.listeners.emit(ev.EnvironmentRead(self.environment))

    def _set_state(self, state: RunState) -> None:
        if state is not self.state:
            self.state = state
            self.listeners.emit(ev.StateChanged(state))

    # --- sets shown beside or instead of a sweep -----------------------------------------------

    def show_sets(self, sets: Sequence[ResultSet], rows: Sequence[Row] | None = None) -> None:
        """Show result sets as if they had just been measured: the first is the main set, the
        others compared with it. ``rows``: the main set's, made already (``rows_of``), where it
        replaces the one shown."""
        if self.busy:
            raise Busy("a sweep is running")
        if not sets:
            return
        main, self.compared = sets[0], list(sets[1:])
        # The main set is the one shown already (sets compared with it, or closed): its rows stay
        # as they are; made anew, 5,000 rows took 0.7 s of the window's GUI thread (issue 38).
        if not (self.table.rows and not self.table.frame_is_behind() and main.frame is self.table.frame()):
            self.table.replace(rows_of(main.frame) if rows is None else rows, frame=main.frame)
        self.origin = main                 # its header: environment, settings, host, time, file
        self.statement = None
        self.listeners.emit(ev.SetsShown(len(sets)))

    def restore(self) -> int:
        """The interrupted session on offer, shown as if its sweep had just ended; its points go into
        this session's journal first, so that a kill now loses them no more than before. How many."""
        if self.busy:
            raise Busy("a sweep is running")
        if not self.orphans:
            return 0
        orphan = self.orphans[0]
        self.table.replace(orphan.rows)
        self.origin, self.settings = None, dict(orphan.settings)
        if self.journal is not None:
            self.journal.sweep(dict(orphan.settings))
            self.journal.extend(orphan.rows)
        self.journals.settle(self.orphans.pop(0))
        self.listeners.emit(ev.SetsShown(1, restored=True))
        return len(self.table)

    def discard(self) -> None:
        """The interrupted session on offer is not wanted: never offered again."""
        if self.orphans:
            self.journals.settle(self.orphans.pop(0))

    def close(self) -> None:
        """The session ended normally: nothing to offer next time."""
        if self.journal is not None:
            self.journal.close()
