"""Drive one window through a session the way a speaker does: by object name, with the mouse
where it matters, waiting on the window's signals (never sleeping).

Used by the long-session tests (through qtbot), the Xvfb demo and the long-session benchmark
(through a local event loop): the same steps and the same checks everywhere.
"""
from __future__ import annotations

from workbench.views.presets import KINDS  # noqa: E402

import contextlib
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget, QPushButton, QSpinBox, QTreeWidget

# Tiny sizes per workload (its own unit), and the CPU backends that run it.
TINY = {
    "matmul": ("16", "64", ("numpy", "numba")),
    "fft": ("2^6", "2^10", ("numpy",)),
    "source_terms": ("2^8", "2^12", ("numpy", "numba")),
    "flux": ("16", "64", ("numpy", "numba")),
    "reduction": ("2^8", "2^12", ("numpy", "numba")),
    "stencil": ("16", "64", ("numpy", "numba")),
    "divergence": ("2^8", "2^12", ("numpy", "numba")),
    "transfer": ("2^10", "2^14", ("numpy",)),
    "groupby": ("1,000", "4,000", ("pandas",)),
    "merge": ("1,000", "4,000", ("pandas",)),
    "filter": ("1,000", "4,000", ("pandas",)),
    "sort": ("1,000", "4,000", ("pandas",)),
}
TIMEOUT_MS = 180_000


def open_files(qtbot, w, paths, compare: bool = False, drawn: bool = True, timeout: int = 60_000) -> list:
    """``paths`` opened in ``w`` (``compare``: compared with what it shows) as File > Open does it:
    read by the file job, then shown (``files.opened``, whose sets this returns); ``drawn``: and
    their charts drawn too (``plots.updated``, which follows: they are made off the GUI thread)."""
    with qtbot.waitSignal(w.files.opened, timeout=timeout) as shown:
        assert (w.files.compare_with if compare else w.files.open_results)([*paths])
    if drawn:
        with qtbot.waitSignal(w.plots.updated, timeout=timeout):
            pass
    return shown.args[0]


class LoopWaiter:
    """qtbot's waitSignal/waitUntil for scripts: a local event loop with a deadline."""

    @contextlib.contextmanager
    def signal(self, sig, timeout: int = TIMEOUT_MS):
        loop = QEventLoop()
        got: list = []
        blocker = SimpleNamespace(args=None)     # as qtbot's blocker: the signal's arguments

        def caught(*args):
            got.append(args)
            blocker.args = list(args)
            loop.quit()
        sig.connect(caught)
        try:
            yield blocker
            if not got:
                QTimer.singleShot(timeout, loop.quit)
                loop.exec()
            if not got:
                raise TimeoutError(f"no signal within {timeout} ms")
        finally:
            sig.disconnect(caught)

    def until(self, predicate, timeout: int = TIMEOUT_MS) -> None:
        loop = QEventLoop()
        poll = QTimer(interval=20)
        poll.timeout.connect(lambda: predicate() and loop.quit())
        poll.start()
        QTimer.singleShot(timeout, loop.quit)
        if not predicate():
            loop.exec()
        poll.stop()
        if not predicate():
            raise TimeoutError(f"condition not met within {timeout} ms")


class QtBotWaiter:
    def __init__(self, qtbot) -> None:
        self.qtbot = qtbot

    def signal(self, sig, timeout: int = TIMEOUT_MS):
        return self.qtbot.waitSignal(sig, timeout=timeout)

    def until(self, predicate, timeout: int = TIMEOUT_MS) -> None:
        self.qtbot.waitUntil(predicate, timeout=timeout)


@dataclass
class Sweep:
    workload: str
    backends: tuple[str, ...]
    lo: str
    hi: str
    steps: int
    dtype: str = "float32"
    repeats: int = 1
    stop: bool = False            # press Stop after the first point
    switch_to: str = ""           # click this workload while the sweep runs (must be refused)
    baseline: str = ""            # choose this speedup baseline while points arrive


@dataclass
class Session:
    window: object
    wait: object
    log: list = field(default_factory=list)      # what happened, for a failing test's message
    sweeps: int = 0
    # Called as a sweep starts and once it is drawn (the benchmark times the GUI thread there).
    before_run: object = None
    after_run: object = None

    def child(self, cls, name):
        found = self.window.findChild(cls, name)
        assert found is not None, name
        return found

    # --- the user's gestures ---------------------------------------------------------------

    def click_workload(self, name: str) -> None:
        tree = self.child(QTreeWidget, "workloadList")
        for i in range(tree.topLevelItemCount()):
            top = tree.topLevelItem(i)
            for j in range(top.childCount()):
                item = top.child(j)
                if item.data(0, Qt.ItemDataRole.UserRole) == name:
                    tree.scrollToItem(item)
                    QTest.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(item).center())
                    return
        raise KeyError(name)

    def set_up(self, s: Sweep) -> None:
        if not self.window.experimentDock.isVisible():     # folded away by presentation mode
            self.window.experimentDock.toggleViewAction().trigger()
        self.click_workload(s.workload)
        assert self.window.experiment.workload_name() == s.workload, self.log
        lst = self.child(QListWidget, "backendList")
        for i in range(lst.count()):
            item = lst.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.data(Qt.ItemDataRole.UserRole) in s.backends
                               else Qt.CheckState.Unchecked)
        self.child(QLineEdit, "sizeFrom").setText(s.lo)
        self.child(QLineEdit, "sizeTo").setText(s.hi)
        self.child(QSpinBox, "sizeSteps").setValue(s.steps)
        self.child(QComboBox, "dtypeCombo").setCurrentText(s.dtype)
        self.child(QSpinBox, "repeatsSpin").setValue(s.repeats)
        self.window.experiment.budgetSpin.setValue(0.0)

    def run(self, s: Sweep) -> bool:
        """One sweep from Run to its last drawn point; returns whether it was cancelled."""
        w = self.window
        self.log.append(s)
        self.set_up(s)
        run = self.child(QPushButton, "runButton")
        assert run.isEnabled(), (w.experiment.problem, self.log)
        sizes_text = (w.experiment.sizeFrom.text(), w.experiment.sizeTo.text())
        if self.before_run:
            self.before_run()
        with self.wait.signal(w.sweepCompleted) as done:
            with self.wait.signal(w.pointAdded):
                QTest.mouseClick(run, Qt.MouseButton.LeftButton)
            if s.switch_to:
                self.click_workload(s.switch_to)      # refused: the panel is locked while it runs
                assert w.experiment.workload_name() == s.workload, self.log
                assert (w.experiment.sizeFrom.text(), w.experiment.sizeTo.text()) == sizes_text
            if s.baseline and w.controller.running:
                combo = self.child(QComboBox, "speedupBaseline")
                idx = combo.findText(s.baseline)
                if idx >= 0:
                    combo.setCurrentIndex(idx)
            if s.stop:
                QTest.mouseClick(self.child(QPushButton, "stopButton"), Qt.MouseButton.LeftButton)
        if self.after_run:
            self.after_run()
        self.sweeps += 1
        cancelled = bool(done.args[0]) if getattr(done, "args", None) else bool(w.workspace.cancelled)
        self.check(s, cancelled)
        return cancelled

    def export(self, folder: Path) -> None:
        from workbench.results import files as result_files
        w = self.window
        for suffix in ("csv", "json"):        # written by the files' job: its path comes with ``exported``
            with self.wait.signal(w.files.exported) as results:
                assert w.files.export_results(str(folder / f"r{self.sweeps}.{suffix}"))
            frame, env = result_files.load(results.args[0][0])
            assert len(frame) == len(w.rows) and list(frame["size"]) == [r["size"] for r in w.rows]
        with self.wait.signal(w.files.exported) as written:
            assert w.files.export_chart(folder / f"c{self.sweeps}.svg")
        charts = written.args[0]
        assert len(charts) == len(KINDS) and all(p.stat().st_size > 1000 for p in charts)

    # --- what must hold after every sweep ----------------------------------------------------

    def check(self, s: Sweep, cancelled: bool) -> None:
        w = self.window
        rows = w.rows
        table = w.resultsTable
        assert table.model().rowCount() == len(rows) > 0, self.log
        assert [r["size"] for r in table.results.rows] == [r["size"] for r in rows]
        assert {r["workload"] for r in rows} == {s.workload}, self.log        # nothing half-applied
        assert {r["backend"] for r in rows} <= set(s.backends)
        assert {r["dtype"] for r in rows} == {s.dtype}
        if not cancelled:
            assert len(rows) == w.total, self.log
            assert all(r["status"] == "ok" for r in rows), [r["message"] for r in rows if r["status"] != "ok"]
        else:
            assert len(rows) <= w.total
        assert w.runButton.isEnabled() and not w.stopButton.isEnabled()
        assert w.experiment.isEnabled()
        self.check_plots(rows)

    def check_plots(self, rows: list[dict]) -> None:
        """Every chart shows exactly this sweep's ok points, nothing of an earlier sweep."""
        w = self.window
        ok = [r for r in rows if r["status"] == "ok"]
        expected: dict = {}
        for r in ok:
            expected.setdefault((r["backend"], r["variant"]), []).append(r["size"])
        for chart, kind in ((w.runtimePlot, "compute"), (w.firstCallPlot, "first"), (w.firstCallPlot, "steady")):
            drawn = {(k[1], k[2]): sorted(x.tolist()) for k, (x, _) in chart.points().items() if k[0] == kind and len(x)}
            assert drawn == {k: sorted(v) for k, v in expected.items()}, (chart.objectName(), self.log)
        for chart in (w.memoryPlot, w.speedupPlot):
            stale = [k for k, (x, _) in chart.points().items() if len(x) and (k[1], k[2]) not in expected]
            assert not stale, (chart.objectName(), stale)
            for k, (x, _) in chart.points().items():
                assert set(np.asarray(x).tolist()) <= set(expected.get((k[1], k[2]), [])), (chart.objectName(), k)
        for key, band in w.runtimePlot.bands.items():      # a band only where its series was drawn
            item = w.runtimePlot.band_items[key]
            assert len(item.xData) == 2 * len(band) and set(band.x) <= set(expected.get((key[1], key[2]), []))
        base = w.speedupPlot.baseline
        if base and (base, "") in expected:        # the baseline is the line at 1, not a series
            assert not len(w.speedupPlot.points().get(("compute", base, ""), ([], []))[0])
            others = any(b != base for b, _ in expected)
            assert w.speedupPlot.marks_drawn("reference") == ([(1.0, "")] if others else [])
        bars = [b[0] for drawn in w.transferPlot.bars_drawn().values() for b in drawn]
        assert set(bars) <= {r["size"] for r in ok}


def long_session(tmp: Path | None = None) -> list[Sweep]:
    """15+ sweeps over every workload, both dtypes, growing and shrinking ranges, Stops,
    refused workload switches and baseline changes; exports between some of them."""
    names = list(TINY)
    plan = []
    for i, name in enumerate(names):
        lo, hi, backends = TINY[name]
        # numba compiles once per workload and dtype in the engine: keep it to a few sweeps.
        use = backends if (i % 3 == 0) else tuple(b for b in backends if b != "numba")
        plan.append(Sweep(name, use, lo, hi, steps=2 + i % 3, dtype=("float32", "float64")[i % 2],
                          switch_to=names[(i + 5) % len(names)] if i % 4 == 1 else "",
                          baseline=use[-1] if len(use) > 1 else ""))
    # Growing, then shrinking ranges of one workload; a long one stopped in the middle.
    plan += [Sweep("source_terms", ("numpy",), "2^8", "2^16", 5, "float64"),
             Sweep("source_terms", ("numpy",), "2^8", "2^10", 2, "float64"),
             Sweep("matmul", ("numpy",), "32", "256", 8, "float64", repeats=400, stop=True),
             Sweep("sort", ("pandas",), "1,000", "64,000", 4, "float32"),
             Sweep("matmul", ("numpy", "numba"), "16", "32", 1, "float32", baseline="numba")]
    return plan


def random_session(seed: int, n: int = 8) -> list[tuple[str, object]]:
    """A seeded sequence of user actions: sweeps of random shape, Stops, switches, exports,
    baseline changes, presentation and theme toggles, a chart alone, a window resize."""
    rng = random.Random(seed)
    actions: list[tuple[str, object]] = []
    for _ in range(n):
        kind = rng.choice(["sweep", "sweep", "sweep", "export", "presentation", "dark", "solo", "resize"])
        if kind == "sweep":
            name = rng.choice(list(TINY))
            lo, hi, backends = TINY[name]
            use = tuple(b for b in backends if b != "numba" or rng.random() < 0.3) or backends[:1]
            actions.append(("sweep", Sweep(name, use, lo, hi, steps=rng.randint(1, 4),
                                           dtype=rng.choice(["float32", "float64"]),
                                           repeats=rng.choice([1, 2, 300]), stop=rng.random() < 0.3,
                                           switch_to=rng.choice(list(TINY)) if rng.random() < 0.3 else "",
                                           baseline=rng.choice(use))))
        elif kind == "resize":
            actions.append(("resize", rng.choice([(1280, 720), (1600, 1000), (1920, 1080)])))
        else:
            actions.append((kind, None))
    return actions


def play(session: Session, actions, tmp: Path | None = None) -> None:
    """Carry out ``random_session`` actions on a window."""
    w = session.window
    tmp = tmp or Path(tempfile.mkdtemp())
    for kind, arg in actions:
        if kind == "sweep":
            session.run(arg)
        elif kind == "export" and w.rows:
            session.export(tmp)
        elif kind == "presentation":
            w.presentationAction.trigger()
        elif kind == "dark":
            w.darkAction.trigger()
        elif kind == "solo":
            chart = w.plots.runtimePlot
            QTest.mouseDClick(chart.viewport(), Qt.MouseButton.LeftButton)
        elif kind == "resize":
            w.resize(*arg)
