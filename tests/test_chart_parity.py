"""The window's charts and the exported ones draw the same thing: every chart kind, for result sets
of several shapes and for every lesson, rendered by pyqtgraph (offscreen) and by matplotlib, and
what each drew read back from the rendered objects and compared.

Nothing here reads the chart specs: the window's side is read from its PlotDataItems, bands,
rings, InfiniteLines, bar items, axis tick texts (as the AxisItem lays them out), its own key and
the legend strip; the export's side from its Line2D data, filled areas, bars, tick labels, texts
and legend. A drift between the two (a tick label one shows and the other not, a series one draws
and the other not, solid meaning compute in one and end-to-end in the other) fails here.
"""
from __future__ import annotations

import html
import math
import re

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from helpers import measured, result_set  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from workbench import lessons  # noqa: E402
from workbench.catalog.backends import BACKENDS, Availability  # noqa: E402
from workbench.results import rows as results  # noqa: E402
from workbench.results.files import ResultSet  # noqa: E402
from workbench.measure.gpu.cap import OUT_OF_DEVICE_MEMORY  # noqa: E402
from workbench.views import matplotlib_charts as charts  # noqa: E402

KINDS = charts.KINDS
LINES = {"-": "solid", "--": "dashed", ":": "dotted", "-.": "dashdot"}
PENS = {Qt.PenStyle.SolidLine: "solid", Qt.PenStyle.DashLine: "dashed", Qt.PenStyle.DotLine: "dotted",
        Qt.PenStyle.DashDotLine: "dashdot"}


def ident(text: str) -> str:
    """An id as the export writes it into its SVG (non-word characters folded to '_')."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


# Result sets of several shapes --------------------------------------------------------------------

def _oom(backend: str, size: int, **kw) -> dict:
    return results.empty_row(workload="source_terms", backend=backend, device="GPU: Test GPU", size=size,
                             dtype=kw.pop("dtype", "float32"), host_memory="pageable", status="error",
                             message=f"{OUT_OF_DEVICE_MEMORY}: needs about 2 GiB; the cap is 1 GiB", **kw)


def gpu_set() -> ResultSet:
    """numpy, numba, cupy and numba-cuda; a twin of numpy within its noise (rings), a backend whose
    peak memory did not rise (zeros a log axis cannot show), a point left out mid-line (a break),
    two GPU backends out of device memory at one size (one wall label), failed points."""
    rs = result_set()
    f = rs.frame
    extra = []
    for _, r in f[(f["status"] == "ok") & (f["backend"].isin(["numpy", "cupy"]))].iterrows():
        r = r.to_dict()
        if r["backend"] == "numpy":
            twin = dict(r, backend="scipy", compute_median_s=r["compute_median_s"] * 1.02,
                        total_median_s=r["total_median_s"] * 1.02, peak_host_bytes=0.0)
            for figure in ("compute", "total"):
                twin[f"{figure}_ci_lo_s"] = twin[f"{figure}_median_s"] * 0.9
                twin[f"{figure}_ci_hi_s"] = twin[f"{figure}_median_s"] * 1.1
            extra.append(twin)
        else:
            extra.append(dict(r, backend="numba-cuda", compute_median_s=r["compute_median_s"] * 0.8,
                              total_median_s=r["total_median_s"] * 0.9,
                              first_call_s=float("nan") if r["size"] == 2 ** 12 else r["first_call_s"]))
    extra += [_oom("cupy", 2 ** 20), _oom("numba-cuda", 2 ** 20)]
    rs.frame = results.to_frame(f.to_dict("records") + extra)
    return rs


def compared_sets() -> list[ResultSet]:
    a, b = result_set("float32"), result_set("float64", scale=2.0)
    b.frame = results.to_frame(b.frame.to_dict("records") + [_oom("cupy", 2 ** 18, dtype="float64")])
    return [a, b]


def cpu_set() -> ResultSet:
    rs = result_set()
    rs.frame = rs.frame[rs.frame["host_memory"] == ""].reset_index(drop=True)
    return rs


ALL_USABLE = {b: Availability(True, "", "test") for b in BACKENDS}


def lesson_set(name: str) -> ResultSet:
    """The lesson run on a model machine: CPU backends linear in the size, GPU backends with a launch
    cost and transfers (so a break-even exists), device memory that runs out at the largest sizes
    (so a wall exists); the rows tagged by run, the statement kept in the set's settings as the
    window and ``gpu-workbench lesson`` keep it."""
    ls = lessons.get(name)
    p = lessons.plan(ls, ALL_USABLE)
    rows = []
    for run, spec in enumerate(p.specs):
        sizes = list(spec.sizes)[:6]
        variants = ls.variants or ("",)
        slower = 2.0 if spec.dtype == "float64" else 1.0
        for k, backend in enumerate(spec.backends):
            gpu = BACKENDS[backend].device == "gpu"
            for variant in variants:
                for i, size in enumerate(sizes):
                    if gpu and name == "memory-wall" and i >= len(sizes) - 2 - run:
                        rows.append(lessons.tag(_oom(backend, size, dtype=spec.dtype) | {
                            "workload": spec.workload, "variant": variant}, p, run))
                        continue
                    compute = slower * (2e-5 + 1e-11 * size if gpu else 1e-9 * size * (1 + 0.3 * k))
                    move = (1e-6 + 4e-10 * size) * slower if gpu else 0.0
                    rows.append(lessons.tag(measured(
                        workload=spec.workload, backend=backend, device="GPU: Test" if gpu else "CPU: Test",
                        size=size, dtype=spec.dtype, variant=variant, host_memory=spec.host_memory if gpu else "",
                        compute_median_s=compute, total_median_s=compute + 2 * move, h2d_s=move, d2h_s=move,
                        first_call_s=50 * compute + (0.2 if backend.startswith("numba") else 0.0),
                        peak_host_bytes=8.0 * size * slower,
                        peak_device_bytes=16.0 * size * slower if gpu else float("nan"), status="ok"), p, run))
    frame = results.to_frame(rows)
    statement = lessons.explain(p, frame)
    return ResultSet(frame, {"cpu": "Test CPU"}, {"lesson": statement.as_settings()}, "2026-01-02T03:04:05+00:00",
                     "testhost", "")


def roofline_set() -> ResultSet:
    """Rows with their devices' ceilings (the roofline's points): the CPU's roofs from the
    environment's ladder, the GPU's from its rows; a row without FLOPs and a row of an older file
    without ceilings, which the roofline leaves out and says so."""
    rs = result_set()
    rows = []
    for r in rs.frame.to_dict("records"):
        if r["status"] == "ok":
            gpu = r["backend"] == "cupy"
            r = dict(r, gflops=r["size"] * 1e-3, gbps=r["size"] * 2e-4 + 1.0, gbps_limit=1000.0 if gpu else 50.0,
                     gflops_limit=20000.0 if gpu else 400.0, bound="unknown", of_bound=0.1)
            if r["backend"] == "numba" and r["size"] == 2 ** 12:
                r["gflops"] = 0.0                                   # no FLOPs
            if r["backend"] == "numpy" and r["size"] == 2 ** 14:
                r["gbps_limit"] = r["gflops_limit"] = float("nan")    # an older file's row
        rows.append(r)
    rs.frame = results.to_frame(rows)
    rs.environment = dict(rs.environment, limits=[{
        "device": "CPU: Test CPU", "peak_gflops": {"float32": 400.0},
        "levels": [{"level": "L2", "best_gbps": 200.0}, {"level": "memory", "best_gbps": 50.0}]}])
    return rs


def energy_set() -> ResultSet:
    """Rows with energy per call and the band of its readings; one backend's energy not measured
    here (no RAPL), which the energy chart names in a note and does not draw."""
    rs = result_set()
    rows = []
    for r in rs.frame.to_dict("records"):
        if r["status"] == "ok" and r["backend"] != "numpy":
            j = r["size"] * 1e-9 + 1e-6
            r = dict(r, energy_j=j, energy_lo_j=0.9 * j, energy_hi_j=1.2 * j, power_w=300.0, idle_w=70.0,
                     energy_source="GPU board (NVML)")
            if r["host_memory"]:          # a GPU row: its whole call, copies and all, beside the compute
                r.update(energy_e2e_j=1.5 * j, power_e2e_w=90.0)
        elif r["backend"] == "numpy":
            r = dict(r, energy_source="not measured here: no RAPL")
        rows.append(r)
    rs.frame = results.to_frame(rows)
    return rs


def dense_set() -> ResultSet:
    """Issue 38's density: numpy and three GPU backends (the transfer chart draws lines for them) at
    300 sizes, with noise, an outlier and a point left out; their markers would overlap."""
    rng = np.random.default_rng(3)
    rows = []
    for i, size in enumerate(int(s) for s in np.unique(np.geomspace(2 ** 10, 2 ** 24, 300).astype(int))):
        for backend, gpu in (("numpy", False), ("cupy", True), ("cupy-raw", True), ("numba-cuda", True)):
            t = (2e-5 if gpu else 1e-6) + size * (2e-10 if gpu else 1e-9) * float(np.exp(0.05 * rng.standard_normal()))
            t *= 4 if backend == "numpy" and i == 120 else 1
            move = size * (4 if backend == "cupy" else 2) / 12e9 * float(np.exp(0.1 * rng.standard_normal())) if gpu else 0.0
            rows.append(measured(workload="source_terms", backend=backend, device="GPU: Test" if gpu else "CPU: Test",
                                 size=size, dtype="float32", host_memory="pageable" if gpu else "",
                                 compute_median_s=t, total_median_s=t + 2 * move, h2d_s=move, d2h_s=move,
                                 first_call_s=0.0 if i == 200 else 30 * t, peak_host_bytes=12.0 * size,
                                 peak_device_bytes=12.0 * size if gpu else float("nan"), status="ok"))
    return ResultSet(results.to_frame(rows))


CASES = {"device backends": lambda: [gpu_set()], "compared": compared_sets, "cpu only": lambda: [cpu_set()],
         "roofline": lambda: [roofline_set()], "energy": lambda: [energy_set()], "dense": lambda: [dense_set()]}
CASES.update({f"lesson {name}": (lambda n=name: [lesson_set(n)]) for name in lessons.LESSONS})


# What the export drew ---------------------------------------------------------------------------

def exported(kind: str, sets) -> dict:
    with charts.style(charts.preset()):
        fig = charts.figure(kind, sets, stamp=False)
        fig.draw_without_rendering()
    ax = fig.axes[0]
    out = {"title": ax.get_title(), "x label": ax.get_xlabel(), "y label": ax.get_ylabel(),
           "series": {}, "bands": {}, "rings": {}, "marks": set(), "bars": {}}
    for line in ax.get_lines():
        gid = line.get_gid() or ""
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        m = re.fullmatch(rf"series-{re.escape(kind)}-(wall|mark|reference)-(.*)", gid)
        if m:
            vertical = np.allclose(x, x[0]) and not np.allclose(y, y[0])
            at = x[0] if m.group(1) != "reference" else y[0]
            out["marks"].add(({"mark": "lesson"}.get(m.group(1), m.group(1)), round(float(at), 6), vertical))
        elif gid.startswith(f"series-{kind}-within-noise-"):
            out["rings"][gid[len(f"series-{kind}-"):]] = (x, y)
        elif gid.startswith(f"series-{kind}-") and len(_segments(x, y)):     # a line of NaN draws nothing
            every = line.get_markevery()
            marked = np.arange(len(x)) if every is None else np.asarray(every, dtype=int)
            marked = marked[np.isfinite(x[marked]) & np.isfinite(y[marked])]
            out["series"][gid[len(f"series-{kind}-"):]] = {
                "segments": _segments(x, y), "line": LINES[line.get_linestyle()], "colour": line.get_color().lower(),
                "filled": line.get_markerfacecolor() != "white",
                "markers": list(zip(x[marked], y[marked])) if str(line.get_marker()).lower() not in ("", "none") else []}
    for area in ax.collections:
        gid = area.get_gid() or ""
        if gid.startswith(f"series-{kind}-band-"):
            verts = area.get_paths()[0].vertices
            edges: dict = {}
            for vx, vy in verts:
                lo, hi = edges.get(vx, (vy, vy))
                edges[vx] = (min(lo, vy), max(hi, vy))
            out["bands"][gid[len(f"series-{kind}-"):]] = edges
    for patch in ax.patches:
        gid = patch.get_gid() or ""
        m = re.fullmatch(r"series-transfer-(h2d|compute|d2h)-(.*)", gid)
        if m:
            out["bars"].setdefault(m.group(2), {}).setdefault(round(patch.get_x() + patch.get_width() / 2, 6),
                                                              {})[m.group(1)] = patch.get_height()
    out["x ticks"] = _ticks(ax.get_xticks(), ax.get_xticklabels(), ax.get_xlim())
    out["y ticks"] = _ticks(ax.get_yticks(), ax.get_yticklabels(), ax.get_ylim())
    legends = [lg for sub in fig.subfigs for lg in sub.legends] + list(fig.legends)
    # A long label wraps in the export's legend (issue 38): its words are what it says.
    out["legend"] = sorted(" ".join(t.get_text().split()) for lg in legends for t in lg.get_texts())
    out["texts"] = [t.get_text().strip() for t in ax.texts]
    noted = [" ".join(t.get_text().split()) for sub in fig.subfigs for t in sub.texts if t.get_gid() == "note"]
    out["texts"] += [" ".join(noted)] if noted else []      # under the chart, wrapped (issue 38)
    caption = [t.get_text() for sub in fig.subfigs for t in sub.texts if t.get_gid() == "caption"]
    out["caption"] = " ".join(" ".join(caption).split())
    return out


def _segments(x: np.ndarray, y: np.ndarray) -> list[list[tuple[float, float]]]:
    """The runs of drawn points between the gaps (NaN) of a line."""
    out, run = [], []
    for a, b in zip(x, y):
        if np.isfinite(a) and np.isfinite(b):
            run.append((float(a), float(b)))
        elif run:
            out.append(run)
            run = []
    return out + ([run] if run else [])


def _ticks(values, labels, limits) -> list[tuple[float, str]]:
    lo, hi = sorted(limits)
    return [(float(v), t.get_text()) for v, t in zip(values, labels) if lo <= v <= hi and t.get_text()]


# What the window drew ---------------------------------------------------------------------------

def window_drew(panel, kind: str) -> dict:
    from panels.axes import text_rects
    from panels.legend import BAND_PREFIX
    chart = next(c for c in panel.plots() if c.kind == kind)
    title = chart.getPlotItem().titleLabel.text
    out = {"title": html.unescape(re.sub(r"<[^>]+>", "", title)), "x label": chart.getAxis("bottom").labelText,
           "y label": chart.getAxis("left").labelText, "series": {}, "bands": {}, "rings": {}, "marks": set(),
           "bars": {}}
    log_axes = kind != "transfer"
    markers = chart.markers_drawn() if hasattr(chart, "markers_drawn") else {}
    for key, item in getattr(chart, "series", {}).items():
        if item.xData is None or not len(item.xData):
            continue
        role, name = item.objectName().split(":", 1)
        connect = item.opts["connect"]
        x, y = np.asarray(item.xData, float), np.asarray(item.yData, float)
        cut = [] if isinstance(connect, str) else list(np.flatnonzero(~np.asarray(connect, bool)[:-1]) + 1)
        segments = [list(zip(map(float, xs), map(float, ys))) for xs, ys in zip(np.split(x, cut), np.split(y, cut))]
        pen = item.opts["pen"]
        brush = item.opts["symbolBrush"]
        out["series"][ident(f"{role}-{name}")] = {
            "segments": [s for s in segments if s], "line": PENS[pen.style()], "colour": pen.color().name().lower(),
            "filled": brush is not None and brush.style() != Qt.BrushStyle.NoBrush,
            "markers": list(zip(*markers[key])) if key in markers else []}
    for key, item in getattr(chart, "band_items", {}).items():
        if item.xData is None or not len(item.xData):
            continue
        role, name = item.objectName().split(":", 1)
        edges: dict = {}
        for vx, vy in zip(item.xData, item.yData):
            lo, hi = edges.get(vx, (vy, vy))
            edges[vx] = (min(lo, vy), max(hi, vy))
        out["bands"][ident(f"{role}-{name}")] = edges
    rings = getattr(chart, "rings", None)
    for key, stamp in (rings.stamps if rings is not None else {}).items():
        role, name = stamp.name.split(":", 1)
        out["rings"][ident(f"{role}-{name}")] = (10 ** stamp.x, 10 ** stamp.y)
    for (mark_kind, _), line in getattr(chart, "mark_items", {}).items():
        if line.isVisible():
            vertical = line.angle == 90
            out["marks"].add((mark_kind, round(10 ** line.value(), 6), vertical))
    if kind == "transfer":
        for name, bars in chart.bars_drawn().items():
            for _size, x, h2d, comp, d2h in bars:
                out["bars"].setdefault(ident(name), {})[round(x, 6)] = {"h2d": h2d, "compute": comp, "d2h": d2h}
    vb = chart.getViewBox()
    for name in ("bottom", "left"):
        axis = chart.getAxis(name)
        ticks = []
        for rect, text in text_rects(axis):
            centre = vb.mapSceneToView(axis.mapToScene(rect.center()))
            v = centre.x() if name == "bottom" else centre.y()
            ticks.append((10 ** v if log_axes else v, text))
        out["x ticks" if name == "bottom" else "y ticks"] = sorted(ticks)
    own = chart.key_labels()
    strip = [label.removeprefix(BAND_PREFIX) for label, kinds in zip(panel.legendStrip.entries,
                                                                       panel.legendStrip.kinds) if kind in kinds]
    out["legend"] = sorted(own + strip)
    out["texts"] = ([" ".join(" ".join(chart.notes()).split())] if chart.notes() else []) + \
        ([chart.hint.toPlainText()] if chart.hint.toPlainText() else [])
    out["texts"] += [line.label.toPlainText().strip() for line in getattr(chart, "mark_items", {}).values()
                     if line.isVisible() and line.label.isVisible()]
    out["texts"] += chart.labels_drawn() if hasattr(chart, "labels_drawn") else []
    summary = html.unescape(re.sub(r"<[^>]+>", " ", panel.summary.text()))
    out["summary"] = " ".join(summary.split())
    return out


# The comparison ---------------------------------------------------------------------------------

@pytest.fixture
def panel(qtbot):
    from panels.plots import PlotsPanel
    p = PlotsPanel()
    qtbot.addWidget(p)
    p.resize(3000, 1800)      # large enough that no tick label is left out for want of room
    p.show()
    return p


def _close(a, b, rel=1e-6) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_the_window_and_the_export_draw_the_same_chart(qtbot, panel, case):
    sets = CASES[case]()
    panel.update_from(sets)
    from panels.axes import text_rects
    shown = [c for c in panel.plots() if c.isVisible() and not c.spec.empty]
    qtbot.waitUntil(lambda: all(c.getViewBox().width() > 300 and text_rects(c.getAxis("left")) for c in shown),
                    timeout=5_000)
    checked = 0
    for kind in KINDS:
        if kind == "timeline":      # one point's, in a window of its own: tests/test_timeline.py
            continue
        chart = next(c for c in panel.plots() if c.kind == kind)
        if chart in panel.alone:          # shown alone, on demand: the grid has no cell for them
            panel.alone[chart].setChecked(True)
            qtbot.waitUntil(lambda: bool(chart.spec.empty) or (chart.getViewBox().width() > 300
                                                         and bool(text_rects(chart.getAxis("left")))), timeout=5_000)
        if not chart.isVisible():       # the transfer chart without a GPU series gives its cell away
            assert kind == "transfer" and not any((rs.frame["host_memory"] != "").any() for rs in sets)
            continue
        ex, win = exported(kind, sets), window_drew(panel, kind)
        where = f"{case}, {kind}"
        assert win["title"] == ex["title"], where
        assert (win["x label"], win["y label"]) == (ex["x label"], ex["y label"]), where
        # The same series, each with the same points (and the same gaps), line style, colour and markers.
        assert sorted(win["series"]) == sorted(ex["series"]), where
        for name, drawn in ex["series"].items():
            mine = win["series"][name]
            assert (mine["line"], mine["colour"], mine["filled"]) == (drawn["line"], drawn["colour"], drawn["filled"]), \
                (where, name)
            assert len(mine["segments"]) == len(drawn["segments"]), (where, name)
            # The same points carry a marker (a dense series': those its spec keeps).
            assert len(mine["markers"]) == len(drawn["markers"]), (where, name)
            assert all(_close(p[0], q[0]) and _close(p[1], q[1]) for p, q in zip(mine["markers"], drawn["markers"])), \
                (where, name)
            for a, b in zip(mine["segments"], drawn["segments"]):
                assert len(a) == len(b) and all(_close(p[0], q[0]) and _close(p[1], q[1]) for p, q in zip(a, b)), \
                    (where, name)
        assert sorted(win["bands"]) == sorted(ex["bands"]), where
        for name, edges in ex["bands"].items():
            assert sorted(win["bands"][name]) == pytest.approx(sorted(edges)), (where, name)
            for x, (lo, hi) in edges.items():
                mine = win["bands"][name][min(win["bands"][name], key=lambda v: abs(v - x))]
                assert _close(mine[0], lo) and _close(mine[1], hi), (where, name, x)
        assert sorted(win["rings"]) == sorted(ex["rings"]), where
        for name, (x, y) in ex["rings"].items():
            assert np.allclose(win["rings"][name][0], x) and np.allclose(win["rings"][name][1], y), (where, name)
        assert win["marks"] == ex["marks"], where
        assert sorted(win["bars"]) == sorted(ex["bars"]), where
        for name, bars in ex["bars"].items():
            assert sorted(win["bars"][name]) == pytest.approx(sorted(bars)), (where, name)
            for x, heights in bars.items():
                assert win["bars"][name][x] == pytest.approx(heights), (where, name, x)
        # The same ticks, at the same places, labelled alike (pixels: 1 % of a position).
        for axis in ("x ticks", "y ticks"):
            assert [t for _, t in win[axis]] == [t for _, t in ex[axis]], (where, axis)
            for (a, _), (b, _) in zip(win[axis], ex[axis]):
                assert math.isclose(a, b, rel_tol=0.02, abs_tol=0.02), (where, axis, a, b)
        assert win["legend"] == ex["legend"], where
        # What each says in the chart: its notes, its empty message, the labels of its marks.
        assert sorted(win["texts"]) == sorted(ex["texts"]), where
        if ex["caption"]:
            assert ex["caption"] in win["summary"], where
        checked += 1
    assert checked >= 4


def test_the_cases_cover_what_can_drift():
    """The sets above hold every thing a chart draws: rings, gaps, walls, bands, marks, compared sets,
    a note about zeros, an empty chart; a case that lost one would pass without checking it."""
    from workbench.views import spec
    seen = set()
    for case, make in CASES.items():
        sets = make()
        for kind in KINDS:
            s = spec.build(kind, sets)
            seen |= {"ring" for x in s.series if any(x.ringed)} | {"gap" for x in s.series if x.breaks}
            seen |= {m.kind for m in s.marks} | {"band" for x in s.series if x.band} | {"bars" for _ in s.bars}
            seen |= {"note" for _ in s.notes} | ({"empty"} if s.empty else set())
            seen |= {"compared"} if len(sets) > 1 else set()
            seen |= {"dotted" for x in s.series if x.line == "dotted"} | {"dense" for x in s.series if x.dense}
            seen |= {"roof" for x in s.series if x.role == "roof"} | {"label" for _ in s.labels}
    assert seen >= {"roof", "label", "ring", "gap", "wall", "lesson", "reference", "band", "bars", "note", "empty", "compared",
                    "dotted", "dense"}, seen
