"""File > Open workload file... (issue 30): a plug-in opened in the window is vetted, listed with the
built-in workloads, swept, and loaded again when it changes on disk; a broken one is one line naming
the file, and the window goes on. Offscreen, driven by object name; waits on signals, never sleeps."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QTreeWidget  # noqa: E402
from test_gui import check_backends, set_sizes, window  # noqa: E402,F401 - the fixture

PLUGIN = Path(__file__).parent / "plugins" / "double.py"
TIMEOUT_MS = 120_000


@pytest.fixture
def mine(tmp_path, registry):
    """A copy of the smallest plug-in, to edit; the registry forgets its workloads afterwards."""
    return Path(shutil.copy(PLUGIN, tmp_path / "mine.py"))


def tree(w) -> dict[str, str]:
    """The workload tree as the user sees it: {name: title}."""
    t = w.findChild(QTreeWidget, "workloadList")
    return {top.child(i).data(0, Qt.ItemDataRole.UserRole): top.child(i).text(0)
            for top in (t.topLevelItem(k) for k in range(t.topLevelItemCount())) for i in range(top.childCount())}


def tooltip(w, name: str) -> str:
    t = w.findChild(QTreeWidget, "workloadList")
    return next(top.child(i).toolTip(0) for top in (t.topLevelItem(k) for k in range(t.topLevelItemCount()))
                for i in range(top.childCount()) if top.child(i).data(0, Qt.ItemDataRole.UserRole) == name)


def open_file(qtbot, w, path) -> list:
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS) as got:
        assert w.workloadFiles.open(path)
    return got.args


def sweep(qtbot, w, workload: str) -> list[dict]:
    assert w.experiment.select_workload(workload)
    check_backends(w, ["numpy"])
    set_sizes(w, "64", "256", 2)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=TIMEOUT_MS) as done:
        w.run()
    assert done.args == [False]
    return list(w.rows)


def replace(path: Path, text: str) -> None:
    """Save as many editors do: a new file renamed over the old one (the watch on the old one ends)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


#: A second workload for the edited file: y = 3 x, its reference to match.
TRIPLE = '''
T = register(Workload(
    name="triple", title="Triple", kind="kernels", description="y = 3 x", lesson="none",
    size_unit="elements", default_sizes=(64, 256), make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 3, flops=lambda n: float(n),
    bytes_moved=lambda n, isz: 2.0 * n * isz, footprint=lambda n, isz: 2.0 * n * isz))
T.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 3))
'''


def test_the_window_opens_a_workload_file_sweeps_it_and_reloads_it_when_it_changes(qtbot, window, mine):
    w = window
    assert w.findChild(type(w.workloadFiles.openAction), "openWorkloadAction") is w.workloadFiles.openAction
    path, names = open_file(qtbot, w, mine)
    assert (path, names) == (str(mine.resolve()), ["double"])
    shown = tree(w)
    assert shown["double"] == "Double" and "matmul" in shown                  # with the built-in ones
    assert w.experiment.workload_name() == "double"          # opened: its workload is ready to run
    assert str(mine.resolve()) in tooltip(w, "double")
    rows = sweep(qtbot, w, "double")
    assert [(r["workload"], r["backend"], r["size"], r["status"]) for r in rows] == [
        ("double", "numpy", 64, "ok"), ("double", "numpy", 256, "ok")]

    # A new title and a second workload, saved by a rename: seen, and the tree shows them.
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS) as got:
        replace(mine, PLUGIN.read_text().replace('title="Double"', 'title="Double, edited"') + TRIPLE)
    assert got.args[1] == ["double", "triple"]
    assert tree(w)["double"] == "Double, edited" and tree(w)["triple"] == "Triple"
    # The engine loads the file as it is now: the new workload runs to ok rows.
    rows = sweep(qtbot, w, "triple")
    assert [(r["workload"], r["status"]) for r in rows] == [("triple", "ok")] * 2

    # Still watched after the rename: a change written in place is seen too, and a name it no
    # longer declares leaves the tree.
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS) as got:
        mine.write_text(PLUGIN.read_text().replace('title="Double"', 'title="Double, again"'))
    assert got.args[1] == ["double"]
    assert tree(w)["double"] == "Double, again" and "triple" not in tree(w)
    assert w.notice.isHidden()


#: Once imported, it saves a crashing version of itself, as an editor's save during the vetting would.
REWRITES_ITSELF = PLUGIN.read_text() + '''
with open(__file__, "w") as f:
    f.write("import ctypes\\nctypes.string_at(0)\\n")
'''


@pytest.mark.parametrize("body, why", [
    ("def broken(:\n", "SyntaxError"),
    (REWRITES_ITSELF, "crashed the interpreter"),       # vetted again, never loaded as it is now
    ("raise RuntimeError('no licence server')\n", "RuntimeError while loading it: no licence server"),
    (PLUGIN.read_text().replace('name="double"', 'name="matmul"'), "'matmul' is built in"),
])
def test_a_broken_workload_file_is_one_line_naming_it_and_the_window_goes_on(qtbot, window, tmp_path,
                                                                             registry, body, why):
    w = window
    bad = tmp_path / "bad.py"
    bad.write_text(body)
    before = tree(w)
    with qtbot.waitSignal(w.workloadFiles.failed, timeout=TIMEOUT_MS) as got:
        assert w.workloadFiles.open(bad)
    text = w.notice.label.text()
    assert w.notice.isVisible() and text == got.args[1]
    assert "\n" not in text and str(bad.resolve()) in text and why in text, text
    assert tree(w) == before                                  # nothing of it was listed
    # Fixed and saved, it loads: a broken file is watched too.
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS):
        bad.write_text(PLUGIN.read_text())
    assert "double" in tree(w) and w.notice.isHidden()
    # And the window still sweeps.
    assert [r["status"] for r in sweep(qtbot, w, "double")] == ["ok", "ok"]


def test_a_workload_file_named_with_markup_is_shown_as_text(qtbot, window, tmp_path, registry):
    w = window
    folder = tmp_path / "<b>x<"                    # with its file b>.py: the path ends in <b>x</b>.py
    folder.mkdir()
    bad = folder / "b>.py"
    bad.write_text("raise ValueError('<i>no</i>')\n")
    with qtbot.waitSignal(w.workloadFiles.failed, timeout=TIMEOUT_MS):
        w.workloadFiles.open(bad)
    text = w.notice.label.text()
    assert "<b>x</b>.py" in text and "<i>no</i>" in text, text
    assert w.notice.label.textFormat() == Qt.TextFormat.PlainText
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS):
        bad.write_text(PLUGIN.read_text())
    assert "<b>x</b>.py" in w.status.currentMessage() or "b>.py" in w.status.currentMessage()
    tip = tooltip(w, "double")
    assert "&lt;b&gt;x&lt;/b&gt;.py" in tip and "<b>x</b>.py" not in tip, tip


def test_a_change_during_a_sweep_waits_for_its_end(qtbot, window, mine):
    w = window
    open_file(qtbot, w, mine)
    assert w.experiment.select_workload("double")
    check_backends(w, ["numpy"])
    set_sizes(w, "64", "256", 2)
    w.experiment.budgetSpin.setValue(5.0)          # long enough to change the file under it
    w.experiment.noiseSpin.setValue(0.0)
    order = []
    w.sweepCompleted.connect(lambda _: order.append("sweep ended"))
    w.workloadFiles.loaded.connect(lambda *_: order.append("reloaded"))
    with qtbot.waitSignal(w.pointAdded, timeout=TIMEOUT_MS):       # the first point: the sweep is under way
        w.run()
    with qtbot.waitSignal(w.workloadFiles.settle.timeout, timeout=TIMEOUT_MS):
        mine.write_text(PLUGIN.read_text().replace('title="Double"', 'title="Double, edited"'))
    assert w.busy and tree(w)["double"] == "Double"           # seen, and put off
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS):
        w.stop()
    assert order == ["sweep ended", "reloaded"] and tree(w)["double"] == "Double, edited"


def test_a_window_started_with_a_plugin_loads_it_and_the_next_start_opens_it_again(qtbot, tmp_path, mine):
    from panels.window import MainWindow
    settings = str(tmp_path / "settings.ini")
    for plugins in ((str(mine),), ()):
        w = MainWindow(QSettings(settings, QSettings.Format.IniFormat), plugins=plugins)
        qtbot.addWidget(w)
        got = []
        w.workloadFiles.loaded.connect(lambda *args: got.append(list(args)))
        with qtbot.waitSignals([w.workloadFiles.loaded, w.ready], timeout=TIMEOUT_MS):
            w.show()
        assert got == [[str(mine.resolve()), ["double"]]]
        assert w.experiment.workload_name() == "double" and "double" in tree(w)
        w.close()


def test_the_eight_line_plugin_sweeps_both_its_backends_in_the_window(qtbot, window, tmp_path, declared):
    """docs/API.md's plug-in, opened as a user opens it: its own backend is offered beside NumPy's."""
    w = window
    eight = Path(shutil.copy(Path(__file__).parent / "plugins" / "eight_lines.py", tmp_path / "eight.py"))
    assert open_file(qtbot, w, eight)[1] == ["axpy"]
    assert w.experiment.select_workload("axpy")
    assert "numpy-blas" in w.experiment.checked_backends()      # the file's own backend, ticked
    check_backends(w, ["numpy", "numpy-blas"])
    set_sizes(w, "64", "4096", 2)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=TIMEOUT_MS) as done:
        w.run()
    assert done.args == [False]
    assert sorted((r["backend"], r["size"], r["status"]) for r in w.rows) == [
        ("numpy", 64, "ok"), ("numpy", 4096, "ok"), ("numpy-blas", 64, "ok"), ("numpy-blas", 4096, "ok")]


def test_a_plugins_title_description_and_backend_are_shown_as_text_not_markup(qtbot, window, tmp_path, registry):
    w = window
    path = tmp_path / "markup.py"
    path.write_text("import numpy as np\nfrom workbench.api import Workload, backend, register\n"
                    "backend('<i>mine</i>', like='numpy', description='<img src=x> & <b>bold</b>')\n"
                    "W = register(Workload('markup', title='<script>T</script>', description='<a href=x>d</a>',\n"
                    "                      make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))\n"
                    "W.kernel('<i>mine</i>')(abs)\n")
    open_file(qtbot, w, path)
    assert w.experiment.select_workload("markup")
    tip = tooltip(w, "markup")
    assert "&lt;script&gt;T&lt;/script&gt;" in tip and "&lt;a href=x&gt;d&lt;/a&gt;" in tip, tip
    assert "&lt;a href=x&gt;" in w.experiment.description.text()
    item = next(w.experiment.backendList.item(i) for i in range(w.experiment.backendList.count())
                if w.experiment.backendList.item(i).data(Qt.ItemDataRole.UserRole) == "<i>mine</i>")
    assert "&lt;img src=x&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in item.toolTip(), item.toolTip()


def test_a_deleted_workload_file_is_said_its_workloads_refuse_to_run_and_it_loads_again_when_back(
        qtbot, window, mine):
    w = window
    open_file(qtbot, w, mine)
    text = mine.read_text()
    with qtbot.waitSignal(w.workloadFiles.failed, timeout=TIMEOUT_MS) as got:
        mine.unlink()
    assert "was deleted" in got.args[1] and str(mine.resolve()) in got.args[1]
    assert w.experiment.select_workload("double")
    check_backends(w, ["numpy"])
    w.run()                                      # refused at once, saying why, not sent to the engine
    assert not w.busy and "double cannot run" in w.notice.label.text() and "was deleted" in w.notice.label.text()
    with qtbot.waitSignal(w.workloadFiles.loaded, timeout=TIMEOUT_MS):
        mine.write_text(text)                    # back: its folder was watched
    assert [r["status"] for r in sweep(qtbot, w, "double")] == ["ok", "ok"]


def test_a_backend_named_with_a_sentence_leaves_the_window_its_size(qtbot, window, tmp_path, declared):
    w = window
    name = "a backend named with a whole sentence " * 8
    path = tmp_path / "long.py"
    path.write_text("import numpy as np\nfrom workbench.api import Workload, backend, register\n"
                    f"backend({name.strip()!r}, like='numpy')\n"
                    "W = register(Workload('long_names', make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))\n"
                    f"W.kernel({name.strip()!r})(abs)\nW.kernel('numpy')(abs)\n")
    open_file(qtbot, w, path)
    assert w.experiment.select_workload("long_names")
    check_backends(w, ["numpy", name.strip()])
    set_sizes(w, "64", "256", 2)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=TIMEOUT_MS):
        w.run()
    qtbot.waitUntil(lambda: name.strip()[:20] in " ".join(w.plots.legendStrip.entries_of("runtime")), timeout=10_000)
    assert w.minimumSizeHint().width() <= 1280, w.minimumSizeHint()


#: Written at import (issue 35): NUL, a byte that is no UTF-8, a terminal's "clear screen", no newline;
#: by Python's stdout and under it, on fd 1, as C code writes.
PRINTS_GARBAGE = ("import os, sys\nsys.stdout.write('\\x00\\xff\\x1b[2J garbage ' * 2000)\n"
                  "os.write(1, b'\\xff garbage ' * 2000)\n")


def test_a_workload_file_that_prints_garbage_at_import_opens_and_sweeps(qtbot, window, tmp_path, registry):
    w = window
    noisy = tmp_path / "noisy.py"
    noisy.write_text(PRINTS_GARBAGE + PLUGIN.read_text())
    assert open_file(qtbot, w, noisy)[1] == ["double"]
    assert [r["status"] for r in sweep(qtbot, w, "double")] == ["ok", "ok"]


def _release(fifo: Path) -> None:
    """A reader blocked on the FIFO (as before issue 35) gets its end of file: the window can close."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:             # nobody reads it
        pass


def test_a_fifo_opened_or_saved_over_a_watched_file_is_refused_at_once(qtbot, window, mine, tmp_path):
    """Never read: one line within 2 s, opened by the user or found by the watch on a file it opened."""
    w = window
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    try:
        with qtbot.waitSignal(w.workloadFiles.failed, timeout=2000) as got:
            assert w.workloadFiles.open(fifo)
        assert "is a FIFO" in got.args[1] and str(fifo) in got.args[1] and "\n" not in got.args[1]
    finally:
        _release(fifo)
    open_file(qtbot, w, mine)
    swapped = tmp_path / "swapped.py"
    os.mkfifo(swapped)
    try:
        with qtbot.waitSignal(w.workloadFiles.failed, timeout=2000) as got:
            os.replace(swapped, mine)
        assert "is a FIFO" in got.args[1] and str(mine.resolve()) in got.args[1], got.args[1]
        assert "its workloads stay listed" in got.args[1]
    finally:
        _release(mine)
