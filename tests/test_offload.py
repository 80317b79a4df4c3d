"""The exports' child process: answers come back, errors come back as themselves, a crash is
one clear error and the next call gets a fresh child."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from workbench.measure.offload import Offload


@pytest.fixture
def child():
    c = Offload()
    yield c
    c.close()


def test_a_call_runs_in_another_process_that_stays(child):
    first = child.run("os:getpid")
    assert first != os.getpid()
    assert child.run("os:getpid") == first                   # kept for the next export
    assert child.run("os.path:join", "a", "b") == os.path.join("a", "b")


def test_an_error_there_is_raised_here_as_itself(child, tmp_path):
    with pytest.raises(FileNotFoundError):
        child.run("os:listdir", str(tmp_path / "missing"))


def test_a_child_that_dies_is_one_error_and_the_next_call_gets_a_fresh_one(child):
    before = child.run("os:getpid")
    with pytest.raises(RuntimeError, match="ended without an answer"):
        child.run("os:_exit", 3)
    assert child.run("os:getpid") not in (before, os.getpid())


EXPORTED = Path(__file__).parent.parent / "docs" / "exports" / "source_terms-float32.csv"


def test_matplotlib_stays_out_of_this_process(tmp_path):
    """The chart is drawn in the child and the caller never imports matplotlib. Asked of a fresh
    interpreter: in a full run, other tests have imported matplotlib into this one long before."""
    chart = tmp_path / "c.png"
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from workbench.measure.offload import Offload
        from workbench.results.files import open_results
        from workbench.views.presets import preset
        child = Offload()
        try:
            paths = child.run("workbench.views.matplotlib_charts:export", [open_results({str(EXPORTED)!r})],
                              Path({str(chart)!r}), "runtime", preset("slide"))
        finally:
            child.close()
        print(*[p.name for p in paths], "matplotlib" in sys.modules)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["c.png", "False"]
    with Image.open(chart) as image:
        assert image.size == (1920, 1080)


def test_a_child_killed_between_calls_costs_the_next_call_nothing(child):
    """Killed while idle (kill -9, the OOM killer), the child is found gone when the next call is
    handed over: that call never ran, so it runs in a fresh child instead of failing."""
    import signal
    before = child.run("os:getpid")
    manager = child._pool._executor_manager_thread
    os.kill(before, signal.SIGKILL)
    manager.join(30)                    # the pool has seen its child die, and is broken
    assert not manager.is_alive()
    assert child.run("os:getpid") not in (before, os.getpid())


def test_result_sets_go_to_the_child_in_pieces_and_arrive_whole(child, tmp_path, monkeypatch):
    """Pickled whole by the pool's thread, a table of 5,000 rows held the GIL, and the window's GUI
    thread, for 20 ms (issue 38): sets go packed, ``PIECE_ROWS`` rows a pickle, and the target
    gets the sets again, one or a list, keyword or not."""
    import pandas as pd
    from helpers import result_set
    from workbench.results import files as result_files
    from workbench.results import pieces
    monkeypatch.setattr(pieces, "PIECE_ROWS", 3)
    sets = [result_set("float32"), result_set("float64", scale=2.0)]
    packed = pieces.PackedSets.of(sets)
    assert [len(p[1]) for p in packed.sets] == [-(-len(rs.frame) // 3) for rs in sets]
    assert all(p[0].frame.empty for p in packed.sets)
    out = child.run("workbench.results.files:write", pieces.PackedSets.of(sets[1]), tmp_path / "one.json")
    pd.testing.assert_frame_equal(result_files.open_results(out).frame, sets[1].frame)
    for back, rs in zip(pieces.PackedSets.of(sets).unpacked(), sets):
        pd.testing.assert_frame_equal(back.frame, rs.frame)
        assert (back.environment, back.settings, back.written) == (rs.environment, rs.settings, rs.written)
    odd = pieces.PackedSets.of(sets[0].__class__(sets[0].frame.set_index("size"), sets[0].environment))
    assert odd.sets[0][1] == []                                # an index the pieces would not make: whole
    pd.testing.assert_frame_equal(odd.unpacked().frame, sets[0].frame.set_index("size"))


def test_a_sessions_rows_cross_as_rows_and_come_back_as_the_sets_the_window_would_make(child):
    """``PackedParts``: the main set measured here (its rows, this machine's record, the settings)
    and a set compared, made into tables by the child as ``sets_of`` makes them here."""
    import pandas as pd

    from helpers import measured, result_set
    from workbench.results import rows as results
    from workbench.results.pieces import PIECE_ROWS
    from workbench.results.sets import PackedParts, SetParts, sets_of
    from workbench.results.table import to_frame
    rows = [results.Row.of(measured(workload="source_terms", backend="numpy", device="CPU: Test",
                                    size=1024 * (i + 1), dtype="float32", compute_median_s=1e-3 * (i + 1),
                                    total_median_s=1e-3 * (i + 1), status="ok"))
            for i in range(PIECE_ROWS + 7)]                         # two pieces, the last not full
    compared = result_set()
    # Rows past the count are not the set's yet (a sweep's next points): they stay behind.
    parts = SetParts(rows + rows[:3], len(rows), 0, None, (compared,), {"cpu": "Test CPU"}, {"repeats": 5})
    packed = PackedParts.of(parts)
    assert len(packed.rows) == 2
    want = sets_of(to_frame(rows), None, [compared], {"cpu": "Test CPU"}, {"repeats": 5})
    made = child.run("builtins:list", packed)           # the child makes the sets, then lists them
    assert len(made) == 2
    for got, expected in zip(made, want):
        pd.testing.assert_frame_equal(got.frame, expected.frame)
        assert got.environment == expected.environment and got.settings == expected.settings
    alone = child.run("copy:copy", PackedParts.of(parts, one=True))
    pd.testing.assert_frame_equal(alone.frame, want[0].frame)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here (os.getpriority)")
def test_the_child_runs_below_the_windows_priority(child):
    """Its work (an export, a file read) is the window's background, as the spec process's."""
    from workbench.core.priority import NICE
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert child.run("os:getpriority", os.PRIO_PROCESS, 0) == min(19, mine + NICE)


def test_the_main_set_alone_is_made_though_it_has_no_rows_beside_sets_compared():
    """A sweep stopped before its first point, with sets still compared: Export results writes
    the main set, empty, as before the rows went to the child (the review found an IndexError)."""
    import pickle

    from helpers import result_set
    from workbench.results.sets import PackedParts, SetParts
    parts = SetParts([], 0, 0, None, (result_set(),), {"cpu": "Test CPU"}, {"repeats": 5})
    main = pickle.loads(pickle.dumps(PackedParts.of(parts, one=True))).unpacked()
    assert main.frame.empty and main.environment.get("cpu") == "Test CPU"
