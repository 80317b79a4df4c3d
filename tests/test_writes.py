"""Files written: whole or not at all, never through a link, never over a file silently.

Write failures are made without chmod (tests may run as root, whom it does not stop): a
file-size limit in a subprocess, a folder deleted, a folder where the file goes, /dev/full.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

from workbench.core import atomic


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# The module every writer uses ----------------------------------------------------------------------

def test_a_write_replaces_the_target_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic.write_text(target, "new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640       # the old file's permissions kept
    assert _leftovers(tmp_path) == []


def test_links_planted_at_the_temporary_names_are_never_written_through(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "r.csv"
    (tmp_path / ".r.csv.tmp").symlink_to(victim)                 # the old fixed name
    # The names mkstemp will try, in order: a link at each of the first three.
    names = iter(["aaaa", "bbbb", "cccc", "dddd"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    for n in ("aaaa", "bbbb", "cccc"):
        (tmp_path / f".r.csv.{n}.tmp").symlink_to(victim)
    atomic.write_text(target, "a,b\n1,2\n")
    assert target.read_text() == "a,b\n1,2\n" and not target.is_symlink()
    assert victim.read_text() == "precious"
    assert all((tmp_path / f".r.csv.{n}.tmp").is_symlink() for n in ("aaaa", "bbbb", "cccc"))
    assert not (tmp_path / ".r.csv.dddd.tmp").exists()


def test_a_target_that_is_a_link_is_replaced_and_the_file_it_points_to_is_untouched(tmp_path):
    victim = tmp_path / "settings.json"
    victim.write_text('{"keep": true}')
    target = tmp_path / "r.json"
    target.symlink_to(victim)
    atomic.write_text(target, "{}")
    assert not target.is_symlink() and target.read_text() == "{}"
    assert victim.read_text() == '{"keep": true}'
    dangling = tmp_path / "d.json"
    dangling.symlink_to(tmp_path / "nowhere" / "x.json")
    atomic.write_text(dangling, "{}")
    assert dangling.read_text() == "{}" and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("make", ["deleted folder", "folder at target", "device"])
def test_a_failed_write_raises_one_oserror_naming_the_target_and_leaves_the_old_one(tmp_path, make):
    if make == "deleted folder":
        target = tmp_path / "gone" / "r.json"
    elif make == "folder at target":
        target = tmp_path / "r.json"
        target.mkdir()
    else:
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        target = "/dev/full"          # renaming over it would replace the device, not write into it
    with pytest.raises(OSError) as caught:
        atomic.write_text(target, "{}")
    assert caught.value.filename == str(target)
    line = atomic.why(caught.value)
    assert line.startswith(f"cannot write {target}: ") and "\n" not in line
    if make == "folder at target":
        assert target.is_dir() and list(target.iterdir()) == []
    if make == "device":
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)        # never replaced by a file, even as root
    assert _leftovers(tmp_path) == []


def test_an_interrupted_or_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "c.png"
    target.write_bytes(b"old chart")
    for exc in (KeyboardInterrupt, ValueError):
        with pytest.raises(exc):
            with atomic.replacing(target) as f:
                f.write(b"half a chart")
                raise exc()
    assert target.read_bytes() == b"old chart" and _leftovers(tmp_path) == []


def test_a_file_size_limit_leaves_the_old_file_whole(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    code = textwrap.dedent(f"""
        import resource, sys
        from workbench.core import atomic
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
        try:
            atomic.write_text({str(target)!r}, "x" * 5000)
        except OSError as exc:
            print(atomic.why(exc))
            sys.exit(3)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.startswith(f"cannot write {target}: File too large")
    assert target.read_text() == "old" and _leftovers(tmp_path) == []


# The command line ----------------------------------------------------------------------------------

def cli(*args, env=None, limit_bytes=None, timeout=300):
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})},
                          preexec_fn=limit if limit_bytes else None)


RUN = ("run", "-w", "source_terms", "-b", "numpy", "-r", "1", "--budget", "0", "-q")

# A workload whose inputs, made between points, delete the output folder at one size and make it
# again at another: with --in-process they are made after the last point's save, never during it.
VANISHING = textwrap.dedent("""
    import os, shutil
    import numpy as np
    from workbench.catalog.workloads import Workload, register

    def make(n, dt, v, rng):
        if n == int(os.environ["GONE_AT"]):
            shutil.rmtree(os.environ["FOLDER"])
        if n == int(os.environ["BACK_AT"]):
            os.mkdir(os.environ["FOLDER"])
        return (np.ones(n, dt),)

    W = register(Workload(name="vanishing", title="Vanishing", kind="kernels", description="for tests",
                          lesson="none", size_unit="elements", default_sizes=(8,), make_inputs=make,
                          reference=lambda inp: inp[0].astype(np.float64) * 2,
                          flops=lambda n: n, bytes_moved=lambda n, i: n * i, footprint=lambda n, i: n * i))
    W.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
""")


def _vanishing(tmp_path, back_at: int):
    plugin = tmp_path / "vanishing.py"
    plugin.write_text(VANISHING)
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "r.csv"
    proc = cli("--plugin", str(plugin), "run", "-w", "vanishing", "-b", "numpy", "-s", "8,16,32,64", "-r", "1",
               "--budget", "0", "-q", "--in-process", "-o", str(out),
               env={"FOLDER": str(folder), "GONE_AT": "16", "BACK_AT": str(back_at)})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, out


def _sizes_in_table(stdout: str) -> list[int]:
    return [int(line.split()[1]) for line in stdout.splitlines()
            if line.strip().startswith("numpy ") and line.split()[1].isdigit()]


def test_a_folder_deleted_mid_sweep_costs_no_point_and_the_next_save_writes_them_all(tmp_path):
    proc, out = _vanishing(tmp_path, back_at=64)
    assert proc.returncode == 0, proc.stderr
    failures = [line for line in proc.stderr.splitlines() if "cannot write" in line]
    assert len(failures) == 2, proc.stderr            # the saves after points 16 and 32, one line each
    assert all(line.startswith(f"gpu-workbench: cannot write {out.parent}") for line in failures)
    assert "the next point's save tries again" in failures[0]
    assert _sizes_in_table(proc.stdout) == [8, 16, 32, 64]
    from workbench.results.files import open_results
    assert open_results(out).frame["size"].tolist() == [8, 16, 32, 64]
    assert f"wrote {out}" in proc.stdout


def test_a_folder_that_never_comes_back_is_said_and_the_exit_status_says_so(tmp_path):
    proc, out = _vanishing(tmp_path, back_at=0)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 4, proc.stderr               # points 16, 32, 64, then the final save
    assert lines[-1].startswith("gpu-workbench: error: cannot write") and "4 point(s) measured are not saved" \
        in lines[-1]
    assert _sizes_in_table(proc.stdout) == [8, 16, 32, 64]     # every point measured and shown
    assert "wrote" not in proc.stdout and not out.parent.exists()


def test_an_existing_file_is_refused_without_force_and_replaced_with_it(tmp_path):
    out = tmp_path / "r.json"
    assert cli(*RUN, "-s", "256", "-o", str(out)).returncode == 0
    before = out.read_bytes()
    settings = tmp_path / "settings.json"
    settings.write_text('{"theme": "dark"}')
    for target, expect in ((out, "holds results: --resume adds to them, --force replaces them"),
                           (settings, "is not a GPU Workbench results file: --force replaces it")):
        for extra in ((), ("--resume",)) if target == settings else ((),):
            proc = cli(*RUN, "-s", "512", "-o", str(target), *extra)
            assert proc.returncode == 2 and proc.stdout == "", proc.stdout
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and expect in lines[0], lines
    assert out.read_bytes() == before and settings.read_text() == '{"theme": "dark"}'
    assert cli(*RUN, "-s", "512", "-o", str(out), "--force").returncode == 0
    assert json.loads(out.read_text())["rows"][0]["size"] == 512 and len(json.loads(out.read_text())["rows"]) == 1
    assert cli(*RUN, "-s", "512", "-o", str(settings), "--force").returncode == 0
    assert json.loads(settings.read_text())["format"] == "gpu-workbench-results"


def test_resume_keeps_the_points_measured_ok_and_measures_only_the_rest(tmp_path):
    out = tmp_path / "r.csv"
    assert cli(*RUN, "-s", "2^8:2^9:x2", "-o", str(out)).returncode == 0
    first = json.loads((tmp_path / "r.meta.json").read_text())
    proc = cli(*RUN, "-s", "2^8:2^10:x2", "-o", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert f"resumed {out}: 2 point(s) kept from it, 1 measured now" in proc.stdout
    assert _sizes_in_table(proc.stdout) == [1024]
    from workbench.results.files import open_results
    frame = open_results(out).frame
    assert frame["size"].tolist() == [256, 512, 1024] and (frame["status"] == "ok").all()
    assert first["written"]          # the file was there to resume
    proc = cli(*RUN, "-s", "2^8:2^10:x2", "-o", str(out), "--resume")       # nothing left: nothing run
    assert "3 point(s) kept from it, 0 measured now" in proc.stdout and proc.returncode == 0
    assert len(open_results(out).frame) == 3


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_a_file_stopped_before_its_first_point_opens_empty_and_is_resumed(tmp_path, suffix):
    """What SIGTERM before the first point leaves: a results file of no row. The fault soak found
    it refused by --resume as 'not a results file', every later run of the sweep with it."""
    from workbench.results import rows as results
    from workbench.results.files import ResultSet, open_results, write
    out = tmp_path / f"r{suffix}"
    write(ResultSet(results.to_frame([])), out)
    assert open_results(out).frame.empty
    proc = cli(*RUN, "-s", "2^8:2^9:x2", "-o", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert open_results(out).frame["size"].tolist() == [256, 512]


def test_a_second_writer_of_one_file_is_refused_in_one_line(tmp_path):
    from workbench.results.out import ResultsOut
    out = tmp_path / "r.json"
    first = ResultsOut(out)
    first.lock()                        # as a sweep writing it holds it
    try:
        proc = cli(*RUN, "-s", "256", "-o", str(out))
    finally:
        first.unlock()
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "another sweep is writing it" in lines[0], lines
    assert not out.exists()
    assert cli(*RUN, "-s", "256", "-o", str(out)).returncode == 0      # once it is let go
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]    # no lock file left behind


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "r.json"
    proc = cli(*RUN, "-s", "256,512", "-o", str(path))
    assert proc.returncode == 0, proc.stderr
    return str(path)


@pytest.mark.parametrize("command", ["plot", "report"])
def test_plot_and_report_that_cannot_write_say_so_in_one_line_and_leave_the_old_file(saved, tmp_path, command):
    target = tmp_path / ("c.png" if command == "plot" else "r.html")
    target.write_text("the old one")
    args = (["plot", saved, "--chart", str(target), "--kind", "runtime"] if command == "plot"
            else ["report", saved, "--out", str(target)])
    proc = cli(*args, limit_bytes=20_000)     # matplotlib's font cache is already made
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"gpu-workbench: error: cannot write {target}: File too large"], lines
    assert target.read_text() == "the old one" and _leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["plot", "report"])
def test_plot_and_report_onto_a_link_replace_the_link_not_what_it_points_to(saved, tmp_path, command):
    name = "c.png" if command == "plot" else "r.html"
    dangling, onto_device = tmp_path / name, tmp_path / f"full-{name}"
    dangling.symlink_to(tmp_path / "nowhere" / name)
    onto_device.symlink_to("/dev/full")
    for target in (dangling, onto_device):
        args = (["plot", saved, "--chart", str(target), "--kind", "runtime"] if command == "plot"
                else ["report", saved, "--out", str(target)])
        proc = cli(*args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert not target.is_symlink() and target.stat().st_size > 1000
    assert not (tmp_path / "nowhere").exists()
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_the_journal_is_never_begun_through_a_link_and_a_failed_append_stops_nothing(tmp_path, caplog):
    from workbench.results import journal
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    path = tmp_path / "journal.jsonl"
    path.symlink_to(victim)
    j = journal.Journal(path)
    j.begin()
    j.append({"size": 8})
    assert victim.read_text() == "precious" and not path.is_symlink()
    assert [json.loads(line)["kind"] for line in path.read_text().splitlines()] == ["session", "row"]
    if os.path.exists("/dev/full"):
        j.end()
        j._file = open("/dev/full", "w", encoding="utf-8")      # every append now fails: disk full
        j.append({"size": 16})                                    # says so, raises nothing
        assert any("journal" in r.getMessage() and "No space left" in r.getMessage() for r in caplog.records)
        j.end()
