"""A dense series (issue 38: 10 series x 500 sizes) is drawn as its line with the markers a reader
can tell apart: the spec says which points keep one, never thinning away an end of the line, a
ringed point or an outlier, and the window draws those and no others while its hover still finds
every point. (``tests/test_chart_parity.py`` checks that the export marks the same points.)"""
from __future__ import annotations

import numpy as np
import pytest

from helpers import measured
from workbench.results import rows as results
from workbench.results.files import ResultSet
from workbench.views import spec
from workbench.views.spec import density

SIZES = [int(s) for s in np.unique(np.geomspace(2 ** 10, 2 ** 24, 400).astype(int))]
OUTLIER = 150           # numpy's point at this index is 5 times slower than its neighbours
GAP = 200               # numba's compute at this index is 0, which a log axis cannot show: its line stops there


def dense_set(sizes=SIZES) -> ResultSet:
    """numpy, numba and scipy, each at every size, with a little noise; scipy is numpy's twin within
    its noise up to the middle size (ringed on the speedup chart), twice as fast beyond; one
    outlier; one gap."""
    rng = np.random.default_rng(0)
    rows = []
    for i, size in enumerate(sizes):
        twin = i < len(sizes) // 2
        for backend, per in (("numpy", 1e-9), ("numba", 4e-10), ("scipy", 1e-9 if twin else 5e-10)):
            t = (1e-6 + per * size) * float(np.exp(0.03 * rng.standard_normal()))
            if backend == "numpy" and i == OUTLIER:
                t *= 5
            compute = 0.0 if backend == "numba" and i == GAP else t
            interval = {"compute_ci_lo_s": 0.8 * t, "compute_ci_hi_s": 1.2 * t, "total_ci_lo_s": 0.8 * t,
                        "total_ci_hi_s": 1.2 * t} if backend == "scipy" and twin else {}
            rows.append(measured(workload="source_terms", backend=backend, device="CPU: Test", size=size,
                                 dtype="float32", compute_median_s=compute, total_median_s=t, first_call_s=3 * t,
                                 peak_host_bytes=8.0 * size, h2d_s=0.0, d2h_s=0.0,
                                 status="ok", **interval))
    return ResultSet(results.to_frame(rows))


def _series(chart, role, name):
    return next(s for s in chart.series if s.role == role and s.name == name)


def test_a_dense_series_keeps_every_point_but_marks_only_those_a_reader_can_tell_apart():
    chart = spec.build("runtime", [dense_set()])
    numpy = _series(chart, "compute", "numpy")
    assert len(numpy.xs) == len(SIZES)                        # the line (and the hover) keep every point
    assert numpy.dense and 0 < len(numpy.marked) < len(SIZES) / 3
    assert numpy.marked == tuple(sorted(set(numpy.marked)))
    assert {0, len(SIZES) - 1, OUTLIER} <= set(numpy.marked)
    u = density.share(chart.x, numpy.xs) * density.PLOT_PX[0]
    v = density.share(chart.y, numpy.ys) * density.PLOT_PX[1]
    kept = np.asarray(numpy.marked)
    gaps = np.hypot(np.diff(u[kept]), np.diff(v[kept]))
    # Apart, except where a point that must be marked comes close after another.
    assert np.median(gaps) >= density.SPACING


def test_both_ends_of_a_gap_keep_their_marker():
    numba = _series(spec.build("runtime", [dense_set()]), "compute", "numba")
    assert numba.dense and numba.breaks == (GAP - 1,)
    assert {GAP - 1, GAP} <= set(numba.marked)          # the points either side of the one left out


def test_every_ringed_point_keeps_its_marker():
    chart = spec.build("speedup", [dense_set()], baseline="numpy")
    twin = _series(chart, "compute", "scipy")
    ringed = {i for i, r in enumerate(twin.ringed) if r}
    assert twin.dense and ringed and ringed <= set(twin.marked)


def test_a_series_with_room_for_its_markers_is_drawn_as_before():
    chart = spec.build("runtime", [dense_set(SIZES[::40])])
    for s in chart.series:
        assert not s.dense and s.marked == () and s.marker_indices == tuple(range(len(s.xs)))


def test_a_roof_without_markers_is_never_dense():
    s = spec.Series(("roof",), "L2", "roof", "", "", 0, tuple(np.geomspace(1, 100, 500)), (1.0,) * 500, "#000", "")
    a = spec.Axis("x", range=(1.0, 100.0))
    assert density.thin(s, a, spec.Axis("y", range=(0.5, 2.0))) is s


# The window -------------------------------------------------------------------------------------

@pytest.fixture
def panel(qtbot):
    pytest.importorskip("pytestqt")
    from panels.plots import PlotsPanel
    p = PlotsPanel()
    qtbot.addWidget(p)
    p.resize(1280, 640)
    p.show()
    p.update_from([dense_set()])
    return p


def test_the_window_draws_the_specs_markers_and_no_others(panel):
    chart = panel.runtimePlot
    drawn = chart.markers_drawn()
    assert drawn
    total = 0
    for key, (x, y) in drawn.items():
        s = chart.meta[key]
        assert s.dense and chart.series[key].opts["symbol"] is None     # the curve draws no marker
        assert np.allclose(x, np.asarray(s.xs)[list(s.marked)]) and np.allclose(y, np.asarray(s.ys)[list(s.marked)])
        assert len(chart.series[key].xData) == len(s.xs)               # its line goes through every point
        total += len(x)
    points = sum(len(s.xs) for s in chart.meta.values())
    assert total < points / 3


def test_a_point_without_a_marker_is_still_found_by_the_hover(panel, qtbot):
    from PySide6.QtCore import QPointF
    chart = panel.runtimePlot
    qtbot.waitUntil(lambda: chart.getViewBox().width() > 300, timeout=5_000)
    key = ("compute", "numpy", "")
    s = chart.meta[key]
    unmarked = next(i for i in range(1, len(s.xs)) if i not in s.marked and i - 1 not in s.marked
                    and i + 1 not in s.marked)
    at = chart.getViewBox().mapViewToScene(QPointF(np.log10(s.xs[unmarked]), np.log10(s.ys[unmarked])))
    hit = chart.point_at(at)
    assert hit is not None and hit[0] == "numpy" and hit[2] == pytest.approx(s.xs[unmarked])


def test_a_series_no_longer_dense_gets_its_markers_back_on_its_curve(panel):
    chart = panel.runtimePlot
    panel.update_from([dense_set(SIZES[::40])])
    key = ("compute", "numpy", "")
    assert not chart.meta[key].dense and chart.series[key].opts["symbol"] is not None
    assert not chart.markers.shown
    x, _ = chart.markers_drawn()[key]
    assert len(x) == len(chart.meta[key].xs)


def _stamped(chart, layer, points) -> None:
    """What ``layer`` adds to the chart's picture lies on ``points`` (view coordinates) and only
    there: grabbed with the layer shown and hidden, every changed pixel is within a marker's
    reach of a point, and each point in the view changed some pixel around it."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPointF
    vb, vp = chart.getViewBox(), chart.viewport()

    def grab():
        return pg.functions.imageToArray(vp.grab().toImage(), copy=True, transpose=False)[..., :3].astype(int)
    layer.setVisible(False)
    without = grab()
    layer.setVisible(True)
    changed = np.abs(grab() - without).sum(axis=-1) > 0
    reach = max(s.size for s in layer.stamps.values()) * 0.75 + 3     # a square's corner, its pen
    at = np.array([[p.x(), p.y()] for p in (vb.mapViewToDevice(QPointF(x, y)) for x, y in points)])
    h, w = changed.shape
    inside = (at[:, 0] > reach) & (at[:, 0] < w - reach) & (at[:, 1] > reach) & (at[:, 1] < h - reach)
    assert inside.sum() > 10
    for cx, cy in at[inside]:
        assert changed[int(cy - reach):int(cy + reach) + 1, int(cx - reach):int(cx + reach) + 1].any(), (cx, cy)
    ys, xs = np.nonzero(changed)
    far = np.min(np.hypot(xs[:, None] - at[None, :, 0], ys[:, None] - at[None, :, 1]), axis=1)
    assert far.max() <= reach, far.max()


def test_every_series_markers_are_one_item_stamped_where_its_points_lie(panel, qtbot):
    """Issue 38: one scatter item per series cost a repaint ~0.16 ms each in Python; two compared
    sets of ten series and their rings made 30 items and 5 ms of a 16 ms repaint. A chart's
    markers are one item, and its rings another, whatever the number of series."""
    import pyqtgraph as pg
    panel.update_from([dense_set(), dense_set()])
    chart = panel.runtimePlot
    qtbot.waitUntil(lambda: len(chart.markers_drawn()) == 6 and chart.getViewBox().width() > 300, timeout=10_000)
    items = chart.getPlotItem().items
    assert not [i for i in items if isinstance(i, pg.ScatterPlotItem) and len(i.data)]
    layer = chart.markers.layer
    assert layer in items and len(layer.stamps) == 6
    points = [(np.log10(x), np.log10(y)) for xs, ys in chart.markers_drawn().values() for x, y in zip(xs, ys)]
    _stamped(chart, layer, points)


def test_the_rings_of_every_series_are_one_item_stamped_where_its_points_lie(panel, qtbot):
    speedup = panel.speedupPlot
    qtbot.waitUntil(lambda: bool(speedup.rings_drawn()) and speedup.getViewBox().width() > 300, timeout=10_000)
    points = [(np.log10(x), np.log10(y)) for xs, ys in speedup.rings_drawn().values() for x, y in zip(xs, ys)]
    assert speedup.rings in speedup.getPlotItem().items
    _stamped(speedup, speedup.rings, points)


def test_markers_of_points_off_a_log_axis_are_not_drawn_nor_counted_in_the_range(qtbot):
    """A point at 0 on a log axis (log10: -inf) or NaN has no place: the layer paints the others
    without a warning (pytest makes one an error) and its range is theirs alone."""
    import pyqtgraph as pg

    from panels.marker_layer import MarkerLayer
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    w.resize(300, 200)
    w.show()
    layer, empty = MarkerLayer(), MarkerLayer()
    w.addItem(layer)
    w.addItem(empty)
    layer.set("a", np.array([3.0, -np.inf, 4.0, 3.5]), np.array([1.0, 2.0, np.nan, 3.0]), "o", 8)
    empty.set("b", np.array([np.nan]), np.array([np.nan]), "o", 8)
    assert layer.dataBounds(0) == (3.0, 3.5) and layer.dataBounds(1) == (1.0, 3.0)
    assert empty.dataBounds(0) == (None, None) and empty.boundingRect().isNull()
    w.getViewBox().autoRange(padding=0)
    (x0, x1), _ = w.getViewBox().viewRange()
    assert 2.9 < x0 and x1 < 3.6
    w.viewport().grab()             # paints: a warning raised inside paint would fail the test


def test_a_series_drawn_again_in_its_style_keeps_its_rendered_symbol(panel, qtbot, monkeypatch):
    """New points in a series set its markers again; their symbol, the same, is not rendered again
    in the next repaint (48 of them were 2-3 ms of a compared set's first one). A new style is."""
    import pyqtgraph as pg

    from panels import marker_layer
    chart = panel.runtimePlot
    qtbot.waitUntil(lambda: chart.getViewBox().width() > 300, timeout=10_000)
    chart.viewport().grab()
    rendered = []
    real = marker_layer.renderSymbol
    monkeypatch.setattr(marker_layer, "renderSymbol", lambda *a, **k: rendered.append(a[0]) or real(*a, **k))
    layer = chart.markers.layer
    key, stamp = next(iter(layer.stamps.items()))
    layer.set(key, stamp.x[:-1], stamp.y[:-1], stamp.symbol, stamp.size, stamp.pen, stamp.brush, stamp.name)
    chart.viewport().grab()
    assert rendered == []
    layer.set(key, stamp.x, stamp.y, stamp.symbol, stamp.size + 2, stamp.pen, stamp.brush, stamp.name)
    chart.viewport().grab()
    assert rendered == [stamp.symbol]
    scaled = pg.mkPen(stamp.pen)          # the same colour, width and style; scaled with the symbol
    scaled.setCosmetic(False)
    layer.set(key, stamp.x, stamp.y, stamp.symbol, stamp.size + 2, scaled, stamp.brush, stamp.name)
    chart.viewport().grab()
    assert rendered == [stamp.symbol] * 2
