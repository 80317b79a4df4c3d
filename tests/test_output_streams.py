"""Output nobody reads: the command line's stdout into a pipe whose reader went away, onto a full
device, or closed by the shell (``>&-``, stderr too). The command ends quietly with the status a shell expects, once every file it was asked to
write is written (``workbench.cli.output.Output``).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("results") / "a.csv"
    subprocess.run([sys.executable, "-m", "workbench", "run", "-w", "source_terms", "-b", "numpy", "-s", "2^8",
                    "-r", "1", "--budget", "0", "-q", "--in-process", "-o", str(path)], check=True,
                   capture_output=True, timeout=120)
    return path


COMMANDS = {"list": ["list"], "info": ["info"], "help": ["--help"], "run --help": ["run", "--help"],
            "compare": ["compare", "{file}", "{file}"], "lesson": ["lesson"]}


def run_into(argv, stdout, timeout=120):
    return subprocess.run([sys.executable, "-m", "workbench", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("command", COMMANDS)
def test_output_into_a_closed_pipe_ends_quietly_with_status_141(command, result_file):
    read, write = os.pipe()
    os.close(read)                 # the reader is gone before the first line (as `| head -0`)
    try:
        proc = run_into([a.replace("{file}", str(result_file)) for a in COMMANDS[command]], write)
    finally:
        os.close(write)
    assert proc.stderr == "", proc.stderr
    assert proc.returncode == 141


@pytest.mark.parametrize("command", COMMANDS)
def test_output_onto_a_full_device_is_one_line_and_status_1(command, result_file):
    with open("/dev/full", "w") as full:
        proc = run_into([a.replace("{file}", str(result_file)) for a in COMMANDS[command]], full)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not write the output: No space left on device" in lines[0], proc.stderr
    assert proc.returncode == 1


def test_output_read_by_head_ends_quietly():
    """As a user types it: whether the reader is gone before the last write is up to the scheduler,
    so only what must hold either way is asserted (no traceback; the writer's status 0 or 141)."""
    proc = subprocess.run(f"{sys.executable} -m workbench list | head -1; exit ${{PIPESTATUS[0]}}",
                          shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("Backends:") and proc.stdout.count("\n") == 1
    assert proc.stderr == "" and proc.returncode in (0, 141)


def test_a_lesson_writes_its_file_though_nobody_reads_what_it_prints(tmp_path):
    out = tmp_path / "lesson.csv"
    read, write = os.pipe()
    os.close(read)
    try:
        proc = run_into(["lesson", "float32-float64", "--sizes", "2^10", "-r", "1", "--budget", "0", "-q",
                         "--out", str(out)], write, timeout=300)
    finally:
        os.close(write)
    assert proc.returncode == 141 and "Traceback" not in proc.stderr, proc.stderr
    frame = pd.read_csv(out, keep_default_na=False)
    assert set(frame["dtype"]) == {"float32", "float64"} and (frame["status"] == "ok").all()


# stdout closed (`>&-`): Python starts with sys.stdout None; every write then raised, twice, at exit.

CLOSED = "stdout is closed: what the command printed is dropped"


def run_closed(argv, *, stderr_too=False, limit_bytes=None, timeout=300):
    """The command with file descriptor 1 closed by the shell (and 2 with ``stderr_too``); a
    file-size limit with ``limit_bytes``."""
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    redirect = ">&- 2>&-" if stderr_too else ">&-"
    return subprocess.run(["sh", "-c", f'"$0" "$@" {redirect}', sys.executable, "-m", "workbench", *argv],
                          stderr=subprocess.PIPE, text=True, timeout=timeout,
                          preexec_fn=limit if limit_bytes else None)


def expand(argv, result_file):
    return [a.replace("{file}", str(result_file)) for a in argv]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_closed_stdout_is_one_line_and_the_commands_own_status(command, result_file):
    proc = run_closed(expand(COMMANDS[command], result_file))
    assert proc.stderr.strip().splitlines() == [f"gpu-workbench: {CLOSED}"], proc.stderr
    assert proc.returncode == 0


@pytest.mark.parametrize("command", COMMANDS)
def test_closed_stdout_and_stderr_is_silent_with_the_commands_own_status(command, result_file):
    proc = run_closed(expand(COMMANDS[command], result_file), stderr_too=True)
    assert proc.stderr == "" and proc.returncode == 0


def test_a_usage_error_with_stdout_closed_is_its_own_line_and_status_2(result_file):
    proc = run_closed(["compare", str(result_file), str(result_file) + ".missing"])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot open" in lines[0], proc.stderr
    assert proc.returncode == 2


def test_run_plot_and_report_write_their_files_with_stdout_closed(result_file, tmp_path):
    run, chart, report = tmp_path / "run.csv", tmp_path / "c.png", tmp_path / "r.html"
    for argv in (["run", "-w", "source_terms", "-b", "numpy", "-s", "2^8,2^9", "-r", "1", "--budget", "0", "-q",
                  "--in-process", "-o", str(run)],
                 ["plot", str(result_file), "--chart", str(chart), "--kind", "runtime"],
                 ["report", str(result_file), "--out", str(report)]):
        proc = run_closed(argv)
        assert proc.returncode == 0 and proc.stderr.strip().endswith(CLOSED), (argv[0], proc.stderr)
        assert "Traceback" not in proc.stderr
    frame = pd.read_csv(run, keep_default_na=False)
    assert list(frame["size"]) == [256, 512] and (frame["status"] == "ok").all()
    assert chart.read_bytes().startswith(b"\x89PNG") and "<html" in report.read_text().lower()


def test_a_lesson_measures_and_writes_its_file_with_stdout_and_stderr_closed(tmp_path):
    out = tmp_path / "lesson.csv"
    proc = run_closed(["lesson", "float32-float64", "--sizes", "2^10", "-r", "1", "--budget", "0", "-q",
                       "--out", str(out)], stderr_too=True)
    assert proc.returncode == 0 and proc.stderr == ""
    frame = pd.read_csv(out, keep_default_na=False)
    assert set(frame["dtype"]) == {"float32", "float64"} and (frame["status"] == "ok").all()


def test_a_report_that_cannot_be_written_with_stdout_closed_says_so_once_and_keeps_the_old(result_file, tmp_path):
    """Two faults at once: nothing to print to, and a file-size limit (a full disk) for --out."""
    report = tmp_path / "r.html"
    report.write_text("old")
    proc = run_closed(["report", str(result_file), "--out", str(report)], limit_bytes=4096)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "File too large" in lines[0], proc.stderr
    assert proc.returncode == 1 and report.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]      # no temporary file left
