"""Signals, dying parents and plug-ins that end the engine: the command line run as a user runs it,
in a subprocess, and stopped the ways a user stops it.

The unruly workload (tests/plugins/unruly.py) picks its misbehaviour by size and appends a line to
the file named in UNRULY_MARK when a point begins: a test waits for that line, or for a row in the
--out file, never for a time. The deadlines are what a user may expect (an interrupted command
ends within 2 s), and a generous one where nothing is promised.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

PLUGIN = str(Path(__file__).parent / "plugins" / "unruly.py")
SWEEP = ("-b", "numpy", "-d", "float64", "-r", "1", "--budget", "0", "-q")
SLOW = ",".join(str(n) for n in range(100, 130))     # 30 points of about half a second each
ENDS_WITHIN_S = 2.0


def start(*args, tmp_path, stdout=subprocess.PIPE):
    """The command line in a session of its own (a terminal's process group, to send Ctrl-C to)."""
    env = {**os.environ, "UNRULY_MARK": str(tmp_path / "mark")}
    return subprocess.Popen([sys.executable, "-m", "workbench", "--plugin", PLUGIN, *args], stdout=stdout,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)


def wait_for(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"waited {timeout:g} s for {what}")


def marks(tmp_path) -> list[str]:
    path = tmp_path / "mark"
    return path.read_text().splitlines() if path.exists() else []


def rows(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False)


def engine_of(proc) -> psutil.Process | None:
    """The engine process the command line started (not its resource tracker, not a plug-in vetting)."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return None
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                return child
        except psutil.Error:
            continue
    return None


def ended_within(proc, seconds: float) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``proc``, which must end within ``seconds``."""
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=seconds + 30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the command never ended: {err[-2000:]}") from None
    took = time.monotonic() - t0
    assert took < seconds, f"the command took {took:.1f} s to end (at most {seconds} s): {err[-2000:]}"
    return proc.returncode, out or "", err


def midway(tmp_path, *extra):
    """A sweep of slow points, returned once its first point is written to its --out file."""
    out = tmp_path / "out.csv"
    proc = start("run", "-w", "unruly", "-s", SLOW, *SWEEP, "--out", str(out), *extra, tmp_path=tmp_path)
    wait_for(lambda: out.exists() and len(rows(out)) >= 1, "the first point to be written")
    return proc, out


def test_ctrl_c_mid_sweep_ends_it_with_the_points_so_far_written_and_status_130(tmp_path):
    proc, out = midway(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)           # as a terminal sends it: to the whole group
    code, stdout, err = ended_within(proc, ENDS_WITHIN_S)
    assert code == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err
    frame = rows(out)
    assert 1 <= len(frame) < 30 and (frame["status"].isin(["ok", "cancelled"])).all()
    assert f"{len(frame)} point(s) measured" in err


def test_sigterm_mid_sweep_ends_it_with_status_143(tmp_path):
    proc, out = midway(tmp_path)
    proc.send_signal(signal.SIGTERM)
    code, _, err = ended_within(proc, ENDS_WITHIN_S)
    assert code == 143, err
    assert "Traceback" not in err and "interrupted by SIGTERM" in err and len(rows(out)) >= 1


@pytest.mark.parametrize("signals", [("SIGINT", "SIGINT"), ("SIGINT", "SIGINT", "SIGINT"),
                                     ("SIGINT", "SIGTERM", "SIGINT", "SIGTERM")],
                         ids=["twice", "three-times", "sigterm-during-the-stop"])
def test_more_signals_during_the_stop_end_it_at_once_without_a_deadlock(tmp_path, signals):
    """The second signal used to close the supervisor from the handler, waiting for a lock the
    main thread held while it waited for the engine: the command never ended."""
    proc, out = midway(tmp_path)
    for name in signals:           # each while the one before is being handled
        try:
            os.killpg(proc.pid, getattr(signal, name))
        except ProcessLookupError:     # it ended already
            break
        time.sleep(0.15)
    code, _, err = ended_within(proc, ENDS_WITHIN_S)
    assert code == 128 + getattr(signal, signals[0]), err       # the first signal says why it ended
    assert "Traceback" not in err, err
    assert len(rows(out)) >= 1


def test_the_engine_dies_with_a_command_line_killed_by_sigkill(tmp_path):
    proc = start("run", "-w", "unruly", "-s", "2", *SWEEP, tmp_path=tmp_path)
    wait_for(lambda: any(m.startswith("inputs") for m in marks(tmp_path)), "the engine to make inputs")
    engine = engine_of(proc)
    assert engine is not None and f"inputs {engine.pid}" in marks(tmp_path)
    tracker = [p for p in psutil.Process(proc.pid).children() if p.pid != engine.pid]
    proc.kill()
    proc.communicate()
    gone, alive = psutil.wait_procs([engine, *tracker], timeout=ENDS_WITHIN_S)
    for p in alive:
        p.kill()
    assert not alive, f"still running after the command line was killed: {[p.cmdline() for p in alive]}"


def test_ctrl_c_while_the_engine_starts_gives_no_traceback_and_no_error_row(tmp_path):
    out = tmp_path / "out.csv"
    proc = start("run", "-w", "unruly", "-s", SLOW, *SWEEP, "--out", str(out), tmp_path=tmp_path)
    engine = wait_for(lambda: engine_of(proc), "the engine process to start", timeout=60)
    os.killpg(proc.pid, signal.SIGINT)           # while its interpreter imports what it needs
    code, _, err = ended_within(proc, ENDS_WITHIN_S + 1)
    assert not marks(tmp_path), "the signal came after the engine started measuring: not what is tested"
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert not out.exists() or (rows(out)["status"] != "error").all()
    assert not engine.is_running()


def test_a_point_whose_inputs_never_come_runs_into_the_time_limit_and_the_sweep_goes_on(tmp_path):
    out = tmp_path / "out.csv"
    proc = start("run", "-w", "unruly", "-s", "2,1", *SWEEP, "--point-timeout", "2", "--out", str(out),
                 tmp_path=tmp_path)
    code, _, err = ended_within(proc, 60)
    assert code == 1, err
    frame = rows(out)
    assert list(zip(frame["size"], frame["status"])) == [(2, "error"), (1, "ok")]
    assert "making the inputs and the reference at size 2, before numpy ran, ran past the per-point time limit of 2 s" \
        in frame["message"][0]


def test_a_plug_in_that_ends_the_engine_is_reported_as_what_it_did_not_as_a_kill(tmp_path):
    out = tmp_path / "out.csv"
    proc = start("run", "-w", "unruly", "-s", "3,1,4,5", *SWEEP, "--out", str(out), tmp_path=tmp_path)
    code, _, err = ended_within(proc, 120)
    assert code == 1, err
    frame = rows(out).set_index("size")
    assert list(frame["status"]) == ["error", "ok", "error", "error"]
    assert "exited with status 3 (a plug-in called sys.exit(3) at unruly.py" in frame.at[3, "message"]
    assert "exited with status 0 (a plug-in called sys.exit(0)" in frame.at[4, "message"]
    assert "a plug-in raised KeyboardInterrupt at unruly.py" in frame.at[5, "message"]
    assert not frame["message"].str.contains("SIGKILL").any()
    assert "Traceback" not in err


def test_ctrl_c_on_a_local_cluster_ends_its_workers_quietly_with_the_points_kept(tmp_path):
    """The terminal's Ctrl-C reached the local cluster's worker too: a KeyboardInterrupt traceback
    from it, and "went away ... the sweep goes on", which was false (the command was stopping it)."""
    pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install -e '.[cluster]')")
    out = tmp_path / "out.csv"
    proc = start("run", "-w", "unruly", "-s", SLOW, *SWEEP, "--cluster", "local", "--out", str(out),
                 tmp_path=tmp_path)
    wait_for(lambda: out.exists() and len(rows(out)) >= 1, "the first point to be written", timeout=120)
    os.killpg(proc.pid, signal.SIGINT)
    code, _, err = ended_within(proc, 10.0)        # the local cluster is closed as well
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "went away" not in err, err
    assert err.strip().splitlines()[-1].startswith("gpu-workbench: interrupted by SIGINT"), err
    frame = rows(out)
    assert 1 <= len(frame) < 30 and f"{len(frame)} point(s) measured" in err
