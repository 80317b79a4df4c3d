"""A lesson in the window: chosen from its menu, its experiment set up and run, its statement shown
above the summary, and exported as text and a chart."""
from __future__ import annotations

import logging
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QFileDialog, QWidget

from workbench.core.lazy import lazy_module
from workbench.catalog.backends import probe_all
from workbench.core import atomic
from workbench.core.sizes import fmt_bytes_exact, fmt_size
from workbench.results import files as result_files

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar
    from panels.experiment import ExperimentPanel
    from panels.jobs import Job
    from panels.plots import PlotsPanel
    from workbench.workspace import Workspace

lessons = lazy_module("workbench.lessons")     # after the first frame (panels.worker.PRELOAD)
log = logging.getLogger(__name__)


class LessonView(QObject):
    """The window's lessons: a lesson's experiment set up and handed to the workspace, its
    statement shown when it ends, and its export. ``busy`` says whether a sweep runs;
    ``renew_engine`` starts the engine afresh for a lesson that wants a cold one; ``job`` is the
    exports' (its child process draws the chart)."""

    completed = Signal(object)      # a lesson's statement (lessons.Statement) is shown
    exportable = Signal(bool)       # there is a lesson's statement with points to export

    def __init__(self, parent: QWidget, workspace: Workspace, experiment: ExperimentPanel, plots: PlotsPanel,
                 status: QStatusBar, job: Job, busy: Callable[[], bool], renew_engine: Callable[[], None]) -> None:
        super().__init__(parent)
        self.dialog_parent = parent
        self.workspace, self.experiment, self.plots, self.status, self.job = workspace, experiment, plots, status, job
        self.busy, self.renew_engine = busy, renew_engine
        #: Instead of a lesson's own sizes, repeats or budget (a quick try, a test): plan()'s keywords.
        self.overrides: dict = {}

    @Slot(str)
    def run_lesson(self, name: str) -> bool:
        """Set the experiment up as the lesson declares it and run its sweeps; when they end, the
        statement is shown (and ``lessonCompleted`` fires). False when a sweep is running."""
        if self.busy():
            return False
        ls = lessons.get(name)
        availability = self.experiment.availability or probe_all(deep=False)
        plan = lessons.plan(ls, availability, **self.overrides)
        self.show_plan(plan)
        log.info("lesson %s: %d sweep(s)%s", name, len(plan.specs),
                 "".join(f"; {b} not run: {why}" for b, why in plan.skipped))
        if ls.fresh_engine and plan.specs:
            self.renew_engine()
        # Nothing of it runs here: the workspace ends it at once, with what a GPU would show.
        self.workspace.run_lesson(plan)
        return True

    def show_plan(self, plan: lessons.Plan) -> None:
        """The experiment panel shows the lesson's (first) sweep: what is about to run."""
        e = self.experiment
        e.select_workload(plan.lesson.workload)
        spec = plan.specs[0] if plan.specs else None
        sizes = spec.sizes if spec else plan.lesson.sizes
        e.sizeFrom.setText(fmt_size(sizes[0]))
        e.sizeTo.setText(fmt_size(sizes[-1]))
        e.sizeSteps.setValue(len(sizes))
        if spec is not None:
            e.set_checked_backends(list(spec.backends))
            e.dtypeCombo.setCurrentText(spec.dtype)
            e.hostMemoryCombo.setCurrentText(spec.host_memory)
            e.repeatsSpin.setValue(spec.min_repeats)
            e.budgetSpin.setValue(spec.budget_s)
            e.noiseSpin.setValue(100 * spec.noise)
            e.deviceMemoryLimit.setText(fmt_bytes_exact(spec.device_memory_limit) if spec.device_memory_limit else "")

    @Slot(object)
    def show_statement(self, statement: lessons.Statement) -> None:
        """The lesson's statement, with the numbers just measured, above the summary; its marks on
        the plots; ``lessonCompleted`` for whoever waits on it."""
        verdict = {True: "#1b7a1b", False: "#b00020"}.get(statement.holds, "#666")
        html = (f"<b>Lesson: {escape(statement.title)}</b><br><span style='color: {verdict}'><b>"
                f"{escape(statement.verdict)}</b></span><br>"
                + "<br>".join(escape(s) for s in statement.sentences))
        self.plots.set_lesson(html, statement.marks)
        self.status.showMessage(f"Lesson {statement.title}: {statement.verdict}")
        log.info("lesson %s: %s %s", statement.lesson, statement.verdict, statement.text)
        self.exportable.emit(bool(self.workspace.rows))
        self.completed.emit(statement)

    @Slot()
    def ask_export_lesson(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.dialog_parent, "Export the lesson to")
        if folder:
            try:
                self.export_lesson(folder)
            except OSError as exc:          # a folder we may not write in: said where the user looks
                self.status.showMessage(f"Could not export the lesson to {folder}: {exc.strerror or exc}")

    def export_lesson(self, folder: str | Path) -> list[Path]:
        """The lesson's statement as text, and its chart with the statement as caption and the
        break-even marked (matplotlib, in the exports' child process: the same figure
        ``gpu-workbench lesson --chart`` writes)."""
        st, folder = self.workspace.statement, Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        text = folder / "lesson.txt"
        atomic.write_text(text, f"{st.caption()}\n")
        ls = lessons.get(st.lesson)
        rs = result_files.live(self.workspace.table.frame(), self.workspace.environment, {"lesson": st.as_settings()})
        measured = set(rs.frame.loc[rs.frame["status"] == "ok", "backend"])
        baseline = ls.baseline if ls.baseline in measured else None
        chart = self.job.child.run("workbench.views.matplotlib_charts:export", [rs], folder / "lesson.png", ls.chart,
                                         baseline_name=baseline)
        return [text, *chart]


def lesson_prefix(workspace: Workspace) -> str:
    """What the progress line says first while a lesson runs ("Lesson X, run 1 of 2 (...): "), else ""."""
    lesson = workspace.lesson
    if lesson is None:
        return ""
    p, run = lesson.plan, lesson.run
    label = p.run_label(run)
    return f"Lesson {p.lesson.title}" + (f", run {run + 1} of {len(p.specs)} ({label})" if label else "") + ": "
