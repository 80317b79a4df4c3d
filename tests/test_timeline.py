"""A point's timeline (issue 37) on synthetic CUPTI records: its lanes, that its bars are the kernel
records the row counts, the Chrome trace it exports (checked against the Trace Event Format), the
chart both renderers draw, the window's click that opens it, and the command line's --point."""
from __future__ import annotations

import itertools
import json
import math
import re

import numpy as np
import pytest

from workbench.measure.gpu import kernels
from workbench.measure.gpu.kernels import Activity
from workbench.results import files
from workbench.results import rows as R
from workbench.results.files import ResultSet
from workbench.views import spec, timeline, trace
from workbench.views import matplotlib_charts as charts

pytest.importorskip("pytestqt")

STREAMS = (13, 14, 15)
CHUNK = 2 ** 22          # bytes per copy


def overlapped(chunks: int = 9) -> list[Activity]:
    """A call of ``chunks`` chunks dealt over three streams: each copied in, computed, copied out on
    its stream, the next stream starting a copy later, so that copies and kernels of different
    streams run at once; the driver calls that launched each, and the host's one phase."""
    copy, kernel, gap = 400e-6, 150e-6, 5e-6
    acts = [Activity("phase", "call", chunks * copy + copy + kernel + 3 * gap, 0.0)]
    for j in range(chunks):
        s, t = STREAMS[j % 3], j * copy
        corr = 10 * j
        acts += [Activity("copy", "htod", copy, t, s, corr + 1, CHUNK, "pinned"),
                 Activity("kernel", "overlap_recurrence_float32", kernel, t + copy + gap, s, corr + 2),
                 Activity("copy", "dtoh", copy, t + copy + kernel + 2 * gap, s, corr + 3, CHUNK, "pinned"),
                 Activity("api", "cuMemcpyHtoDAsync", 4e-6, j * 15e-6, -1, corr + 1),
                 Activity("api", "cuLaunchKernel", 3e-6, j * 15e-6 + 5e-6, -1, corr + 2),
                 Activity("api", "cuMemcpyDtoHAsync", 3e-6, j * 15e-6 + 9e-6, -1, corr + 3)]
    acts.append(Activity("api", "cuStreamSynchronize", 2e-3, chunks * 15e-6, -1, 999))
    return acts


def gpu_row(acts, variant="pinned 3 streams", **kw) -> dict:
    h2d = sum(a.seconds for a in acts if a.kind == "copy" and a.name == "htod")
    d2h = sum(a.seconds for a in acts if a.kind == "copy" and a.name == "dtoh")
    base = dict(workload="overlap", backend="cupy", size=2 ** 24, dtype="float32", variant=variant, status="ok",
                host_memory="pinned", kernels=kernels.encode(acts), kernel_count=sum(a.kind == "kernel" for a in acts),
                h2d_s=h2d, d2h_s=d2h, compute_median_s=150e-6 * 9, total_median_s=4.2e-3, repeats=10,
                device="GPU: synthetic")
    return dict(R.Row(**{**base, **kw}))


def a_set(*rows) -> ResultSet:
    return ResultSet(R.to_frame(list(rows)))


# The layout ---------------------------------------------------------------------------------------

def test_the_lanes_are_the_host_then_each_stream_and_the_bars_are_the_counted_records():
    acts = overlapped()
    row = gpu_row(acts)
    tl = timeline.of_row(row)
    assert tl.lanes == (timeline.HOST_PHASES, timeline.HOST_CALLS) + tuple(f"stream {s}" for s in STREAMS)
    gpu = [s for s in tl.spans if s.kind in kernels.GPU_KINDS]
    recorded = [a for a in kernels.decode(row["kernels"]) if a.on_gpu]
    # The same activities as the kernel records, with the same durations, on their own streams' lanes.
    assert sorted((s.name, round(s.end - s.start, 12), s.stream) for s in gpu) == \
        sorted((a.name, round(a.seconds, 12), a.stream) for a in recorded)
    assert sum(s.kind == "kernel" for s in gpu) == row["kernel_count"] == 9
    assert all(tl.lanes[s.lane] == f"stream {s.stream}" for s in gpu)
    # Activities of different streams overlap in time: the layout keeps them apart by lane only.
    by_lane = {}
    for s in gpu:
        by_lane.setdefault(s.lane, []).append((s.start, s.end))
    starts = sorted((a, b, lane) for lane, spans in by_lane.items() for a, b in spans)
    assert any(b1 > a2 and l1 != l2 for (a1, b1, l1), (a2, b2, l2) in zip(starts, starts[1:]))
    for spans in by_lane.values():          # within one stream, in order, never overlapping
        spans.sort()
        assert all(b <= c + 1e-12 for (_, b), (c, _) in zip(spans, spans[1:]))
    # The copies one way add up to the row's copy time; the hover names each bar with its bytes.
    assert timeline.copy_seconds(tl, "h2d") == pytest.approx(row["h2d_s"])
    assert timeline.copy_seconds(tl, "d2h") == pytest.approx(row["d2h_s"])
    h2d = next(s for s in gpu if s.group == "h2d")
    assert "4 MiB pinned" in h2d.hover and "stream 13" in h2d.hover and "GB/s" in h2d.hover


def test_records_of_an_older_file_without_starts_give_the_timed_phases_and_say_so():
    old = json.dumps([["kernel", "k", 1e-3], ["copy", "htod", 2e-3]])
    row = dict(gpu_row(overlapped()), kernels=old, h2d_s=2e-3, d2h_s=3e-3, compute_median_s=1e-3)
    tl = timeline.of_row(row)
    assert [(s.name, s.start, s.end) for s in tl.spans] == [("h2d", 0, 2e-3), ("compute", 2e-3, 3e-3),
                                                             ("d2h", 3e-3, pytest.approx(6e-3))]
    assert "no CUPTI records" in tl.source
    assert kernels.decode(old) == [Activity("kernel", "k", 1e-3), Activity("copy", "htod", 2e-3)]


def test_a_cpu_point_shows_its_stages_in_order_else_its_one_phase():
    staged = dict(R.Row(workload="pipeline", backend="numpy", size=1000, dtype="float32", status="ok",
                        compute_median_s=3e-3, total_median_s=3e-3,
                        stages=R.encode_stages({"load": 1e-3, "load->filter": 2e-4, "filter": 1.8e-3})))
    tl = timeline.of_row(staged)
    assert [(s.name, s.kind) for s in tl.spans] == [("load", "stage"), ("load->filter", "stage"), ("filter", "stage")]
    assert tl.spans[1].start == pytest.approx(1e-3) and tl.end == pytest.approx(3e-3)
    plain = dict(R.Row(workload="fft", backend="numpy", size=1000, dtype="float32", status="ok",
                       compute_median_s=2e-3, total_median_s=2e-3))
    tl = timeline.of_row(plain)
    assert tl.lanes == ("host",) and [(s.name, s.end) for s in tl.spans] == [("compute", 2e-3)]


def test_the_point_is_the_one_named_else_the_largest_with_the_most_records():
    small = gpu_row(overlapped(3), size=2 ** 20)
    big = gpu_row(overlapped(9), size=2 ** 24)
    seq = gpu_row(overlapped(1), size=2 ** 24, variant="pinned sequential")
    rows = [small, seq, big]
    assert timeline.pick(rows) is big
    assert timeline.pick(rows, "cupy", 2 ** 24, "pinned sequential") is seq
    assert timeline.pick(rows, "numba-cuda") is None


# The Chrome trace ---------------------------------------------------------------------------------

def check_trace_event_format(doc: dict) -> None:
    """The Trace Event Format's rules for what the exporter writes (the JSON Object Format with
    complete, metadata and flow events), as chrome://tracing and Perfetto's importer read them."""
    assert set(doc) >= {"traceEvents"} and isinstance(doc["traceEvents"], list)
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    flows: dict = {}
    for e in doc["traceEvents"]:
        assert isinstance(e.get("name"), str) and e["ph"] in ("X", "M", "s", "f"), e
        assert isinstance(e["pid"], int) and isinstance(e.get("tid", 0), int), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)), e
            assert math.isfinite(e["ts"]) and e["ts"] >= 0 and math.isfinite(e["dur"]) and e["dur"] >= 0, e
            assert isinstance(e.get("args", {}), dict) and isinstance(e.get("cat", ""), str), e
        elif e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name", "thread_sort_index", "process_sort_index"), e
            assert isinstance(e["args"], dict) and e["args"], e
        else:
            assert isinstance(e["id"], (int, str)) and isinstance(e["cat"], str) and math.isfinite(e["ts"]), e
            flows.setdefault((e["cat"], e["id"]), []).append(e["ph"])
    for phases in flows.values():      # each flow starts once and ends once
        assert sorted(phases) == ["f", "s"], phases


def test_the_trace_keeps_every_bar_a_track_per_lane_and_the_correlations(tmp_path):
    row = gpu_row(overlapped())
    path = tmp_path / "point.json"
    trace.write(row, path, "results.json")
    doc = json.loads(path.read_text())
    check_trace_event_format(doc)
    tl = timeline.of_row(row)
    complete = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(tl.spans)
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert [names[i] for i in range(len(tl.lanes))] == list(tl.lanes)
    for e, s in zip(complete, tl.spans):
        assert e["ts"] == pytest.approx(s.start * 1e6) and e["dur"] == pytest.approx((s.end - s.start) * 1e6)
        assert names[e["tid"]] == tl.lanes[s.lane]
    gpu = [e for e in complete if e["cat"] in ("h2d", "compute", "d2h")]
    assert {e["args"]["correlation"] for e in gpu} == {a.correlation for a in overlapped() if a.on_gpu}
    # Each launch is tied to the work it launched: a flow per kernel and copy, none for the wait.
    assert sum(e["ph"] == "s" for e in doc["traceEvents"]) == len(gpu)


def test_the_trace_is_refused_for_another_kind_and_for_a_point_not_there(tmp_path):
    rs = a_set(gpu_row(overlapped()))
    with pytest.raises(ValueError, match="Chrome trace"):
        charts.export([rs], tmp_path / "x.json", "runtime")
    with pytest.raises(ValueError, match="no point"):
        charts.export([rs], tmp_path / "x.json", "timeline", point=("numba-cuda", 2 ** 24, None))
    assert not (tmp_path / "x.json").exists()


def test_a_written_trace_replaces_a_symlink_not_its_target(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    link = tmp_path / "t.json"
    link.symlink_to(target)
    trace.write(gpu_row(overlapped()), link)
    assert target.read_text() == "keep me"
    check_trace_event_format(json.loads(link.read_text()))


# The chart, both renderers ---------------------------------------------------------------------

def drawn_by_export(rs, point):
    with charts.style(charts.preset()):
        fig = charts.figure("timeline", [rs], stamp=False, point=point)
        fig.draw_without_rendering()
    ax = fig.axes[0]
    bars = sorted((round(p.get_y() + p.get_height() / 2, 6), round(p.get_x(), 9), round(p.get_x() + p.get_width(), 9),
                   re.sub("^series-timeline-span-", "", p.get_gid() or ""))
                  for p in ax.patches if (p.get_gid() or "").startswith("series-timeline-span"))
    ticks = [t.get_text() for v, t in zip(ax.get_yticks(), ax.get_yticklabels())]
    return ax.get_title(), bars, ticks, [t.get_text() for t in ax.get_xticklabels()]


def test_the_window_and_the_export_draw_the_same_timeline(qtbot):
    from panels.timeline_chart import TimelineChart
    row = gpu_row(overlapped())
    rs = a_set(row, gpu_row(overlapped(1), variant="pinned sequential"))
    point = ("cupy", 2 ** 24, "pinned 3 streams")
    chart = TimelineChart()
    qtbot.addWidget(chart)
    chart.resize(1200, 500)
    chart.show()
    chart.show_point([rs], point)
    title, bars, y_ticks, x_ticks = drawn_by_export(rs, point)
    mine = sorted((round(float(y), 6), round(a, 9), round(b, 9), group.replace(" ", "_"))
                  for y, a, b, group in chart.spans_drawn())
    assert mine == bars and len(bars) == len(timeline.of_row(row).spans)
    assert re.sub(r"<[^>]+>", "", chart.getPlotItem().titleLabel.text) == title
    assert chart.spec.y.tick_labels == tuple(y_ticks)
    assert list(chart.spec.x.tick_labels) == [t for t in x_ticks if t]
    assert chart.spec.x.label.endswith("(µs)")
    # Each bar's hover names it: the pointer over the middle of stream 14's first copy in.
    span = next(s for s in chart.spec.spans if "htod" in s.hover and "stream 14" in s.hover)
    from PySide6.QtCore import QPointF
    scene = chart.getViewBox().mapViewToScene(QPointF((span.start + span.end) / 2, span.lane))
    assert chart.hover_text(scene) == span.hover.replace("&", "&amp;")


def test_a_timeline_for_no_point_says_so_in_both_renderers():
    rs = a_set(gpu_row(overlapped()))
    c = spec.build("timeline", [rs], point=("numba", 1, None))
    assert c.empty.startswith("No point to lay out") and not c.spans
    with charts.style(charts.preset()):
        charts.figure("timeline", [rs], point=("numba", 1, None)).draw_without_rendering()


def test_names_with_markup_stay_text(qtbot):
    acts = [Activity("kernel", "<b>k</b>&=1+1", 1e-3, 0.0, 7, 1), Activity("phase", "call", 1e-3, 0.0)]
    row = gpu_row(acts, backend="<i>mine</i>", variant="=HYPERLINK(1)")
    from panels.timeline_chart import TimelineChart
    chart = TimelineChart()
    qtbot.addWidget(chart)
    chart.resize(800, 300)
    chart.show()
    chart.show_point([a_set(row)], ("<i>mine</i>", 2 ** 24, None))
    s = next(x for x in chart.spec.spans if "k</b>" in x.hover)
    from PySide6.QtCore import QPointF
    text = chart.hover_text(chart.getViewBox().mapViewToScene(QPointF((s.start + s.end) / 2, s.lane)))
    assert "&lt;b&gt;k&lt;/b&gt;&amp;=1+1" in text and "<b>" not in text
    assert "&lt;i&gt;mine&lt;/i&gt;" in chart.getPlotItem().titleLabel.text     # the title is text too
    with charts.style(charts.preset()):
        charts.figure("timeline", [a_set(row)]).draw_without_rendering()


# The window -------------------------------------------------------------------------------------

@pytest.fixture
def window(qtbot, tmp_path):
    from PySide6.QtCore import QSettings
    from panels.window import MainWindow
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    with qtbot.waitSignal(w.ready, timeout=120_000):
        pass
    yield w
    w.close()


def click_at(qtbot, chart, x: float, y: float) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    scene = chart.getViewBox().mapViewToScene(QPointF(x, y))
    at = chart.mapFromScene(scene)
    qtbot.mouseClick(chart.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(at.x()), int(at.y())))


def test_a_click_on_a_chart_point_or_a_table_row_opens_that_points_timeline(qtbot, window, tmp_path):
    w = window
    seq = gpu_row(overlapped(1), variant="pinned sequential", total_median_s=9e-3)
    over = gpu_row(overlapped(), total_median_s=4.2e-3)
    path = tmp_path / "overlap.json"
    files.write(a_set(seq, over), path)
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):     # every chart drawn, off the GUI thread
        assert w.files.open_results([str(path)])
    assert w.timeline is None                 # not made until asked: nothing at start-up
    chart = w.runtimePlot
    qtbot.waitUntil(lambda: any(k[0] == "total" and chart.series[k].xData is not None and len(chart.series[k].xData)
                                for k in chart.series) and not w.plots.laying_out, timeout=20_000)
    with qtbot.waitSignal(chart.pointClicked, timeout=5_000) as clicked:
        click_at(qtbot, chart, math.log10(2 ** 24), math.log10(4.2e-3))
    assert clicked.args[0][:3] == ("cupy", "pinned 3 streams", 2 ** 24)
    view = w.timeline
    assert view is not None and view.isVisible()
    assert view.chart.spec.title == "Timeline: cupy (pinned 3 streams) at 2^24"
    assert len(view.chart.spans_drawn()) == len(timeline.of_row(over).spans)
    # A row of the table: the sequential one.
    table = w.resultsTable
    n = next(i for i in range(table.results.rowCount()) if table.results.row_of(i)[1]["variant"] == "pinned sequential")
    index = table.proxy.mapFromSource(table.results.index(n, 0))
    rect = table.visualRect(index)
    from PySide6.QtCore import Qt
    with qtbot.assertNotEmitted(table.pointClicked):     # one click selects, opens nothing (emitted at once if at all)
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(table.pointClicked, timeout=5_000):
        qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert w.timeline is view and "pinned sequential" in view.chart.spec.title
    # Its export: the dialog offers the trace for this point, and the file is a trace of it.
    dialog = w.files.ask_export_timeline(view.chart.point)
    assert dialog.kindCombo.currentData() == "timeline" and dialog.formatCombo.findData(".json") >= 0
    dialog.pathEdit.setText(str(tmp_path / "seq.json"))
    with qtbot.waitSignal(w.files.exported, timeout=60_000):
        dialog.try_accept()
    doc = json.loads((tmp_path / "seq.json").read_text())
    check_trace_event_format(doc)
    assert "pinned sequential" in doc["otherData"]["point"]
    # Other sets on screen: the timeline of the old point goes, its Export with it.
    files.write(a_set(gpu_row(overlapped(), size=2 ** 20)), tmp_path / "other.json")
    with qtbot.waitSignal(w.files.opened, timeout=60_000):
        assert w.files.open_results([str(tmp_path / "other.json")])
    assert not view.isVisible()


# The command line -------------------------------------------------------------------------------

def test_plot_writes_the_trace_of_the_point_named(tmp_path, capsys):
    from workbench.cli import main
    path = tmp_path / "r.json"
    files.write(a_set(gpu_row(overlapped()), gpu_row(overlapped(1), variant="pinned sequential")), path)
    assert main(["plot", str(path), "--kind", "timeline", "--point", "cupy@2^24:pinned sequential",
                 "--chart", str(tmp_path / "t.json")]) == 0
    doc = json.loads((tmp_path / "t.json").read_text())
    check_trace_event_format(doc)
    assert "pinned sequential" in doc["otherData"]["point"]
    assert main(["plot", str(path), "--kind", "timeline", "--chart", str(tmp_path / "t.png")]) == 0
    for bad in ("cupy", "cupy@", "@2^24", "cupy@lots"):
        assert main(["plot", str(path), "--kind", "timeline", "--point", bad, "--chart", str(tmp_path / "u.json")]) == 2
        assert "--point" in capsys.readouterr().err
    assert main(["plot", str(path), "--kind", "timeline", "--point", "numba@2^24", "--chart",
                 str(tmp_path / "u.json")]) == 1
    assert not (tmp_path / "u.json").exists()
    assert main(["plot", str(path), "--kind", "runtime", "--chart", str(tmp_path / "u.json")]) == 2
    assert "Chrome trace" in capsys.readouterr().err
    assert not (tmp_path / "u.json").exists()


# The recorder, on a stand-in for cupti-python -------------------------------------------------------

@pytest.fixture
def fake_cupti(monkeypatch):
    import sys
    import types
    import fake_cupti as fc
    fc.reset()
    package = types.ModuleType("cupti")
    package.cupti = fc
    monkeypatch.setitem(sys.modules, "cupti", package)
    monkeypatch.setitem(sys.modules, "cupti.cupti", fc)
    monkeypatch.setattr(kernels, "_registered", False)
    return fc


def test_the_recorder_keeps_the_median_call_its_launches_and_waits_and_drops_the_rest(fake_cupti):
    """Three calls recorded, of 3, 1 and 2 ms of compute: the 2 ms one is kept. Its host lanes hold
    the engine's phases, the runtime copy and driver launch that made its GPU work (by correlation
    id) and the wait, not the context queries; a copy keeps its bytes and its pinned memory."""
    from workbench.catalog.workloads import Phases
    from workbench.measure import untimed
    fc = fake_cupti
    K = fc.ActivityKind
    lengths = iter([3e-3, 1e-3, 2e-3, 9e-3])
    corr = itertools.count(100)

    def h2d():
        c = next(corr)
        fc.emit(K.RUNTIME, 5e-6, cbid=1, correlation_id=c)
        fc.emit(K.DRIVER, 1e-6, cbid=2, correlation_id=next(corr))           # a context query
        fc.emit(K.MEMCPY, 1e-3, copy_kind=1, src_kind=2, dst_kind=3, bytes=2 ** 20, stream_id=7,
                correlation_id=c)

    def compute():
        c = next(corr)
        fc.emit(K.DRIVER, 4e-6, cbid=1, correlation_id=c)
        fc.emit(K.CONCURRENT_KERNEL, next(lengths), name="step", stream_id=7, correlation_id=c)

    class Session:
        def timed(self, fn):
            return 0.0, fn()

        def synchronize(self):
            fc.emit(K.DRIVER, 2e-6, cbid=3, correlation_id=next(corr))

    phases = Phases(compute=compute, h2d=h2d)
    out = untimed.kernels_of(phases, Session())          # a warm call (3 ms), then 1, 2 and 9 ms
    acts = kernels.decode(out["kernels"])
    assert out["kernel_count"] == 1
    [kernel] = [a for a in acts if a.kind == "kernel"]
    assert kernel.seconds == pytest.approx(2e-3) and kernel.stream == 7
    [copy] = [a for a in acts if a.kind == "copy"]
    assert (copy.name, copy.nbytes, copy.memory) == ("htod", 2 ** 20, "pinned")
    calls = sorted(a.name for a in acts if a.kind == "api")
    assert calls == ["cuLaunchKernel", "cuStreamSynchronize", "cudaMemcpyAsync"]
    assert [a.name for a in acts if a.kind == "phase"] == ["h2d", "compute", "synchronize"]
    assert all(a.start >= 0 for a in acts)
    launch = next(a for a in acts if a.name == "cuLaunchKernel")
    assert launch.correlation == kernel.correlation and launch.start <= kernel.start
    tl = timeline.of_row(gpu_row(acts))
    assert tl.lanes == (timeline.HOST_PHASES, timeline.HOST_CALLS, "stream 7")
    assert fake_cupti.state.registrations == 1 and not fake_cupti.state.enabled    # all disabled after


def test_the_traces_exported_on_the_h200_pass_the_format_check():
    """docs/exports holds traces of real points (the overlap workload on the H200): each is held to
    the Trace Event Format as the exporter's own output is."""
    from pathlib import Path
    traces = sorted((Path(__file__).resolve().parents[1] / "docs" / "exports").glob("*.trace.json"))
    assert traces
    for path in traces:
        doc = json.loads(path.read_text())
        check_trace_event_format(doc)
        lanes = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
        assert any(name.startswith("stream ") for name in lanes), path.name
        assert sum(e["ph"] == "X" and e["cat"] == "compute" for e in doc["traceEvents"]) >= 4, path.name


def test_a_point_not_measured_ok_or_without_records_is_drawn_as_what_it_was():
    failed = dict(gpu_row(overlapped()), status="error", message="out of device memory")
    tl = timeline.of_row(failed)
    assert not tl.spans and "not measured ok (error)" in tl.note
    with pytest.raises(ValueError, match="not measured ok"):
        trace.chrome_trace(failed)
    # An overlapped call with no records is one bar of its own time, not its phases end to end.
    bare = dict(gpu_row(overlapped()), kernels="", overlapped=True, h2d_s=3e-3, d2h_s=3e-3,
                compute_median_s=1e-3, total_median_s=4.2e-3)
    tl = timeline.of_row(bare)
    assert [(s.name, s.end) for s in tl.spans] == [("call", pytest.approx(4.2e-3))]
    seq = dict(bare, overlapped=False)
    assert timeline.of_row(seq).end == pytest.approx(7e-3)
    # The default point is a GPU one, even where a CPU row has the larger size.
    cpu = dict(R.Row(workload="overlap", backend="numba", size=2 ** 26, dtype="float32", status="ok",
                     variant="pinned 4 streams", compute_median_s=1.0, total_median_s=1.0))
    assert timeline.pick([cpu, bare])["backend"] == "cupy"


def test_the_limit_is_shown_for_overlapped_calls_and_no_stream_sentence_for_a_cpu_backend():
    from workbench.views import overlap, summary, table_text
    over = gpu_row(overlapped(), overlapped=True, total_median_s=4.2e-3)
    plain = gpu_row(overlapped(1), variant="pinned sequential", overlapped=False, total_median_s=9e-3)
    cpu = dict(R.Row(workload="overlap", backend="numba", size=2 ** 24, dtype="float32", status="ok",
                     variant="pinned 3 streams", compute_median_s=1.0, total_median_s=1.0))
    cpu_seq = dict(cpu, variant="pinned sequential")
    shown = table_text.readable_table(R.to_frame([over, plain, cpu]))
    assert list(shown["e2e/limit"]) == [f"{4.2e-3 / overlap.limit_s(over):.2f}x", "-", "-"]
    said = overlap.comparisons([over, plain, cpu, cpu_seq])
    assert len(said) == 1 and said[0].startswith("cupy pinned 3 streams")
    assert "e2e/limit" not in table_text.readable_table(R.to_frame([plain])).columns
