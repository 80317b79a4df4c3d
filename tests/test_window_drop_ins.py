"""Run > Try it on every backend (issue 36): a workload file's NumPy function, unchanged, ticked on
each drop-in that can run here, swept, and kept through an edit of its file. Offscreen, driven by
object name; waits on signals, never sleeps."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from test_gui import set_sizes, window  # noqa: E402,F401 - the fixture
from test_workload_files import TIMEOUT_MS, open_file, replace  # noqa: E402

MINE = '''import numpy as np
from workbench.api import Workload, register

W = register(Workload("mine", make_inputs=lambda n, dt, v, rng: (rng.random(n).astype(dt),)))


@W.kernel("numpy")
def square(inputs):
    (x,) = inputs
    return x * x{more}
'''


def items(w) -> dict[str, tuple[bool, str]]:
    lst = w.experiment.backendList
    return {lst.item(i).data(Qt.ItemDataRole.UserRole): (lst.item(i).checkState() == Qt.CheckState.Checked,
                                                          lst.item(i).toolTip()) for i in range(lst.count())}


def test_try_it_on_every_backend_ticks_the_drop_ins_that_run_here_sweeps_them_and_keeps_them(
        qtbot, window, tmp_path, declared):
    w = window
    path = tmp_path / "mine.py"
    path.write_text(MINE.format(more=""))
    open_file(qtbot, w, path)
    assert w.experiment.select_workload("mine")
    action = w.findChild(type(w.dropIns.action), "tryDropInsAction")
    with qtbot.waitSignal(w.dropIns.tried, timeout=TIMEOUT_MS) as got:
        action.trigger()
    assert got.args == ["mine", ["numba.njit (drop-in)", "numba.njit parallel (drop-in)"]]
    shown = items(w)
    assert shown["numba.njit (drop-in)"][0] and shown["numba.njit parallel (drop-in)"][0] and shown["numpy"][0]
    assert not shown["cupy (drop-in)"][0] and "Not usable here" in shown["cupy (drop-in)"][1]
    set_sizes(w, "64", "256", 2)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=TIMEOUT_MS) as done:
        w.run()
    assert done.args == [False]
    assert sorted((r["backend"], r["status"]) for r in w.rows) == sorted(
        (b, "ok") for b in ("numpy", "numba.njit (drop-in)", "numba.njit parallel (drop-in)") for _ in (64, 256))
    # Saved again, the file declares its workload anew: its drop-ins come back with it.
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS):
        replace(path, MINE.format(more=" + 0.0"))
    assert "numba.njit (drop-in)" in items(w)
    # Renamed in its file, the workload tried is gone: the engines still load every file and the
    # workload under its new name sweeps (the drop-ins' file named one that no file declared).
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS):
        replace(path, MINE.format(more="").replace('"mine"', '"yours"'))
    assert w.dropIns.names == []
    assert w.experiment.select_workload("yours")
    w.experiment.set_checked_backends(["numpy"])
    with qtbot.waitSignal(w.sweepCompleted, timeout=TIMEOUT_MS) as done:
        w.run()
    assert done.args == [False]
    assert [(r["workload"], r["status"]) for r in w.rows][-2:] == [("yours", "ok")] * 2


def test_a_workload_without_a_numpy_kernel_is_said_in_one_line_and_nothing_changes(qtbot, window):
    w = window
    assert w.experiment.select_workload("source_terms")
    before = items(w)
    with qtbot.waitSignal(w.files.problem, timeout=TIMEOUT_MS) as said:
        assert not w.dropIns.try_current()
    assert items(w) == before
    (text,) = said.args
    assert text.startswith("Try it on every backend: source_terms: drop-ins run the NumPy backend's own function")
    assert "\n" not in text and w.statusBar().currentMessage() == text
