"""The supervised engine: crashes, hangs, kills and stops become rows, and the sweep goes on.

The misbehaving workload (tests/plugins/misbehaving.py) picks its misbehaviour by size. Nothing
here asserts a duration: a hang is ended by a short per-point limit, and the tests wait on the
messages themselves (pytest-timeout guards against a supervisor that never returns).
"""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from workbench.measure import protocol
from workbench.measure.engine import SweepSpec
from workbench.results.journal import Journal, interrupted
from workbench.measure.supervisor import Supervisor

PLUGIN = str(Path(__file__).parent / "plugins" / "misbehaving.py")


@pytest.fixture
def misbehaving(registry):
    registry.load_file(PLUGIN)
    yield


@pytest.fixture
def supervisor(misbehaving):
    sup = Supervisor(plugins=(PLUGIN,), point_timeout_s=2.0, memory_limit=None)
    yield sup
    sup.close()
    assert not sup.alive()


def spec(*sizes):
    return SweepSpec("misbehaving", ("numpy",), sizes, "float64", min_repeats=1, budget_s=0.0)


def statuses(messages):
    return [(r["size"], r["status"]) for r in protocol.rows(messages)]


def test_a_point_that_kills_the_engine_is_an_error_row_and_the_sweep_goes_on(supervisor):
    messages = list(supervisor.run(spec(1, 2, 1, 3, 1)))
    assert statuses(messages) == [(1, "ok"), (2, "error"), (1, "ok"), (3, "error"), (1, "ok")]
    rows = protocol.rows(messages)
    assert "SIGSEGV" in rows[1]["message"] and "size 2" in rows[1]["message"]
    assert "exited with status 3" in rows[3]["message"]
    assert sum(isinstance(m, protocol.EngineDied) for m in messages) == 2
    assert supervisor.restarts == 2
    finished = [m for m in messages if isinstance(m, protocol.SweepFinished)]
    assert len(finished) == 1 and messages[-1] is finished[0] and not finished[0].cancelled
    assert [m.index for m in messages if isinstance(m, protocol.PointFinished)] == [0, 1, 2, 3, 4]
    assert sum(isinstance(m, protocol.SweepStarted) for m in messages) == 1


def test_an_engine_that_dies_between_the_interleaved_rounds_of_a_size_loses_only_its_culprit(supervisor):
    messages = list(supervisor.run(SweepSpec("misbehaving", ("numpy", "numba"), (9, 1), "float64",
                                             min_repeats=3, budget_s=0.0)))
    rows = {(r["size"], r["backend"]): r for r in protocol.rows(messages)}
    assert set(rows) == {(9, "numpy"), (9, "numba"), (1, "numpy"), (1, "numba")}
    assert rows[(9, "numba")]["status"] == "error" and "SIGSEGV" in rows[(9, "numba")]["message"]
    # The other point of size 9 had run a round before the crash: it is measured again, whole.
    assert rows[(9, "numpy")]["status"] == "ok" and rows[(9, "numpy")]["repeats"] == 3
    assert rows[(1, "numpy")]["status"] == rows[(1, "numba")]["status"] == "ok"
    assert supervisor.restarts == 1
    assert sorted(m.index for m in messages if isinstance(m, protocol.PointFinished)) == [0, 1, 2, 3]


def test_a_sticky_cuda_error_retires_the_engine_and_the_next_point_gets_a_fresh_one(supervisor):
    messages = list(supervisor.run(spec(1, 8, 1)))
    assert statuses(messages) == [(1, "ok"), (8, "error"), (1, "ok")]
    assert "ILLEGAL_ADDRESS" in protocol.rows(messages)[1]["message"]
    (notice,) = [m for m in messages if isinstance(m, protocol.EngineDied)]
    assert "unusable" in notice.message and supervisor.restarts == 1


def test_a_hung_point_runs_into_the_time_limit(supervisor):
    rows = protocol.rows(supervisor.run(spec(4, 1)))
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert "per-point time limit of 2 s" in rows[0]["message"]


def test_a_point_that_raises_is_an_error_and_the_engine_lives_on(supervisor):
    rows = protocol.rows(supervisor.run(spec(6, 1)))
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert "ZeroDivisionError" in rows[0]["message"]
    assert supervisor.restarts == 0


@pytest.mark.parametrize("size", [5, 7])   # a long repeat in Python, and one inside a C call
def test_stop_during_a_long_repeat_ends_the_sweep(supervisor, size):
    messages = []
    for m in supervisor.run(spec(1, size, 1)):
        messages.append(m)
        if isinstance(m, protocol.PointStarted) and m.size == size:
            supervisor.stop()
    assert statuses(messages) == [(1, "ok"), (size, "cancelled")]
    assert messages[-1].cancelled
    assert list(protocol.rows(supervisor.run(spec(1)))) [0]["status"] == "ok"   # a fresh engine answers


def test_stop_before_the_engine_has_read_the_request_is_not_lost(supervisor):
    supervisor.arm()           # Run pressed ...
    supervisor.stop()          # ... and Stop at once, before the worker called run()
    messages = list(supervisor.run(spec(1, 1, 1)))
    assert messages[-1].cancelled
    assert len(protocol.rows(messages)) <= 1


def test_kill_minus_nine_mid_sweep_is_an_error_row_and_stop_still_works(supervisor):
    messages = []
    for m in supervisor.run(spec(1, 5, 1)):
        messages.append(m)
        if isinstance(m, protocol.PointStarted) and m.size == 5:
            os.kill(supervisor.pid(), signal.SIGKILL)
    assert statuses(messages) == [(1, "ok"), (5, "error"), (1, "ok")]
    assert "SIGKILL" in protocol.rows(messages)[1]["message"]
    supervisor.stop()          # the shared flag has no lock a killed process could have held
    supervisor.arm()
    assert protocol.rows(supervisor.run(spec(1)))[0]["status"] == "ok"


def test_close_from_another_thread_ends_a_running_sweep(supervisor):
    messages = []
    for m in supervisor.run(spec(1, 5, 1)):
        messages.append(m)
        if isinstance(m, protocol.PointStarted) and m.size == 5:
            threading.Thread(target=supervisor.close).start()
    assert messages[-1].cancelled
    assert statuses(messages) == [(1, "ok"), (5, "cancelled")]
    assert list(supervisor.run(spec(1)))[-1].cancelled      # closed: nothing more runs


def test_every_finished_point_is_journalled_before_it_is_handed_on(misbehaving, tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    journal.begin()
    journal.sweep({"workload": "misbehaving"})
    sup = Supervisor(plugins=(PLUGIN,), point_timeout_s=2.0, memory_limit=None, journal=journal)
    try:
        seen = 0
        for m in sup.run(spec(1, 2, 1)):
            if isinstance(m, protocol.PointFinished):
                seen += 1
                settings, rows = interrupted(journal.path)     # on disk already
                assert len(rows) == seen and rows[-1]["size"] == m.row["size"]
    finally:
        sup.close()
    assert settings == {"workload": "misbehaving"}
    journal.close()
    assert interrupted(journal.path) is None              # a session that ended normally


def test_a_memory_limit_turns_an_over_large_point_into_one_error_row(registry, tmp_path):
    plugin = tmp_path / "hog.py"
    plugin.write_text(
        "import numpy as np\n"
        "from workbench.catalog.workloads import Workload, register\n"
        "W = register(Workload(name='hog', title='Hog', kind='kernels', description='allocates', lesson='',\n"
        "    size_unit='GiB', default_sizes=(1,), make_inputs=lambda n, dt, v, rng: (n,),\n"
        "    reference=lambda inp: np.zeros(1), flops=lambda n: 0.0, bytes_moved=lambda n, i: 0.0,\n"
        "    footprint=lambda n, i: 0.0))\n"
        "W.implement('numpy')(lambda inputs, ctx: (lambda: np.ones(inputs[0] * 2**27)[:1] * 0))\n")
    registry.load_file(str(plugin))
    sup = Supervisor(plugins=(str(plugin),), memory_limit=2 ** 31)     # 2 GiB for the engine
    try:
        rows = protocol.rows(sup.run(SweepSpec("hog", ("numpy",), (4, 1), "float64", min_repeats=1, budget_s=0)))
    finally:
        sup.close()
    assert rows[0]["status"] == "error" and "MemoryError" in rows[0]["message"]    # 4 GiB asked
    assert rows[1]["status"] == "ok" and sup.restarts == 0                          # 1 GiB fits


def test_renew_starts_the_next_sweep_in_a_fresh_engine_and_only_that_one(supervisor):
    """A lesson about first calls needs an engine that has compiled nothing yet."""
    assert statuses(list(supervisor.run(spec(1)))) == [(1, "ok")]
    first = supervisor.pid()
    assert statuses(list(supervisor.run(spec(1)))) == [(1, "ok")] and supervisor.pid() == first
    supervisor.renew()
    messages = list(supervisor.run(spec(1)))
    assert statuses(messages) == [(1, "ok")] and not any(isinstance(m, protocol.EngineDied) for m in messages)
    renewed = supervisor.pid()
    assert renewed != first and supervisor.restarts == 0      # asked for: not counted as a crash
    list(supervisor.run(spec(1)))
    assert supervisor.pid() == renewed
