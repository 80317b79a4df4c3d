"""A user's workload file as it comes (issue 35): one that prints garbage loads and runs, one that
is a FIFO, a device or endless is refused in one line at once and never read, and a sweep from a
program with no file of its own (``python -``, ``python -c``) measures its points.

Wherever a workload file is taken: the command line's --plugin, ``workbench.sweep(plugin=...)``, the
window's File > Open workload file and its watch on the files it opened. What could hang runs in a
subprocess or a thread with a time limit; the window is waited on by its signals.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_hostile_input import in_time

import workbench
from workbench.catalog.workloads import PluginError
from workbench.measure import plugins
from workbench.results.files import open_results

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = Path(__file__).parent / "plugins" / "double.py"
QUICK = dict(sizes=[64, 256], budget=0.01, progress=False)
#: What a workload file may write at import: NUL, a byte that is no UTF-8, a terminal's "clear
#: screen", and no newline; by Python's stdout, by print, and under Python (C code writes to fd 1).
GARBAGE = {
    "sys.stdout.write": "import sys\nsys.stdout.write('\\x00\\xff\\x1b[2J garbage ' * 2000)\n",
    "print": "print('\\xff garbage ' * 2000)\n",
    "os.write(1)": "import os\nos.write(1, b'\\x00\\xff\\x1b[2J garbage ' * 2000)\n",
    "stderr too": "import os, sys\nos.write(2, b'\\xff\\x1b[2J' * 2000)\nsys.stdout.write('\\x00\\xff' * 2000)\n",
}
#: The same garbage each time a kernel runs, in the engine process.
CALLS_GARBAGE = PLUGIN.read_text().replace(
    "W.implement(\"numpy\")(lambda inputs, ctx: (lambda: inputs[0] * 2))",
    "import os, sys\n"
    "def _twice(inputs, ctx):\n"
    "    def run():\n"
    "        sys.stdout.write('\\x00\\xff\\x1b[2J garbage ' * 200); sys.stdout.flush()\n"
    "        os.write(1, b'\\x00\\xff garbage ' * 200)\n"
    "        return inputs[0] * 2\n"
    "    return run\n"
    "W.implement(\"numpy\")(_twice)\n")
FAST_S = 2.0        # a file that is not one is refused in this, whatever it is


def cli(*args, timeout=240):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], capture_output=True,
                          timeout=timeout, cwd=ROOT, env=env)


@pytest.fixture(autouse=True)
def _restored(declared):
    """What a test loads leaves with it."""


@pytest.fixture(params=list(GARBAGE))
def noisy(request, tmp_path) -> Path:
    path = tmp_path / "noisy.py"
    path.write_text(GARBAGE[request.param] + PLUGIN.read_text())
    return path


# --- a file that prints ----------------------------------------------------------------------

def test_a_file_that_prints_garbage_at_import_is_vetted_and_loaded(noisy):
    assert plugins.load(noisy, exclusive=False) == ["double"]


def test_the_command_line_lists_and_runs_a_file_that_prints_garbage(noisy, tmp_path):
    listed = cli("--plugin", noisy, "list")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert b"double" in listed.stdout
    out = tmp_path / "r.csv"
    ran = cli("--plugin", noisy, "run", "-w", "double", "-b", "numpy", "-s", "64,256", "-r", "1",
              "--budget", "0", "-q", "-o", out)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert list(open_results(out).frame.status) == ["ok", "ok"]


def test_a_sweep_of_a_file_that_prints_garbage_measures_its_points(noisy):
    rows = workbench.sweep("double", plugin=noisy, **QUICK)
    assert list(rows.status) == ["ok", "ok"], list(rows.message)


def test_garbage_printed_by_a_kernel_in_the_engine_leaves_its_points_measured(tmp_path):
    """The engine talks over a pipe of its own: a kernel's prints on stdout are not its protocol."""
    path = tmp_path / "calls.py"
    path.write_text(CALLS_GARBAGE)
    rows = workbench.sweep("double", plugin=path, **QUICK)
    assert list(rows.status) == ["ok", "ok"], list(rows.message)


# --- a file that is no file -------------------------------------------------------------------

@pytest.fixture(params=["fifo", "/dev/zero", "/dev/urandom", "endless"])
def special(request, tmp_path) -> tuple[Path, str]:
    """A workload file that is not one to read, named x.py, and what its refusal says."""
    path = tmp_path / "x.py"
    if request.param == "fifo":
        os.mkfifo(path)
        return path, "is a FIFO (named pipe), not a workload file"
    if request.param == "endless":      # 1 GiB (sparse), as a file that grows without end soon is
        with open(path, "wb") as f:
            f.truncate(2 ** 30)
        return path, "too large for a workload file"
    path.symlink_to(request.param)
    return path, "is a device, not a workload file"


def timed_cli(*args) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    proc = cli(*args, timeout=10)
    return time.monotonic() - start, proc


def test_the_command_line_refuses_a_special_file_in_one_line_at_once(special, tmp_path):
    path, why = special
    # The interpreter's start is the machine's, not the refusal's (over 2 s on a busy one): it is
    # what the same command takes to refuse a file that is not there.
    start, _ = timed_cli("--plugin", tmp_path / "missing.py", "list")
    for argv in (["--plugin", path, "list"], ["--plugin", path, "run", "-w", "double", "-q"]):
        elapsed, proc = timed_cli(*argv)
        lines = proc.stderr.decode().strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and why in lines[0], proc.stderr
        assert lines[0].startswith("gpu-workbench: error: --plugin: ")
        assert elapsed < min(start, FAST_S) + FAST_S, (elapsed, start)


def test_a_sweep_refuses_a_special_file_in_one_line_at_once(special):
    path, why = special

    def sweep():
        return workbench.sweep("double", plugin=path, **QUICK)
    start = time.monotonic()
    with pytest.raises(PluginError, match=re.escape(why)) as refused:
        in_time(sweep, seconds=FAST_S)
    assert "\n" not in str(refused.value)
    assert time.monotonic() - start < FAST_S


def test_a_digest_of_a_special_file_is_none_at_once(special):
    assert in_time(plugins.digest, special[0], seconds=FAST_S) == ""


# --- a program with no file -------------------------------------------------------------------

SWEEP = """
import json
import numpy as np
import workbench
rows = workbench.sweep(setup=lambda n: np.arange(n, dtype=float), kernels={"numpy": lambda x: x * 2},
                       sizes=[64, 256], budget=0.01, progress=False)
print(json.dumps([list(rows.status), list(rows.message)]))
"""


@pytest.mark.parametrize("how", ["stdin", "-c"])
def test_a_sweep_from_a_program_with_no_file_measures_its_points(how, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv, given = ([sys.executable, "-"], SWEEP) if how == "stdin" else ([sys.executable, "-c", SWEEP], None)
    proc = subprocess.run(argv, input=given, capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, messages = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == ["ok", "ok"], messages
