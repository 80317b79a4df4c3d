"""The plots and the table, fed result tables directly (no engine): what is drawn, and how."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from workbench.results import rows as results  # noqa: E402
from workbench.views import table_text  # noqa: E402


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
    yield p
    p.shutdown()          # a test that failed half way leaves no spec process to the next ones


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
    """A dotted line in the backend's colour at its first out-of-memory size, inside the view, on
    the runtime and memory charts; gone with the next sweep, back at a new place with the one after."""
    from panels import style
    oom = "out of device memory: source_terms on cupy at size 8,192 (float64) needs about 1 GiB"
    rows = [row("numpy", s, 1e-3) for s in (1024, 2048, 4096, 8192)]
    rows += [row("cupy", 1024, 1e-4, host_memory="pageable"), row("cupy", 2048, 2e-4, host_memory="pageable"),
             row("cupy", 4096, 0.0, status="error", message=oom), row("cupy", 8192, 0.0, status="error", message=oom),
             row("numba", 8192, 0.0, status="error", message="ZeroDivisionError: not a wall")]
    plots.update_from(results.to_frame(rows))
    for chart in (plots.runtimePlot, plots.memoryPlot):
        assert chart.walls_drawn() == {"cupy": 4096}
        line = chart.mark_items[("wall", "cupy")]
        assert line.pen.color().name().lower() == style.color("cupy").lower()
        assert line.pen.style() == Qt.PenStyle.DotLine
        assert line.label.toPlainText() == "cupy: out of memory"
        chart.getViewBox().updateAutoRange()            # as the next paint does
        (x0, x1), _ = chart.getViewBox().viewRange()
        assert x0 <= line.value() <= x1                  # the wall is in view, beyond the last ok point
    assert plots.speedupPlot.walls_drawn() == {}        # a wall is no speedup
    plots.clear()
    assert plots.runtimePlot.walls_drawn() == {}
    rows[4] = row("cupy", 1024, 0.0, status="error", message=oom)
    plots.update_from(results.to_frame(rows))
    assert plots.runtimePlot.walls_drawn() == {"cupy": 1024}
    assert len([k for k in plots.runtimePlot.mark_items if k[0] == "wall"]) == 1     # moved, not made again


def test_exported_charts_mark_the_wall_too(tmp_path):
    import dataclasses
    from helpers import result_set
    from workbench.views import matplotlib_charts as charts
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


# --- the noise: each median's interval, drawn, hovered, tabled; overlays decided with it -----------

def _interval_frame(spread=(0.8, 1.3), **kw):
    """numpy on the CPU and cupy on a GPU, 2^10..2^16, each median with an interval of ``spread``."""
    from helpers import measured
    rows = []
    for size in (2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16):
        for backend, t, gpu in (("numpy", 1e-9 * size, False), ("cupy", 1e-6 + 1e-11 * size, True)):
            total = t + (2e-6 if gpu else 0.0)
            rows.append(measured(
                workload="source_terms", backend=backend, device="GPU: Test" if gpu else "CPU: Test", size=size,
                dtype="float32", host_memory="pageable" if gpu else "", compute_median_s=t,
                compute_q1_s=0.95 * t, compute_q3_s=1.05 * t, compute_ci_lo_s=spread[0] * t,
                compute_ci_hi_s=spread[1] * t, total_median_s=total, total_q1_s=0.95 * total,
                total_q3_s=1.05 * total, total_ci_lo_s=spread[0] * total, total_ci_hi_s=spread[1] * total,
                first_call_s=10 * t, h2d_s=1e-6 if gpu else 0.0, d2h_s=1e-6 if gpu else 0.0,
                peak_host_bytes=8.0 * size, repeats=40, status="ok", **kw))
    return results.to_frame(rows)


def _hover(qtbot, chart, key, i) -> str:
    """The hover text of the ``i``-th point of series ``key``, a few pixels off it, once laid out."""
    import numpy as np
    from PySide6.QtCore import QPointF

    def text() -> str:
        x, y = chart.points()[key]
        p = chart.getViewBox().mapViewToScene(QPointF(np.log10(x[i]), np.log10(y[i])))
        return chart.hover_text(p + QPointF(2, 2))
    qtbot.waitUntil(lambda: text() != "", timeout=5_000)
    return text()


def test_hovering_a_point_tells_its_median_interval_sample_count_and_caution(qtbot, plots):
    frame = _interval_frame()
    frame.loc[frame["size"] == 2 ** 14, ["noisy", "converged"]] = ("3 other processes busy", False)
    plots.update_from(frame)
    r = frame[(frame["backend"] == "numpy") & (frame["size"] == 2 ** 12)].iloc[0]
    text = _hover(qtbot, plots.runtimePlot, ("compute", "numpy", ""), 1)
    assert f"95 % interval {table_text.interval_text(r['compute_ci_lo_s'], r['compute_ci_hi_s'])}, n = 40" in text
    assert "q1" not in text and "noisy" not in text                 # the interval replaces the quartiles
    gpu = _hover(qtbot, plots.runtimePlot, ("compute", "cupy", ""), 2)
    g = frame[(frame["backend"] == "cupy") & (frame["size"] == 2 ** 14)].iloc[0]
    assert table_text.interval_text(g["total_ci_lo_s"], g["total_ci_hi_s"]) in gpu    # end-to-end's too
    assert "noisy: 3 other processes busy" in gpu and "did not reach the noise target" in gpu


def _band_vertices(fig, gid):
    """{x: (lowest, highest) y} of the filled area an exported chart drew under ``gid``."""
    [area] = [c for c in fig.axes[0].collections if c.get_gid() == gid]
    out: dict = {}
    for x, y in area.get_paths()[0].vertices:
        lo, hi = out.get(x, (y, y))
        out[x] = (min(lo, y), max(hi, y))
    return out


def test_the_window_and_the_exported_chart_draw_one_band_the_ci_columns(plots):
    """Both renderers draw the band workbench.views.bands describes: the CI columns, and q1-q3 for an old file."""
    import numpy as np

    from workbench.views import bands
    from workbench.views import matplotlib_charts as charts
    from workbench.results.files import ResultSet
    frame = _interval_frame()
    plots.update_from(frame)
    with charts.style(charts.preset()):
        fig = charts.figure("runtime", [ResultSet(frame)])
    for backend, which in (("numpy", "compute"), ("cupy", "compute"), ("cupy", "total")):
        rows = frame[frame["backend"] == backend]
        key = (f"band-{which}", backend, "")
        band, item = plots.runtimePlot.bands[key], plots.runtimePlot.band_items[key]
        assert band.x.tolist() == rows["size"].tolist()
        assert np.allclose(band.lo, rows[f"{which}_ci_lo_s"]) and np.allclose(band.hi, rows[f"{which}_ci_hi_s"])
        # What pyqtgraph was given: one outline along the lower edge and back along the upper one.
        assert np.allclose(item.yData, np.concatenate([band.lo, band.hi[::-1]]))
        exported = _band_vertices(fig, f"series-runtime-band-{which}-{backend}")
        assert sorted(exported) == band.x.tolist()
        assert np.allclose([exported[x] for x in band.x], np.column_stack([band.lo, band.hi]))
    from panels.legend import BAND_PREFIX
    keyed = plots.legendStrip.entries           # the window says what the band is above the charts
    legend = [" ".join(t.get_text().split()) for sub in fig.subfigs for lg in sub.legends for t in lg.get_texts()]
    assert BAND_PREFIX + bands.INTERVAL in keyed and bands.INTERVAL in legend
    assert not any(bands.QUARTILES in text for text in keyed + legend)
    # An old file, without intervals: both fall back to the quartiles, and both say so.
    old = frame.assign(compute_ci_lo_s=np.nan, compute_ci_hi_s=np.nan, total_ci_lo_s=np.nan, total_ci_hi_s=np.nan)
    plots.update_from(old)
    band = plots.runtimePlot.bands[("band-compute", "numpy", "")]
    assert np.allclose(band.lo, old.loc[old["backend"] == "numpy", "compute_q1_s"])
    assert plots.legendStrip.entries[-1] == BAND_PREFIX + bands.QUARTILES
    with charts.style(charts.preset()):
        fig = charts.figure("runtime", [ResultSet(old)])
    legend = [" ".join(t.get_text().split()) for sub in fig.subfigs for lg in sub.legends for t in lg.get_texts()]
    assert bands.QUARTILES in legend and bands.INTERVAL not in legend


def test_the_table_shows_each_medians_interval_and_sample_count(qtbot):
    from panels.table import ResultsTable
    t = ResultsTable()
    qtbot.addWidget(t)
    frame = _interval_frame()
    for r in frame.to_dict("records"):
        t.results.append(r)
    columns = t.results.columns()
    ci, n = columns.index("95 % CI"), columns.index("n")
    assert ci == columns.index("compute_median_s") + 1 and n == ci + 1
    first = frame.iloc[0]
    assert t.results.data(t.results.index(0, ci)) == table_text.interval_text(first["compute_ci_lo_s"],
                                                                           first["compute_ci_hi_s"])
    assert t.results.data(t.results.index(0, n)) == "40"
    assert table_text.readable_table(frame)["95 % CI"].iloc[0] == t.results.data(t.results.index(0, ci))


def test_overlaid_sets_say_each_later_sets_verdict_against_the_first(qtbot, plots):
    """A set 30 % slower with +-1 % intervals is 'slower' at every point, in the summary and on hover;
    names are text, never markup (a backend and a file named to break the HTML)."""
    import dataclasses
    from html import escape
    from helpers import result_set
    base = result_set("float32", source="/x/monday.json")
    odd = "numba<!--"
    base.frame.loc[base.frame["backend"] == "numba", "backend"] = odd
    times = [c for c in base.frame.columns if c.endswith("_s")]
    slow = dataclasses.replace(base, source="/x/numba<!--.json",
                               frame=base.frame.assign(**{c: 1.3 * base.frame[c] for c in times}))
    plots.update_from([base, slow])
    assert plots.overlay.labels == ("monday", "numba<!--")
    summary = plots.summary.text()
    assert f"<b>{escape('numba<!--')}</b> against <b>monday</b>, end-to-end time (12 slower)" in summary
    # Every size of a series with the same verdict is said once, as a range (issue 38).
    assert "numpy: slower from 2^10 to 2^16 (4 sizes): 1.3x (1.27-1.33)" in summary
    assert f"{escape(odd)}: slower from 2^10 to 2^16 (4 sizes): 1.3x" in summary and "<!--" not in summary
    text = _hover(qtbot, plots.runtimePlot, ("compute", "numpy", "", 1), 0)
    assert "end-to-end against monday: <b>1.3x slower (1.27-1.33)</b>" in text
    assert "<!--" not in text and "(numba&lt;!--)" in text
    first = _hover(qtbot, plots.runtimePlot, ("compute", "numpy", "", 0), 0)
    assert "against" not in first                                  # the first set is the reference


def test_the_transfer_chart_shows_only_where_a_series_moves_data(qtbot):
    """A CPU-only set: the transfer chart would stay empty, so it is hidden and the four others
    share its space; a set with a GPU backend brings it back; solo and back keeps it so."""
    import dataclasses
    from helpers import result_set
    from panels.plots import PlotsPanel
    p = PlotsPanel()
    qtbot.addWidget(p)
    p.resize(1200, 600)
    p.show()
    gpu = result_set()
    cpu = dataclasses.replace(gpu, frame=gpu.frame[gpu.frame["host_memory"] == ""].reset_index(drop=True))
    p.update_from([cpu])
    assert not p.transferPlot.isVisible()
    wide = p.runtimePlot.width()
    p.toggle_solo(p.runtimePlot)
    p.toggle_solo(p.runtimePlot)
    assert not p.transferPlot.isVisible() and p.runtimePlot.isVisible()
    p.update_from([gpu])
    qtbot.waitUntil(lambda: p.transferPlot.isVisible())
    qtbot.waitUntil(lambda: p.runtimePlot.width() < wide)      # three columns of charts again
    p.update_from([cpu])
    assert not p.transferPlot.isVisible()
    p.toggle_solo(p.memoryPlot)        # chosen alone as sets are drawn: the new arrangement keeps it
    p.update_from([gpu])
    assert p.memoryPlot.isVisible() and not p.runtimePlot.isVisible() and not p.transferPlot.isVisible()
    p.toggle_solo(p.transferPlot)
    p.update_from([cpu])               # the transfer chart has no place without a GPU series
    assert not p.transferPlot.isVisible() and p.runtimePlot.isVisible()


def test_a_scheduled_update_draws_what_update_from_draws_and_the_latest_data_last(qtbot, plots):
    """``schedule`` has the specs made in the spec thread and draws them chart by chart: the same
    points, ticks and summary as the synchronous ``update_from``; data scheduled while a job is in
    flight are drawn after it, so the final state is the last data's (issue 19)."""
    import threading

    from panels.plots import PlotsPanel
    from workbench.results.files import ResultSet
    early = [row("numpy", 1024 * 2 ** i, 1e-3 * 2 ** i) for i in range(3)]
    late = early + [row("numba", 1024 * 2 ** i, 5e-4 * 2 ** i) for i in range(4)]
    made_in = []
    plots.schedule(lambda: made_in.append(threading.current_thread()) or [ResultSet(results.to_frame(early))])
    plots.schedule(results.to_frame(late))           # while the first is in flight: drawn after it
    with qtbot.waitSignal(plots.updated, timeout=10_000):
        pass
    assert made_in and made_in[0] is not threading.main_thread()
    reference = PlotsPanel()
    qtbot.addWidget(reference)
    reference.resize(1200, 700)
    reference.update_from(results.to_frame(late))
    for mine, theirs in zip(plots.plots(), reference.plots()):
        assert mine.spec == theirs.spec, mine.kind
    assert set(plots.runtimePlot.points()) >= {("compute", "numpy", ""), ("compute", "numba", "")}
    x, _ = plots.runtimePlot.points()[("compute", "numba", "")]
    assert list(x) == [1024, 2048, 4096, 8192]
    assert plots.summary.text() == reference.summary.text()
    plots.shutdown()
    assert not plots.specs.running


def test_a_live_update_is_made_in_the_spec_process_and_drawn_as_update_from_draws(qtbot, plots):
    """The window schedules its workspace's parts: the spec process makes the specs (the sets'
    tables are not sent back, nor made here) and the charts draw what ``update_from`` draws; a
    hover names the point's row from the live rows, still without making the sets here (issue 38:
    5,000 rows made into a table stalled the first hover); what asks for the sets makes them."""
    from panels.plots import PlotsPanel
    from workbench.views import spec_process
    from workbench.workspace.session import Workspace
    ws = Workspace()
    for r in [row("numpy", 1024 * 2 ** i, 1e-3 * 2 ** i) for i in range(4)] + \
            [row("numba", 1024 * 2 ** i, 4e-4 * 2 ** i) for i in range(4)]:
        ws.table.append(r)
    plots.schedule(ws.parts, sets=ws.result_sets)
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        pass
    assert spec_process.process_id() is not None
    assert not plots.sets_made and plots.labels == ("",)
    reference = PlotsPanel()
    qtbot.addWidget(reference)
    reference.resize(1200, 700)
    reference.update_from(ws.result_sets())
    for mine, theirs in zip(plots.plots(), reference.plots()):
        assert mine.spec == theirs.spec, mine.kind
        assert mine.viewport().updatesEnabled(), mine.kind
    assert plots.summary.text() == reference.summary.text()
    text = _hover(qtbot, plots.runtimePlot, ("compute", "numba", ""), 2)
    assert text.startswith("<b>numba</b> at 2^12<br>compute median 1.6 ms")
    assert "speedup over numpy" in text and not plots.sets_made
    assert len(plots.overlay.sets[0].frame) == 8 and plots.sets_made
    plots.shutdown()
    assert spec_process.process_id() is None          # its only client closed


def test_a_chart_drawn_a_step_at_a_time_ends_as_drawn_at_once_and_repaints_after(qtbot, plots, monkeypatch):
    """A live update draws a chart a few ms at a time (``STEP_S``), its viewport taking no repaint
    until the step after its last: with no time at all per step, every series is a step of its
    own, and the chart ends as ``update_from`` draws it; an update dropped half way leaves no
    chart held (issue 19)."""
    import panels.chart_drawing as drawing
    from panels.plots import PlotsPanel
    from workbench.views.live import prepare
    rows = [row(b, 1024 * 2 ** i, t * 2 ** i) for b, t in (("numpy", 1e-3), ("numba", 4e-4), ("pandas", 2e-3))
            for i in range(5)]
    frame = results.to_frame(rows)
    monkeypatch.setattr(drawing, "STEP_S", 0.0)
    steps = plots.drawing
    plots.draw(prepare(plots.specs.generation, frame, None, None),
               items=[plots.runtimePlot, drawing.LEGEND, drawing.SUMMARY])
    calls = 0
    while steps.pending and steps.pending[0] is plots.runtimePlot:
        steps.step()
        calls += 1
        assert not plots.runtimePlot.viewport().updatesEnabled()     # held while drawn
    assert calls >= 4                          # three series, a key entry or more: a step each
    assert steps.pending[0] == ("show", plots.runtimePlot)
    steps.step()
    assert plots.runtimePlot.viewport().updatesEnabled()
    # The legend strip, then the summary, each a step of its own after the charts'.
    summary = plots.summary.text()
    steps.step()
    assert plots.legendStrip.entries_of("runtime") and plots.summary.text() == summary
    steps.step()
    assert plots.summary.text() != summary and "numba" in plots.summary.text()
    reference = PlotsPanel()
    qtbot.addWidget(reference)
    reference.resize(1200, 700)
    reference.update_from(frame)
    assert plots.runtimePlot.points().keys() == reference.runtimePlot.points().keys()
    for key, (x, y) in reference.runtimePlot.points().items():
        assert list(plots.runtimePlot.points()[key][0]) == list(x) and list(plots.runtimePlot.points()[key][1]) == list(y)
    assert [e for e, _ in plots.runtimePlot.key_items] == [e for e, _ in reference.runtimePlot.key_items]
    # Half way through the next chart, the update is dropped: nothing stays held.
    plots.draw(prepare(plots.specs.generation, frame, None, None), items=[plots.speedupPlot])
    steps.step()
    assert not plots.speedupPlot.viewport().updatesEnabled()
    plots.clear()
    assert plots.speedupPlot.viewport().updatesEnabled() and not steps.pending


def test_the_table_fits_no_column_while_the_charts_are_drawn(qtbot):
    """``wait_while``: a turn of the column fitting that comes while the charts draw fits nothing
    and keeps its columns for a later turn; once they are done, one column a turn (issue 19)."""
    from panels.table import FIT_COLUMNS_PER_TURN, ResultsTable
    t = ResultsTable()
    qtbot.addWidget(t)
    t.show()
    live = [row("numpy", 1024 * 2 ** i, 1e-3) for i in range(3)]
    t.results.attach(live)
    t.take_rows()
    drawing = [True]
    t.wait_while = lambda: drawing[0]
    t.fit_columns()
    left = len(t.columns_to_fit)
    t.fit_some()
    assert len(t.columns_to_fit) == left > 0
    drawing[0] = False
    t.fit_some()
    assert len(t.columns_to_fit) == left - FIT_COLUMNS_PER_TURN
    t.stop_fitting()


def test_rows_taken_by_the_table_are_laid_out_at_once_and_repainted_a_turn_later(qtbot):
    """``take_rows``: the rows come into the table's layout in the call, the repaint a turn of the
    event loop after (not in the turn of the layout); no new row, nothing is held (issue 19)."""
    from panels.table import ResultsTable
    t = ResultsTable()
    qtbot.addWidget(t)
    t.show()
    live = []
    t.results.attach(live)
    live.extend(row("numpy", 1024 * 2 ** i, 1e-3) for i in range(3))
    t.take_rows()
    assert t.model().rowCount() == 3 and t.rowViewportPosition(2) >= 0      # laid out now
    assert not t.updatesEnabled()                                           # painted later
    qtbot.waitUntil(t.updatesEnabled, timeout=2_000)
    t.take_rows()                                                           # nothing new: nothing held
    assert t.updatesEnabled() and t.model().rowCount() == 3


def test_the_spec_process_is_started_before_a_sweep_and_ends_with_the_panel(qtbot, plots):
    """``warm`` (the window calls it when it is ready) starts the spec process in the spec thread,
    so that a sweep's first update does not pay for its start; the panel shut, it ends."""
    from workbench.views import spec_process
    plots.warm()
    qtbot.waitUntil(lambda: spec_process.process_id() is not None, timeout=30_000)
    process = spec_process.process()
    plots.shutdown()
    assert spec_process.process_id() is None and not process.is_alive()


def test_the_legend_strip_keeps_its_room_from_a_sweep_s_start_past_its_end(qtbot, plots):
    """Reserved as a sweep begins, the strip's room stays through the sweep's end (given back
    then, every chart was relaid out and repainted in one turn) and through a next sweep's
    clearing; a view of other data (a file, a comparison) fits the strip to that data."""
    plots.clear(sweep=True)
    plots.expect(["numpy", "numba", "cupy", "numba-cuda", "cudf", "cupy-fused", "cupy-raw"])
    qtbot.waitUntil(lambda: not plots.laying_out, timeout=2_000)
    room = plots.legendStrip.minimumHeight()
    assert room > 0 and plots.legendStrip.isVisible()
    plots.settle()
    assert plots.legendStrip.minimumHeight() == room
    plots.clear(sweep=True)
    assert plots.legendStrip.minimumHeight() == room
    plots.clear()
    assert plots.legendStrip.minimumHeight() == 0 and not plots.legendStrip.isVisible()


def test_the_same_parts_scheduled_again_are_not_drawn_again(qtbot, plots):
    """A sweep's end schedules its parts once more: where no row came since the last update, the
    charts keep what they drew (drawn anew, each chart's step and repaint stalled the GUI thread,
    issue 38) and ``updated`` still fires; a row more, and they are drawn again."""
    from workbench.workspace.session import Workspace
    ws = Workspace()
    for i in range(4):
        ws.table.append(row("numpy", 1024 * 2 ** i, 1e-3 * 2 ** i))
    plots.schedule(ws.parts, sets=ws.result_sets)
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        pass
    drawn = {chart.kind: chart.spec for chart in plots.plots()}
    plots.schedule(ws.parts, sets=ws.result_sets)
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        pass
    assert all(chart.spec is drawn[chart.kind] for chart in plots.plots())
    ws.table.append(row("numpy", 1024 * 2 ** 4, 1e-3 * 2 ** 4))
    plots.schedule(ws.parts, sets=ws.result_sets)
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        pass
    assert plots.runtimePlot.spec is not drawn["runtime"]
    assert list(plots.runtimePlot.points()[("compute", "numpy", "")][0]) == [1024 * 2 ** i for i in range(5)]
    plots.shutdown()


def test_each_chart_repaints_once_per_update_in_its_own_step(qtbot, plots):
    """An update drawn a step per tick repaints each chart once, in a pass of the event loop of
    its own: Qt's scenes flush the window's repaint as their changes are processed, so a chart
    left free while others drew (or resized by the legend strip's new height) was painted in
    another chart's pass, then again for its own scene (two sets of 5,000 points: 200 ms)."""
    from PySide6.QtCore import QEvent, QObject
    from workbench.results.files import ResultSet
    from workbench.views.live import prepare

    class Paints(QObject):
        def __init__(self):
            super().__init__()
            self.log: list[tuple[int, str]] = []
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                self.log.append((len(ticks), obj.objectName()))
            return False
    ticks: list[object] = []
    plots.drawing.timer.timeout.connect(lambda: ticks.append(plots.drawing.pending[:1]))
    charts = [plots.runtimePlot, plots.speedupPlot, plots.transferPlot, plots.memoryPlot, plots.firstCallPlot]
    paints = Paints()
    for chart in charts:
        chart.viewport().setObjectName(chart.kind)
        chart.viewport().installEventFilter(paints)
    qtbot.wait(50)                    # the empty panel painted
    a = [row(b, 1024 * 2 ** i, t * 2 ** i) for b, t in (("numpy", 1e-3), ("cupy", 4e-4)) for i in range(6)]
    b = [row(b, 1024 * 2 ** i, t * 2 ** i * 0.8) for b, t in (("numpy", 1e-3), ("cupy", 4e-4)) for i in range(6)]
    for r in a + b:
        r.update(host_memory="pageable" if r["backend"] == "cupy" else "", h2d_s=1e-4, d2h_s=1e-4)
    sets = [ResultSet(results.to_frame(a)), ResultSet(results.to_frame(b))]
    paints.log.clear()
    with qtbot.waitSignal(plots.drawing.done, timeout=10_000):
        plots.draw(prepare(plots.specs.generation, sets, None, None))
    qtbot.wait(100)
    painted = [kind for _, kind in paints.log]
    for chart in charts:
        assert painted.count(chart.kind) <= 1, (chart.kind, paints.log)
    assert len({tick for tick, _ in paints.log}) == len(paints.log), paints.log    # each in a pass of its own


def test_charts_cleared_for_other_sets_keep_their_picture_until_drawn_anew(qtbot, plots):
    """Sets opened or compared: each chart is repainted once they are drawn on it, not empty at once
    (five empty repaints in one pass of the event loop were 185 ms at 2 x 5,000 points, issue 38);
    whatever ends the update (drawn, a sweep begun, no specs made), no chart stays held."""
    frame = results.to_frame([row(b, 1024 * 2 ** i, t * 2 ** i) for b, t in (("numpy", 1e-3), ("numba", 4e-4))
                              for i in range(4)])
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        plots.schedule(frame)
    held = lambda: [c.kind for c in plots.plots() if not c.viewport().updatesEnabled()]   # noqa: E731
    assert not held()
    plots.clear(held=True)
    assert held() == [c.kind for c in plots.plots()] and not plots.runtimePlot.meta   # emptied, not repainted
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        plots.schedule(frame.assign(dtype="float64"))
    assert not held() and plots.runtimePlot.meta
    plots.clear(held=True)
    plots.clear(sweep=True)                 # a sweep begins before the sets are drawn
    assert not held()
    plots.clear(held=True)
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        plots.specs.failed.emit()           # the specs could not be made
    assert not held()


def test_the_legend_strip_keeps_its_entries_while_the_charts_are_held_and_shows_only_the_new_ones(qtbot, plots):
    """Cleared for sets to come, the strip emptied at once and filled again when they were drawn:
    every chart resized twice (Compare with at 2 x 5,000 points). Held, it keeps what it shows
    until the new entries come; whatever ends the update, it then shows only what the charts say."""
    plots.resize(1000, 700)
    plots.show()
    old = results.to_frame([row(b, 1024 * 2 ** i, t * 2 ** i) for b, t in (("numpy", 1e-3), ("numba", 4e-4))
                            for i in range(4)])
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        plots.schedule(old)
    strip = plots.legendStrip
    before = list(strip.entries)
    assert "numba" in before
    plots.clear(held=True)
    assert strip.entries == before and strip.isVisible()       # nothing relaid out yet
    new = old[old["backend"] == "numpy"].assign(dtype="float64")
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        plots.schedule(new)
    assert "numpy" in strip.entries and "numba" not in strip.entries
    plots.clear(held=True)
    with qtbot.waitSignal(plots.updated, timeout=30_000):
        plots.specs.failed.emit()           # the specs could not be made: nothing stale is left
    assert strip.entries == [] and not strip.isVisible()
    plots.clear()                           # not held: emptied at once, as before
    assert strip.entries == []


def test_the_legend_strip_writes_over_its_entries_in_place_and_makes_only_the_new_ones(qtbot):
    """Each entry made anew is shown by Qt in a posted call of its own (3-5 ms each, all in one
    turn: 30 ms when Compare with made the strip anew, issue 38). Entries already there are
    written over, sign, text and tooltip, and only the ones more are made."""
    from panels.legend import MOST_CHARACTERS, LegendStrip
    from workbench.views import spec
    strip = LegendStrip()
    qtbot.addWidget(strip)
    strip.resize(900, 80)
    strip.show()
    long_name = "x" * (MOST_CHARACTERS + 10)
    strip.show_chart("runtime", [spec.LegendEntry(long_name, "series"), spec.LegendEntry("numba", "series")])

    def widgets():
        return [strip.layout_.itemAt(i).widget() for i in range(strip.layout_.count())]
    first = widgets()
    assert first[0].text.toolTip() == long_name and first[0].text.text().endswith("…")
    strip.show_chart("runtime", [spec.LegendEntry("numpy", "series"), spec.LegendEntry("numba", "series"),
                                 spec.LegendEntry("float64", "series", marker="s")])
    now = widgets()
    assert now[:2] == first and len(now) == 3                 # the same two, one more
    assert [w.text.text() for w in now] == ["numpy", "numba", "float64"] == strip.entries
    assert now[0].text.toolTip() == ""                       # no longer elided: no tooltip left over
    strip.show_chart("runtime", [spec.LegendEntry("numpy", "series")])
    assert widgets() == first[:1] and strip.entries == ["numpy"]


def test_fitting_every_column_repaints_the_rows_once_not_once_a_column(qtbot):
    """Issue 38: after a compare of 2 x 5,000 points, each column fitted (one a turn) repainted
    the table, 10-28 ms each; the rows repaint once the last column is fitted, and at a wait for
    the charts (what is fitted so far shows while they draw)."""
    from PySide6.QtCore import QEvent, QObject

    from panels.table import ResultsTable

    class Paints(QObject):
        count = 0

        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                Paints.count += 1
            return False
    t = ResultsTable()
    qtbot.addWidget(t)
    t.resize(900, 300)
    t.show()
    t.results.attach([row("numpy", 1024 * 2 ** i, 1e-3) for i in range(20)])
    qtbot.waitExposed(t)
    paints = Paints()
    t.viewport().installEventFilter(paints)
    t.fit_columns()
    columns = len(t.columns_to_fit)
    assert columns > 10
    qtbot.waitUntil(lambda: not t.columns_to_fit and t.viewport().updatesEnabled(), timeout=10_000)
    qtbot.wait(50)                                  # the repaint asked at the end is painted
    assert 1 <= Paints.count <= 2, Paints.count
    drawing = [True]
    t.wait_while = lambda: drawing[0]
    t.fit_columns()
    t.fit_some()
    assert t.viewport().updatesEnabled()            # waiting: the table paints as it is
    t.stop_fitting()


@pytest.mark.parametrize("notches", [1, 3])
def test_a_wheel_notch_repaints_the_chart_once(qtbot, plots, notches):
    """pyqtgraph applies a new view range in the paint event, and the items' changes then asked for a
    second repaint of the whole chart (14.6 + 6.6 ms in one turn at 5,000 points, issue 38): the
    range is applied as the wheel moves it, so the chart repaints once a notch."""
    from PySide6.QtCore import QEvent, QObject, QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication
    frame = results.to_frame([row(b, 1024 * 2 ** i, t * 2 ** i) for b, t in (("numpy", 1e-3), ("numba", 4e-4))
                              for i in range(12)])
    plots.update_from(frame)
    chart = plots.runtimePlot
    qtbot.waitUntil(lambda: chart.getViewBox().width() > 100, timeout=5_000)
    vp = chart.viewport()

    class Paints(QObject):
        n = 0

        def eventFilter(self, obj, event):
            Paints.n += event.type() == QEvent.Type.Paint
            return False
    paints = Paints()
    vp.installEventFilter(paints)
    for _ in range(20):                  # the update's own repaints, done
        QApplication.processEvents()
    for _ in range(notches):
        before = chart.getViewBox().viewRange()
        Paints.n = 0
        at = QPointF(vp.width() / 2, vp.height() / 2)
        QApplication.sendEvent(vp, QWheelEvent(at, chart.mapToGlobal(at), QPoint(0, 0), QPoint(0, 120),
                                               Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                               Qt.ScrollPhase.NoScrollPhase, False))
        for _ in range(10):              # every repaint the notch asked for, and those they asked for
            QApplication.processEvents()
        assert chart.getViewBox().viewRange() != before
        assert Paints.n == 1
