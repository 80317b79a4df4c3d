"""Sweep after sweep in one window: what a speaker does on stage."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from test_gui import check_backends, set_sizes, window  # noqa: E402,F401 - the fixture


def _sweep(qtbot, w, lo, hi, steps):
    set_sizes(w, lo, hi, steps)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000) as blocker:
        w.run()
    assert blocker.args == [False]


def _quick_source_terms(w):
    """source_terms on numpy and numba, one sample a point: sweeps of seconds."""
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy", "numba"])
    w.experiment.budgetSpin.setValue(0.0)
    w.experiment.repeatsSpin.setValue(1)
    return w


def test_a_second_run_with_fewer_sizes_draws_only_its_own_points(qtbot, window):
    """Error bars used to keep the first sweep's top/bottom after the clear: with fewer points
    in the second sweep pyqtgraph indexed past its arrays inside a paint (a segfault). The bands
    that replaced them must hold the second sweep's points only."""
    w = _quick_source_terms(window)
    _sweep(qtbot, w, "2^10", "2^14", 5)
    w.runtimePlot.grab()                     # paint with the first sweep's bars
    _sweep(qtbot, w, "2^10", "2^11", 2)
    w.runtimePlot.grab()                     # a paint after the second: the crash was here
    key = ("band-compute", "numpy", "")
    band, item = w.runtimePlot.bands[key], w.runtimePlot.band_items[key]
    assert set(band.x) <= {1024, 2048} and len(item.xData) == len(item.yData) == 2 * len(band)
    x, _ = w.runtimePlot.points()[("compute", "numpy", "")]
    assert list(x) == [1024, 2048]
    assert w.resultsTable.model().rowCount() == 4


@pytest.mark.parametrize("workload", ["groupby", "merge", "filter", "sort"])
def test_a_dataframe_workload_accepts_its_own_default_sizes(qtbot, window, workload):
    w = window
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy", "numba"])
    assert w.experiment.select_workload(workload)
    assert w.experiment.sizeError.text() == ""
    assert w.experiment.checked_backends() == ["pandas"]     # not left with nothing ticked
    assert w.runButton.isEnabled()
    assert w.experiment.sizes()[0] == 10_000 and w.experiment.sizes()[-1] == 10_000_000


def test_switching_back_to_an_array_workload_ticks_its_cpu_backends(qtbot, window):
    w = window
    w.experiment.select_workload("groupby")
    check_backends(w, ["pandas"])
    w.experiment.select_workload("matmul")
    assert set(w.experiment.checked_backends()) == {"numpy", "numba"}
    assert w.runButton.isEnabled()
    check_backends(w, ["numba"])                 # a choice the user made is kept where it applies
    w.experiment.select_workload("source_terms")
    assert w.experiment.checked_backends() == ["numba"]


def test_the_memory_chart_after_a_larger_sweep_shows_what_a_fresh_window_shows(qtbot, window):
    """The memory of each point is its own allocation (issue 27): after a sweep to 2^22 the window's
    engine holds freed pages, and the next, smaller sweep still reads each output array's bytes,
    as a fresh window does: 4 bytes a cell (float32), 1 MiB at 2^18."""
    w = _quick_source_terms(window)
    _sweep(qtbot, w, "2^20", "2^22", 2)
    _sweep(qtbot, w, "2^18", "2^20", 2)
    for backend in ("numpy", "numba"):
        x, y = w.memoryPlot.points()[("host", backend, "")]
        assert list(x) == [2 ** 18, 2 ** 20]
        for size, got in zip(x, y):
            assert abs(got - 4 * size) <= 0.1 * 4 * size + 4096, (backend, size, got)
