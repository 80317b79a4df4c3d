"""Work that must not grow with the points shown (issue 38: 5,000 points, 10 series x 500 sizes).

Counted, not timed: what one hover, or one look-up after new rows came, reads or maps. A cost
that grows with the points is a stall that grows with the sweep (benchmarks/gui_500_points.py
measures the stalls themselves)."""
from __future__ import annotations

import pytest

from workbench.results import rows as results
from workbench.results.files import ResultSet
from workbench.results.sets import SetParts
from workbench.views.compare import Baseline
from workbench.views.point_rows import PointRows


def row(backend, size, t, status="ok"):
    return results.Row.of(results.empty_row(
        workload="source_terms", backend=backend, device="cpu", size=size, dtype="float32",
        compute_median_s=t, compute_q1_s=0.9 * t, compute_q3_s=1.1 * t, total_median_s=t, total_q1_s=0.9 * t,
        total_q3_s=1.1 * t, first_call_s=3 * t, h2d_s=0.0, d2h_s=0.0, status=status))


class CountedRows(list):
    """The live list of rows, counting the rows read through slices (how an index catches up)."""

    read = 0

    def __getitem__(self, index):
        got = super().__getitem__(index)
        if isinstance(index, slice):
            CountedRows.read += len(got)
        return got


def sweep(sizes: int, backends=("numpy", "numba")) -> CountedRows:
    return CountedRows(row(b, 1024 * (i + 1), 1e-3 * (i + 1) / (k + 1))
                       for i in range(sizes) for k, b in enumerate(backends))


def test_a_look_up_after_new_rows_reads_only_the_new_ones():
    rows = sweep(1000)
    found = PointRows.of_parts(SetParts(rows, len(rows), 0, None, (), {}, {}))
    assert found.row(0, "numba", "", 1024 * 10)["total_median_s"] == pytest.approx(5e-3)
    rows += [row("numpy", 1024 * 1001, 1.0), row("numba", 1024 * 1001, 0.5, status="error")]
    CountedRows.read = 0
    assert found.row(0, "numpy", "", 1024 * 1001)["total_median_s"] == 1.0
    assert found.row(0, "numba", "", 1024 * 1001) is None          # not ok: no point is drawn for it
    assert found.baseline_row(Baseline("numpy"), 0, "", 1024 * 3)["total_median_s"] == pytest.approx(3e-3)
    assert CountedRows.read == 2


def test_the_baseline_row_is_found_as_compare_finds_it():
    """The named set's; else the point's own set's; else the first set's that has the backend."""
    first = sweep(3)
    second = results.to_frame([row("cupy", 1024, 7e-4), row("numpy", 1024, 9e-3)])
    found = PointRows.of_parts(SetParts(first, len(first), 0, None, (ResultSet(second),), {}, {}))
    assert found.baseline_row(Baseline("numpy"), 1, "", 1024)["total_median_s"] == 9e-3       # its own set's
    assert found.baseline_row(Baseline("numpy", 0), 1, "", 1024)["total_median_s"] == 1e-3    # the named set's
    assert found.baseline_row(Baseline("cupy"), 0, "", 1024)["total_median_s"] == 7e-4       # the first that has it
    assert found.baseline_row(Baseline("cupy"), 0, "", 2048) is None
    assert found.row(1, "cupy", "", 1024)["backend"] == "cupy" and found.row(2, "cupy", "", 1024) is None


@pytest.mark.parametrize("kind", ["runtime", "speedup"])
def test_a_hover_maps_as_many_points_into_the_scene_at_2000_points_as_at_20(qtbot, monkeypatch, kind):
    """The nearest point is found with the view's map found once, not one mapping per point; the
    hover still names the point's row."""
    pytest.importorskip("pytestqt")
    import numpy as np
    from PySide6.QtCore import QPointF

    from panels.plots import PlotsPanel
    counts = []
    for sizes in (10, 1000):
        p = PlotsPanel()
        qtbot.addWidget(p)
        p.resize(1200, 700)
        p.show()
        p.update_from(results.to_frame(sweep(sizes)))
        chart = {c.kind: c for c in p.plots()}[kind]
        vb = chart.getViewBox()
        key = next(k for k in chart.points() if "numba" in k)
        x, y = chart.points()[key]
        at = vb.mapViewToScene(QPointF(np.log10(x[sizes // 2]), np.log10(y[sizes // 2]))) + QPointF(2, 2)
        calls = []
        real = vb.mapViewToScene
        monkeypatch.setattr(vb, "mapViewToScene", lambda *a: calls.append(1) or real(*a))
        text = chart.hover_text(at)
        counts.append(len(calls))
        assert text.startswith("<b>numba</b>") and "speedup over numpy" in text, text
        p.shutdown()
    assert counts[0] == counts[1] > 0


def test_the_live_rows_are_indexed_by_attribute_not_through_the_mappings_look_up(monkeypatch):
    """The first hover after a 5,000-point sweep indexes every row: four checked look-ups a row
    (``Row.__getitem__``) made it 11 ms; attributes, 2 ms. Rows as plain dicts index the same."""
    rows = sweep(500)
    calls = []
    lookup = results.Row.__getitem__
    monkeypatch.setattr(results.Row, "__getitem__", lambda self, name: calls.append(name) or lookup(self, name))
    found = PointRows.of_parts(SetParts(rows, len(rows), 0, None, (), {}, {}))
    assert found.row(0, "numba", "", 1024 * 10)["total_median_s"] == pytest.approx(5e-3)
    assert len(calls) <= len(results.Row.__dataclass_fields__)        # the one row made a dict, no more
    as_dicts = [dict(r) for r in rows]
    plain = PointRows.of_parts(SetParts(as_dicts, len(as_dicts), 0, None, (), {}, {}))
    assert plain.row(0, "numba", "", 1024 * 10) == found.row(0, "numba", "", 1024 * 10)


def test_the_hovers_index_of_a_live_sweep_outlives_its_updates():
    """Each drawn update says the points changed (``forget``); where they are the same live rows,
    appended to, the index catches up on the new rows only: made anew, the first hover after a
    5,000-point sweep indexed every row (10 ms). Rows replaced (a new epoch) or another set compared
    are indexed anew."""
    from panels.point_hover import HoverRows
    rows = sweep(1000)
    shown = [SetParts(rows, len(rows), 0, None, (), {}, {})]
    hover = HoverRows(lambda: shown[0], lambda: [])
    assert hover.rows().row(0, "numpy", "", 1024) is not None
    for i in range(3):                        # three live updates, two rows each
        rows += [row("numpy", 1024 * (1001 + i), 1.0), row("numba", 1024 * (1001 + i), 0.5)]
        shown[0] = SetParts(rows, len(rows), 0, None, (), {}, {})
        hover.forget()
        CountedRows.read = 0
        assert hover.rows().row(0, "numpy", "", 1024 * (1001 + i))["total_median_s"] == 1.0
        assert CountedRows.read == 2
    assert hover.rows().row(0, "numba", "", 1024 * 1003)["total_median_s"] == 0.5
    CountedRows.read = 0
    shown[0] = SetParts(rows, len(rows), 1, None, (), {}, {})         # the rows' table replaced
    hover.forget()
    assert hover.rows().row(0, "numba", "", 1024)["total_median_s"] == pytest.approx(5e-4)
    assert CountedRows.read == len(rows)
    other = ResultSet(results.to_frame([row("cupy", 1024, 7e-4)]))
    shown[0] = SetParts(rows, len(rows), 1, None, (other,), {}, {})  # a set compared
    hover.forget()
    assert hover.rows().row(1, "cupy", "", 1024)["backend"] == "cupy"


def test_a_hover_imports_nothing_once_the_window_has_preloaded(monkeypatch):
    """What a point's text needs (its kernels', its energy's wording) is imported after the first
    frame, off the GUI thread (``panels.worker.preload``): imported at the first hover, it held
    that move 5-6 ms."""
    import sys

    from panels import point_hover, worker
    from workbench.views import overlay_verdicts
    monkeypatch.setattr(worker, "PRELOAD", tuple(n for n in worker.PRELOAD if n != "workbench.lessons"))
    worker.preload()
    r = dict(row("cupy", 1024, 1e-3))
    r.update(host_memory=1, kernels='[["k", 3, 1e-6]]', energy_j=1e-3, power_w=300.0, idle_w=70.0)
    rows = PointRows.of_parts(SetParts([r], 1, 0, None, (), {}, {}))
    before = set(sys.modules)
    text = point_hover.describe(r, 0, ["this run"], Baseline(""), [], rows)
    assert "cupy" in text
    assert sorted(set(sys.modules) - before) == []


def test_the_hover_lets_go_of_sets_no_longer_shown():
    """A compared set closed, the panel showing sets made in this process: the index that held the
    closed set's table is let go as the next update is drawn, not kept until a hover."""
    import gc
    import weakref

    from panels.point_hover import HoverRows
    live = sweep(50)
    other = ResultSet(results.to_frame([row("cupy", 1024, 7e-4)]))
    gone = weakref.ref(other.frame)
    shown = [SetParts(live, len(live), 0, None, (other,), {}, {})]
    hover = HoverRows(lambda: shown[0], lambda: [])
    assert hover.rows().row(1, "cupy", "", 1024)["backend"] == "cupy"
    shown[0] = None                   # the sets are made here now; the compared one is closed
    del other
    hover.forget()
    hover.catch_up()
    gc.collect()
    assert gone() is None
