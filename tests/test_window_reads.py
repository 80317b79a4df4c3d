"""Results and sessions are read off the GUI thread (issue 38: Compare with a 5,000-point CSV held
the window 1 s, File > Open 1.4 s): each call returns at once, the file job reads the file and
makes the main set's rows, and ``files.opened`` brings the sets once they are shown. A later
open wins over one still being read; a file swapped for a FIFO, a sweep begun or the window
closed while it is read is handled and said. Driven through the File part's public calls."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from helpers import result_set  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from session import open_files  # noqa: E402
from test_gui import check_backends, set_sizes, window  # noqa: E402,F401 - the fixture

import panels.files  # noqa: E402
import workbench.results.table  # noqa: E402
from workbench.results import files as result_files  # noqa: E402
from workbench.results import session_file  # noqa: E402
from workbench.workspace import session as workspace_session  # noqa: E402

WAIT_MS = 60_000


class HeldReads:
    """The file job's reads of results, each held until ``release``: a read in flight, as a large file
    on a slow disk is. ``threads`` records where each file was read."""

    def __init__(self, monkeypatch) -> None:
        self.entered, self.go = threading.Event(), threading.Event()
        self.threads: list[str] = []
        real = result_files.open_results

        def held(path, *args, **kwargs):
            self.threads.append(threading.current_thread().name)
            self.entered.set()
            assert self.go.wait(WAIT_MS / 1000)
            return real(path, *args, **kwargs)
        monkeypatch.setattr(panels.files.result_files, "open_results", held)

    def release(self) -> None:
        self.go.set()


def test_files_are_read_and_their_rows_made_off_the_gui_thread(qtbot, window, tmp_path, monkeypatch):
    """Neither the read (``open_results``: 0.9 to 2.5 s at 5,000 points) nor the rows (``rows_of``:
    0.7 s) run in the GUI thread; the rows shown are those of the file, in its order."""
    w = window
    made_in: list[str] = []
    real_rows = workspace_session.rows_of

    def rows_of(frame):
        made_in.append(threading.current_thread().name)
        return real_rows(frame)
    monkeypatch.setattr(workspace_session, "rows_of", rows_of)
    held = HeldReads(monkeypatch)
    path = result_files.write(result_set("float32"), tmp_path / "f32.csv")
    with qtbot.waitSignal(w.files.opened, timeout=WAIT_MS) as shown:
        assert w.files.open_results([path])
        assert held.entered.wait(WAIT_MS / 1000) and not w.rows     # in flight: nothing shown yet
        assert "Reading f32.csv" in w.status.currentMessage()
        held.release()
    assert held.threads == ["job"] and made_in == ["job"]
    assert [r["size"] for r in w.rows] == result_files.open_results(path).frame["size"].tolist()
    assert [rs.source for rs in shown.args[0]] == [str(path)]


def test_files_and_sessions_are_read_in_the_jobs_child_process(qtbot, window, tmp_path, monkeypatch):
    """Read in the job's thread, a 5,000-row file's calls into pandas held the GIL, and the GUI
    thread, 20-33 ms at a time (issue 38): the job has its child process read it."""
    w = window
    child, asked = w.files.job.child, []
    real = child.run

    def run(target, *args, **kwargs):
        asked.append(target)
        return real(target, *args, **kwargs)
    monkeypatch.setattr(child, "run", run)
    one, two = (result_files.write(result_set(d), tmp_path / f"{d}.csv") for d in ("float32", "float64"))
    open_files(qtbot, w, [one])
    open_files(qtbot, w, [two], compare=True)
    assert asked == ["workbench.results.files:_open_packed"] * 2       # read there, sent back in pieces
    assert {r["dtype"] for r in w.rows} == {"float32"} and w.compared[0].source == str(two)
    saved = session_file.save(tmp_path / "s.json", {"workload": "source_terms"}, [result_set("float64")], {})
    with qtbot.waitSignal(w.files.opened, timeout=WAIT_MS):
        assert w.files.open_session(saved)
    assert asked[2:] == ["workbench.results.session_file:_load_packed"] and {r["dtype"] for r in w.rows} == {"float64"}


def test_a_later_open_wins_over_one_still_being_read(qtbot, window, tmp_path, monkeypatch):
    w = window
    first = result_files.write(result_set("float32"), tmp_path / "first.csv")
    second = result_files.write(result_set("float64", scale=2.0), tmp_path / "second.json")
    held = HeldReads(monkeypatch)
    said: list[list] = []
    w.files.opened.connect(said.append)
    assert w.files.open_results([first])
    assert held.entered.wait(WAIT_MS / 1000)                     # the first is being read
    with qtbot.waitSignal(w.plots.updated, timeout=WAIT_MS):
        with qtbot.waitSignal(w.files.opened, timeout=WAIT_MS):
            assert w.files.open_results([second])
            held.release()
    qtbot.wait(50)      # the event loop turns: an answer of the first read would come now
    assert [[rs.source for rs in sets] for sets in said] == [[str(second)]]
    assert {r["dtype"] for r in w.rows} == {"float64"} and not w.compared
    assert "second.json" in w.status.currentMessage()


def test_a_compare_asked_while_a_file_is_read_joins_it(qtbot, window, tmp_path):
    """Compare with, asked before the file opened is shown: compared with that file, not alone."""
    w = window
    one, two = (result_files.write(result_set(d, scale=s), tmp_path / f"{d}.json")
                for d, s in (("float32", 1.0), ("float64", 2.0)))
    with qtbot.waitSignal(w.plots.updated, timeout=WAIT_MS):
        assert w.files.open_results([one])
        assert w.files.compare_with([two])
        qtbot.waitUntil(lambda: len(w.compared) == 1, timeout=WAIT_MS)
    assert {r["dtype"] for r in w.rows} == {"float32"} and w.compared[0].source == str(two)


def test_the_table_on_screen_is_made_off_the_gui_thread_for_a_compare(qtbot, window, tmp_path, monkeypatch):
    """A sweep's rows on screen, their table not made yet (the plots draw from the rows): Compare
    with makes it in the job, a chunk at a time, not in the GUI thread when the sets are shown
    (5,000 rows: 136 ms there, issue 38). The rows on screen stay as they were."""
    w = window
    open_files(qtbot, w, [result_files.write(result_set("float32"), tmp_path / "f32.json")])
    rows = list(w.rows)
    w.workspace.table.replace(rows)          # as a sweep leaves it: rows, no table made of them
    assert w.workspace.table.frame_is_behind()
    made_in: list[tuple[str, int]] = []
    real = workbench.results.table.to_frame

    def to_frame(part):
        part = list(part)
        made_in.append((threading.current_thread().name, len(part)))
        return real(part)
    monkeypatch.setattr(workbench.results.table, "to_frame", to_frame)
    monkeypatch.setattr(panels.files, "CHUNK_ROWS", 5)
    open_files(qtbot, w, [result_files.write(result_set("float64"), tmp_path / "f64.json")], compare=True)
    assert {name for name, _ in made_in} == {"job"} and sum(n for _, n in made_in) == len(rows)
    assert max(n for _, n in made_in) <= 5
    assert w.rows == rows and len(w.compared) == 1 and not w.workspace.table.frame_is_behind()


def test_compared_with_nothing_on_screen_the_file_is_the_main_set(qtbot, window, tmp_path):
    w = window
    path = result_files.write(result_set("float64"), tmp_path / "f64.json")
    open_files(qtbot, w, [path], compare=True)
    assert len(w.rows) == 14 and not w.compared
    assert w.resultsTable.model().rowCount() == 14


def test_a_file_swapped_for_a_fifo_before_it_is_read_is_refused_and_said(qtbot, window, tmp_path, monkeypatch):
    """The job reads the file later than it was chosen: a FIFO put in its place meanwhile is refused
    (never opened: it would block the job, and every export and read after it, for good)."""
    w = window
    shown = result_files.write(result_set("float32"), tmp_path / "shown.csv")
    open_files(qtbot, w, [shown])
    rows = list(w.rows)
    path = result_files.write(result_set("float64"), tmp_path / "r.json")
    real = result_files.open_results
    gate = threading.Event()

    def late(p, *args, **kwargs):         # the swap happens between the choice and the read
        assert gate.wait(WAIT_MS / 1000)
        return real(p, *args, **kwargs)
    monkeypatch.setattr(panels.files.result_files, "open_results", late)
    with qtbot.waitSignal(w.files.problem, timeout=20_000) as said:
        assert w.files.compare_with([path])
        path.unlink()
        os.mkfifo(path)
        gate.set()
    assert "is a FIFO" in said.args[0] and "Nothing on screen has changed" in said.args[0]
    assert w.rows == rows and not w.compared and "is a FIFO" in w.notice.label.text()
    monkeypatch.setattr(panels.files.result_files, "open_results", real)
    open_files(qtbot, w, [shown], compare=True, drawn=False)       # the job still reads
    assert len(w.compared) == 1


def test_a_file_deleted_before_it_is_read_is_said(qtbot, window, tmp_path, monkeypatch):
    w = window
    path = result_files.write(result_set("float32"), tmp_path / "gone.csv")
    held = HeldReads(monkeypatch)
    with qtbot.waitSignal(w.files.problem, timeout=WAIT_MS) as said:
        assert w.files.open_results([path])
        assert held.entered.wait(WAIT_MS / 1000)
        path.unlink()
        held.release()
    assert "gone.csv" in said.args[0] and "Nothing on screen has changed" in said.args[0] and not w.rows


def test_a_session_is_read_off_the_gui_thread_and_restored(qtbot, window, tmp_path, monkeypatch):
    w = window
    saved = session_file.save(tmp_path / "talk.json", {"workload": "source_terms", "dtype": "float64"},
                              [result_set("float32"), result_set("float64", scale=2.0)], {"baseline": "numpy@2"})
    read_in: list[str] = []
    real = session_file.load

    def load(path, **kwargs):
        read_in.append(threading.current_thread().name)
        return real(path, **kwargs)
    monkeypatch.setattr(panels.files.session_file, "load", load)
    with qtbot.waitSignal(w.plots.updated, timeout=WAIT_MS):
        with qtbot.waitSignal(w.files.opened, timeout=WAIT_MS) as shown:
            assert w.files.open_session(saved)
    assert read_in == ["job"] and len(shown.args[0]) == 2
    assert {r["dtype"] for r in w.rows} == {"float32"} and len(w.compared) == 1
    assert w.plots.baselineCombo.currentData() == "numpy@2"
    assert "Opened the session talk.json: 2 result set(s)" in w.status.currentMessage()


def test_a_file_read_while_a_sweep_began_leaves_the_sweep_on_screen(qtbot, window, tmp_path, monkeypatch):
    w = window
    path = result_files.write(result_set("float64"), tmp_path / "f64.json")
    held = HeldReads(monkeypatch)
    assert w.files.open_results([path])
    assert held.entered.wait(WAIT_MS / 1000)
    w.experiment.select_workload("source_terms")
    check_backends(w, ["numpy"])
    set_sizes(w, "2^10", "2^12", 2)
    w.experiment.budgetSpin.setValue(0.0)
    with qtbot.waitSignal(w.sweepCompleted, timeout=120_000):
        with qtbot.waitSignal(w.files.problem, timeout=WAIT_MS) as said:
            w.run()
            held.release()
    assert "Did not show f64.json: a sweep began while it was read" in said.args[0]
    assert [r["size"] for r in w.rows] == [1024, 4096] and w.result_sets()[0].source == ""


def test_the_window_closed_while_a_file_is_read_shows_nothing_and_closes(qtbot, tmp_path, monkeypatch):
    from panels.window import MainWindow
    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.ready, timeout=120_000):
        w.show()
    path = result_files.write(result_set("float32"), tmp_path / "f32.csv")
    held = HeldReads(monkeypatch)
    said: list = []
    w.files.opened.connect(said.append)
    w.files.problem.connect(said.append)
    assert w.files.open_results([path])
    assert held.entered.wait(WAIT_MS / 1000)
    threading.Timer(0.2, held.release).start()      # the read ends while the window closes
    w.close()
    qtbot.wait(100)                                 # what the job said would be handled now
    assert said == [] and not w.rows and not w.files.job.background.running


def test_the_chooser_offers_a_compared_set_at_once_and_the_table_and_charts_follow(qtbot, window, tmp_path):
    """What reads the sets in a glance is shown with them (the chooser, before ``opened``); the
    table and the charts in later turns of the event loop (all at once they held the GUI thread past a
    frame), and ``sets.shown`` says when they have been."""
    w = window
    one, two = (result_files.write(result_set(d, scale=s), tmp_path / f"{d}.json")
                for d, s in (("float32", 1.0), ("float64", 2.0)))
    open_files(qtbot, w, [one])
    with qtbot.waitSignal(w.sets.shown, timeout=WAIT_MS):
        with qtbot.waitSignal(w.files.opened, timeout=WAIT_MS):
            w.files.compare_with([two])
        assert w.plots.baselineCombo.findText("numpy (float64)") >= 0
    table = w.resultsTable.results
    assert table.rowCount() == 28 and {table.data(table.index(r, 0)) for r in range(28)} == {"float32", "float64"}
