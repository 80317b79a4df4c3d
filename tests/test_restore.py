"""No point lost: a window killed mid-sweep offers its points back at the next start."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, Qt  # noqa: E402

from workbench.measure import protocol  # noqa: E402
from workbench.measure.engine import SweepSpec, run_sweep  # noqa: E402
from workbench.results.journal import Journal  # noqa: E402


def open_window(qtbot, settings_path: Path):
    from panels.window import MainWindow
    w = MainWindow(QSettings(str(settings_path), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.ready, timeout=120_000):
        pass
    return w


def journal_of_an_interrupted_session(folder: Path, n_sizes: int = 3) -> list[dict]:
    rows = protocol.rows(run_sweep(SweepSpec("source_terms", ("numpy",), tuple(2 ** k for k in range(10, 10 + n_sizes)),
                                             "float64", min_repeats=1, budget_s=0)))
    j = Journal(folder / "journal.jsonl")
    j.begin()
    j.sweep({"workload": "source_terms"})
    for row in rows:
        j.append(row)
    j.end()                      # no "closed": as after a kill
    return rows


def test_an_interrupted_session_is_offered_and_restored(qtbot, tmp_path):
    rows = journal_of_an_interrupted_session(tmp_path)
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert w.restoreBar.isVisible() and "3 point(s) of source_terms" in w.restoreBar.label.text()
    with qtbot.waitSignal(w.restored, timeout=10_000) as blocker:
        qtbot.mouseClick(w.restoreBar.restoreButton, Qt.MouseButton.LeftButton)
    assert blocker.args == [3] and not w.restoreBar.isVisible()
    assert [r["size"] for r in w.resultsTable.results.rows] == [r["size"] for r in rows]
    qtbot.waitUntil(lambda: ("compute", "numpy", "") in w.runtimePlot.points(), timeout=30_000)   # drawn off the GUI thread
    x, _ = w.runtimePlot.points()[("compute", "numpy", "")]
    assert list(x) == [r["size"] for r in rows]
    w.close()


def test_discard_forgets_it_and_a_normal_close_offers_nothing(qtbot, tmp_path):
    journal_of_an_interrupted_session(tmp_path)
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert (tmp_path / "journal.jsonl").exists()           # an older version's journal, offered
    qtbot.mouseClick(w.restoreBar.discardButton, Qt.MouseButton.LeftButton)
    assert not w.restoreBar.isVisible() and not (tmp_path / "journal.jsonl").exists()
    w.close()
    again = open_window(qtbot, tmp_path / "settings.ini")
    assert not again.restoreBar.isVisible()
    again.close()


# A window in a child process, on the settings file named by its first argument; what it does next follows.
A_WINDOW = """
    import os, signal, sys
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    if __name__ == "__main__":
        app = QApplication([])
        from panels.window import MainWindow
        w = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
"""

KILLED_WINDOW = textwrap.dedent(A_WINDOW + """
        seen = []
        def point(row):
            seen.append(row)
            if len(seen) == 2:
                os.kill(os.getpid(), signal.SIGKILL)      # as a crash, or kill -9, would
        def ready():
            w.experiment.select_workload("source_terms")
            w.experiment.set_checked_backends(["numpy"])
            w.experiment.sizeFrom.setText("2^10"); w.experiment.sizeTo.setText("2^16")
            w.experiment.sizeSteps.setValue(4); w.experiment.budgetSpin.setValue(0.0)
            w.run()
        w.pointAdded.connect(point)
        w.ready.connect(ready)
        w.show()
        app.exec()
""")


def test_a_window_killed_with_sigkill_loses_no_finished_point(qtbot, tmp_path):
    script = tmp_path / "killed.py"
    script.write_text(KILLED_WINDOW)
    root = Path(__file__).parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "settings.ini")], env=env, cwd=root,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == -9, proc.stderr[-2000:]
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert w.restoreBar.isVisible()
    with qtbot.waitSignal(w.restored, timeout=10_000) as blocker:
        w.restore_interrupted()
    assert blocker.args[0] >= 2                      # every point shown before the kill
    w.close()


def test_killed_again_before_deciding_the_points_are_still_offered(qtbot, tmp_path):
    """A window killed mid-sweep; the next one killed before the user decided; a third start still
    offers the first session's points, and once restored they are never offered again."""
    script = tmp_path / "killed.py"
    script.write_text(KILLED_WINDOW)
    offered_then_killed = tmp_path / "offered.py"
    offered_then_killed.write_text(OFFERED_THEN_KILLED)
    root = Path(__file__).parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    for name in (script, offered_then_killed, offered_then_killed):
        proc = subprocess.run([sys.executable, str(name), str(tmp_path / "settings.ini")], env=env, cwd=root,
                              capture_output=True, text=True, timeout=240)
        assert proc.returncode == -9, proc.stderr[-2000:]
        if name is offered_then_killed:
            assert "offered 1:" in proc.stdout, proc.stdout      # the same session, offered each time
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert w.restoreBar.isVisible()
    with qtbot.waitSignal(w.restored, timeout=10_000) as blocker:
        w.restore_interrupted()
    assert blocker.args[0] >= 2 and not w.restoreBar.isVisible()
    w.close()
    again = open_window(qtbot, tmp_path / "settings.ini")
    assert not again.restoreBar.isVisible()                     # restored, closed normally: settled
    again.close()


OFFERED_THEN_KILLED = textwrap.dedent(A_WINDOW + """
        print(f"offered {len(w.workspace.orphans)}: {w.restoreBar.label.text()}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)          # before the user chose Restore or Discard
""")


def test_two_windows_write_two_journals_and_neither_offers_the_others(qtbot, tmp_path):
    a = open_window(qtbot, tmp_path / "settings.ini")
    a.journal.sweep({"workload": "source_terms"})
    a.journal.append(protocol.rows(run_sweep(SweepSpec("source_terms", ("numpy",), (2 ** 10,), "float64",
                                                       min_repeats=1, budget_s=0)))[0])
    b = open_window(qtbot, tmp_path / "settings.ini")       # a is alive, its journal not closed
    assert a.journal.path != b.journal.path
    assert not b.restoreBar.isVisible() and b.workspace.orphans == []
    b.close()
    a.close()
    assert list((tmp_path / "journals").glob("*.jsonl")) != []   # closed journals wait for the next start
    c = open_window(qtbot, tmp_path / "settings.ini")
    assert not c.restoreBar.isVisible()
    assert [p.name for p in (tmp_path / "journals").glob("*.jsonl")] == [c.journal.path.name]
    c.close()


def test_closing_during_a_sweep_asks_and_no_keeps_it_running(qtbot, tmp_path):
    w = open_window(qtbot, tmp_path / "settings.ini")
    asked = []
    w.confirm_close = lambda: asked.append(1) or False
    w.experiment.select_workload("source_terms")
    w.experiment.set_checked_backends(["numpy"])
    w.experiment.sizeFrom.setText("2^10"); w.experiment.sizeTo.setText("2^22")
    w.experiment.sizeSteps.setValue(12)
    w.run()
    assert w.busy
    w.close()
    assert asked == [1] and w.isVisible() and w.busy          # 'No': the window and its sweep go on
    w.confirm_close = lambda: asked.append(2) or True
    with qtbot.waitSignal(w.busyChanged, timeout=60_000, check_params_cb=lambda b: b is False):
        w.close()
    assert asked == [1, 2] and not w.isVisible()


# Journals damaged, or not where they can be kept ------------------------------------------------------

def _window_journal(folder: Path, rows: list[dict], extra: bytes = b"") -> Path:
    """A journal of this version's kind (one per window, in ``journals/``) left unclosed, as after
    a kill, with ``extra`` bytes after its rows."""
    path = folder / "journals" / "session-20260101T000000-1-deadbeef.jsonl"
    j = Journal(path)
    j.begin()
    j.sweep({"workload": "source_terms"})
    for row in rows:
        j.append(row)
    j.end()
    with path.open("ab") as f:
        f.write(extra)
    return path


def _two_points() -> list[dict]:
    return protocol.rows(run_sweep(SweepSpec("source_terms", ("numpy",), (2 ** 10, 2 ** 11), "float64",
                                             min_repeats=1, budget_s=0)))


def _said(w, phrase: str) -> list[str]:
    return [line for line in w.logPanel.toPlainText().splitlines() if phrase in line]


@pytest.mark.parametrize("damage", ["not UTF-8", "a size that is not a number", "a row that is not a mapping"])
def test_a_damaged_line_costs_that_line_and_the_rest_is_offered_and_restored(qtbot, tmp_path, damage):
    rows = _two_points()
    bad = {"not UTF-8": b"\xff\xfe garbage\n",
           "a size that is not a number": (json.dumps({"kind": "row", "row": {**rows[0], "size": "abc"}}) + "\n").encode(),
           "a row that is not a mapping": b'{"kind": "row", "row": [1, 2]}\n'}[damage]
    path = _window_journal(tmp_path, rows, bad)
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert w.restoreBar.isVisible() and "2 point(s) of source_terms, sizes" in w.restoreBar.label.text()
    said = _said(w, "could not be read")
    assert len(said) == 1 and f"1 line of {path.name} could not be read; 2 points kept" in said[0], said
    assert path.exists()                                  # kept until the user decides
    with qtbot.waitSignal(w.restored, timeout=10_000) as blocker:
        qtbot.mouseClick(w.restoreBar.restoreButton, Qt.MouseButton.LeftButton)
    assert blocker.args == [2] and not w.restoreBar.isVisible()
    assert [r["size"] for r in w.resultsTable.results.rows] == [2 ** 10, 2 ** 11]
    assert not path.exists()                              # restored: its points are in this session's journal
    w.close()


def test_a_journal_of_lines_that_cannot_be_read_is_left_as_it_is(qtbot, tmp_path):
    path = tmp_path / "journals" / "session-20260101T000000-1-deadbeef.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\xff\xfe\x00 not ours\n")
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert not w.restoreBar.isVisible()
    assert len(_said(w, f"1 line of {path.name} could not be read; 0 points kept")) == 1
    assert path.read_bytes() == b"\xff\xfe\x00 not ours\n"
    w.close()


@pytest.mark.parametrize("planted", ["file", "dangling link"])
def test_a_journals_folder_that_is_not_a_folder_costs_the_journal_not_the_window(qtbot, tmp_path, planted):
    journals = tmp_path / "journals"
    if planted == "file":
        journals.write_text("precious")
    else:
        journals.symlink_to(tmp_path / "nowhere")
    w = open_window(qtbot, tmp_path / "settings.ini")
    said = _said(w, "no journal this session")
    assert len(said) == 1 and "journals" in said[0], w.logPanel.toPlainText()
    assert w.journal is None and not w.restoreBar.isVisible()
    w.close()
    assert (journals.read_text() == "precious") if planted == "file" else \
        (journals.is_symlink() and not (tmp_path / "nowhere").exists())


def test_rows_that_are_not_results_never_reach_the_bar_or_the_table(qtbot, tmp_path):
    rows = _two_points()
    garbage = [{**rows[0], "size": "abc"}, {**rows[0], "compute_median_s": "fast", "size": 7}, {"size": 5}]
    path = _window_journal(tmp_path, rows[:1] + garbage)
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert "1 point(s) of source_terms, sizes" in w.restoreBar.label.text()
    assert len(_said(w, f"3 lines of {path.name} could not be read; 1 point kept")) == 1
    with qtbot.waitSignal(w.restored, timeout=10_000) as blocker:
        w.restore_interrupted()
    assert blocker.args == [1] and [r["size"] for r in w.resultsTable.results.rows] == [2 ** 10]
    w.close()


@pytest.mark.parametrize("name", ["<b>bold</b>", '<img src="x.png">', "<a href='http://x'>x</a>"])
def test_a_name_from_a_journal_is_shown_as_text_never_markup(qtbot, tmp_path, name):
    rows = [{**r, "workload": name} for r in _two_points()]
    _window_journal(tmp_path, rows)
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert w.restoreBar.label.textFormat() == Qt.TextFormat.PlainText
    assert f"2 point(s) of {name}, sizes" in w.restoreBar.label.text()
    w.close()


def test_a_killed_window_s_journal_damaged_then_killed_again_still_offers_its_points(qtbot, tmp_path):
    """A window killed mid-sweep; its journal damaged (a line of garbage); the next window killed
    before the user decided: the third start still offers every point, and says what it skipped."""
    root = Path(__file__).parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    for name, script in (("killed.py", KILLED_WINDOW), ("offered.py", OFFERED_THEN_KILLED)):
        (tmp_path / name).write_text(script)
        proc = subprocess.run([sys.executable, str(tmp_path / name), str(tmp_path / "settings.ini")], env=env,
                              cwd=root, capture_output=True, text=True, timeout=240)
        assert proc.returncode == -9, proc.stderr[-2000:]
        if name == "killed.py":
            [journal] = (tmp_path / "journals").glob("session-*.jsonl")
            with journal.open("ab") as f:
                f.write(b"\x00\xff damaged\n")
        else:
            assert "offered 1:" in proc.stdout and "point(s) of source_terms" in proc.stdout, proc.stdout
    assert journal.exists()
    w = open_window(qtbot, tmp_path / "settings.ini")
    assert w.restoreBar.isVisible()
    assert len(_said(w, f"1 line of {journal.name} could not be read")) == 1
    with qtbot.waitSignal(w.restored, timeout=10_000) as blocker:
        w.restore_interrupted()
    assert blocker.args[0] >= 2
    w.close()
