"""A dense series' wide line is drawn as 1 px passes (``panels.dense_line``): what a reader sees is
the wide pen's line, within a pixel, and no wide pen is ever stroked for it (the outlines were most
of a chart's repaint at 5,000 points, issue 38)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pg = pytest.importorskip("pyqtgraph")

from PySide6.QtCore import Qt  # noqa: E402

from panels.dense_line import DenseCurve, DenseLine, passes  # noqa: E402


def test_the_passes_are_the_square_as_wide_as_the_pen():
    assert sorted(passes(2)) == [(dx, dy) for dx in (-1, 0) for dy in (-1, 0)]
    assert sorted(passes(3)) == [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]


def _ink(item, size, width, style, xs, ys, y_range, colour, opacity=1.0, keep=lambda w: None):
    """Where ``item`` (a PlotDataItem of either kind), unsmoothed with a ``width`` px pen, draws
    (xs, ys) in ``colour`` on a white chart of ``size`` without axes, x from 0 to 10: the image, and
    the pixels it inks."""
    w = pg.PlotWidget()
    keep(w)                            # a test's qtbot closes it at the end
    w.resize(*size)
    w.setBackground("w")
    w.hideAxis("left")
    w.hideAxis("bottom")
    w.addItem(item)
    item.opts["antialias"] = False
    item.setPen(pg.mkPen(colour, width=width, style=style))
    item.setData(xs, ys)
    item.setOpacity(opacity)
    w.setXRange(0, 10, padding=0)
    w.setYRange(*y_range, padding=0)
    w.show()
    a = pg.functions.imageToArray(w.viewport().grab().toImage(), copy=True, transpose=False)[..., :3].astype(int)
    return a, a.sum(axis=-1) < 600       # the line, on white


def _drawn(qtbot, item, width, style):
    """The pixels of a sine drawn by ``item``."""
    x = np.linspace(0, 10, 500)
    return _ink(item, (400, 300), width, style, x, np.sin(x) * np.exp(x / 5) + x, (-2, 20), "#1f77b4",
                keep=qtbot.addWidget)[1]


def _near(a, b):
    """Of ``a``'s pixels, those more than a pixel from any of ``b``'s."""
    grown = b.copy()
    for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
        grown |= np.roll(np.roll(b, dy, axis=0), dx, axis=1)
    return int((a & ~grown).sum())


@pytest.mark.parametrize("width", [2, 3])
def test_a_line_in_passes_covers_what_the_wide_pen_covers_within_a_pixel(qtbot, width):
    wide = _drawn(qtbot, pg.PlotDataItem(), width, Qt.PenStyle.SolidLine)
    passed = _drawn(qtbot, DenseCurve(), width, Qt.PenStyle.SolidLine)
    assert wide.sum() > 500
    # Every pixel of the wide line is within a pixel of the passes' line, and nearly every one of
    # theirs within a pixel of its: a line shifted by 2 px fails both.
    assert _near(wide, passed) <= 0.03 * wide.sum()
    assert _near(passed, wide) <= 0.06 * wide.sum()
    assert 0.85 < passed.sum() / wide.sum() < 1.2


def straight(item, width, style=Qt.PenStyle.SolidLine, opacity=1.0, keep=lambda w: None):
    """A horizontal line drawn by ``item`` on the screen: the device rows it covers at the middle
    column, the runs of dashes and gaps along it ("#9 .2 #10 ..."), and its red at the middle."""
    a, ink = _ink(item, (300, 100), width, style, np.array([0.0, 10.0]), np.array([5.0, 5.0]), (0, 10), "#000000",
                  opacity, keep)
    rows = [int(r) for r in np.nonzero(ink[:, a.shape[1] // 2])[0]]
    along = ink.any(axis=0)[a.shape[1] // 15:a.shape[1] * 2 // 3]
    edges = np.flatnonzero(np.diff(along.astype(int))) + 1
    runs = " ".join(("#" if along[i] else ".") + str(n) for i, n in zip(edges[:-1], np.diff(edges)))
    return rows, runs, int(a[rows[0] if rows else 0, a.shape[1] // 2, 0])


def _straight(qtbot, item, width, style=Qt.PenStyle.SolidLine, opacity=1.0):
    return straight(item, width, style, opacity, keep=qtbot.addWidget)


@pytest.mark.parametrize("width", [2, 3])
@pytest.mark.parametrize("style", [Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine])
def test_dashes_in_passes_are_as_long_as_the_wide_pens(qtbot, width, style):
    """Qt counts a dash pattern in pen widths and squares off each dash by half a width: the 1 px
    passes draw dashes and gaps of the same lengths, on the same rows."""
    wide = _straight(qtbot, pg.PlotDataItem(), width, style)
    passed = _straight(qtbot, DenseCurve(), width, style)
    assert wide[1].count("#") >= 4
    assert passed[:2] == wide[:2]


@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_the_line_is_as_wide_on_a_screen_of_more_pixels_than_points(scale):
    """On a HiDPI screen a pass is shifted by a device pixel, not a logical one: at 2 the line was
    drawn as two thin lines a pixel apart. Qt's scale is set before its application starts: in a
    process of its own."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    script = (
        "import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']\n"
        "from PySide6.QtWidgets import QApplication; app = QApplication([])\n"
        "import pyqtgraph as pg; from panels.dense_line import DenseCurve; from test_dense_line import straight\n"
        "print(json.dumps({w: [straight(pg.PlotDataItem(), w)[0], straight(DenseCurve(), w)[0]] for w in (2, 3)}))\n")
    env = {**os.environ, "QT_SCALE_FACTOR": scale, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", script, str(root)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    for width, (wide, passed) in json.loads(done.stdout.splitlines()[-1]).items():
        assert passed == wide and len(wide) >= int(width), (width, wide, passed)


def test_a_translucent_curve_is_drawn_by_pyqtgraph(qtbot):
    """Passes over each other would darken a curve drawn at half opacity (pyqtgraph's Alpha in the
    chart's menu): it is drawn as before, as light."""
    item = DenseCurve()
    item.setData([1.0, 2.0], [1.0, 2.0])
    item.opts["antialias"] = False
    item.setPen(pg.mkPen("k", width=3))
    assert item.curve.in_passes()
    item.setOpacity(0.5)
    assert not item.curve.in_passes()
    wide = _straight(qtbot, pg.PlotDataItem(), 3, Qt.PenStyle.SolidLine, opacity=0.5)
    passed = _straight(qtbot, DenseCurve(), 3, Qt.PenStyle.SolidLine, opacity=0.5)
    assert passed == wide and 100 < wide[2] < 160


def _shown(qtbot):
    """A plots panel showing three dense series, and its runtime chart, laid out."""
    from panels.plots import PlotsPanel
    from test_dense_series import dense_set
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    panel.show()
    panel.update_from([dense_set()])
    chart = panel.runtimePlot
    qtbot.waitUntil(lambda: chart.getViewBox().width() > 300, timeout=5_000)
    return panel, chart


def test_a_chart_strokes_no_wide_pen_for_a_dense_line_and_smooths_none(qtbot, monkeypatch):
    """A dense series' curve is unsmoothed and wide (2 px): painted, pyqtgraph's curve paint only
    ever gets 1 px pens for it. A smoothed line, a fill or a 1.5 px pen is drawn as before."""
    seen = []
    paint = pg.PlotCurveItem.paint

    def record(self, p, opt, widget):
        seen.append((self.opts["pen"].widthF() if self.opts["pen"] is not None else 0,
                     bool(self.opts["antialias"]), self.opts["fillLevel"] is not None))
        return paint(self, p, opt, widget)
    monkeypatch.setattr(pg.PlotCurveItem, "paint", record)
    panel, chart = _shown(qtbot)
    assert any(isinstance(item.curve, DenseLine) and item.curve.in_passes() for item in chart.series.values())
    seen.clear()
    chart.viewport().grab()
    lines = [s for s in seen if not s[2]]
    assert lines and not [s for s in lines if not s[1] and s[0] > 1]
    item = DenseCurve()
    item.setData([1.0, 2.0, 3.0], [1.0, 4.0, 2.0])       # an item without data hands nothing on
    item.setPen(pg.mkPen("k", width=1.5))
    assert not item.curve.in_passes()
    item.opts["antialias"] = True
    item.setPen(pg.mkPen("k", width=2))          # setPen hands the option on to the curve
    assert not item.curve.in_passes()
    item.opts["antialias"] = False
    item.setPen(pg.mkPen("k", width=2))
    assert item.curve.in_passes()
    item.setFillLevel(0)
    item.setBrush("r")
    assert not item.curve.in_passes()


def test_a_charts_first_repaint_after_new_data_makes_no_path(qtbot, monkeypatch):
    """Each curve's path and bounds are made as its series is drawn (a step of the drawing), not
    in the chart's repaint, where they were half of a compared set's first repaint."""
    from test_dense_series import dense_set
    panel, chart = _shown(qtbot)
    chart.viewport().grab()
    made = []
    to_path = pg.functions.arrayToQPath
    monkeypatch.setattr(pg.functions, "arrayToQPath", lambda *a, **k: made.append(1) or to_path(*a, **k))
    panel.update_from([dense_set(), dense_set()])          # every series new, and a set compared
    assert made                                            # the paths were made, as the series were drawn
    made.clear()
    chart.viewport().grab()
    assert made == []
