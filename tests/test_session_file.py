"""Saved sessions without Qt: a round trip that changes nothing, and one clear line for a bad file."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import result_set

from workbench.results import files as result_files
from workbench.results import session_file
from workbench.core import writable
from workbench.results.files import ResultsFileError

EXPERIMENT = {"workload": "source_terms", "backends": ["numpy", "numba"], "size_from": "2^10",
              "size_to": "2^16", "size_steps": 4, "dtype": "float64", "repeats": 3, "budget_s": 0.25,
              "host_memory": "pinned"}


def test_a_session_comes_back_as_it_was_saved(tmp_path):
    sets = [result_set("float32", source="/far/away/f32.csv"), result_set("float64", scale=2.0)]
    path = session_file.save(tmp_path / "s.json", EXPERIMENT, sets, {"baseline": "numpy@2"})
    back = session_file.load(path)
    assert back.experiment == EXPERIMENT and back.view == {"baseline": "numpy@2"}
    assert len(back.sets) == 2
    for before, after in zip(sets, back.sets):
        pd.testing.assert_frame_equal(after.frame, before.frame)
        assert (after.environment, after.settings, after.written, after.host, after.source) == \
               (before.environment, before.settings, before.written, before.host, before.source)


def break_it(path, how):
    doc = json.loads(path.read_text())
    if how == "newer":
        doc["schema"] = session_file.SCHEMA + 1
    elif how == "bad set":
        doc["sets"][0]["results"]["rows"][0]["size"] = "big"
    elif how == "bad experiment":
        doc["experiment"]["size_steps"] = "many"
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("how,message", [
    ("newer", r"newer GPU Workbench \(session schema 2"),
    ("bad set", "result set 1: column size, row 1: 'big' is not a whole number"),
    ("bad experiment", "experiment's size_steps is 'many'"),
    ("truncated", "truncated"),
])
def test_a_broken_session_is_refused_in_one_line(tmp_path, how, message):
    path = session_file.save(tmp_path / "s.json", EXPERIMENT, [result_set()])
    if how == "truncated":
        path.write_text(path.read_text()[:-200])
    else:
        break_it(path, how)
    with pytest.raises(ResultsFileError, match=message) as info:
        session_file.load(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_results_and_sessions_are_not_taken_for_each_other(tmp_path):
    results_path = result_files.save(result_set().frame, tmp_path / "r.json", {})
    with pytest.raises(ResultsFileError, match="a results file, not a session"):
        session_file.load(results_path)
    session_path = session_file.save(tmp_path / "s.json", EXPERIMENT, [result_set()])
    with pytest.raises(ResultsFileError, match="a session file of GPU Workbench, not a results file"):
        result_files.open_results(session_path)


def test_write_keeps_where_and_when_a_set_was_measured(tmp_path):
    rs = result_set()
    back = result_files.open_results(result_files.write(rs, tmp_path / "again.csv"))
    assert (back.host, back.written) == ("testhost", "2026-01-02T03:04:05+00:00")


@pytest.mark.parametrize("where,why", [("folder", "is a folder"), ("missing", "does not exist"),
                                       ("proc", "cannot write in /proc")])
def test_unwritable_places_are_named(tmp_path, where, why):
    path = {"folder": tmp_path, "missing": tmp_path / "no" / "x.png", "proc": "/proc/x.png"}[where]
    assert why in writable.problem(path)
    assert writable.problem(tmp_path / "fine.png") == ""


def test_a_session_read_in_a_child_process_is_the_session_read_here(tmp_path):
    """``via``: the window's file job reads it in its child process; the same session comes back,
    and a refusal as the same ResultsFileError."""
    from workbench.measure.offload import Offload
    path = session_file.save(tmp_path / "s.json", {"workload": "source_terms"},
                             [result_set("float32"), result_set("float64")], {"baseline": "numpy"})
    child = Offload()
    try:
        there, here = session_file.load(path, via=child), session_file.load(path)
        assert (there.experiment, there.view, there.host) == (here.experiment, here.view, here.host)
        for a, b in zip(there.sets, here.sets, strict=True):
            pd.testing.assert_frame_equal(a.frame, b.frame)
        (tmp_path / "r.json").write_text("[]")
        with pytest.raises(ResultsFileError) as refused:
            session_file.load(tmp_path / "r.json", via=child)
        with pytest.raises(ResultsFileError) as said_here:
            session_file.load(tmp_path / "r.json")
        assert str(refused.value) == str(said_here.value)
    finally:
        child.close()
