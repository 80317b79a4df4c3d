"""The command line, run as a user runs it: in a subprocess, reading exit status and output."""
from __future__ import annotations
from workbench.results import files as result_files

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest


def cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_list_says_what_is_usable_and_why_not():
    proc = cli("list")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for name in ("matmul", "fft", "source_terms", "flux", "reduction", "stencil", "divergence", "transfer",
                 "groupby", "merge", "filter", "sort", "spmv", "pipeline"):
        assert f"  {name} " in out
    assert "numpy" in out and "usable" in out
    for line in out.splitlines():
        if line.strip().startswith(("cupy ", "numba-cuda ", "cudf ")):
            assert "usable" in line      # usable here, or "not usable: <reason>"
            if "not usable" in line:
                assert line.split("not usable:")[1].strip()


def test_without_a_gpu_a_missing_gpu_library_names_the_missing_gpu_not_an_extra(monkeypatch):
    """A CPU-only user is told what runs here, not sent to install CUDA packages that cannot run."""
    from workbench.catalog import backends
    from workbench.core import driver
    monkeypatch.setattr(backends, "_installed", lambda module: module == "numpy")
    monkeypatch.setattr(driver, "ask", lambda: driver.DriverInfo(error="no NVIDIA driver: libcuda.so.1 was not found"))
    backends.forget_probes()
    try:
        assert backends.probe("cupy", deep=False).reason == \
            "no NVIDIA GPU (no NVIDIA driver: libcuda.so.1 was not found)"
        monkeypatch.setattr(driver, "ask", lambda: driver.DriverInfo(device_count=1, cuda_version=(12, 8)))
        backends.forget_probes()
        assert backends.probe("cupy", deep=False).reason.endswith("(install the cuda12 or cuda13 extra)")
    finally:
        backends.forget_probes()


def test_list_on_a_machine_without_a_usable_gpu_backend_says_what_runs_here():
    out = cli("list").stdout
    gpu_lines = [ln for ln in out.splitlines() if re.match(r"  \S+ +gpu ", ln)]
    if any("not usable" not in ln for ln in gpu_lines):
        pytest.skip("a GPU backend is usable here")
    assert "This machine runs the CPU backends (numpy, numba" in out and "need an NVIDIA GPU" in out


def test_info_prints_the_environment():
    proc = cli("info")
    assert proc.returncode == 0
    for key in ("cpu:", "memory_bytes:", "os:", "python:", "libraries:", "numpy:", "blas:", "gpus:"):
        assert key in proc.stdout


def test_run_prints_a_table_and_writes_csv_and_json(tmp_path):
    csv = tmp_path / "out.csv"
    proc = cli("run", "--workload", "source_terms", "--backends", "numpy,numba", "--sizes", "2^8:2^10",
               "--dtype", "float64", "--repeats", "3", "--budget", "0", "--out", str(csv))
    assert proc.returncode == 0, proc.stderr
    assert "end-to-end" in proc.stdout and proc.stdout.count(" ok") == 6
    frame = pd.read_csv(csv)                       # plain pandas: no comment lines to skip
    assert sorted(frame["size"].unique()) == [256, 512, 1024]
    assert set(frame["backend"]) == {"numpy", "numba"} and (frame["status"] == "ok").all()
    assert (frame["repeats"] >= 3).all()
    meta = json.loads((tmp_path / "out.meta.json").read_text())
    assert "libraries" in meta["environment"] and meta["settings"]["min_repeats"] == 3
    proc = cli("run", "-w", "source_terms", "-b", "numpy", "-s", "2^10", "-r", "1", "--budget", "0", "--in-process",
               "-o", str(tmp_path / "here.json"))
    assert proc.returncode == 0 and json.loads((tmp_path / "here.json").read_text())["environment"]["limits"]
    # The limits every point was checked against, measured in the engine process, not this one's empty list.
    (cpu,) = meta["environment"]["limits"]
    assert cpu["device"] == frame["device"].iloc[0] and cpu["copy_gbps"] > 0
    assert frame["gbps_limit"].max() <= max(cpu["bandwidth_gbps_by_bytes"].values()) + 0.1
    assert meta["settings"]["dtype"] == "float64" and meta["settings"]["budget_s"] == 0
    js = tmp_path / "out.json"
    proc = cli("run", "-w", "groupby", "-b", "pandas", "-s", "1000", "-r", "1", "--budget", "0", "-o", str(js))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(js.read_text())
    assert data["rows"][0]["status"] == "ok" and "libraries" in data["environment"]
    assert data["schema"] == result_files.SCHEMA and data["settings"]["workload"] == "groupby"


@pytest.mark.parametrize("workload,cpu_backends", [("spmv", {"scipy", "numba"}), ("pipeline", {"cpu-stack"})])
def test_new_workloads_run_their_cpu_backends_without_being_told(tmp_path, workload, cpu_backends):
    """Without --backends every usable backend runs: on a machine without a GPU, the CPU ones."""
    from workbench.catalog.backends import BACKENDS
    from workbench.results.rows import decode_stages
    from workbench.results.files import load
    csv = tmp_path / "out.csv"
    proc = cli("run", "-w", workload, "-s", "1000,4096", "-d", "float64", "-r", "1", "--budget", "0",
               "-q", "-o", str(csv))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    frame, _ = load(csv)
    ran = set(frame["backend"])
    assert cpu_backends <= ran and (frame["status"] == "ok").all()
    assert all(BACKENDS[b].device == "gpu" for b in ran - cpu_backends)   # GPU ones only where usable
    if workload == "pipeline":
        assert "Where a typical repeat's compute went" in proc.stdout
        assert all(decode_stages(s) for s in frame["stages"])


@pytest.mark.parametrize("args,expect", [
    (["run", "-w", "nope"], "valid: matmul"),
    (["run", "-w", "matmul", "-b", "numpy,warp"], "valid: numpy"),
    (["run", "-w", "fft", "-b", "numba"], "it runs on: numpy"),
    (["run", "-w", "matmul", "-b", "numpy", "-s", "abc"], "cannot read 'abc'"),
    (["run", "-w", "matmul", "-b", "numpy", "-s", "0"], "must be positive"),
    (["run", "-w", "matmul", "-b", "numpy", "-s", "-64"], "size"),
    (["run", "-w", "matmul", "-b", "numpy", "-s", "64:8"], "above its end"),
    (["run", "-w", "matmul", "-b", "numpy", "-d", "float16"], "use one of: float32, float64"),
    (["run", "-w", "matmul", "-b", "numpy", "-s", "2^20"], "GiB is available"),
    (["run", "-w", "matmul", "-b", "numpy", "-o", "x.txt"], ".csv or .json"),
    (["run", "-w", "divergence", "-b", "numpy", "--variants", "reversed"], "valid: random, sorted"),
    (["run", "-w", "matmul", "-b", "numpy", "--device-memory-limit", "8XB"], "--device-memory-limit: cannot read '8XB'"),
    (["run", "-w", "matmul", "-b", "numpy", "--device-memory-limit", "0"], "no memory at all"),
    (["run"], "required: --workload"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_refused_in_one_line(args, expect):
    proc = cli(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-workbench: error:")
    assert expect in lines[0], lines[0]


def test_memory_refusal_names_both_figures():
    proc = cli("run", "-w", "source_terms", "-b", "numpy", "-s", "2^40")
    line = proc.stderr.strip()
    assert proc.returncode == 2 and "needs about" in line and "is available" in line
    assert line.count("GiB") + line.count("TiB") == 2


def test_a_failed_point_gives_exit_status_1(tmp_path):
    plugin = tmp_path / "broken.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        from workbench.catalog.workloads import Workload, register
        W = register(Workload(name="broken", title="Broken", kind="kernels", description="wrong on purpose",
                              lesson="none", size_unit="elements", default_sizes=(8,),
                              make_inputs=lambda n, dt, v, rng: (np.ones(n, dt),),
                              reference=lambda inp: inp[0].astype(np.float64),
                              flops=lambda n: n, bytes_moved=lambda n, i: n * i, footprint=lambda n, i: n * i))
        W.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] + 1))
    """))
    proc = cli("--plugin", str(plugin), "run", "-w", "broken", "-b", "numpy", "-s", "8", "-r", "1", "--budget", "0")
    assert proc.returncode == 1
    assert "wrong" in proc.stdout and "exceeds the float32 tolerance" in proc.stdout


def test_the_memory_wall_is_announced_then_met_and_the_sweep_goes_on(tmp_path):
    """The fake device of tests/plugins/fake_device.py holds three buffers of N float64 per point:
    2^14 needs 384 KiB, past a 200 KiB cap."""
    import os
    from pathlib import Path
    from workbench.results.files import load
    tests = Path(__file__).parent
    csv = tmp_path / "wall.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "--plugin", str(tests / "plugins" / "fake_device.py"), "run", "-w",
         "fake_memory", "-b", "fake-a,fake-cpu", "-s", "1024,16384,2048", "-d", "float64", "-r", "1", "--budget", "0",
         "-q", "--device-memory-limit", "200KiB", "-o", str(csv)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(tests)})
    assert proc.returncode == 1, proc.stderr            # a point failed: the one past the wall
    notes = [ln for ln in proc.stderr.splitlines() if ln.startswith("gpu-workbench: note:")]
    assert len(notes) == 1 and "2^14 (about 384 KiB)" in notes[0] and "200 KiB cap" in notes[0]
    assert "device memory capped at 200 KiB" in proc.stdout
    frame, _ = load(csv)
    status = {(r.backend, r.size): r.status for r in frame.itertuples()}
    assert status == {("fake-a", 1024): "ok", ("fake-cpu", 1024): "ok", ("fake-a", 16384): "error",
                      ("fake-cpu", 16384): "ok", ("fake-a", 2048): "ok", ("fake-cpu", 2048): "ok"}
    assert frame[frame["status"] == "error"]["message"].iloc[0].startswith("out of device memory")
    meta = json.loads((tmp_path / "wall.meta.json").read_text())
    assert meta["settings"]["device_memory_limit"] == 200 * 1024


def test_lesson_without_a_name_lists_the_lessons():
    proc = cli("lesson")
    assert proc.returncode == 0, proc.stderr
    for name in ("small-problems", "transfers", "first-call", "float32-float64", "divergence", "kernel-style",
                 "memory-wall", "pipeline", "dataframes"):
        assert f"  {name} " in proc.stdout


def test_an_unknown_lesson_is_one_line_and_exit_2():
    proc = cli("lesson", "warp-speed")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown lesson 'warp-speed'" in proc.stderr
    assert "small-problems" in proc.stderr


def test_a_lesson_runs_what_it_can_and_says_it_with_the_numbers(tmp_path):
    from workbench.catalog.backends import probe
    csv, svg = tmp_path / "lesson.csv", tmp_path / "lesson.svg"
    proc = cli("lesson", "small-problems", "--sizes", "2^10,2^14", "-r", "1", "--budget", "0", "-q",
               "--out", str(csv), "--chart", str(svg), "--kind", "speedup")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("Lesson: Small problems lose; the break-even size")
    assert re.search(r"Measured here: (as|not as) the lesson says\.", out)
    frame = pd.read_csv(csv)
    assert {"numpy", "numba"} <= set(frame["backend"]) and sorted(frame["size"].unique()) == [1024, 16384]
    meta = json.loads((tmp_path / "lesson.meta.json").read_text())
    told = meta["settings"]["lesson"]
    assert told["name"] == "small-problems" and told["statement"]
    assert meta["environment"]["limits"] and meta["environment"]["limits"][0]["copy_gbps"] > 0
    printed = " ".join(line[2:].strip() for line in out.splitlines() if line.startswith(("- ", "  ")))
    assert told["statement"] in " ".join(printed.split())          # what was printed is what was kept
    if not probe("cupy").usable:
        assert "No GPU backend could run here. On a GPU: cupy and numba-cuda lose to numpy" in out
        assert "Not run: cupy" in out
    assert "Lesson: Small problems lose" in svg.read_text()          # the chart's caption


def test_a_lesson_of_two_runs_labels_each_and_a_bad_size_is_refused(tmp_path):
    proc = cli("lesson", "float32-float64", "--sizes", "2^10", "-r", "1", "--budget", "0", "-q",
               "--out", str(tmp_path / "p.csv"))
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(tmp_path / "p.csv", keep_default_na=False)
    assert set(frame["variant"]) == {"float32", "float64"} and set(frame["dtype"]) == {"float32", "float64"}
    assert "numpy: float64 took" in proc.stdout
    proc = cli("lesson", "divergence", "--sizes", "zero")
    assert proc.returncode == 2 and "--sizes" in proc.stderr


def test_an_engines_record_is_merged_over_the_callers_keeping_every_devices_limits():
    from workbench.measure.environment import merged
    mine = {"cpu": "here", "limits": [{"device_id": "cpu-1", "copy_gbps": 20.0}]}
    engine = {"cpu": "there", "libraries": {"cupy": "14"}, "limits": [{"device_id": "gpu-0", "copy_gbps": 4000.0},
                                                                       {"device_id": "cpu-1", "copy_gbps": 21.0}]}
    got = merged(mine, engine)
    assert got["cpu"] == "there" and got["libraries"] == {"cupy": "14"}
    assert [x["device_id"] for x in got["limits"]] == ["cpu-1", "gpu-0"]          # each device once
    assert merged(got, {"limits": []})["limits"] == got["limits"]                 # a second engine's empty list
    assert got["limits"][0]["copy_gbps"] == 21.0                                  # the engine's newer figure
    assert merged({"numba_threading_layer": "omp"}, {"numba_threading_layer": ""})["numba_threading_layer"] == "omp"


@pytest.mark.parametrize("selector,expected", [("forksafe", ("tbb", "workqueue")), ("threadsafe", ("tbb", "omp")),
                                               ("omp", ("omp",)), ("workqueue", ("workqueue",))])
def test_the_numba_layer_is_named_as_numba_chooses_it(selector, expected):
    """A fresh process with a Numba selector and no parallel loop run yet, then after one: the layer."""
    code = ("import numba, numba.np.ufunc\n"
            "from workbench.measure.environment import numba_threading_layer as f\n"
            "before = f()\n"
            "@numba.njit(parallel=True)\n"
            "def g(a):\n    return a.sum()\n"
            "import numpy as np; g(np.ones(10)); print(before, f(), numba.threading_layer())")
    env = {**os.environ, "NUMBA_THREADING_LAYER": selector}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    before, after, actual = proc.stdout.split()
    assert after == actual and before in expected and actual in expected


def _result_file(path, rows_by_backend, bound=""):
    """A saved result set: each backend's rows at sizes 2^10 and 2^12, with +-1 % intervals."""
    from helpers import measured
    from workbench.results import rows as results
    rows = [measured(workload="source_terms", backend=b, device="CPU: Test", size=s, dtype="float32",
                     total_median_s=t, compute_median_s=t, status="ok", bound=bound)
            for b, times in rows_by_backend.items() for s, t in zip((1024, 4096), times)]
    result_files.save(results.to_frame(rows), path, {"host": "test"})
    return path


def test_compare_prints_each_points_verdict_and_json_lists_them(tmp_path):
    base = _result_file(tmp_path / "base.json", {"numpy": [1e-3, 2e-3], "numba": [1e-3, 2e-3]})
    new = _result_file(tmp_path / "new.csv", {"numpy": [1.3e-3, 2e-3], "numba": [0.7e-3, 2.01e-3]})
    proc = cli("compare", str(base), str(new))
    assert proc.returncode == 0, proc.stderr
    lines = {tuple(line.split()[1:3]): line for line in proc.stdout.splitlines() if line.startswith("source_terms")}
    assert lines[("numpy", "1024")].rstrip().endswith("slower")
    assert lines[("numba", "1024")].rstrip().endswith("faster")
    assert lines[("numpy", "4096")].rstrip().endswith("same") and lines[("numba", "4096")].rstrip().endswith("same")
    assert "1 faster, 1 slower, 2 same, 0 undecided" in proc.stdout
    proc = cli("compare", str(base), str(new), "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert {(r["backend"], r["size"], r["verdict"]) for r in found} == {
        ("numpy", 1024, "slower"), ("numba", 1024, "faster"), ("numpy", 4096, "same"), ("numba", 4096, "same")}
    for r in found:
        assert {"workload", "backend", "size", "dtype", "variant", "verdict", "ratio"} <= set(r)
    slower = next(r for r in found if r["verdict"] == "slower")
    assert slower["ratio"] == pytest.approx(1.3) and slower["ratio_lo"] < 1.3 < slower["ratio_hi"]


def test_compare_refuses_a_bad_file_and_a_bad_effect_in_one_line(tmp_path):
    base = _result_file(tmp_path / "base.json", {"numpy": [1e-3, 2e-3]})
    proc = cli("compare", str(base), str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    proc = cli("compare", str(base), str(base), "--min-effect", "150")
    assert proc.returncode == 2 and "between 0 and 100" in proc.stderr


def test_compare_says_where_what_bounds_a_point_changed(tmp_path):
    """A change of bound is the reason behind a verdict worth saying (issue 29); none is said
    against a file from before bounds were kept."""
    base = _result_file(tmp_path / "base.json", {"numpy": [1e-3, 2e-3]}, bound="memory (L3)")
    new = _result_file(tmp_path / "new.json", {"numpy": [2e-3, 2e-3]}, bound="memory (main memory)")
    older = _result_file(tmp_path / "older.json", {"numpy": [2e-3, 2e-3]})
    proc = cli("compare", str(base), str(new))
    assert proc.returncode == 0, proc.stderr
    assert "numpy at 1024: bound by memory (L3) in BASE, by memory (main memory) in NEW" in proc.stdout
    proc = cli("compare", str(base), str(older))
    assert proc.returncode == 0 and "bound by" not in proc.stdout
