"""The window on a projector: toolbar in view, charts that shrink, presentation mode, themes,
axes and tick labels, hover, double-click, mouse zoom, palette."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from test_gui import window  # noqa: E402,F401 - the fixture
from test_plots import row  # noqa: E402

from workbench.results import rows as results  # noqa: E402

SIZES = [2 ** k for k in range(10, 26, 2)]


def demo_frame(workload: str = "source_terms"):
    rows = []
    for i, size in enumerate(SIZES):
        rows.append(row("numpy", size, 1e-6 * size / 1000, workload=workload, peak_host_bytes=8.0 * size))
        rows.append(row("numba", size, 2e-6 * size / 1500 + 2e-5, workload=workload, peak_host_bytes=4.0 * size))
        rows.append(row("cupy", size, 1e-5 + 1e-9 * size, workload=workload, host_memory="pageable",
                        h2d_s=1e-5 + 4e-10 * size, d2h_s=5e-6 + 2e-10 * size, peak_device_bytes=8.0 * size,
                        total_median_s=3e-5 + 1.6e-9 * size))
    return results.to_frame(rows)


def show_at(qtbot, w, width, height):
    w.resize(width, height)
    qtbot.waitUntil(lambda: w.width() <= width and w.height() <= height, timeout=5_000)
    w.plots.update_from(demo_frame())
    QApplication.processEvents()    # noqa: the test lays the window out before measuring it


@pytest.mark.parametrize("size", [(1280, 720), (1600, 1000)])
def test_run_stop_progress_and_eta_are_in_view(qtbot, window, size):
    w = window
    show_at(qtbot, w, *size)
    for widget in (w.runButton, w.stopButton, w.progressBar, w.etaLabel):
        assert widget.isVisible()
        region = widget.visibleRegion()
        assert region.boundingRect().size() == widget.size(), widget.objectName()   # wholly in view
        top_left = widget.mapTo(w, QPoint(0, 0))
        assert w.rect().contains(top_left) and w.rect().contains(top_left + QPoint(widget.width() - 1,
                                                                                   widget.height() - 1))
    w.presentationAction.trigger()
    assert not w.runButton.visibleRegion().isEmpty()


def _cropped(w) -> list[str]:
    """The charts whose content is larger than their view (pyqtgraph then crops), or whose title is."""
    out = []
    for chart in w.plots.plots():
        if not chart.isVisible():           # the roofline, shown only alone on demand
            continue
        item = chart.getPlotItem()
        view = chart.viewport().rect()
        geo = item.geometry()
        if geo.width() > view.width() + 1 or geo.height() > view.height() + 1 \
                or item.titleLabel.item.boundingRect().width() > view.width():
            out.append(f"{chart.objectName()}: {geo.width():.0f}x{geo.height():.0f} in {view.width()}x{view.height()}")
    return out


def test_charts_shrink_at_1280x720_and_crop_nothing(qtbot, window):
    w = window
    show_at(qtbot, w, 1280, 720)
    qtbot.waitUntil(lambda: not _cropped(w), timeout=5_000)
    assert w.width() <= 1280 and w.height() <= 720          # the window fits the projector
    w.presentationAction.trigger()
    qtbot.waitUntil(lambda: not _cropped(w), timeout=5_000)
    assert w.width() <= 1280 and w.height() <= 720


@pytest.mark.parametrize("presenting", [False, True])
def test_every_gpu_backend_in_the_legend_still_fits_1280x720(qtbot, window, presenting):
    """On the H200, seven backends and three phases in one row made the window 2395 pixels wide;
    the band's entry must wrap with them too."""
    from workbench.catalog.workloads import REGISTRY
    w = window
    if presenting:
        w.presentationAction.trigger()
    show_at(qtbot, w, 1280, 720)
    every = list(REGISTRY.get("source_terms").backends)
    gpu = dict(host_memory="pageable", h2d_s=1e-5, d2h_s=1e-5, peak_device_bytes=1e6)
    w.plots.update_from(results.to_frame([row(b, s, 1e-4, **({} if b in ("numpy", "numba") else gpu))
                                          for b in every for s in SIZES]))
    QApplication.processEvents()    # noqa: the new entries are laid out before the window is measured
    # The backends and what the runtime chart's band is (this frame's: q1 to q3); with this many GPU
    # backends the transfer chart draws their shares as lines, without the three phases' colours (issue 38).
    assert len(w.plots.legendStrip.entries) == len(every) + 1
    assert w.minimumSizeHint().width() <= 1280
    w.resize(1280, 720)
    qtbot.waitUntil(lambda: not _cropped(w), timeout=5_000)
    assert w.width() <= 1280 and w.height() <= 720


@pytest.mark.parametrize("presenting", [False, True])
def test_tick_labels_never_overlap_at_1280x720(qtbot, window, presenting):
    from panels.axes import text_rects
    w = window
    show_at(qtbot, w, 1280, 720)
    if presenting:
        w.presentationAction.trigger()
        QApplication.processEvents()    # noqa
    counted = 0
    for chart in w.plots.plots():
        for name in ("left", "bottom"):
            rects = text_rects(chart.getAxis(name))
            counted += len(rects)
            for (a, ta), (b, tb) in itertools.combinations(rects, 2):
                assert not a.intersects(b), (chart.objectName(), name, ta, tb)
    assert counted >= 20           # labels were drawn at all


def test_axes_speak_units_and_the_workload_names_the_x_axis(qtbot, window):
    from panels.axes import text_rects
    w = window
    show_at(qtbot, w, 1600, 1000)
    runtime = w.plots.runtimePlot
    left = [t for _, t in text_rects(runtime.getAxis("left"))]
    assert any(t.endswith(("ns", "µs", "ms", " s")) for t in left), left
    bottom = [t for _, t in text_rects(runtime.getAxis("bottom"))]
    assert bottom and all(t.startswith("2") and "^" not in t for t in bottom), bottom    # 2¹⁰, powers of two
    memory = [t for _, t in text_rects(w.plots.memoryPlot.getAxis("left"))]
    assert any(t.endswith(("KiB", "MiB", "GiB")) for t in memory), memory
    assert runtime.getAxis("bottom").labelText == "cells N"
    w.plots.update_from(demo_frame("groupby"))
    assert runtime.getAxis("bottom").labelText == "rows"


def test_presentation_mode_folds_the_docks_and_scales_everything(qtbot, window):
    w = window
    show_at(qtbot, w, 1600, 1000)
    w.resultsDock.toggleViewAction().trigger()          # hidden by hand before: stays hidden after
    assert not w.resultsDock.isVisible()
    w.presentationAction.trigger()
    assert not w.experimentDock.isVisible() and not w.resultsDock.isVisible()
    for chart in w.plots.plots():
        assert chart.getAxis("bottom").style["tickFont"].pointSize() >= 16
        assert chart.getAxis("left").labelStyle["font-size"] == f"{chart.look.font_pt}pt"
        assert chart.look.font_pt >= 16
    runtime = w.plots.runtimePlot
    assert runtime.getPlotItem().titleLabel.opts["size"].rstrip("pt") >= "16"
    assert all(c.opts["pen"].widthF() >= 3 for k, c in runtime.series.items() if k[0] != "spread")
    assert runtime.legend.items and all(label.opts["size"] == f"{runtime.look.font_pt}pt"
                                        for _, label in runtime.legend.items)
    smaller = w.findChild(type(w.presentationAction), "smallerTextAction")
    for _ in range(10):
        smaller.trigger()
    assert runtime.look.font_pt == 16                   # never under 16 pt on a projector
    w.experimentDock.toggleViewAction().trigger()       # docks come back from the View menu, any mode
    assert w.experimentDock.isVisible()
    w.presentationAction.trigger()
    assert w.experimentDock.isVisible() and not w.resultsDock.isVisible()
    assert runtime.look.font_pt < 16


def test_a_key_drawn_in_presentation_mode_is_drawn_small_again_after_it(qtbot, window):
    """What is drawn, not the label's options: pyqtgraph's legend setters changed the options alone,
    and a key wide enough for the look's full size came back from presentation mode at its
    presentation size (the window's chart at 1600x1000 is that wide)."""
    w = window
    show_at(qtbot, w, 1600, 1000)
    runtime = w.plots.runtimePlot
    assert runtime.key_pt() == runtime.look.font_pt                 # not shrunk for its width
    heights = lambda: [label.item.boundingRect().height() for _, label in runtime.legend.items]   # noqa: E731
    before = heights()
    assert before
    w.presentationAction.trigger()
    QApplication.processEvents()    # noqa: the test lays the window out before measuring it
    assert min(heights()) > max(before)
    w.presentationAction.trigger()
    QApplication.processEvents()    # noqa: as above
    assert heights() == pytest.approx(before, abs=0.5)


def test_dark_theme_darkens_the_charts_and_the_window(qtbot, window):
    w = window
    show_at(qtbot, w, 1600, 1000)
    light = w.plots.runtimePlot.backgroundBrush().color().lightness()
    w.darkAction.trigger()
    assert w.plots.runtimePlot.backgroundBrush().color().lightness() < 60 < light
    assert w.palette().window().color().lightness() < 80
    ink = w.plots.runtimePlot.series[("compute", "numpy", "")].opts["pen"].color().lightness()
    assert ink > 40                                       # lines stay visible on the dark background
    w.darkAction.trigger()
    assert w.plots.runtimePlot.backgroundBrush().color().lightness() > 200


def test_double_click_shows_one_chart_alone_and_again_all(qtbot, window):
    w = window
    show_at(qtbot, w, 1600, 1000)
    runtime = w.plots.runtimePlot
    small = runtime.width()
    qtbot.mouseDClick(runtime.viewport(), Qt.MouseButton.LeftButton)
    assert not w.plots.memoryPlot.isVisible() and not w.plots.summary.isVisible()
    qtbot.waitUntil(lambda: runtime.width() > 2 * small, timeout=5_000)
    qtbot.mouseDClick(runtime.viewport(), Qt.MouseButton.LeftButton)
    grid = [c for c in w.plots.plots() if c not in w.plots.alone]
    assert all(c.isVisible() for c in grid) and w.plots.summary.isVisible()
    assert not any(c.isVisible() for c in w.plots.alone)      # no cell of their own: shown alone, on demand


def test_the_energy_chart_is_shown_alone_and_the_roofline_takes_its_place(qtbot, window):
    w = window
    show_at(qtbot, w, 1280, 720)
    w.plots.energyAction.trigger()
    assert w.plots.energyPlot.isVisible() and not w.plots.runtimePlot.isVisible()
    w.plots.rooflineAction.trigger()           # one alone at a time: the other's action unticks
    assert w.plots.rooflinePlot.isVisible() and not w.plots.energyPlot.isVisible()
    assert not w.plots.energyAction.isChecked()
    w.plots.rooflineAction.trigger()
    assert w.plots.runtimePlot.isVisible() and not any(c.isVisible() for c in w.plots.alone)


def test_the_roofline_is_shown_alone_and_the_grid_comes_back(qtbot, window):
    w = window
    show_at(qtbot, w, 1280, 720)
    w.plots.rooflineAction.trigger()
    roofline = w.plots.rooflinePlot
    assert roofline.isVisible() and not w.plots.runtimePlot.isVisible() and not w.plots.summary.isVisible()
    qtbot.waitUntil(lambda: not _cropped(w), timeout=5_000)
    qtbot.mouseDClick(roofline.viewport(), Qt.MouseButton.LeftButton)
    assert not roofline.isVisible() and w.plots.runtimePlot.isVisible() and not w.plots.rooflineAction.isChecked()


def _wheel(chart):
    vp = chart.viewport()
    pos = QPointF(vp.width() / 2, vp.height() / 2)
    ev = QWheelEvent(pos, chart.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                     Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(vp, ev)


def test_mouse_wheel_zoom_can_be_switched_off(qtbot, window):
    w = window
    show_at(qtbot, w, 1600, 1000)
    chart = w.plots.runtimePlot
    before = chart.getViewBox().viewRange()
    _wheel(chart)
    assert chart.getViewBox().viewRange() != before        # on: the wheel zooms
    chart.getViewBox().autoRange()
    w.zoomAction.trigger()
    assert not w.zoomAction.isChecked()
    before = chart.getViewBox().viewRange()
    _wheel(chart)
    assert chart.getViewBox().viewRange() == before        # off: nothing moves


def test_hovering_a_point_tells_its_values(qtbot, window):
    w = window
    show_at(qtbot, w, 1600, 1000)
    frame = demo_frame()
    chart = w.plots.runtimePlot
    x, y = chart.points()[("compute", "numba", "")]
    p = chart.getViewBox().mapViewToScene(QPointF(np.log10(x[3]), np.log10(y[3])))
    text = chart.hover_text(p + QPointF(3, 2))
    r = frame[(frame["backend"] == "numba") & (frame["size"] == x[3])].iloc[0]
    speedup = frame[(frame["backend"] == "numpy") & (frame["size"] == x[3])]["total_median_s"].iloc[0] \
        / r["total_median_s"]
    assert "numba" in text and "2^16" in text
    assert results.human_seconds(r["compute_median_s"]) in text
    assert results.human_seconds(r["compute_q1_s"]) in text and results.human_seconds(r["compute_q3_s"]) in text
    assert "end-to-end" in text and f"{speedup:.3g}x" in text
    far = chart.getViewBox().mapViewToScene(QPointF(np.log10(x[0]), np.log10(y[0]) + 3))
    assert chart.hover_text(far) == ""
    bars = w.plots.transferPlot
    assert "host to device" in bars.hover_text(bars.getViewBox().mapViewToScene(bars.bar_position("cupy", SIZES[-1])))


def test_the_empty_window_says_what_to_do_first(qtbot, window):
    assert "Pick a workload and press Run (Ctrl+R)" in window.plots.summary.text()
    assert window.plots.summary.isVisible()


# --- the palette: colour-blind safe, a marker each, phases apart ---------------------------------

_DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                          [-0.011820, 0.042940, 0.968881]])
_PROTANOPIA = np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                        [-0.003882, -0.048116, 1.051998]])


def _simulate(hex_colour: str, matrix) -> np.ndarray:
    """Machado et al. (2009), severity 1, in linear RGB."""
    c = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    out = np.clip(matrix @ lin, 0, 1)
    return np.where(out <= 0.0031308, 12.92 * out, 1.055 * out ** (1 / 2.4) - 0.055)


def test_backends_of_a_workload_stay_apart_under_colour_blindness_and_in_grey():
    from panels import style
    from workbench.catalog.workloads import REGISTRY
    for w in REGISTRY.all():
        names = w.backends
        assert len({style.marker(b) for b in names}) == len(names), w.name       # grey scale: markers
        for matrix in (_DEUTERANOPIA, _PROTANOPIA):
            for a, b in itertools.combinations(names, 2):
                d = np.linalg.norm(_simulate(style.color(a), matrix) - _simulate(style.color(b), matrix))
                assert d > 0.15, (w.name, a, b)      # tab10 (the first palette) had 0.05 here
    used = {style.color(b).lower() for b in style.BACKEND_STYLE}
    assert not used & {c.lower() for c in style.PHASE_COLORS.values()}


FIRST_START = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from panels.window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
w.show()
app.processEvents()
g, a = w.frameGeometry(), w.screen().availableGeometry()
print(json.dumps({"window": [g.x(), g.y(), g.width(), g.height()], "screen": [a.x(), a.y(), a.width(), a.height()],
                  "charts": [[c.width(), c.height()] for c in w.plots.plots() if c.isVisible()],
                  "results": w.resultsDock.height()}))
if len(sys.argv) > 2:
    w.grab().save(sys.argv[2])
w.close()
"""


@pytest.mark.parametrize("screen", [(1280, 720), (1920, 1080)])
def test_the_first_start_fits_the_screen_and_so_does_a_window_saved_on_a_larger_one(qapp, tmp_path, screen):
    """On a real offscreen screen of that size (Qt's offscreen platform, configured): a first start
    opens within it; a geometry saved at 2400x1400 on a larger screen is brought within it too."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1],
                                                "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    script = tmp_path / "first.py"
    script.write_text(FIRST_START)
    root = Path(__file__).parents[1]
    env = {**__import__("os").environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "PYTHONPATH": str(root)}
    settings = tmp_path / "s.ini"

    def start() -> dict:
        proc = subprocess.run([sys.executable, str(script), str(settings)], env=env, cwd=root, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    first = start()
    x, y, w, h = first["window"]
    assert first["screen"] == [0, 0, *screen]
    assert x >= 0 and y >= 0 and x + w <= screen[0] and y + h <= screen[1], first
    # The charts get most of the window: at 1280x720 the docks' natural sizes left them 255x188.
    assert len(first["charts"]) >= 4 and all(cw >= 300 and ch >= 180 for cw, ch in first["charts"]), first
    assert first["results"] <= 0.3 * h, first
    # A window last closed at 2400x1400 on another screen: opened again on this one, it fits.
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow
    big = QMainWindow()
    big.setGeometry(100, 100, 2400, 1400)
    s = QSettings(str(settings), QSettings.Format.IniFormat)
    s.setValue("geometry", big.saveGeometry())
    s.sync()
    again = start()
    x, y, w, h = again["window"]
    assert x >= 0 and y >= 0 and x + w <= screen[0] and y + h <= screen[1], again


def test_the_status_line_is_one_short_sentence_and_the_log_has_the_rest(qtbot, window):
    """Without a GPU the probe's findings were an 813-character status line; now one sentence, and
    each GPU backend's reason in the Log tab."""
    from panels.window import STATUS_CHARS, short
    from workbench.catalog.backends import probe
    status = window.statusBar()
    gpu_off = not probe("cupy").usable
    qtbot.waitUntil(lambda: "backend" in status.currentMessage().lower(), timeout=60_000)
    text = status.currentMessage()
    assert len(text) <= STATUS_CHARS and "\n" not in text
    if gpu_off:
        assert text.startswith("CPU backends ready") and "CUDA" in text
        assert "cupy not usable here" in window.logPanel.toPlainText()
    long = "numba at size 1,024: error: " + "a very long reason " * 40
    assert len(short(long)) <= STATUS_CHARS and short(long).endswith("(the Log tab has it all)")
    assert short("first line\nsecond line").startswith("first line") and short("brief") == "brief"


def test_a_note_stays_within_its_plot_in_presentation_mode_at_1280x720(qtbot, window):
    """The note of the values of 0 a log axis leaves out ran off the memory chart's left edge."""
    w = window
    w.presentationAction.trigger()
    w.resize(1280, 720)
    qtbot.waitUntil(lambda: w.width() <= 1280 and w.height() <= 720, timeout=5_000)
    frame = demo_frame()
    frame.loc[frame["backend"] == "numba", "peak_host_bytes"] = 0.0
    w.plots.update_from(frame)
    QApplication.processEvents()    # noqa: laid out before it is measured
    chart = next(c for c in w.plots.plots() if c.objectName() == "memoryPlot")
    assert chart.notes(), "the zeros a log axis cannot show are noted"
    view = chart.getViewBox().sceneBoundingRect()
    note = chart.note.mapRectToScene(chart.note.boundingRect())
    assert view.left() - 1 <= note.left() and note.right() <= view.right() + 1, (note, view)
