"""The window, driven through its widgets by object name, offscreen; waits on signals, never sleeps."""
from __future__ import annotations

from workbench.views.presets import KINDS  # noqa: E402
from workbench.results import files as result_files

import threading

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QLineEdit, QListWidget, QProgressBar, QPushButton, QSpinBox  # noqa: E402

from workbench.catalog.backends import Availability  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path):
    from panels.window import MainWindow
    threads_before = _python_threads()
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    # The worker's first job is the deep availability probe: let it finish before the test drives.
    with qtbot.waitSignal(w.ready, timeout=120_000):
        pass
    yield w
    w.close()
    # Nothing left running: the worker thread has ended, no timer is active.
    assert not w.controller.background.running
    assert not [t for t in w.findChildren(QTimer) if t.isActive()]
    assert _python_threads() <= threads_before
    import multiprocessing
    assert not multiprocessing.active_children()          # the engine process has ended too


def _python_threads() -> set:
    """Live threads started from Python (a QThread that ran Python code shows as a _DummyThread
    that is never removed, so it is left out: the QThread itself is checked above)."""
    return {t.ident for t in threading.enumerate() if t.is_alive() and not isinstance(t, threading._DummyThread)}


def widget(w, cls, name):
    found = w.findChild(cls, name)
    assert found is not None, name
    return found


def check_backends(w, names):
    lst = widget(w, QListWidget, "backendList")
    for i in range(lst.count()):
        item = lst.item(i)
        item.setCheckState(Qt.CheckState.Checked if item.data(Qt.ItemDataRole.UserRole) in names
                           else Qt.CheckState.Unchecked)


def set_sizes(w, lo, hi, steps):
    widget(w, QLineEdit, "sizeFrom").setText(lo)
    widget(w, QLineEdit, "sizeTo").setText(hi)
    widget(w, QSpinBox, "sizeSteps").setValue(steps)


def test_a_whole_sweep_with_two_cpu_backends(qtbot, window):
    w = window
    assert w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy", "numba"])
    set_sizes(w, "2^10", "2^14", 3)
    widget(w, type(w.experiment.dtypeCombo), "dtypeCombo").setCurrentText("float64")
    w.experiment.budgetSpin.setValue(0.0)
    run = widget(w, QPushButton, "runButton")
    assert run.isEnabled()
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000) as blocker:
        qtbot.mouseClick(run, Qt.MouseButton.LeftButton)
    assert blocker.args == [False]                        # not cancelled
    qtbot.waitUntil(lambda: run.isEnabled(), timeout=5_000)

    table = widget(w, type(w.resultsTable), "resultsTable")
    assert table.model().rowCount() == 6
    rows = table.results.rows
    assert {r["backend"] for r in rows} == {"numpy", "numba"}
    assert sorted({r["size"] for r in rows}) == [1024, 4096, 16384]
    assert all(r["status"] == "ok" and r["dtype"] == "float64" for r in rows)
    assert widget(w, QProgressBar, "progressBar").value() == 6

    # Every plot draws the points it was given.
    runtime = w.runtimePlot.points()
    for backend in ("numpy", "numba"):
        x, y = runtime[("compute", backend, "")]
        assert list(x) == [1024, 4096, 16384]
        expected = [r["compute_median_s"] for r in rows if r["backend"] == backend]
        assert np.allclose(y, expected)
        fx, fy = w.firstCallPlot.points()[("first", backend, "")]
        assert np.allclose(fy, [r["first_call_s"] for r in rows if r["backend"] == backend])
        # A log axis shows no zero: a point that grew the resident set by nothing is left out.
        mx, my = w.memoryPlot.points().get(("host", backend, ""), ([], []))
        grew = [(r["size"], r["peak_host_bytes"]) for r in rows if r["backend"] == backend
                and r["peak_host_bytes"] > 0]
        assert list(zip(mx, my)) == grew
    # CPU backends: compute is end-to-end, one line each (the exported chart draws one too)
    assert not any(key[0] == "total" and len(w.speedupPlot.points()[key][0])
                   for key in w.speedupPlot.points())
    # The baseline itself is no series: a reference line at 1, as in the export.
    assert w.speedupPlot.baseline == "numpy" and ("compute", "numpy", "") not in w.speedupPlot.points()
    assert w.speedupPlot.marks_drawn("reference") == [(1.0, "")]
    nx, ny = w.speedupPlot.points()[("compute", "numba", "")]
    numpy_t = [r["total_median_s"] for r in rows if r["backend"] == "numpy"]
    numba_t = [r["total_median_s"] for r in rows if r["backend"] == "numba"]
    assert np.allclose(ny, np.divide(numpy_t, numba_t))
    # CPU backends: nothing to split; the transfer chart gives its cell to the others
    assert not w.transferPlot.isVisible()


def test_export_writes_what_the_table_shows(qtbot, window, tmp_path):
    w = window
    w.experiment.select_workload("groupby")
    check_backends(w, ["pandas"])
    set_sizes(w, "1000", "4000", 2)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=60_000):
        w.run()
    with qtbot.waitSignal(w.files.exported, timeout=60_000) as results:
        assert w.files.export_results(str(tmp_path / "r.json"))
    frame, env = result_files.load(results.args[0][0])
    assert list(frame["size"]) == [1000, 4000] and (frame["status"] == "ok").all()
    assert env["cpu"]
    with qtbot.waitSignal(w.files.exported, timeout=60_000) as written:
        assert w.files.export_chart(tmp_path / "chart.png")
    assert len(written.args[0]) == len(KINDS)
    from PySide6.QtGui import QImage
    for p in written.args[0]:
        img = QImage(str(p))
        assert (img.width(), img.height()) == (1920, 1080)


def test_stop_in_the_middle_keeps_the_points_measured(qtbot, window):
    w = window
    w.experiment.select_workload("matmul")
    check_backends(w, ["numpy"])
    set_sizes(w, "64", "2048", 6)
    w.experiment.repeatsSpin.setValue(200)           # long enough to stop in the middle
    with qtbot.waitSignal(w.pointAdded, timeout=60_000):
        qtbot.mouseClick(widget(w, QPushButton, "runButton"), Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000) as blocker:
        qtbot.mouseClick(widget(w, QPushButton, "stopButton"), Qt.MouseButton.LeftButton)
    assert blocker.args == [True]                      # cancelled
    rows = w.resultsTable.results.rows
    assert 1 <= len(rows) < 6
    assert rows[0]["status"] == "ok"
    assert "stopped" in widget(w, QProgressBar, "progressBar").format()
    qtbot.waitUntil(lambda: widget(w, QPushButton, "runButton").isEnabled(), timeout=5_000)


def test_stop_before_the_first_point_says_nothing_was_measured_not_that_it_is_measuring(qtbot, window):
    w = window
    w.experiment.select_workload("matmul")
    check_backends(w, ["numpy"])
    set_sizes(w, "64", "2048", 6)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000) as blocker:
        w.run()
        w.stop()                                     # at once: before the engine sent a point
    assert blocker.args == [True] and not w.rows
    assert "Nothing measured: the sweep was stopped before its first point." in w.plots.summary.text()


def test_an_unusable_backend_is_disabled_with_its_reason(qtbot, window):
    w = window
    w.experiment.select_workload("source_terms")
    reason = "no NVIDIA driver: libcuda.so.1 was not found"
    avail = {b: Availability(True, "", "1") for b in ("numpy", "numba")}
    avail["cupy"] = Availability(False, reason)
    w.experiment.set_availability(avail)
    lst = widget(w, QListWidget, "backendList")
    items = {lst.item(i).data(Qt.ItemDataRole.UserRole): lst.item(i) for i in range(lst.count())}
    assert not items["cupy"].flags() & Qt.ItemFlag.ItemIsEnabled
    assert reason in items["cupy"].toolTip()
    assert reason in w.experiment.backendStatus.text()
    assert items["numpy"].flags() & Qt.ItemFlag.ItemIsEnabled
    items["cupy"].setCheckState(Qt.CheckState.Checked)     # even if forced, it is not run
    assert "cupy" not in w.experiment.checked_backends()


@pytest.mark.parametrize("lo,hi,expect", [
    ("2^20", "2^10", "above its end"),
    ("abc", "2^10", "cannot read"),
    ("0", "10", "positive"),
    ("2^10", "2^40", "is available"),
])
def test_bad_sizes_are_refused_next_to_the_field(qtbot, window, lo, hi, expect):
    w = window
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy"])
    set_sizes(w, lo, hi, 4)
    assert not widget(w, QPushButton, "runButton").isEnabled()
    assert expect in w.experiment.sizeError.text()
    assert w.experiment.sizeError.isVisibleTo(w)
    w.run()                                               # Ctrl+R does nothing either
    assert not w.controller.running


def test_no_backend_chosen_is_refused(qtbot, window):
    w = window
    w.experiment.select_workload("fft")
    check_backends(w, [])
    assert not widget(w, QPushButton, "runButton").isEnabled()
    assert "at least one" in w.experiment.formError.text()


def test_choices_are_remembered(qtbot, tmp_path):
    from panels.window import MainWindow
    path = str(tmp_path / "remember.ini")
    w = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.experiment.select_workload("fft")
    set_sizes(w, "2^12", "2^16", 3)
    w.experiment.dtypeCombo.setCurrentText("float64")
    w.close()
    w2 = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    assert w2.experiment.workload_name() == "fft"
    assert (w2.experiment.sizeFrom.text(), w2.experiment.sizeTo.text()) == ("2^12", "2^16")
    assert w2.experiment.dtypeCombo.currentText() == "float64"
    w2.close()


def test_menu_actions_have_standard_shortcuts(qtbot, window):
    from PySide6.QtGui import QAction, QKeySequence
    acts = {a.objectName(): a for a in window.findChildren(QAction) if a.objectName()}
    assert acts["runAction"].shortcut() == QKeySequence("Ctrl+R")
    assert acts["stopAction"].shortcut() == QKeySequence("Esc")
    assert acts["exportChartAction"].shortcut() == QKeySequence("Ctrl+E")
    assert acts["openResultsAction"].shortcut() == QKeySequence(QKeySequence.StandardKey.Open)
    assert acts["saveSessionAction"].shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
    assert acts["quitAction"].shortcut() == QKeySequence(QKeySequence.StandardKey.Quit)


def test_key_widgets_carry_their_object_names(qtbot, window):
    from PySide6.QtWidgets import QWidget
    names = ("workloadList backendList sizeFrom sizeTo sizeSteps dtypeCombo runButton stopButton progressBar "
             "runtimePlot memoryPlot transferPlot speedupPlot resultsTable").split()
    missing = [n for n in names if window.findChild(QWidget, n) is None]
    assert missing == []


def test_the_gpu_memory_cap_field_goes_into_the_sweep_and_is_remembered(qtbot, tmp_path, monkeypatch):
    """Junk is refused next to the form; a cap the sizes pass is announced in amber and Run stays on;
    the cap is in the sweep's spec and in the settings."""
    from panels.window import MainWindow
    from workbench.core import driver
    monkeypatch.setattr(driver, "free_memory", lambda ordinal=0: 80 * 2 ** 30)
    path = str(tmp_path / "cap.ini")
    w = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    e = w.experiment
    e.select_workload("source_terms")
    e.set_availability({b: Availability(True, "", "1") for b in ("numpy", "numba", "cupy")})
    check_backends(w, ["numpy", "cupy"])
    set_sizes(w, "2^20", "2^26", 4)
    field = widget(w, QLineEdit, "deviceMemoryLimit")
    field.setText("8 bananas")
    assert not widget(w, QPushButton, "runButton").isEnabled()
    assert "GPU memory cap" in e.formError.text() and "cannot read" in e.formError.text()
    field.setText("256MiB")                  # float32, three arrays: 2^26 needs 768 MiB, 2^24 192 MiB
    assert widget(w, QPushButton, "runButton").isEnabled()
    assert e.deviceMemoryNote.isVisibleTo(w)
    assert "2^26 (about 768 MiB)" in e.deviceMemoryNote.text() and "256 MiB cap" in e.deviceMemoryNote.text()
    assert "2^24" not in e.deviceMemoryNote.text()
    assert e.spec().device_memory_limit == 256 * 2 ** 20
    check_backends(w, ["numpy"])
    assert "GPU backends only" in e.deviceMemoryNote.text()
    field.setText("")
    assert not e.deviceMemoryNote.isVisibleTo(w) and e.spec().device_memory_limit == 0
    field.setText("1GiB")
    w.close()
    w2 = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    assert w2.experiment.deviceMemoryLimit.text() == "1GiB"
    w2.close()


def test_the_noise_target_goes_into_the_sweep_and_is_remembered(qtbot, tmp_path):
    """In percent, as the command line's --noise; 0 allowed (always to the time cap); in the spec the
    sweep runs with and the settings its results carry; kept in QSettings."""
    from panels.window import MainWindow
    from workbench.measure import engine
    path = str(tmp_path / "noise.ini")
    w = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.ready, timeout=120_000):
        pass
    e = w.experiment
    noise = widget(w, type(e.budgetSpin), "noiseSpin")
    assert noise.value() == pytest.approx(100 * engine.DEFAULT_NOISE) and noise.minimum() == 0
    e.select_workload("source_terms")
    check_backends(w, ["numpy"])
    set_sizes(w, "2^10", "2^11", 2)
    e.budgetSpin.setValue(0.0)
    noise.setValue(0.0)
    assert e.spec().noise == 0.0
    noise.setValue(2.5)
    assert e.spec().noise == pytest.approx(0.025)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000):
        w.run()
    assert w.sweep_settings["noise"] == pytest.approx(0.025)
    assert w.result_sets()[0].settings["noise"] == pytest.approx(0.025)
    w.close()
    w2 = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    assert w2.experiment.noiseSpin.value() == pytest.approx(2.5)
    assert w2.experiment.settings()["noise_percent"] == pytest.approx(2.5)
    w2.close()
