"""The exports' child process: answers come back, errors come back as themselves, a crash is
one clear error and the next call gets a fresh child."""
from __future__ import annotations

import os

import pytest

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


def test_matplotlib_stays_out_of_this_process(child, tmp_path):
    import sys
    from workbench.results.files import open_results
    fresh = "matplotlib" not in sys.modules
    sets = [open_results(os.path.join(os.path.dirname(__file__), "..", "docs", "exports",
                                      "source_terms-float32.csv"))]
    from workbench.views.presets import preset
    paths = child.run("workbench.views.matplotlib_charts:export", sets, tmp_path / "c.png", "runtime", preset("slide"))
    assert [p.name for p in paths] == ["c.png"] and (tmp_path / "c.png").stat().st_size > 10_000
    if fresh:
        assert "matplotlib" not in sys.modules
