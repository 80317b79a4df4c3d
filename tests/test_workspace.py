"""The workspace without Qt: the one check of an experiment, a sweep driven as the command line
drives it, its events, its rows, its file, a stop, a lesson, the sets shown and a journal restored.

Engine runs use NumPy at tiny sizes, in this process (``InProcess``): no window, no engine process.
"""
from __future__ import annotations

import math
import subprocess
import sys

import pytest

from workbench import lessons
from workbench.catalog.backends import Availability, probe_all
from workbench.measure.supervisor import InProcess
from workbench.results import rows as results
from workbench.results.files import ResultSet, open_results
from workbench.results.journal import Journals
from workbench.results.out import ResultsOut
from workbench.workspace import Busy, Experiment, RunState, SettingsError, Workspace, check, plan
from workbench.workspace import events as ev

TINY = dict(workload="source_terms", backends=("numpy",), sizes="2^8,2^9,2^10", repeats=1, budget_s=0.0)


def recorded(ws: Workspace) -> list:
    seen: list = []
    ws.listen(seen.append)
    return seen


# The one check -------------------------------------------------------------------------------------

def test_each_problem_is_named_by_the_setting_it_is_about():
    assert check(Experiment()).problems[0].setting == "workload"
    assert "unknown workload 'nope'" in check(Experiment(workload="nope")).problems[0].text
    bad = check(Experiment(workload="source_terms", backends=(), sizes="abc", device_memory_limit="8XB"))
    assert [p.setting for p in bad.problems] == ["sizes", "backends", "device_memory_limit"]
    assert bad.spec is None and "cannot read 'abc'" in bad.about("sizes")
    assert bad.about("backends").startswith("no backend chosen") and "at least one" in bad.about("backends")
    assert "cannot read '8XB'" in bad.about("device_memory_limit")
    # What only the engine's own check knows (a dtype the workload lacks) is a problem of the sweep.
    assert check(Experiment(workload="source_terms", backends=("numpy",), dtype="int8")).about("sweep")
    with pytest.raises(SettingsError) as refused:
        plan(Experiment(workload="source_terms", backends=("numpy", "numpy")))
    assert refused.value.problem.setting == "sweep" and "named twice" in str(refused.value)


def test_the_panels_settings_and_the_command_lines_give_the_same_sweep():
    panel = Experiment.from_panel({"workload": "source_terms", "backends": ["numpy"], "size_from": "2^8",
                                   "size_to": "2^10", "size_steps": 3, "dtype": "float64", "repeats": 3,
                                   "budget_s": 0.5, "noise_percent": 2.5, "host_memory": "pageable",
                                   "device_memory_limit": "  "})
    command = Experiment(workload="source_terms", backends=("numpy",), sizes="2^8:2^10", dtype="float64",
                         repeats=3, budget_s=0.5, noise=0.025)
    assert plan(panel) == plan(command)
    assert plan(panel).sizes == (256, 512, 1024) and plan(panel).noise == pytest.approx(0.025)


def test_a_backend_not_usable_here_is_refused_and_unnamed_backends_mean_every_usable_one():
    gone = lambda name: Availability(name == "numpy", f"no {name} here")          # noqa: E731
    refused = check(Experiment(workload="source_terms", backends=("numpy", "numba")), gone)
    assert refused.about("backends") == "backend numba is not usable here: no numba here"
    assert check(Experiment(workload="source_terms"), gone).spec.backends == ("numpy",)


# A sweep, as the command line drives it --------------------------------------------------------------

def test_a_sweep_tells_its_listeners_each_step_and_keeps_each_point_once_as_a_row():
    ws = Workspace()
    seen = recorded(ws)
    ws.run(plan(Experiment(**TINY)))
    assert ws.state is RunState.RUNNING and ws.busy
    ws.drive(InProcess())
    kinds = [type(e).__name__ for e in seen]
    assert kinds[:2] == ["StateChanged", "SweepBegan"] and kinds[-2:] == ["StateChanged", "SweepEnded"]
    assert kinds.count("PointAdded") == 3 == kinds.count("PointBegan")
    assert kinds.index("SweepPlanned") < kinds.index("PointBegan")
    assert [e.state for e in seen if isinstance(e, ev.StateChanged)] == [RunState.RUNNING, RunState.IDLE]
    added = [e for e in seen if isinstance(e, ev.PointAdded)]
    assert [e.index for e in added] == [0, 1, 2] and [e.done for e in added] == [1, 2, 3]
    assert all(isinstance(r, results.Row) for r in ws.rows) and [r.size for r in ws.rows] == [256, 512, 1024]
    assert [e.row for e in added] == ws.rows                   # the row announced is the row kept
    end = seen[-1]
    assert not end.cancelled and end.done == end.total == 3 and end.lesson is None
    (main,) = ws.result_sets()
    assert main.frame["size"].tolist() == [256, 512, 1024] and main.settings["workload"] == "source_terms"
    assert "limits" in main.environment               # the engine's record, merged as it came
    assert ws.table.frame() is ws.table.frame()        # built once, not again for every reader


def test_the_table_grows_by_the_new_rows_only_and_equals_one_built_whole():
    table = results.to_frame([])
    rows = [results.empty_row(workload="w", backend="numpy", size=n, dtype="float32", status="ok",
                              compute_median_s=n * 1e-9) for n in (8, 16, 32)]
    from workbench.results.table import RowTable
    t = RowTable()
    for row in rows:
        t.append(row)
        table = t.frame()
    import pandas as pd
    pd.testing.assert_frame_equal(table, results.to_frame(rows))
    t.replace(rows[:1])
    assert t.frame()["size"].tolist() == [8]


def test_a_table_made_a_chunk_at_a_time_is_the_table_made_at_once():
    """``frame(chunk=)``, as the file job makes the table of the set on screen: the same table,
    errors and missing figures among the rows, whatever is cached already."""
    from workbench.results.table import RowTable
    import pandas as pd
    rows = [results.empty_row(workload="w", backend=b, size=n, dtype="float32",
                              **({"status": "ok", "compute_median_s": n * 1e-9} if n % 3 else
                                 {"status": "error", "message": "out of memory"}))
            for b in ("numpy", "cupy") for n in range(1, 12)]
    whole = results.to_frame(rows)
    for cached in (0, 4):
        t = RowTable(rows[:cached])
        if cached:
            t.frame()
        t.rows.extend(RowTable(rows[cached:]).rows)
        pd.testing.assert_frame_equal(t.frame(chunk=5), whole)
        assert not t.frame_is_behind()
    assert RowTable().frame(chunk=5).empty
    with pytest.raises(ValueError):
        RowTable(rows).frame(chunk=0)
    # The exports' table of the rows on screen, made the same way.
    from workbench.results.table import chunked_frame
    for chunk in (1, 5, 500):
        pd.testing.assert_frame_equal(chunked_frame(rows, chunk), whole)
    pd.testing.assert_frame_equal(chunked_frame([], 5), results.to_frame(()))
    for chunk in (0, -3):
        with pytest.raises(ValueError):
            chunked_frame(rows, chunk)


def test_rows_replaced_while_a_table_is_made_in_chunks_wait_for_nothing_and_win(monkeypatch):
    """The job makes the table a chunk at a time without the lock: the GUI thread's ``replace`` (a
    sweep begun, a file shown) goes through at once, and the table of the old rows is not kept."""
    import threading
    import workbench.results.table as table_module
    old = [results.empty_row(workload="w", backend="numpy", size=n, dtype="float32", status="ok") for n in range(1, 9)]
    new = [results.empty_row(workload="w", backend="cupy", size=n, dtype="float32", status="ok") for n in (2, 4)]
    t = table_module.RowTable(old)
    real, replaced = table_module.to_frame, []

    def to_frame(part):
        if not replaced:                # while the first chunk is made, the GUI thread replaces the rows
            other = threading.Thread(target=t.replace, args=(new,))
            other.start()
            other.join(10)
            replaced.append(not other.is_alive())
        return real(part)
    monkeypatch.setattr(table_module, "to_frame", to_frame)
    made = t.frame(chunk=3)
    assert replaced == [True] and made["size"].tolist() == list(range(1, 9))
    assert t.frame_is_behind() and t.frame()["backend"].tolist() == ["cupy", "cupy"]


def test_each_point_is_in_the_file_when_its_listeners_hear_of_it(tmp_path):
    out = ResultsOut(tmp_path / "r.csv")
    out.lock()
    ws = Workspace(out=out)
    in_file: list = []
    ws.listen(lambda e: isinstance(e, ev.PointAdded) and in_file.append(open_results(tmp_path / "r.csv")
                                                                       .frame["size"].tolist()))
    ws.run(plan(Experiment(**TINY)))
    ws.drive(InProcess())
    out.unlock()
    assert in_file == [[256], [256, 512], [256, 512, 1024]]
    assert open_results(tmp_path / "r.csv").environment["limits"]      # the record the sweep ended with


def test_stop_ends_the_sweep_after_the_point_in_progress():
    runner = InProcess()
    ws = Workspace(stop=runner.stop)
    seen = recorded(ws)
    ws.listen(lambda e: isinstance(e, ev.PointAdded) and ws.stop())
    ws.run(plan(Experiment(**{**TINY, "sizes": "2^8:2^16"})))
    ws.drive(runner)
    states = [e.state for e in seen if isinstance(e, ev.StateChanged)]
    assert states == [RunState.RUNNING, RunState.STOPPING, RunState.IDLE]
    assert seen[-1].cancelled and ws.cancelled and 1 <= len(ws.rows) < 9
    heard = len(seen)
    ws.stop()                                      # idle: nothing to stop, nothing said
    assert len(seen) == heard and ws.state is RunState.IDLE


def test_a_running_sweep_refuses_what_would_change_its_rows():
    ws = Workspace()
    ws.run(plan(Experiment(**TINY)))
    for command in (lambda: ws.run(plan(Experiment(**TINY))), lambda: ws.show_sets([ResultSet(results.to_frame([]))]),
                    ws.restore):
        with pytest.raises(Busy):
            command()
    ws.drive(InProcess())
    assert not ws.busy and len(ws.rows) == 3


def test_a_lesson_runs_its_sweeps_into_one_set_and_ends_with_its_statement():
    ls = lessons.get("float32-float64")
    p = lessons.plan(ls, probe_all(deep=False), sizes=(2 ** 10, 2 ** 12), min_repeats=1, budget_s=0.0)
    ws = Workspace()
    seen = recorded(ws)
    ws.run_lesson(p)
    ws.drive(InProcess())
    began = [e for e in seen if isinstance(e, ev.SweepBegan)]
    assert [b.first for b in began] == [True] + [False] * (len(p.specs) - 1)
    assert [b.spec.dtype for b in began] == ["float32", "float64"]
    end = seen[-1]
    assert isinstance(end, ev.SweepEnded) and end.lesson is ws.statement and "numpy: float64 took" in end.lesson.text
    assert {(r.variant, r.dtype) for r in ws.rows} == {("float32", "float32"), ("float64", "float64")}
    assert ws.settings["lesson"] == ws.statement.as_settings()      # every export of the set carries it
    assert sum(isinstance(e, ev.StateChanged) for e in seen) == 2     # one run state for the whole lesson


def test_sets_shown_replace_the_rows_and_keep_their_header():
    frame = results.to_frame([results.empty_row(workload="source_terms", backend="numpy", size=8, dtype="float32",
                                                status="ok")])
    a, b = ResultSet(frame, {"cpu": "A"}, source="a.csv"), ResultSet(frame, {"cpu": "B"}, source="b.csv")
    ws = Workspace()
    seen = recorded(ws)
    ws.show_sets([a, b])
    assert seen == [ev.SetsShown(2)] and ws.compared == [b] and ws.origin is a
    main, other = ws.result_sets()
    assert main.source == "a.csv" and main.environment == {"cpu": "A"} and other is b
    assert [r.size for r in ws.rows] == [8] and isinstance(ws.rows[0], results.Row)


def test_an_interrupted_session_is_offered_restored_into_the_new_journal_and_never_again(tmp_path):
    journals = Journals(tmp_path / "journals")
    killed = journals.new()
    killed.sweep({"workload": "source_terms"})
    rows = [results.empty_row(workload="source_terms", backend="numpy", size=n, dtype="float32", status="ok",
                              compute_median_s=1e-6) for n in (8, 16)]
    for row in rows:
        killed.append(row)
    killed.end()                                   # killed: no "closed" line
    ws = Workspace(journals=Journals(tmp_path / "journals"))
    assert len(ws.orphans) == 1 and ws.orphans[0].rows[1]["size"] == 16
    assert ws.restore() == 2 and [r.size for r in ws.rows] == [8, 16] and not ws.orphans
    assert ws.settings == {"workload": "source_terms"} and ws.origin is None
    ws.close()
    later = Workspace(journals=Journals(tmp_path / "journals"))
    assert later.orphans == []
    later.close()


def test_a_restored_session_goes_into_the_new_journal_in_one_synced_write(tmp_path, monkeypatch):
    """Synced a row at a time, a restored session's 5,000 rows were 1.15 s of fsync in the GUI
    thread (issue 38); in one write, a kill right after the restore still loses none of them."""
    import workbench.results.journal as journal_module
    journals = Journals(tmp_path / "journals")
    killed = journals.new()
    killed.sweep({"workload": "source_terms"})
    rows = [results.empty_row(workload="source_terms", backend="numpy", size=n, dtype="float32", status="ok",
                              compute_median_s=1e-6) for n in range(8, 408)]
    for row in rows:
        killed.append(row)
    killed.end()
    ws = Workspace(journals=Journals(tmp_path / "journals"))
    synced = []
    real = journal_module.os.fsync
    monkeypatch.setattr(journal_module.os, "fsync", lambda fd: synced.append(fd) or real(fd))
    assert ws.restore() == len(rows)
    assert len(synced) == 1
    ws.journal.end()                            # killed again, right after the restore
    again = Workspace(journals=Journals(tmp_path / "journals"))
    assert [r["size"] for r in again.orphans[0].rows] == [r["size"] for r in rows]
    again.close()


def test_the_workspace_imports_no_qt():
    code = ("import sys; import workbench.workspace, workbench.cli.commands; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'panels')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_row_made_from_the_engines_dict_keeps_every_value():
    d = results.empty_row(workload="w", backend="numpy", size=4, dtype="float32", status="ok", gbps=math.inf)
    row = results.Row.of(d)
    assert list(row) == list(d)
    assert all(row[k] == v or (isinstance(v, float) and math.isnan(v) and math.isnan(row[k])) for k, v in d.items())
