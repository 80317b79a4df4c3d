"""Results saved after each point: a CSV appended row by row, a JSON file's journal line by line and
the file written whole at the end; resumed after a kill, a full disk or a planted link; a journal
damaged or not a regular file. (Files written whole, never through a link: tests/test_writes.py.)"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from test_writes import RUN, cli


# Saving after each point: appended, never the whole file again ----------------------------------------

def _row(size: int, status: str = "ok", **values):
    from workbench.results import rows as results
    return results.Row.of(results.empty_row(workload="source_terms", backend="numpy", device="CPU", size=size,
                                            dtype="float32", repeats=3, compute_median_s=1e-6 * size,
                                            total_median_s=1e-6 * size, status=status, **values))


def _sizes(path) -> list[int]:
    from workbench.results.files import open_results
    return open_results(path).frame["size"].tolist()


ENV, SETTINGS = {"cpu": "Test CPU"}, {"workload": "source_terms"}


def test_a_csv_gets_each_point_appended_to_the_file_it_began(tmp_path):
    from workbench.results.out import ResultsOut
    out = ResultsOut(tmp_path / "r.csv")
    out.lock()
    out.begin(set())
    assert not (tmp_path / "r.csv").exists()             # nothing written before the first point
    sizes_seen, inodes, lengths = [], set(), []
    for size in (8, 16, 32, 64):
        assert out.add(_row(size, message="a, \"quoted\"\nmessage" if size == 16 else ""), ENV, SETTINGS) == ""
        sizes_seen.append(_sizes(tmp_path / "r.csv"))     # a whole results file after every point
        inodes.add(os.stat(tmp_path / "r.csv").st_ino)
        lengths.append(os.path.getsize(tmp_path / "r.csv"))
    assert sizes_seen == [[8], [8, 16], [8, 16, 32], [8, 16, 32, 64]]
    assert len(inodes) == 1 and lengths == sorted(lengths)  # one file, grown: appended, not replaced
    before = (tmp_path / "r.csv").read_bytes()
    assert out.finish({**ENV, "limits": [1]}, SETTINGS) == ""
    out.unlock()
    assert (tmp_path / "r.csv").read_bytes() == before     # the rows were all there already
    meta = json.loads((tmp_path / "r.meta.json").read_text())
    assert meta["environment"]["limits"] == [1]            # the record the sweep ended with
    from workbench.results.files import open_results
    assert open_results(tmp_path / "r.csv").frame["message"].tolist()[1] == "a, \"quoted\"\nmessage"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.meta.json"]


def test_a_sweep_s_journal_entry_is_handed_to_the_system_and_synced_with_its_first_row(tmp_path, monkeypatch):
    """Run writes the sweep's entry in the GUI thread: no fsync there (10-12 ms of the GUI thread),
    yet another process reads it at once (a kill loses nothing), and the first row syncs both."""
    from workbench.results import journal
    path = tmp_path / "journal.jsonl"
    j = journal.Journal(path)
    j.begin()
    synced = []
    monkeypatch.setattr(journal.os, "fsync", lambda fd: synced.append(fd))
    j.sweep({"workload": "w"})
    assert synced == []
    read = subprocess.run([sys.executable, "-c", f"print(open({str(path)!r}).read())"], capture_output=True, text=True)
    assert [json.loads(line)["kind"] for line in read.stdout.splitlines() if line] == ["session", "sweep"]
    j.append({"size": 8})
    assert len(synced) == 1
    j.end()


def test_a_json_file_gets_a_journal_line_per_point_and_is_written_whole_at_the_end(tmp_path):
    from workbench.results.out import ResultsOut, journal_path
    path = tmp_path / "r.json"
    out = ResultsOut(path)
    out.lock()
    out.begin(set())
    for n, size in enumerate((8, 16, 32), start=1):
        assert out.add(_row(size), ENV, SETTINGS) == ""
        lines = journal_path(path).read_text().splitlines()
        assert [json.loads(line)["size"] for line in lines] == [8, 16, 32][:n]
        assert not path.exists()                            # the document is written once, at the end
    assert out.finish(ENV, SETTINGS) == ""
    out.unlock()
    assert _sizes(path) == [8, 16, 32] and not journal_path(path).exists()
    assert json.loads(path.read_text())["environment"] == ENV


def test_a_json_sweep_killed_before_its_end_is_resumed_from_its_journal(tmp_path):
    """What a SIGKILL of the command leaves: the journal, no document. --resume goes on from it;
    without --resume or --force the name is refused, as for a file that holds results."""
    from workbench.results.out import Refused, ResultsOut, journal_path
    path = tmp_path / "r.json"
    out = ResultsOut(path)
    out.begin(set())
    out.add(_row(8), ENV, SETTINGS)
    out.add(_row(16, status="error"), ENV, SETTINGS)
    out._close_target()                                     # killed: nothing more happens
    with pytest.raises(Refused, match="interrupted sweep left them"):
        ResultsOut(path)
    again = ResultsOut(path, resume=True)
    assert [(r["size"], r["status"]) for r in again.previous] == [(8, "ok"), (16, "error")]
    assert again.done() == {("source_terms", "numpy", 8, "float32", "")}
    planned = {("source_terms", "numpy", n, "float32", "") for n in (8, 16, 32)}
    again.begin(planned)                                    # 16 failed: measured again, 8 kept
    again.add(_row(16), ENV, SETTINGS)
    again.add(_row(32), ENV, SETTINGS)
    assert again.finish(ENV, SETTINGS) == ""
    frame = __import__("workbench.results.files", fromlist=["x"]).open_results(path).frame
    assert frame["size"].tolist() == [8, 16, 32] and (frame["status"] == "ok").all()
    assert not journal_path(path).exists()


def test_an_append_cut_short_by_a_full_disk_is_cut_back_and_written_by_the_next_save(tmp_path, monkeypatch):
    from workbench.results import out as out_module
    from workbench.results.out import ResultsOut
    path = tmp_path / "r.csv"
    out = ResultsOut(path)
    out.begin(set())
    assert out.add(_row(8), ENV, SETTINGS) == ""
    whole = path.read_bytes()
    real_write = os.write

    def full(fd, data):                # half the row reaches the disk, then it is full
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(out_module.os, "write", full)
    problem = out.add(_row(16), ENV, SETTINGS)
    assert problem.startswith(f"cannot write {path}: No space left")
    assert path.read_bytes() == whole                       # cut back to its last whole row
    monkeypatch.setattr(out_module.os, "write", real_write)
    assert out.add(_row(32), ENV, SETTINGS) == ""            # room again: the point kept waiting comes too
    assert _sizes(path) == [8, 16, 32]
    assert out.finish(ENV, SETTINGS) == ""


def test_a_link_planted_at_the_file_mid_sweep_is_replaced_and_what_it_points_to_is_untouched(tmp_path):
    from workbench.results.out import ResultsOut
    path = tmp_path / "r.csv"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = ResultsOut(path)
    out.begin(set())
    out.add(_row(8), ENV, SETTINGS)
    path.unlink()
    path.symlink_to(victim)
    assert out.add(_row(16), ENV, SETTINGS) == ""          # not ours any more: written whole, atomically
    assert victim.read_text() == "precious" and not path.is_symlink()
    assert _sizes(path) == [8, 16]
    out.add(_row(32), ENV, SETTINGS)                         # and appended to again
    assert _sizes(path) == [8, 16, 32] and out.finish(ENV, SETTINGS) == ""


def test_a_csv_whose_last_row_was_cut_by_a_kill_is_resumed_without_it(tmp_path):
    from workbench.results.files import ResultsFileError, open_results
    from workbench.results.out import ResultsOut
    path = tmp_path / "r.csv"
    out = ResultsOut(path)
    out.begin(set())
    out.add(_row(8), ENV, SETTINGS)
    out.add(_row(16, message="two\nlines"), ENV, SETTINGS)
    out._close_target()
    text = path.read_text()
    path.write_text(text[: text.index("two\nlines") + 2])    # killed inside the quoted message
    with pytest.raises(ResultsFileError, match="truncated"):
        open_results(path)                                    # refused as it is...
    again = ResultsOut(path, resume=True)                     # ...but resumed without the row cut
    assert [r["size"] for r in again.previous] == [8]


# A JSON file's journal, damaged or not a file ------------------------------------------------------

def _journal_of_two_points(tmp_path):
    """What a sweep killed after two points leaves: their journal lines, no document."""
    from workbench.results.out import journal_path
    out = tmp_path / "r.json"
    assert cli(*RUN, "-s", "2^8:2^9:x2", "-o", str(out)).returncode == 0
    rows = json.loads(out.read_text())["rows"]
    out.unlink()
    journal = journal_path(out)
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out, journal, rows


@pytest.mark.parametrize("damage", ["not UTF-8", "a value that is not a number", "a row cut by a kill"])
def test_a_damaged_line_of_a_journal_costs_that_line_only(tmp_path, damage):
    out, journal, rows = _journal_of_two_points(tmp_path)
    with journal.open("ab") as f:
        if damage == "not UTF-8":
            f.write(b"\xff\xfe{\"size\": 1024}\n")
        elif damage == "a value that is not a number":
            f.write((json.dumps({**rows[0], "size": "abc"}) + "\n").encode())
        else:
            f.write(json.dumps(rows[0]).encode()[:40])
    proc = cli(*RUN, "-s", "2^8:2^10:x2", "-o", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert f"resumed {out}: 2 point(s) kept from it, 1 measured now" in proc.stdout
    said = [line for line in proc.stderr.splitlines() if "could not be read" in line]
    assert len(said) == 1 and "1 line of .r.json.rows.jsonl could not be read; 2 points kept" in said[0], proc.stderr
    assert _sizes(out) == [256, 512, 1024] and not journal.exists()    # deleted once its points are in the file


@pytest.mark.parametrize("planted", ["fifo", "link"])
@pytest.mark.parametrize("flag", ["", "--resume", "--force"])
def test_a_journal_that_is_not_a_regular_file_is_never_opened(tmp_path, planted, flag):
    """A FIFO blocked the command for ever. What is at the journal's name is left as it is, said in
    one line, and the document is written whole after each point instead."""
    from workbench.results.out import journal_path
    out = tmp_path / "r.json"
    victim = tmp_path / "victim.jsonl"
    victim.write_text("precious\n")
    if planted == "fifo":
        os.mkfifo(journal_path(out))
    else:
        journal_path(out).symlink_to(victim)
    proc = cli(*RUN, "-s", "256,512", "-o", str(out), *([flag] if flag else []), timeout=120)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if ".r.json.rows.jsonl" in line]
    kind = "a FIFO" if planted == "fifo" else "a symbolic link"
    assert len(said) == 1 and kind in said[0] and "left as it is, and r.json written whole after each point" in said[0], proc.stderr
    assert _sizes(out) == [256, 512] and victim.read_text() == "precious\n"
    assert (stat.S_ISFIFO if planted == "fifo" else stat.S_ISLNK)(os.lstat(journal_path(out)).st_mode)
