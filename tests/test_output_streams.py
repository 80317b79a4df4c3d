"""Output nobody reads: the command line's stdout into a pipe whose reader went away, or onto a full
device. The command ends quietly with the status a shell expects, once every file it was asked to
write is written (``workbench.cli.commands._Output``).
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
