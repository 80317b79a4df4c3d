"""A backend that needs an engine process of its own (cudf-pandas: cuDF's pandas accelerator must be
installed before pandas is imported), on the CPU machine: fake backends whose sessions name their process
(tests/plugins/dedicated.py), and the CPU-side facts of the cudf-pandas backend."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.catalog import backends
from workbench.measure import protocol, sessions
from workbench.measure.gpu import cudf_pandas
from workbench.measure.engine import SweepSpec
from workbench.measure.supervisor import Supervisor

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


# The cudf-pandas backend, as far as a machine without cuDF can see it -----------------------------

FRAMES = ("groupby", "merge", "filter", "sort")


@pytest.mark.parametrize("name", FRAMES)
def test_cudf_pandas_runs_the_pandas_implementation_unchanged(name):
    from workbench.catalog.workloads import REGISTRY
    w = REGISTRY.get(name)
    assert w.implementations["cudf-pandas"].factory.pandas_factory is w.implementations["pandas"].factory
    assert w.backends.index("cudf") < w.backends.index("cudf-pandas")     # one engine switch per size


@pytest.mark.parametrize("name", FRAMES)
def test_cudf_pandas_moves_its_frames_in_h2d_and_its_result_back_in_d2h(name, monkeypatch):
    """Its end-to-end pays for the frames going to the GPU and the result coming back, as cuDF's
    does: the pandas code runs on frames made in h2d from host columns, and d2h hands back a host
    object. Here plain pandas stands in for the accelerator; the host copy is taken once, untimed."""
    import numpy as np
    import pandas as pd
    from workbench.catalog import accelerated as cudf_pandas      # where the factory looks real_pandas up
    from workbench.catalog.workloads import REGISTRY
    copies = []

    def host_copy(x):                        # what real_pandas does with cudf.pandas's proxies
        copies.append(x)
        return tuple(f.copy() for f in x) if isinstance(x, tuple) else x.copy()
    monkeypatch.setattr(cudf_pandas, "real_pandas", host_copy)
    w = REGISTRY.get(name)
    inputs = w.make_inputs(5000, np.dtype("float32"), "", np.random.default_rng(1))
    phases = w.implementations["cudf-pandas"].factory(inputs, None)
    assert phases.h2d is not None and phases.d2h is not None and len(copies) == 1
    with pytest.raises(KeyError):
        phases.compute()                     # nothing on the device before h2d
    phases.h2d()
    phases.compute()
    out = phases.d2h()
    assert len(copies) == 2 and isinstance(out, (pd.DataFrame, pd.Series))
    assert w.relative_error(out, w.reference(inputs)) <= w.tolerance["float32"]
    phases.close()
    with pytest.raises(KeyError):
        phases.compute()


def test_cudf_pandas_asks_for_an_engine_prepared_with_the_accelerator():
    assert backends.engine_of("cudf-pandas") == "cudf-pandas"
    assert sessions.preparation("cudf-pandas") is cudf_pandas.install
    assert all(backends.engine_of(b) == "" for b in backends.BACKENDS if b != "cudf-pandas")
    assert backends.is_gpu("cudf-pandas")


def test_cudf_pandas_says_why_it_cannot_run_here_like_the_other_gpu_backends():
    cudf, accelerated = backends.probe("cudf"), backends.probe("cudf-pandas")
    if cudf.usable:
        pytest.skip("cuDF is installed here")
    assert not accelerated.usable and accelerated.reason
    assert accelerated.reason == cudf.reason                      # the same library is missing


def test_the_fallback_note_counts_calls_and_names_what_fell_back():
    from workbench.measure.gpu.cudf_pandas import fallback_note
    assert fallback_note({"DataFrame.groupby": {"gpu": [0.1]}, "GroupBy.mean": {"gpu": [0.2], "cpu": []}}) == \
        "cudf.pandas: 2 pandas calls on the GPU, none fell back to the CPU"
    note = fallback_note({"DataFrame.merge": {"gpu": [], "cpu": [0.5, 0.4]}, "DataFrame.__getitem__": {"gpu": [1e-3]}})
    assert note.startswith("cudf.pandas: 1 pandas call on the GPU, 2 fell back to the CPU (DataFrame.merge)")
    assert fallback_note({}) == "cudf.pandas: the profiler saw no pandas call"


def test_a_session_note_goes_into_the_rows_message(registry, monkeypatch):
    """Session.diagnose (cudf.pandas: where the calls ran) after the timing, into the row."""
    from helpers import synthetic
    from workbench.measure.engine import run_sweep
    from workbench.measure.cpu import CpuSession
    calls = []
    monkeypatch.setattr(CpuSession, "diagnose", lambda self, compute: calls.append(compute()) or "ran twice",
                        raising=False)
    w = registry.add(synthetic())
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
    (row,) = protocol.rows(run_sweep(SweepSpec("synthetic", ("numpy",), (8,), "float64", min_repeats=1,
                                               budget_s=0.0)))
    assert row["status"] == "ok" and row["message"] == "ran twice" and len(calls) == 1


def test_the_cli_refuses_cudf_pandas_where_it_cannot_run_and_leaves_it_out_by_default():
    import subprocess
    import sys
    if backends.probe("cudf-pandas").usable:
        pytest.skip("cudf.pandas is usable here")
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", "-w", "groupby", "-b", "pandas,cudf-pandas",
                           "-s", "1000"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "backend cudf-pandas is not usable here:" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", "-w", "groupby", "-s", "1000", "-r", "1",
                           "--budget", "0", "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "cudf-pandas" not in proc.stdout and " ok" in proc.stdout
