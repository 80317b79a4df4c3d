"""Issue 38: the workbench's own headline sweep, source_terms with seven backends over nine sizes on
an H200 (docs/h200), must be readable in the window and the exports alike: the transfer chart as
lines of shares rather than 63 bars, notes under the plot rather than over the lines, rings
under the lines rather than over them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from helpers import result_set
from test_gui import window  # noqa: F401 - the fixture

from workbench.results.files import open_results
from workbench.views import matplotlib_charts as charts
from workbench.views import spec
from workbench.views.spec import transfer

H200 = Path(__file__).resolve().parents[1] / "docs" / "h200" / "source_terms-float32-mixed.csv"


@pytest.fixture(scope="module")
def h200():
    return open_results(H200)


def test_seven_backends_draw_the_transfer_shares_as_lines(h200):
    chart = spec.build("transfer", [h200])
    gpu = {"cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4"}
    assert not chart.bars
    assert {(s.role, s.backend) for s in chart.series} == {(r, b) for r in ("copies", "h2d") for b in gpu}
    for s in chart.series:
        assert len(s.xs) == 9 and all(0 <= y <= 100 for y in s.ys)
    copies = {s.backend: s.ys for s in chart.series if s.role == "copies"}
    h2d = {s.backend: s.ys for s in chart.series if s.role == "h2d"}
    # Host to device is part of the copies: device to host is the gap, compute the rest above.
    assert all(c >= h - 1e-9 for b in gpu for c, h in zip(copies[b], h2d[b]))
    assert {e.label for e in chart.legend if e.role == "key"} == {transfer.COPIES, transfer.H2D_ALONE}


def test_the_transfer_lines_are_drawn_a_line_a_step_as_at_once(qtbot, h200):
    """A live panel draws a chart a step at a time: the transfer chart's lines one a step (twenty
    lines of 500 sizes at once were 76 ms of the GUI thread, issue 38), ending as drawn at once."""
    from panels.transfer_chart import TransferChart
    chart = spec.build("transfer", [h200])
    stepped, whole = TransferChart(), TransferChart()
    for c in (stepped, whole):
        qtbot.addWidget(c)
    steps = stepped.draw_steps(chart)
    for i, s in enumerate(chart.series):
        next(steps)
        assert len(stepped.series) == i + 1 and list(stepped.series[s.key].getData()[1]) == list(s.ys)
    assert list(steps) == [None]                # then the bars (none here), a step of their own
    whole.draw_content(chart)
    assert stepped.series.keys() == whole.series.keys() and stepped.meta == whole.meta
    assert stepped.bars_drawn() == whole.bars_drawn()
    bars = spec.build("transfer", [result_set()])
    assert len(list(stepped.draw_steps(bars))) == 1
    assert all(c.getData()[0] is None or not len(c.getData()[0]) for c in stepped.series.values())
    assert stepped.bars_drawn().keys() == {"cupy"}


def test_one_gpu_backend_keeps_its_bars():
    chart = spec.build("transfer", [result_set()])
    assert [b.backend for b in chart.bars] == ["cupy"] and not chart.series


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_the_exported_note_lies_outside_the_plot(h200):
    with charts.style(charts.preset()):
        fig = charts.figure("memory", [h200])
        FigureCanvasAgg(fig).draw()
        ax = fig.axes[0]
        notes = [t for sub in fig.subfigs for t in sub.texts if t.get_gid() == "note"]
        assert len(notes) == 1 and "not drawn on the log scale" in " ".join(notes[0].get_text().split())
        box = notes[0].get_window_extent()
        assert not _overlaps(box, ax.get_window_extent()), (box, ax.get_window_extent())
        # The plot keeps the figure's width: a long note once pushed it to the right half.
        assert ax.get_window_extent().width > 0.6 * fig.bbox.width


def test_the_window_note_lies_under_the_plot(qtbot, h200):
    from panels.charts import MemoryChart
    from workbench.views.compare import Overlay
    chart = MemoryChart()
    qtbot.addWidget(chart)
    chart.resize(320, 200)          # its cell in a 1280x720 window
    chart.show()
    chart.update_from(Overlay.of([h200]))
    qtbot.waitUntil(lambda: chart.note.isVisible() and chart.note.sceneBoundingRect().height() > 0, timeout=5_000)
    view, note = chart.getViewBox().sceneBoundingRect(), chart.note.sceneBoundingRect()
    assert note.top() >= view.bottom() - 0.5, (note, view)
    assert view.left() - 1 <= note.left() and note.right() <= view.right() + 1, (note, view)
    assert chart.notes() == list(chart.spec.notes)


def test_rings_lie_under_the_lines_in_both_renderers(qtbot):
    from panels.charts import SpeedupChart
    from test_speedup_noise import with_intervals
    from workbench.views.compare import Baseline, Overlay
    rs = with_intervals({"slight": 0.10}, {"twin": 1.0, "slight": 1.04})
    assert spec.RING_SCALE < 2
    with charts.style(charts.preset()):
        fig = charts.figure("speedup", [rs], baseline_name="numpy")
    lines = fig.axes[0].get_lines()
    rings = [ln for ln in lines if (ln.get_gid() or "").startswith("series-speedup-within-noise")]
    drawn = [ln for ln in lines if ln not in rings and (ln.get_gid() or "").startswith("series-speedup-compute")]
    assert rings and drawn and max(r.get_zorder() for r in rings) < min(ln.get_zorder() for ln in drawn)
    assert all(r.get_markerfacecolor() == "none" for r in rings)
    chart = SpeedupChart()
    qtbot.addWidget(chart)
    chart.set_baseline(Baseline("numpy"))
    chart.update_from(Overlay.of([rs]))
    shown = list(chart.rings.stamps.values())
    assert shown and all(chart.rings.zValue() < curve.zValue() for curve in chart.series.values())
    assert all(np.allclose(stamp.size, chart.look.marker_px * spec.RING_SCALE) for stamp in shown)


@pytest.mark.parametrize("kind", ["transfer", "memory", "speedup", "roofline"])
def test_the_window_and_the_export_draw_the_same_h200_chart(qtbot, h200, kind):
    """tests/test_chart_parity.py's comparison, on the sweep of the issue; the roofline's top tick
    ("100,000") too, which the window left out until its axis had been painted once."""
    from panels.axes import text_rects
    from panels.plots import PlotsPanel
    from test_chart_parity import exported, window_drew
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(3000, 1800)
    panel.show()
    panel.update_from([h200])
    chart = next(c for c in panel.plots() if c.kind == kind)
    if chart in panel.alone:
        panel.alone[chart].setChecked(True)
    qtbot.waitUntil(lambda: chart.getViewBox().width() > 300 and bool(text_rects(chart.getAxis("left"))), timeout=5_000)
    ex, win = exported(kind, [h200]), window_drew(panel, kind)
    for axis in ("x ticks", "y ticks"):
        assert [t for _, t in win[axis]] == [t for _, t in ex[axis]], axis
    for what in ("title", "x label", "y label", "bars", "legend", "texts"):
        assert win[what] == ex[what], what
    assert sorted(win["series"]) == sorted(ex["series"])
    for name, drawn in ex["series"].items():
        mine = win["series"][name]
        assert (mine["line"], mine["colour"], mine["filled"]) == (drawn["line"], drawn["colour"], drawn["filled"]), name
        assert np.allclose(np.asarray(mine["segments"][0]), np.asarray(drawn["segments"][0])), name


@pytest.fixture
def shown_h200(qtbot, window, h200):
    """Shows the H200 sweep in the window at a size, in a mode; returns the window."""
    w = window

    def show(width: int, height: int, presenting: bool = False):
        if presenting != w.presentationAction.isChecked():
            w.presentationAction.trigger()
        w.resize(width, height)
        qtbot.waitUntil(lambda: w.width() == width and w.height() == height, timeout=5_000)
        w.plots.update_from([h200])
        qtbot.wait(300)           # laid out and painted, as a person sees it
        return w
    return show


def test_every_key_is_drawn_whole_at_1280x720(shown_h200):
    """The transfer chart's key ran past its chart ("host to d..."), the strip's band entry was
    elided ("runtime band: q1 to q3 of the samples (no inter..."): each text drawn whole, in view."""
    w = shown_h200(1280, 720)
    for chart in w.plots.plots():
        if not chart.isVisible() or chart.spec is None:
            continue
        wanted = [e.label for e in chart.spec.legend if e.role in ("key", "ring")]
        assert chart.key_labels() == wanted, chart.kind
        for _, label in chart.legend.items:
            r = chart.mapFromScene(label.item.sceneBoundingRect()).boundingRect()
            assert chart.viewport().rect().contains(r), (chart.kind, label.text, r, chart.viewport().rect())
    strip = w.plots.legendStrip
    from PySide6.QtWidgets import QLabel
    texts = [q for q in strip.findChildren(QLabel) if q.isVisible() and q.text()]
    assert sorted(q.text() for q in texts) == sorted(strip.entries)
    assert any(t.startswith("runtime band: q1 to q3 of the samples (no interval in the file)") for t in strip.entries)
    for q in texts:
        r = q.rect().translated(q.mapTo(strip, q.rect().topLeft()))
        assert strip.rect().contains(r), (q.text(), r, strip.rect())


def test_the_transfer_chart_keeps_its_end_ticks_in_presentation_at_1920x1080(shown_h200):
    """0 and 100 % lie at the ends of the axis: their labels, half a presentation font's height past
    it, were dropped by pyqtgraph (the window showed 25, 50, 75; the export all five)."""
    from panels.axes import text_rects
    w = shown_h200(1920, 1080, presenting=True)
    chart = w.plots.transferPlot
    assert [t for _, t in sorted(text_rects(chart.getAxis("left")), key=lambda rt: -rt[0].center().y())] == \
        list(chart.spec.y.tick_labels) == ["0", "25", "50", "75", "100"]


EXPORTS = Path(__file__).resolve().parents[1] / "docs" / "exports" / "source_terms-float32.csv"


def _sets(n: int):
    """``n`` sets that differ in their GPU and every library: long labels of what differs."""
    return [result_set(gpu=f"NVIDIA H{100 + 100 * i} with a long marketing name",
                       libraries={"numpy": f"2.{i}.0", "numba": f"0.6{i}.0", "cupy-cuda12x": f"13.{i}.0",
                                  "pandas": f"2.{i}.1"}) for i in range(n)]


@pytest.mark.parametrize("size", ["slide", "1280x720", "paper"])
@pytest.mark.parametrize("which", ["h200-and-cpu", "four-sets", "twelve-sets"])
def test_an_exported_legend_of_compared_sets_lies_whole_beside_the_plot(h200, size, which):
    """Compared sets are named by what differs, a list as long as a slide is wide: unwrapped, the
    legend fell over the plot without its signs and the layout collapsed (issue 38)."""
    import warnings
    sets = [h200, open_results(EXPORTS)] if which == "h200-and-cpu" else _sets(4 if which == "four-sets" else 12)
    p = charts.preset(size=(1280, 720)) if size == "1280x720" else charts.preset(size)
    for kind in ("runtime", "speedup", "memory", "first-call", "transfer"):
        with charts.style(p), warnings.catch_warnings():
            warnings.simplefilter("error")           # "constrained_layout not applied" among them
            fig = charts.figure(kind, sets, p)
            FigureCanvasAgg(fig).draw()          # a Figure's own canvas draws nothing: no layout
        legend = [lg for sub in fig.subfigs for lg in sub.legends] + list(fig.legends)
        assert len(legend) == 1, kind
        box, ax, whole = legend[0].get_window_extent(), fig.axes[0].get_window_extent(), fig.bbox
        assert not _overlaps(box, ax), (kind, box, ax)
        assert whole.x0 - 1 <= box.x0 and box.x1 <= whole.x1 + 1 and whole.y0 - 1 <= box.y0 and box.y1 <= whole.y1 + 1, \
            (kind, box, whole)
        # Every entry keeps its sign, left of its text, inside the figure.
        for handle, text in zip(legend[0].legend_handles, legend[0].get_texts()):
            sign = handle.get_window_extent(fig.canvas.get_renderer())
            assert whole.x0 - 1 <= sign.x0 and sign.x1 <= text.get_window_extent().x0 + 1, (kind, text.get_text())
        # A set's label breaks only where it has a space (between the things that differ, first),
        # and reads back whole; a backend's name never breaks.
        labels = {e.label for e in spec.build(kind, sets).legend}
        for text in legend[0].get_texts():
            assert " ".join(text.get_text().split("\n")) in labels, (kind, text.get_text())
            if "," not in text.get_text() and " " not in text.get_text():
                assert "\n" not in text.get_text()
        assert ax.width > (0.3 if which == "twelve-sets" else 0.45) * whole.width, (kind, ax, whole)
        # A slide keeps a quarter of its height for the plot; a paper column grows, its plot 1.2 in at least.
        assert ax.height > 0.25 * whole.height if size != "paper" else ax.height / p.dpi > 1.2, (kind, ax, whole)
