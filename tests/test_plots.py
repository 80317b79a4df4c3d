"""The plots and the table, fed result tables directly (no engine): what is drawn, and how."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from workbench import results  # noqa: E402


def row(backend, size, t, status="ok", **kw):
    values = dict(workload="source_terms", backend=backend, device="cpu", size=size, dtype="float32",
                  compute_median_s=t, compute_q1_s=0.9 * t, compute_q3_s=1.1 * t, total_median_s=t,
                  total_q1_s=0.9 * t, total_q3_s=1.1 * t, first_call_s=3 * t, h2d_s=0.0, d2h_s=0.0,
                  peak_host_bytes=1000.0 * size, status=status)
    values.update(kw)
    return results.empty_row(**values)


@pytest.fixture
def plots(qtbot):
    from panels.plots import PlotsPanel
    p = PlotsPanel()
    qtbot.addWidget(p)
    p.resize(1200, 700)
    p.show()
    return p


@pytest.mark.parametrize("status", ["wrong", "error", "implausible", "cancelled", "a-status-added-later"])
def test_a_point_that_is_not_ok_is_not_drawn_but_counted(plots, status):
    rows = [row("numpy", 1024, 1e-3), row("numpy", 2048, 2e-3), row("numpy", 4096, 1e-9, status=status)]
    plots.update_from(results.to_frame(rows))
    x, _ = plots.runtimePlot.points()[("compute", "numpy", "")]
    assert list(x) == [1024, 2048]
    assert f"<b>1</b> not ok (1 {status})" in plots.summary.text()


def test_the_table_highlights_every_failed_status_and_implausible_apart(qtbot):
    from panels.table import ResultsTable
    t = ResultsTable()
    qtbot.addWidget(t)
    statuses = ["ok", "wrong", "error", "implausible", "cancelled", "a-status-added-later"]
    for i, s in enumerate(statuses):
        t.results.append(row("numpy", 1024 * (i + 1), 1e-3, status=s))
    colors = {}
    for i, s in enumerate(statuses):
        colors[s] = t.results.data(t.results.index(i, 0), Qt.ItemDataRole.BackgroundRole)
    assert colors["ok"] is None
    assert all(colors[s] is not None for s in statuses[1:])
    others = {colors[s].name() for s in statuses if s not in ("ok", "implausible")}
    assert colors["implausible"].name() not in others


def test_the_memory_wall_is_marked_where_each_backend_first_ran_out(plots):
    """A dashed line in the backend's colour at its first out-of-memory size, inside the view, on
    the runtime and memory charts; gone with the next sweep, back at a new place with the one after."""
    from panels import style
    oom = "out of device memory: source_terms on cupy at size 8,192 (float64) needs about 1 GiB"
    rows = [row("numpy", s, 1e-3) for s in (1024, 2048, 4096, 8192)]
    rows += [row("cupy", 1024, 1e-4, host_memory="pageable"), row("cupy", 2048, 2e-4, host_memory="pageable"),
             row("cupy", 4096, 0.0, status="error", message=oom), row("cupy", 8192, 0.0, status="error", message=oom),
             row("numba", 8192, 0.0, status="error", message="ZeroDivisionError: not a wall")]
    plots.update_from(results.to_frame(rows))
    for chart in (plots.runtimePlot, plots.memoryPlot):
        assert chart.walls_drawn() == {("cupy", ""): 4096}
        line = chart.walls[("cupy", "")]
        assert line.pen.color().name().lower() == style.color("cupy").lower()
        assert "cupy: out of memory" in line.label.toPlainText()
        chart.getViewBox().updateAutoRange()            # as the next paint does
        (x0, x1), _ = chart.getViewBox().viewRange()
        assert x0 <= line.value() <= x1                  # the wall is in view, beyond the last ok point
    plots.clear()
    assert plots.runtimePlot.walls_drawn() == {}
    rows[4] = row("cupy", 1024, 0.0, status="error", message=oom)
    plots.update_from(results.to_frame(rows))
    assert plots.runtimePlot.walls_drawn() == {("cupy", ""): 1024}
    assert len(plots.runtimePlot.walls) == 1           # moved, not made again


def test_exported_charts_mark_the_wall_too(tmp_path):
    import dataclasses
    from helpers import result_set
    from workbench import charts
    rs = result_set("float64")
    frame = rs.frame.copy()
    frame.loc[(frame["backend"] == "cupy") & (frame["size"] == 2 ** 18), ["status", "message"]] = \
        ("error", "out of device memory: too large")
    rs = dataclasses.replace(rs, frame=frame)
    svg = charts.render("runtime", [rs], "svg").decode()
    assert 'id="series-runtime-wall-cupy"' in svg and "cupy: out of memory" in svg
    assert 'id="series-speedup-wall' not in charts.render("speedup", [rs], "svg").decode()


def test_a_second_sweep_without_a_backend_of_the_first_keeps_the_size_axis_on_its_sizes(plots):
    """The first sweep's numba error bars, emptied, must not pull the size axis down to 2^0; a GPU
    sweep's transfer bars must clear without their old bases."""
    gpu = dict(host_memory="pageable", h2d_s=1e-4, d2h_s=1e-4, total_median_s=1.2e-3)
    plots.update_from(results.to_frame([row(b, s, 1e-3, **(gpu if b == "cupy" else {}))
                                        for b in ("numpy", "numba", "cupy") for s in (2 ** 16, 2 ** 20)]))
    plots.clear()
    plots.update_from(results.to_frame([row("numpy", s, 1e-3) for s in (2 ** 16, 2 ** 20)]))
    (lo, hi), _ = plots.runtimePlot.getViewBox().childrenBounds()   # what auto-range fits
    assert 4.0 < lo and hi < 6.5          # log10 of 2^16 is 4.8, of 2^20 is 6.0


def test_a_lessons_marks_and_statement_come_and_go(plots):
    plots.update_from(results.to_frame([row("numpy", s, 1e-3) for s in (2 ** 10, 2 ** 20)]))
    plots.set_lesson("<b>Lesson: here</b>", [(2 ** 15, "break-even"), (2 ** 30, "off the axis")])
    assert plots.mark_positions(plots.runtimePlot) == [(pytest.approx(2 ** 15), "break-even")]
    assert plots.summary.text().startswith("<b>Lesson: here</b><hr>")
    plots.clear()
    assert plots.marks == [] and "Lesson" not in plots.summary.text()
