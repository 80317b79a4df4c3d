"""Results, charts and sessions are written off the GUI thread (issue 38: a 5,000-point CSV stalled
the window 1.2 s): each call returns at once, ``exported`` brings the files, and every way the
write can go wrong is said in the window and leaves no half file. Driven through the File part's
public calls, offscreen; every file written is read back."""
from __future__ import annotations

import resource
import threading
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("pytestqt")

from helpers import result_set  # noqa: E402
from PySide6.QtCore import QSettings, Qt  # noqa: E402
from session import open_files  # noqa: E402
from test_gui import window  # noqa: E402,F401 - the fixture

from workbench.results import files as result_files  # noqa: E402
from workbench.results import rows as results  # noqa: E402
from workbench.results import session_file  # noqa: E402

WAIT_MS = 120_000


def many(n: int = 1200, backend: str = "numpy") -> result_files.ResultSet:
    """``n`` rows (more than one of the job's chunks), with text a CSV must quote or neutralise."""
    rows = [results.empty_row(workload="source_terms", backend=backend, device="CPU: Test CPU", size=1024 + i,
                              dtype="float32", repeats=5, compute_median_s=1e-6 * (i + 1),
                              total_median_s=1e-6 * (i + 1), first_call_s=1e-4, status="ok" if i % 7 else "error",
                              message=("=SUM(1),\"two\"\r\nthree" if i % 7 == 0 else ""))
            for i in range(n)]
    return result_files.ResultSet(results.to_frame(rows), {"cpu": "Test CPU"}, {"dtype": "float32"},
                                  "2026-01-02T03:04:05+00:00", "testhost")


def shown(qtbot, w, tmp_path: Path, rs: result_files.ResultSet, name: str = "shown.json") -> pd.DataFrame:
    """``rs`` opened in the window (read by the file job: shown when ``opened`` fires); the table it
    was read back as."""
    path = result_files.write(rs, tmp_path / name)
    open_files(qtbot, w, [path], drawn=False)
    return result_files.open_results(path).frame


class Held:
    """The job's calls into its child process, held until ``release``: the export is in flight."""

    def __init__(self, child, monkeypatch) -> None:
        self.entered, self.go = threading.Event(), threading.Event()
        real = child.run

        def held(*args, **kwargs):
            self.entered.set()
            self.go.wait(WAIT_MS / 1000)
            return real(*args, **kwargs)
        monkeypatch.setattr(child, "run", held)

    def release(self) -> None:
        self.go.set()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_results_of_many_rows_return_at_once_and_come_whole_with_exported(qtbot, window, tmp_path, monkeypatch,
                                                                            suffix):
    w = window
    frame = shown(qtbot, w, tmp_path, many())
    held = Held(w.files.job.child, monkeypatch)
    out = tmp_path / f"out.{suffix}"
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as written:
        assert w.files.export_results(out) is True
        qtbot.waitUntil(held.entered.is_set, timeout=WAIT_MS)
        assert not out.exists()                   # not written by the GUI thread: the job holds it
        assert "Writing the results" in w.status.currentMessage()
        held.release()
    expected = [out, out.with_name("out.meta.json")] if suffix == "csv" else [out]
    assert written.args[0] == expected and all(p.exists() for p in expected)
    back = result_files.open_results(out)
    pd.testing.assert_frame_equal(back.frame, frame)          # every row, in order, in every chunk
    assert back.environment == {"cpu": "Test CPU"} and back.host == "testhost"
    assert "Wrote out" in w.status.currentMessage() and leftovers(tmp_path) == []


def test_a_second_export_while_one_is_written_is_refused_and_said(qtbot, window, tmp_path, monkeypatch):
    w = window
    shown(qtbot, w, tmp_path, many(50))
    held = Held(w.files.job.child, monkeypatch)
    assert w.files.export_results(tmp_path / "a.csv")
    qtbot.waitUntil(held.entered.is_set, timeout=WAIT_MS)
    assert not any(a.isEnabled() for a in (w.files.exportResultsAction, w.files.saveSessionAction,
                                           w.files.exportChartAction, w.files.exportReportAction))
    for second in (lambda: w.files.export_results(tmp_path / "b.csv"), lambda: w.files.save_session(tmp_path / "s.json"),
                   lambda: w.files.export_chart(tmp_path / "c.png")):
        with qtbot.waitSignal(w.files.problem, timeout=5_000) as said:
            assert second() is False
        assert "Still writing the results" in said.args[0] and w.notice.isVisible()
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as written:
        held.release()
    assert written.args[0][0] == tmp_path / "a.csv"
    assert not (tmp_path / "b.csv").exists() and not (tmp_path / "s.json").exists()
    assert w.files.exportResultsAction.isEnabled() and w.files.saveSessionAction.isEnabled()


def test_rows_replaced_while_the_job_makes_its_table_do_not_change_what_it_writes(qtbot, window, tmp_path,
                                                                                  monkeypatch):
    """The rows are the ones on screen at the click, though the list they live in is refilled
    (a file opened, a sweep begun) while the job still packs them for the child, piece by piece."""
    from workbench.results import sets
    w = window
    first = shown(qtbot, w, tmp_path, many(1200, "numpy"), "first.json")
    go, entered, real = threading.Event(), threading.Event(), sets.pack

    def slow(rows):
        entered.set()
        go.wait(WAIT_MS / 1000)
        return real(rows)
    monkeypatch.setattr(sets, "pack", slow)        # as PackedParts calls it, in the job's thread
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as written:
        assert w.files.export_results(tmp_path / "out.csv")
        qtbot.waitUntil(entered.is_set, timeout=WAIT_MS)
        # The same list, refilled (not by File > Open: its read would wait for the job's write).
        w.show_sets([result_files.open_results(result_files.write(many(1200, "numba"), tmp_path / "second.json"))])
        assert {r["backend"] for r in w.rows} == {"numba"}
        go.set()
    pd.testing.assert_frame_equal(result_files.open_results(written.args[0][0]).frame, first)


def test_an_export_makes_no_table_in_the_windows_process(qtbot, window, tmp_path, monkeypatch):
    """Issue 38: the job's thread made the main set's table for each export, and pandas held the
    GIL against the GUI thread for 20-30 ms at 5,000 rows; the rows go to the child as they are,
    and the child makes the table that it writes."""
    from workbench.results import table
    w = window
    first = shown(qtbot, w, tmp_path, many(1200, "numpy"), "first.json")
    made, real = [], table.to_frame
    monkeypatch.setattr(table, "to_frame", lambda rows: made.append(len(rows)) or real(rows))
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as written:
        assert w.files.export_results(tmp_path / "out.csv")
    assert made == []
    pd.testing.assert_frame_equal(result_files.open_results(written.args[0][0]).frame, first)


def test_the_folder_deleted_while_writing_is_said_and_leaves_nothing(qtbot, window, tmp_path, monkeypatch):
    """The folder's name is markup: the window says it as the text it is."""
    w = window
    shown(qtbot, w, tmp_path, many(50))
    folder = tmp_path / "<b>gone<!--"
    folder.mkdir()
    held = Held(w.files.job.child, monkeypatch)
    assert w.files.export_results(folder / "r.csv")
    qtbot.waitUntil(held.entered.is_set, timeout=WAIT_MS)
    folder.rmdir()
    with qtbot.waitSignal(w.files.problem, timeout=WAIT_MS) as said:
        held.release()
    assert "Could not write the results" in said.args[0] and "No such file or directory" in said.args[0]
    assert str(folder) in said.args[0] and not folder.exists()
    label = w.notice.label
    assert w.notice.isVisible() and label.textFormat() == Qt.TextFormat.PlainText and "<b>gone<!--" in label.text()
    assert w.files.exportResultsAction.isEnabled()           # ready for the next try
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS):
        assert w.files.export_results(tmp_path / "again.csv")
    assert len(result_files.open_results(tmp_path / "again.csv").frame) == 50


def test_a_full_disk_leaves_the_old_file_whole_and_is_said(qtbot, window, tmp_path):
    """The job's child process may write no more than 20 kB (as a full disk would stop it)."""
    w = window
    shown(qtbot, w, tmp_path, many(1200))
    target = tmp_path / "r.json"
    target.write_text("the old one")
    child = w.files.job.child
    _, hard = child.run("resource:getrlimit", resource.RLIMIT_FSIZE)
    child.run("resource:setrlimit", resource.RLIMIT_FSIZE, (20_000, hard))
    with qtbot.waitSignal(w.files.problem, timeout=WAIT_MS) as said:
        assert w.files.export_results(target)
    assert "File too large" in said.args[0] and str(target) in said.args[0] and w.notice.isVisible()
    assert target.read_text() == "the old one" and leftovers(tmp_path) == []


def test_a_link_where_the_results_go_is_replaced_and_what_it_points_to_kept(qtbot, window, tmp_path):
    w = window
    frame = shown(qtbot, w, tmp_path, many(50))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "r.csv"
    link.symlink_to(victim)
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS):
        assert w.files.export_results(link)
    assert victim.read_text() == "precious" and not link.is_symlink()
    pd.testing.assert_frame_equal(result_files.open_results(link).frame, frame)


def test_the_window_closed_while_results_are_written_waits_for_the_whole_file(qtbot, tmp_path):
    from panels.window import MainWindow
    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.ready, timeout=WAIT_MS):
        w.show()
    frame = shown(qtbot, w, tmp_path, many(1200))
    assert w.files.export_results(tmp_path / "r.json")
    assert w.files.job.running                 # in flight as the window closes (its child not even started)
    w.close()
    pd.testing.assert_frame_equal(result_files.open_results(tmp_path / "r.json").frame, frame)
    assert leftovers(tmp_path) == []


def test_exports_read_the_chosen_baseline_without_making_the_sets_here(qtbot, window, tmp_path, monkeypatch):
    """Making the sets in the GUI thread is what stalled it: each export takes the parts and the
    chooser's baseline, and its job makes the sets."""
    w = window
    one, two = (result_files.write(result_set(d, scale=s), tmp_path / f"{d}.json")
                for d, s in (("float32", 1.0), ("float64", 2.0)))
    open_files(qtbot, w, [one, two])                # and drawn: the charts read the sets when they are
    combo = w.plots.baselineCombo
    combo.setCurrentIndex(combo.findData("numpy@2"))

    def made_here(*_args, **_kwargs):
        raise AssertionError("the sets were made in the GUI thread")
    monkeypatch.setattr(w.workspace, "result_sets", made_here)
    monkeypatch.setattr(w.plots, "baseline_choice", made_here)
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as chart:
        assert w.files.export_chart(tmp_path / "speedup.svg", kind="speedup")
    assert "Speedup over numpy (float64)" in chart.args[0][0].read_text()
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as session:
        assert w.files.save_session(tmp_path / "talk.json")
    saved = session_file.load(session.args[0][0])
    assert saved.view == {"baseline": "numpy@2"} and [len(s.frame) for s in saved.sets] == [14, 14]
    with qtbot.waitSignal(w.files.exported, timeout=WAIT_MS) as written:
        assert w.files.export_results(tmp_path / "main.json")
    assert result_files.open_results(written.args[0][0]).frame["dtype"].unique().tolist() == ["float32"]
