"""A backend that needs an engine process of its own (cudf-pandas: cuDF's pandas accelerator must be
installed before pandas is imported), on the CPU machine: fake backends whose sessions name their process
(tests/plugins/dedicated.py), and the CPU-side facts of the cudf-pandas backend."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench import backends, protocol
from workbench.engine import SweepSpec
from workbench.supervisor import Supervisor

PLUGIN = str(Path(__file__).parent / "plugins" / "dedicated.py")


@pytest.fixture
def supervisor(registry):
    saved = dict(backends.BACKENDS)
    registry.load_file(PLUGIN)
    sup = Supervisor(plugins=(PLUGIN,), memory_limit=None, point_timeout_s=60)
    yield sup
    sup.close()
    assert not sup.alive()                      # the parked engine too
    backends.BACKENDS.clear()
    backends.BACKENDS.update(saved)


def spec(backends_, sizes=(4, 8)):
    return SweepSpec("where", backends_, sizes, "float64", min_repeats=1, budget_s=0.0)


def pid(row) -> int:
    return int(re.search(r"pid (\d+)", row["device"]).group(1))


def test_a_backend_that_needs_its_own_engine_gets_one_prepared_first(supervisor):
    messages = list(supervisor.run(spec(("plain", "marked"))))
    rows = protocol.rows(messages)
    assert [(r["size"], r["backend"], r["status"]) for r in rows] == [
        (4, "plain", "ok"), (4, "marked", "ok"), (8, "plain", "ok"), (8, "marked", "ok")]   # the plan's order
    assert [m.index for m in messages if isinstance(m, protocol.PointFinished)] == [0, 1, 2, 3]
    assert sum(isinstance(m, protocol.SweepStarted) for m in messages) == 1
    assert sum(isinstance(m, protocol.SweepFinished) for m in messages) == 1 and not messages[-1].cancelled
    plain = {pid(r) for r in rows if r["backend"] == "plain"}
    marked = {pid(r) for r in rows if r["backend"] == "marked"}
    assert len(plain) == 1 and len(marked) == 1 and plain != marked        # two engines, each kept
    assert all("shared" in r["device"] for r in rows if r["backend"] == "plain")
    # Prepared before pandas was imported there, as cudf.pandas.install() must be.
    assert all("prepared, pandas imported before: False" in r["device"] for r in rows if r["backend"] == "marked")
    assert supervisor.restarts == 0
    again = protocol.rows(supervisor.run(spec(("marked", "plain"), sizes=(4,))))
    assert {pid(r) for r in again} == plain | marked                        # the same engines, parked between


def test_an_engine_that_cannot_be_prepared_gives_error_rows_and_the_others_go_on(supervisor):
    rows = protocol.rows(supervisor.run(spec(("plain", "unprepared"))))
    assert [(r["backend"], r["status"]) for r in rows] == [
        ("plain", "ok"), ("unprepared", "error"), ("plain", "ok"), ("unprepared", "error")]
    assert "could not be prepared" in rows[1]["message"] and "no accelerator on this machine" in rows[1]["message"]


def test_a_dedicated_engine_that_dies_is_an_error_row_and_the_sweep_goes_on(supervisor):
    import os
    import signal
    messages = []
    for m in supervisor.run(spec(("plain", "marked"), sizes=(4, 8, 16))):
        messages.append(m)
        if isinstance(m, protocol.PointFinished) and m.row["backend"] == "marked" and m.row["size"] == 4:
            os.kill(supervisor.pid(), signal.SIGKILL)      # the dedicated engine, between its points
    rows = protocol.rows(messages)
    assert [(r["size"], r["backend"]) for r in rows] == [(s, b) for s in (4, 8, 16) for b in ("plain", "marked")]
    assert all(r["status"] == "ok" for r in rows)          # it died between points: a fresh one took the next
    assert len({pid(r) for r in rows if r["backend"] == "marked"}) == 2
