"""The command line's charts and reports, run as a user runs them: in a subprocess, reading exit status
and output; chart kinds another package declares, on the command line and in the window."""
from __future__ import annotations
from workbench.results import files as result_files

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from test_cli import cli
from workbench.views.presets import KINDS


# Charts and reports -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Two result files, as the command line would have written them (float32 and float64)."""
    from helpers import result_set
    folder = tmp_path_factory.mktemp("results")
    out = []
    for dtype in ("float32", "float64"):
        rs = result_set(dtype)
        out.append(str(result_files.save(rs.frame, folder / f"{dtype}.csv", rs.environment, rs.settings)))
    return out


def test_a_chart_from_run_equals_the_chart_from_its_file(tmp_path):
    """The file the command line writes reads back as exactly what it measured: same rows, same chart."""
    from workbench.results.files import open_results
    proc = cli("run", "-w", "source_terms", "-b", "numpy,numba", "-s", "2^8:2^10", "-r", "1", "--budget", "0",
               "-o", str(tmp_path / "r.csv"), "--chart", str(tmp_path / "live.svg"), "--kind", "speedup",
               "--no-stamp")
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {tmp_path / 'live.svg'}" in proc.stdout
    proc = cli("plot", str(tmp_path / "r.csv"), "--chart", str(tmp_path / "again.svg"), "--kind", "speedup",
               "--no-stamp")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "again.svg").read_bytes() == (tmp_path / "live.svg").read_bytes()
    back = open_results(tmp_path / "r.csv").frame
    plain = pd.read_csv(tmp_path / "r.csv")
    assert back["compute_median_s"].tolist() == plain["compute_median_s"].tolist()
    assert len(back) == 6 and (back["status"] == "ok").all()


def test_plot_overlays_several_files_at_the_size_asked(saved, tmp_path):
    from PIL import Image
    proc = cli("plot", *saved, "--chart", str(tmp_path / "c.png"), "--kind", "runtime", "--size", "1280x720")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "c.png") as image:
        assert image.size == (1280, 720)
    proc = cli("plot", *saved, "--chart", str(tmp_path / "all.pdf"), "--preset", "paper", "--baseline", "numpy@2")
    assert proc.returncode == 0, proc.stderr
    assert len(re.findall(rb"/Type\s*/Page\b", (tmp_path / "all.pdf").read_bytes())) == len(KINDS)


def test_report_writes_one_html_file(saved, tmp_path):
    proc = cli("report", *saved, "--out", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r.html").read_text()
    assert page.count("<svg") == len(KINDS) and "float64" in page


def _unwritable_folder() -> str:
    """A folder this process cannot create files in, even as root (a read-only file system)."""
    import tempfile
    try:
        tempfile.TemporaryFile(dir="/sys").close()
    except OSError:
        return "/sys"
    pytest.skip("no read-only folder here")


@pytest.mark.parametrize("args,expect", [
    (["plot", "{missing}", "--chart", "{tmp}/c.png"], "no such file"),
    (["plot", "{foreign}", "--chart", "{tmp}/c.png"], "not a GPU Workbench results file"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--kind", "pie"], "invalid choice: 'pie'"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--size", "0x0"], "from 320 to 8192"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--size", "99999999x2"], "WIDTHxHEIGHT"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--size", "99999x2"], "from 320 to 8192"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--size", "big"], "WIDTHxHEIGHT"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--preset", "paper", "--size", "800x600"], "own size"),
    (["plot", "{good}", "--chart", "{tmp}/c.jpg"], ".png, .svg or .pdf"),
    (["plot", "{good}", "--chart", "{tmp}/no/such/folder/c.png"], "does not exist"),
    (["plot", "{good}", "--chart", "{tmp}/folder.png", "--kind", "runtime"], "is a folder"),
    (["plot", "{good}", "--chart", "{readonly}/c.png"], "cannot write in"),
    (["plot", "{good}", "--chart", "{tmp}/c.png", "--baseline", "cudf"], "no ok point of 'cudf'"),
    (["plot", "{good}"], "required: --chart"),
    (["report", "{good}", "--out", "{tmp}/r.txt"], ".html or .pdf"),
    (["report", "{good}", "--out", "{tmp}/none/r.html"], "does not exist"),
    (["report", "{foreign}", "--out", "{tmp}/r.html"], "not a GPU Workbench results file"),
    (["run", "-w", "source_terms", "-b", "numpy", "-s", "256", "--chart", "{tmp}/none/c.png"], "does not exist"),
    (["run", "-w", "source_terms", "-b", "numpy", "-s", "256", "-o", "{tmp}/none/r.csv"], "does not exist"),
    (["run", "-w", "source_terms", "-b", "numpy", "-s", "256", "--chart", "{tmp}/c.png", "--baseline", "cupy"],
     "not among the backends"),
])
def test_bad_chart_and_report_input_is_refused_in_one_line_before_any_work(args, expect, saved, tmp_path):
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("name,score\nada,3\n")
    (tmp_path / "folder.png").mkdir()
    fill = {"missing": str(tmp_path / "missing.csv"), "foreign": str(foreign), "good": saved[0],
            "tmp": str(tmp_path)}
    if any("{readonly}" in a for a in args):
        fill["readonly"] = _unwritable_folder()
    proc = cli(*[a.format(**fill) for a in args])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""      # refused before the sweep or the drawing
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-workbench: error:")
    assert expect in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.png", "foreign.csv"]   # nothing written


@pytest.fixture
def chart_package(tmp_path):
    """Another package that declares a chart kind under the entry-point group: the environment
    that has it on the path."""
    (tmp_path / "mycharts.py").write_text(textwrap.dedent('''
        import dataclasses
        from workbench.views.chart_kinds import chart_kind
        from workbench.views.spec import kinds

        @chart_kind("runtime-again", short_title="Again", short_y="time", order=99)
        def again(c):
            return dataclasses.replace(kinds.runtime(c), kind="runtime-again", title="The runtime, once more")

        @chart_kind("broken-kind", short_title="Broken", short_y="time", order=100)
        def broken(c):
            raise RuntimeError("this package's chart has a bug")
        '''))
    dist = tmp_path / "mycharts-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mycharts\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[gpu_workbench.chart_kinds]\nagain = mycharts\n")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))


def test_another_package_adds_a_chart_kind_through_its_entry_point(saved, tmp_path, chart_package):
    """The parser takes the kind, the export draws it, and no list of ours was edited."""
    run = [sys.executable, "-m", "workbench", "plot", saved[0], "--no-stamp", "--chart"]
    proc = subprocess.run([*run, str(tmp_path / "again.svg"), "--kind", "runtime-again"], capture_output=True,
                          text=True, env=chart_package, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "The runtime, once more" in (tmp_path / "again.svg").read_text()
    proc = subprocess.run([*run, str(tmp_path / "every.png")], capture_output=True, text=True, env=chart_package,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in tmp_path.glob("every-*.png")} == {f"every-{k}.png" for k in (*KINDS, "runtime-again",
                                                                                       "broken-kind")}
    assert "chart broken-kind (mycharts.broken) failed: RuntimeError" in proc.stderr


WINDOW_WITH_ADDED_KIND = """
import sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from panels.window import MainWindow
w = MainWindow(QSettings(sys.argv[2], QSettings.Format.IniFormat))
w.show()
chart = next(c for c in w.plots.added if c.kind == "runtime-again")
menus = [a.text() for m in w.menuBar().actions() if m.menu() for a in m.menu().actions()]
w.files.open_results([sys.argv[1]])
w.plots.alone[chart].setChecked(True)
broken = next(c for c in w.plots.added if c.kind == "broken-kind")
from panels.chart_export import ChartExportDialog
combo = ChartExportDialog(w).kindCombo
titles = [combo.itemText(i) for i in range(combo.count())]
def look():
    if chart.title_text == "The runtime, once more" and chart.isVisible() and chart.series \
            and w.plots.runtimePlot.series and broken.spec is not None:
        print("drawn", len(chart.series), "series;", "menu:", [t for t in menus if "Again" in t],
              "export:", titles[-2:], "broken:", broken.spec.empty)
        app.quit()
poll = QTimer(interval=50)
poll.timeout.connect(look)
poll.start()
QTimer.singleShot(60_000, app.quit)
app.exec()
"""


def test_the_window_shows_a_kind_another_package_declares(saved, tmp_path, chart_package):
    """A kind the window has no class of its own for: a chart of it, shown alone from the View menu."""
    env = dict(chart_package, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", WINDOW_WITH_ADDED_KIND, saved[0], str(tmp_path / "s.ini")],
                          capture_output=True, text=True, env=env, timeout=300, cwd=Path(__file__).parents[1])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "drawn" in proc.stdout and "menu: ['Again chart']" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "export: ['Again', 'Broken']" in proc.stdout
    assert "broken: This chart could not be drawn: mycharts.broken raised RuntimeError" in proc.stdout


def test_plot_refuses_more_sets_than_it_has_markers(tmp_path):
    from helpers import result_set
    from workbench.views.palette import MOST_SETS
    paths = [str(result_files.write(result_set(gpu=f"GPU {i}"), tmp_path / f"g{i}.csv")) for i in range(MOST_SETS + 1)]
    done = cli("plot", *paths, "--chart", str(tmp_path / "c.png"), "--kind", "runtime")
    assert done.returncode != 0 and f"at most {MOST_SETS} sets" in done.stderr
    assert not (tmp_path / "c.png").exists()
    fine = cli("plot", *paths[:MOST_SETS], "--chart", str(tmp_path / "c.png"), "--kind", "runtime")
    assert fine.returncode == 0, fine.stderr
