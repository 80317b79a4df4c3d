"""The window's File menu: charts, reports, results and sessions out; results and sessions in;
sets compared. Driven by object name, offscreen; every file written is opened and read back."""
from __future__ import annotations

from workbench.views.presets import KINDS  # noqa: E402

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pytestqt")

from helpers import result_set  # noqa: E402
from PIL import Image  # noqa: E402
from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtGui import QAction  # noqa: E402
from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QLineEdit, QMenu, QPushButton  # noqa: E402
from session import open_files  # noqa: E402
from test_gui import check_backends, set_sizes, window  # noqa: E402,F401 - the fixture

from workbench.results import files as result_files  # noqa: E402
from workbench.results import session_file

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).parents[1]


@pytest.fixture
def two_files(tmp_path):
    """float32 and float64 result files, as ``gpu-workbench run --out`` writes them (CSV and JSON)."""
    return (result_files.write(result_set("float32"), tmp_path / "f32.csv"),
            result_files.write(result_set("float64", scale=2.0), tmp_path / "f64.json"))


def action(w, name) -> QAction:
    found = {a.objectName(): a for a in w.findChildren(QAction)}
    assert name in found, sorted(found)
    return found[name]


def export(qtbot, w, path, **options) -> list[Path]:
    with qtbot.waitSignal(w.files.exported, timeout=120_000) as written:
        assert w.files.export_chart(path, **options)
    return written.args[0]


def grey(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("L"))


def drawn(w) -> dict:
    """Every chart's drawn points: {(chart, key): (x, y)}, empty series left out."""
    out = {}
    for chart in (w.runtimePlot, w.speedupPlot, w.memoryPlot, w.firstCallPlot):
        for key, (x, y) in chart.points().items():
            if len(x):
                out[(chart.objectName(), key)] = (np.asarray(x, float), np.asarray(y, float))
    return out


# --- charts out ------------------------------------------------------------------------------------

def test_a_png_from_the_dialog_has_the_preset_size_whatever_the_window(qtbot, window, two_files, tmp_path):
    w = window
    open_files(qtbot, w, [two_files[0]], drawn=False)
    sizes = []
    for width, height in ((1400, 900), (700, 500)):
        w.resize(width, height)
        action(w, "exportChartAction").trigger()
        dialog = w.findChild(QDialog, "chartExportDialog")
        assert dialog is not None and dialog.isVisible()
        kind = dialog.findChild(QComboBox, "exportKind")
        kind.setCurrentIndex(kind.findData("runtime"))
        dialog.findChild(QLineEdit, "exportPath").setText(str(tmp_path / f"runtime-{width}.png"))
        with qtbot.waitSignal(w.files.exported, timeout=120_000) as written:
            qtbot.mouseClick(dialog.findChild(QPushButton, "exportOk"), Qt.MouseButton.LeftButton)
        assert not dialog.isVisible()
        image = grey(written.args[0][0])
        sizes.append(image.shape)
        assert image.std() > 20 and (image < 250).mean() > 0.02        # not blank
    assert sizes == [(1080, 1920), (1080, 1920)]                      # the window's size never enters


def test_svg_has_a_path_per_series_and_axis_titles_as_text(qtbot, window, two_files, tmp_path):
    w = window
    open_files(qtbot, w, [two_files[0]], drawn=False)
    [path] = export(qtbot, w, tmp_path / "runtime.svg", kind="runtime", preset="paper")
    root = ET.fromstring(path.read_bytes())
    assert root.get("width") == "252pt"                               # the paper preset: 3.5 in
    series = {g.get("id") for g in root.iter(f"{SVG}g") if g.get("id", "").startswith("series-runtime-compute-")}
    assert series == {f"series-runtime-compute-{b}" for b in ("numpy", "numba", "cupy")}
    for group in root.iter(f"{SVG}g"):
        if group.get("id") in series:       # the curve: one path through its four points (the marker is a def)
            [curve] = group.findall(f"{SVG}path")
            assert len(re.findall(r"[ML] ", curve.get("d"))) == 4
    texts = {"".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")}
    assert {"Runtime", "time per call", "cells N"} <= texts
    assert any("source_terms" in t and "float32" in t for t in texts)       # the stamp
    [bare] = export(qtbot, w, tmp_path / "bare.svg", kind="runtime", stamp=False)
    assert "source_terms" not in bare.read_text()


def test_every_chart_as_pdf_is_one_page_each_and_4k_is_twice_the_slide(qtbot, window, two_files, tmp_path):
    w = window
    open_files(qtbot, w, [two_files[0]], drawn=False)
    [pdf] = export(qtbot, w, tmp_path / "all.pdf")
    assert len(re.findall(rb"/Type\s*/Page\b", pdf.read_bytes())) == len(KINDS)
    pngs = export(qtbot, w, tmp_path / "big.png", preset="4k")
    assert [p.name for p in pngs] == [f"big-{k}.png" for k in KINDS]
    assert {grey(p).shape for p in pngs} == {(2160, 3840)}


def test_each_plots_context_menu_exports_that_chart(qtbot, window, two_files):
    w = window
    open_files(qtbot, w, [two_files[0]], drawn=False)
    for chart in w.plots.plots():
        [menu_action] = chart.scene().contextMenu           # pyqtgraph's own "Export..." is gone
        assert menu_action.objectName() == f"exportThisChart-{chart.kind}"
        # The menu a right click on the plot builds: the view's own entries, then the scene's.
        view = chart.getViewBox()
        menu = QMenu()
        menu.addActions(view.menu.actions())
        menu = chart.scene().addParentContextMenus(view, menu, SimpleNamespace(acceptedItem=view))
        assert menu.actions()[-1] is menu_action and menu_action.text() == "Export this chart..."
    w.speedupPlot.scene().contextMenu[0].trigger()
    dialog = w.findChild(QDialog, "chartExportDialog")
    assert dialog.isVisible() and dialog.findChild(QComboBox, "exportKind").currentData() == "speedup"
    assert dialog.findChild(QCheckBox, "exportStamp").isChecked()
    dialog.reject()


def test_the_report_from_the_window_holds_every_chart(qtbot, window, two_files, tmp_path):
    w = window
    open_files(qtbot, w, two_files, drawn=False)
    with qtbot.waitSignal(w.files.exported, timeout=120_000) as written:
        assert w.files.export_report(tmp_path / "report.html")
    page = written.args[0][0].read_text()
    assert page.count("<svg") == len(KINDS) and "float32" in page and "float64" in page and "http://" not in page.split(
        "<svg")[0]


# --- results in ------------------------------------------------------------------------------------

def test_a_csv_written_by_the_command_line_draws_the_same_points_as_its_rows(qtbot, window, tmp_path):
    csv = tmp_path / "cli.csv"
    subprocess.run([sys.executable, "-m", "workbench", "run", "-w", "source_terms", "-b", "numpy", "-s",
                    "2^10:2^14:x4", "--budget", "0", "-r", "2", "-q", "--out", str(csv)],
                   cwd=ROOT, check=True, capture_output=True, timeout=240)
    rows = pd.read_csv(csv)                                   # any reader opens it as it is
    assert list(rows["size"]) == [1024, 4096, 16384]
    w = window
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):     # the charts are drawn off the GUI thread
        assert w.files.open_results([csv])
    assert w.resultsTable.model().rowCount() == len(rows)
    x, y = w.runtimePlot.points()[("compute", "numpy", "")]
    assert x.tolist() == rows["size"].tolist() and np.array_equal(y, rows["compute_median_s"].to_numpy())
    _, first = w.firstCallPlot.points()[("first", "numpy", "")]
    assert np.array_equal(first, rows["first_call_s"].to_numpy())
    assert w.speedupPlot.baseline == "numpy"
    assert "This machine" in w.environment.toPlainText() or w.environment.record == result_files.open_results(
        csv).environment


def test_a_sweep_written_and_opened_again_draws_exactly_what_the_sweep_drew(qtbot, window, tmp_path):
    w = window
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy"])
    set_sizes(w, "2^10", "2^14", 3)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000):
        w.run()
    live = drawn(w)
    assert live
    for suffix in ("csv", "json"):
        with qtbot.waitSignal(w.files.exported, timeout=60_000) as written:
            assert w.files.export_results(tmp_path / f"sweep.{suffix}")
        path = written.args[0][0]
        assert path == tmp_path / f"sweep.{suffix}"
        with qtbot.waitSignal(w.plots.updated, timeout=60_000):
            assert w.files.open_results([path])
        again = drawn(w)
        assert again.keys() == live.keys()
        for key in live:
            assert np.array_equal(again[key][0], live[key][0]) and np.array_equal(again[key][1], live[key][1]), key


def test_two_sets_compared_are_both_drawn_and_labelled(qtbot, window, two_files, tmp_path):
    w = window
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        assert w.files.open_results([two_files[0]])
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        assert w.files.compare_with([two_files[1]])
    points = w.runtimePlot.points()
    for backend in ("numpy", "numba", "cupy"):
        (x0, y0), (x1, y1) = points[("compute", backend, "", 0)], points[("compute", backend, "", 1)]
        assert x0.tolist() == x1.tolist() == [1024, 4096, 16384, 65536]
        assert np.allclose(y1, 2 * y0)                          # float64 took twice as long, as written
    assert {"float32", "float64"} <= set(w.plots.legendStrip.entries)
    table = w.resultsTable.results
    assert table.columns()[0] == "set" and table.rowCount() == 28
    assert {table.data(table.index(r, 0)) for r in range(28)} == {"float32", "float64"}
    # The speedup's baseline taken from the other set: float32 numpy is twice as fast as float64 numpy.
    combo = w.findChild(QComboBox, "speedupBaseline")
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):   # made anew in the spec process
        combo.setCurrentIndex(combo.findText("numpy (float64)"))
    _, ratio = w.speedupPlot.points()[("compute", "numpy", "", 0)]
    assert np.allclose(ratio, 2.0) and w.speedupPlot.title_text == "Speedup over numpy (float64)"
    [svg] = export(qtbot, w, tmp_path / "speedup.svg", kind="speedup")
    texts = {"".join(t.itertext()).strip() for t in ET.fromstring(svg.read_bytes()).iter(f"{SVG}text")}
    assert "Speedup over numpy (float64)" in texts and {"numba", "float32", "float64"} <= texts
    # The window's legend strip names what the export's legend names: each backend and each set.
    assert {"numba", "float32", "float64"} <= set(w.plots.legendStrip.entries_of("speedup"))
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        w.files.close_compared()
    assert ("compute", "numpy", "") in w.runtimePlot.points() and w.resultsTable.model().rowCount() == 14
    assert not any(len(x) for k, (x, _) in w.runtimePlot.points().items() if len(k) > 3)


def test_a_sweep_run_while_comparing_is_the_first_set(qtbot, window, tmp_path):
    w = window
    reference = result_set("float64")
    reference.frame = reference.frame[reference.frame["backend"] == "numpy"]
    open_files(qtbot, w, [result_files.write(reference, tmp_path / "reference.json")])
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy"])
    set_sizes(w, "2^10", "2^12", 2)
    w.experiment.dtypeCombo.setCurrentText("float32")
    w.experiment.budgetSpin.setValue(0.0)
    open_files(qtbot, w, [result_files.write(result_set("float64"), tmp_path / "other.json")], compare=True)
    assert len(w.compared) == 1 and w.files.closeCompareAction.isEnabled()
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000):
        w.run()
    sets = w.result_sets()
    assert len(sets) == 2 and sets[0].source == "" and list(sets[0].frame["size"]) == [1024, 4096]
    x, _ = w.runtimePlot.points()[("compute", "numpy", "", 0)]          # the sweep's own points
    assert list(x) == [1024, 4096]
    x, _ = w.runtimePlot.points()[("compute", "numpy", "", 1)]          # and the file's, still there
    assert list(x) == [1024, 4096, 16384, 65536]
    table = w.resultsTable.results
    labels = {table.data(table.index(r, 0)) for r in range(table.rowCount())}
    assert len(labels) == 2 and table.rowCount() == 2 + 14
    assert [r["size"] for r in table.rows] == [1024, 4096]


def test_a_session_saved_and_reopened_restores_settings_rows_and_baseline(qtbot, window, two_files, tmp_path):
    w = window
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        w.files.open_results(list(two_files))
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy"])
    set_sizes(w, "2^12", "2^18", 4)
    w.experiment.dtypeCombo.setCurrentText("float64")
    w.experiment.repeatsSpin.setValue(7)
    w.experiment.budgetSpin.setValue(0.5)
    w.experiment.noiseSpin.setValue(2.5)
    w.experiment.hostMemoryCombo.setCurrentText("pinned")
    combo = w.findChild(QComboBox, "speedupBaseline")
    combo.setCurrentIndex(combo.findData("numba@2"))
    with qtbot.waitSignal(w.files.exported, timeout=60_000) as written:
        assert w.files.save_session(tmp_path / "talk.json")
    [saved] = written.args[0]
    settings, sets = w.experiment.settings(), w.result_sets()

    from panels.window import MainWindow
    other = MainWindow(QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.ready, timeout=120_000):
        pass
    assert other.experiment.settings() != settings
    with qtbot.waitSignal(other.plots.updated, timeout=60_000):
        assert other.files.open_session(saved)
    assert other.experiment.settings() == settings and other.experiment.spec().noise == pytest.approx(0.025)
    again = other.result_sets()
    assert len(again) == 2
    for before, after in zip(sets, again):
        pd.testing.assert_frame_equal(after.frame, before.frame)
        assert (after.environment, after.source, after.host) == (before.environment, before.source, before.host)
    pd.testing.assert_frame_equal(pd.DataFrame(other.rows), pd.DataFrame(w.rows))
    assert drawn(other).keys() == drawn(w).keys()
    assert other.findChild(QComboBox, "speedupBaseline").currentData() == "numba@2"
    other.close()


# --- what must be refused, and said ----------------------------------------------------------------

def newer(path: Path) -> Path:
    text = path.read_text().replace(f'"schema": {result_files.SCHEMA}', f'"schema": {result_files.SCHEMA + 1}')
    out = path.with_name("newer.json")
    out.write_text(text)
    return out


@pytest.mark.parametrize("bad,reason", [
    (lambda d, good: d / "missing.csv", "no such file"),
    (lambda d, good: d, "is a directory"),
    (lambda d, good: newer(result_files.write(result_set(), d / "n.json")), "newer GPU Workbench"),
    (lambda d, good: (d / "cut.json").write_text(good.read_text()[:-300]) and d / "cut.json", "truncated"),
    (lambda d, good: (d / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0") and d / "x.png", "not a GPU Workbench"),
    (lambda d, good: session_file.save(d / "s.json", {}, [result_set()]), "not a results file"),
])
def test_a_file_that_cannot_be_opened_says_why_and_changes_nothing(qtbot, window, two_files, tmp_path, bad, reason):
    w = window
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        w.files.open_results([two_files[0]])
    before, rows = drawn(w), list(w.rows)
    good = result_files.write(result_set(), tmp_path / "good.json")
    path = bad(tmp_path, good)
    with qtbot.waitSignal(w.files.problem, timeout=5_000) as said:
        assert w.files.open_results([path])         # read by the file job: said when it fails
    assert reason in said.args[0] and w.notice.isVisible() and reason in w.notice.label.text()
    assert "Nothing on screen has changed" in w.status.currentMessage()
    assert w.rows == rows and drawn(w).keys() == before.keys()
    with qtbot.waitSignal(w.files.problem, timeout=5_000) as said:
        w.files.compare_with([path])
    assert reason in said.args[0] and not w.compared
    if reason != "not a results file":      # that one is a session: File > Open session opens it
        with qtbot.waitSignal(w.files.problem, timeout=5_000) as said:
            w.files.open_session(path)
        assert "Nothing on screen has changed" in said.args[0] and w.rows == rows


@pytest.mark.parametrize("where,reason", [
    (lambda d: d, "is a folder"),
    (lambda d: d / "no" / "such" / "chart.png", "does not exist"),
    (lambda d: Path("/proc/chart.png"), "cannot write in /proc"),
    (lambda d: d / "chart.jpg", "must end in .png, .svg or .pdf"),
])
def test_a_path_that_cannot_be_written_is_refused_with_its_reason(qtbot, window, two_files, tmp_path, where, reason):
    w = window
    open_files(qtbot, w, [two_files[0]], drawn=False)
    path = where(tmp_path)
    with qtbot.waitSignal(w.files.problem, timeout=5_000) as said:
        assert not w.files.export_chart(path, kind="runtime")
    assert reason in said.args[0] and reason in w.notice.label.text()
    # In the dialog: the reason next to the field, and the dialog stays open to fix it.
    dialog = w.files.ask_export_chart("runtime")
    dialog.findChild(QLineEdit, "exportPath").setText(str(path))
    qtbot.mouseClick(dialog.findChild(QPushButton, "exportOk"), Qt.MouseButton.LeftButton)
    error = dialog.findChild(type(dialog.errorLabel), "exportError")
    assert dialog.isVisible() and error.isVisible() and error.text()
    dialog.reject()


def test_a_write_that_fails_in_the_export_thread_is_said(qtbot, window, two_files, tmp_path, monkeypatch):
    w = window

    real = w.files.job.child.run

    def full_disk(target, *args, **kwargs):     # as the exports' child process hands an OSError back
        if target == "workbench.results.files:_open_packed":
            return real(target, *args, **kwargs)    # the same child reads the file opened
        raise OSError(28, "No space left on device", str(tmp_path / "c.png"))
    monkeypatch.setattr(w.files.job.child, "run", full_disk)
    open_files(qtbot, w, [two_files[0]], drawn=False)
    with qtbot.waitSignal(w.files.problem, timeout=30_000) as said:
        assert w.files.export_chart(tmp_path / "c.png", kind="runtime")
    assert "No space left on device" in said.args[0] and w.notice.isVisible()
    assert w.files.exportChartAction.isEnabled()                # ready for the next try


def test_nothing_opens_or_is_written_while_a_sweep_runs(qtbot, window, two_files, tmp_path):
    w = window
    w.experiment.select_workload("matmul")
    check_backends(w, ["numpy"])
    set_sizes(w, "64", "2048", 6)
    w.experiment.repeatsSpin.setValue(200)
    names = ("openResultsAction", "compareAction", "exportChartAction", "exportReportAction",
             "exportResultsAction", "saveSessionAction", "openSessionAction")
    assert all(action(w, n).isEnabled() for n in names)
    with qtbot.waitSignal(w.pointAdded, timeout=60_000):
        w.run()
    assert not any(action(w, n).isEnabled() for n in names)
    with qtbot.waitSignal(w.files.problem, timeout=5_000) as said:
        assert not w.files.open_results([two_files[0]])
    assert "a sweep is running" in said.args[0]
    assert not w.files.export_chart(tmp_path / "c.png") and not w.files.save_session(tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists() and all(r["workload"] == "matmul" for r in w.rows)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000):
        w.stop()
    assert all(action(w, n).isEnabled() for n in names)


def test_a_thirteenth_compared_set_is_refused_and_the_twelve_keep_their_own_markers(qtbot, window, tmp_path):
    """Past twelve sets the markers would repeat: a set drawn in another's circles is two sets no
    reader tells apart. Twelve are drawn, each its own marker; the thirteenth is refused, said."""
    w = window
    paths = [result_files.write(result_set(gpu=f"GPU {i}"), tmp_path / f"g{i}.csv") for i in range(13)]
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        assert w.files.open_results(paths[:12])
    markers = {k[3]: item.opts["symbol"] for k, item in w.runtimePlot.series.items() if k[1] == "numpy"
               and k[0] == "compute"}
    assert len(markers) == 12 and len(set(markers.values())) == 12, markers
    with qtbot.waitSignal(w.files.problem, timeout=30_000) as said:
        assert not w.files.compare_with(paths[12:])            # refused before any file is read
    assert "at most 12 result sets" in said.args[0] and "Close the compared" in said.args[0]
    with qtbot.waitSignal(w.files.problem, timeout=30_000) as said:
        assert not w.files.open_results(paths)
    assert "would be 13. Open fewer" in said.args[0]
    # Two compares asked at once, each within the bound, together past it: the later one is refused.
    with qtbot.waitSignal(w.plots.updated, timeout=60_000):
        assert w.files.open_results(paths[:11])
    with qtbot.waitSignal(w.files.problem, timeout=60_000) as said:
        assert w.files.compare_with(paths[11:12]) and w.files.compare_with(paths[12:13])
    assert "would be 13" in said.args[0] and len(w.result_sets()) == 12
    # A session of more sets than that (an older version saved it) is refused too, said.
    saved = session_file.save(tmp_path / "many.json", {"workload": "source_terms"},
                              [result_set(gpu=f"GPU {i}") for i in range(13)], {})
    with qtbot.waitSignal(w.files.problem, timeout=60_000) as said:
        assert w.files.open_session(saved)
    assert "the session many.json" in said.args[0] and len(w.result_sets()) == 12
