"""GPU backends on a real GPU, after tests/test_gpu.py (collected after it, and sliced with it by
benchmarks/gpu_check.sh): the memory wall under a real cap, then cuDF, which changes the allocators
of the whole process, and the pipeline's GPU stacks (cuDF, CuPy and Numba CUDA in one process).
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from test_gpu import (FRAME_CASES, alternating_rounds, assert_same_as_alone, check, in_a_worker_thread, need,
                      rows_of, sweep, usable_gpu_backends)
from workbench.measure import protocol
from workbench.measure.engine import SweepSpec
from workbench.catalog.workloads import REGISTRY

pytestmark = pytest.mark.gpu


# The memory wall: a real cap on a large GPU -------------------------------------------------------

MIB = 2 ** 20
# source_terms on cupy-fused and numba-cuda holds exactly three arrays of N (two inputs, the result):
# 3 x 16 MiB fit under the cap at 2^22 float32 and 2^21 float64; twice that does not.
WALL_CAP = 3 * 16 * MIB + MIB
WALL_SIZES = (2 ** 20, 2 ** 21, 2 ** 22, 2 ** 23, 2 ** 24, 2 ** 20)


def wall_rows(backend: str, dtype: str) -> list[dict]:
    return rows_of(SweepSpec("source_terms", (backend,), WALL_SIZES, dtype, min_repeats=2, budget_s=0.0,
                             device_memory_limit=WALL_CAP))


def assert_wall_moves_by_two(backend: str) -> None:
    from workbench.results import rows as results
    from workbench.measure.gpu.cap import OUT_OF_DEVICE_MEMORY
    walls = {}
    for dtype in ("float32", "float64"):
        rows = wall_rows(backend, dtype)
        walls[dtype] = results.memory_walls(results.to_frame(rows))[(backend, "")]
        for row in rows:
            if row["size"] < walls[dtype]:
                assert row["status"] == "ok", (dtype, row["size"], row["message"])
            else:
                assert row["status"] == "error" and row["message"].startswith(OUT_OF_DEVICE_MEMORY), row["message"]
                assert "the cap is 49 MiB" in row["message"], row["message"]
        assert rows[-1]["status"] == "ok"          # memory given back after the wall: the sweep goes on
    assert walls == {"float32": 2 ** 23, "float64": 2 ** 22}


@pytest.mark.parametrize("backend", ["cupy-fused", "numba-cuda"])
def test_the_memory_wall_moves_by_two_from_float32_to_float64(backend):
    need(backend)
    assert_wall_moves_by_two(backend)
    if backend.startswith("cupy"):
        import cupy as cp
        pool = cp.get_default_memory_pool()
        assert pool.get_limit() == 0                 # the cap held for the points only
        assert pool.used_bytes() == 0


def test_free_device_memory_is_read_without_a_context():
    from workbench.core import driver
    need("cupy")
    free, props = driver.free_memory(), driver.properties(0)
    assert free is not None and 0 < free <= props.memory_bytes


# cuDF last: it changes the allocators of the whole process --------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("workload,backend", FRAME_CASES)
def test_cudf_point_is_verified(workload, backend, dtype):
    need("cudf")
    rows = sweep(workload, backend, dtype, sizes=(1000, 100_000))
    check(rows, workload, dtype)
    assert all(r["h2d_s"] > 0 and r["d2h_s"] > 0 for r in rows)
    assert all(r["peak_device_bytes"] > 0 for r in rows)


def test_cudf_in_a_worker_thread():
    need("cudf")
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("rows", sweep("groupby", "cudf", "float32")))
    t.start()
    t.join(timeout=300)
    check(box["rows"], "groupby", "float32")


def test_cupy_memory_is_read_through_rmm_once_cudf_is_loaded():
    need("cudf")
    import cudf  # noqa: F401
    (row,) = sweep("source_terms", "cupy", "float32", sizes=(2 ** 22,))
    assert row["status"] == "ok"
    assert 3 * 4 * 2 ** 22 <= row["peak_device_bytes"] <= 6 * 4 * 2 ** 22


def test_the_memory_wall_under_rmm_once_cudf_is_loaded():
    """cuDF's import makes RMM the allocator of CuPy: the cap is then RMM's limiting adaptor."""
    need("cudf")
    import cudf  # noqa: F401
    import rmm.mr
    assert_wall_moves_by_two("cupy-fused")
    current = rmm.mr.get_current_device_resource()
    inner = current.get_upstream() if isinstance(current, rmm.mr.StatisticsResourceAdaptor) else current
    assert not isinstance(inner, rmm.mr.LimitingResourceAdaptor)       # lifted after the sweep


def test_cudf_runs_into_the_cap_and_a_sweep_without_one_does_not():
    need("cudf")
    from workbench.measure.gpu.cap import OUT_OF_DEVICE_MEMORY
    big = 4_000_000           # 96 MB of frame in float64: past a 64 MiB cap as soon as it is uploaded
    capped = sweep("groupby", "cudf", "float64", sizes=(10_000, big, 10_000), device_memory_limit=64 * MIB)
    assert [r["status"] for r in capped] == ["ok", "error", "ok"], [r["message"] for r in capped]
    assert capped[1]["message"].startswith(OUT_OF_DEVICE_MEMORY) and "64 MiB" in capped[1]["message"]
    assert capped[0]["peak_device_bytes"] > 0           # RMM's statistics still see under the cap
    (free,) = sweep("groupby", "cudf", "float64", sizes=(big,))
    assert free["status"] == "ok", free["message"]


@pytest.mark.parametrize("workload", ("groupby", "merge", "filter", "sort"))
def test_a_dataframe_workload_with_pandas_cudf_and_cudf_pandas_in_one_sweep(workload):
    """cudf-pandas runs in an engine process of its own (cudf.pandas installed before pandas), the
    others in the shared one; every point verified against pandas's float64 reference; cudf-pandas,
    like cudf, pays for moving its frames to the GPU and its result back (pandas in, pandas out)."""
    need("cudf")
    need("cudf-pandas")
    from workbench.measure.supervisor import Supervisor
    sizes = (10_000, 1_000_000)
    backends = ("pandas", "cudf", "cudf-pandas")
    engine = Supervisor()
    try:
        messages = list(engine.run(SweepSpec(workload, backends, sizes, "float32", min_repeats=3, budget_s=0.0)))
    finally:
        engine.close()
    rows = protocol.rows(messages)
    assert [(r["size"], r["backend"]) for r in rows] == [(s, b) for s in sizes for b in backends]
    for row in rows:
        assert row["status"] == "ok" and row["verified"], (row["backend"], row["size"], row["message"])
        assert row["max_rel_error"] <= REGISTRY.get(workload).tolerance["float32"]
    accel = {r["size"]: r for r in rows if r["backend"] == "cudf-pandas"}
    for row in accel.values():
        assert row["device"].startswith("GPU") and row["peak_device_bytes"] > 0
        assert row["message"].startswith("cudf.pandas:") and "on the GPU" in row["message"], row["message"]
        assert row["h2d_s"] > 0 and row["d2h_s"] > 0, (row["h2d_s"], row["d2h_s"])
        assert row["total_median_s"] >= row["compute_median_s"]
    # Which of them is faster is not asserted, not even of the call alone: with three samples a
    # point, cudf.pandas's group-by of 1M rows took 11.3 ms against pandas's 15.8 ms in one run on
    # the H200, and under half of it in the run before (this test passed there), same tree (2026-12-04). Where
    # it ran is what is asserted above: the GPU, in device memory, moving its frames there and back.
    assert engine.restarts == 0 and not [m for m in messages if isinstance(m, protocol.EngineFailed)]


# The pipeline's GPU stacks (cuDF, CuPy and Numba CUDA in one process) ------------------------------

PIPELINE_GPU = ("gpu-zero-copy", "gpu-round-trips")


def _hand_offs(row) -> float:
    from workbench.results.rows import decode_stages
    return sum(s for name, s in decode_stages(row["stages"]).items() if "->" in name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("backend", PIPELINE_GPU)
def test_pipeline_gpu_is_verified(backend, dtype):
    """Both GPU stacks agree with the CPU pipeline's float64 reference at two sizes, every stage timed."""
    need(backend)
    from workbench.results.rows import decode_stages
    from workloads.pipeline import STAGES
    rows = sweep("pipeline", backend, dtype, sizes=(10_000, 200_000))
    check(rows, "pipeline", dtype)
    for row in rows:
        stages = decode_stages(row["stages"])
        assert tuple(stages) == STAGES and all(s > 0 for s in stages.values())
        assert sum(stages.values()) <= row["compute_median_s"]


def test_zero_copy_hand_offs_share_device_memory():
    """cuDF -> CuPy -> Numba CUDA -> cuDF are views of one buffer; the round-trip stack makes copies."""
    need("gpu-zero-copy")
    import cudf
    import numpy as np
    from workloads import pipeline

    def address(obj) -> int:
        return obj.__cuda_array_interface__["data"][0]

    column = cudf.Series(np.arange(1000, dtype=np.float64))
    zero = pipeline._gpu_stack(np.dtype(np.float64), zero_copy=True)
    as_array = zero.to_array(column)
    as_kernel = zero.to_kernel(as_array)
    back = zero.to_frame(as_kernel)
    assert address(as_array) == address(as_kernel) == address(back) == address(column)
    assert back.to_numpy().tolist() == list(range(1000))
    trips = pipeline._gpu_stack(np.dtype(np.float64), zero_copy=False)
    copied = trips.to_array(column)
    assert address(copied) != address(column)
    assert address(trips.to_frame(trips.to_kernel(copied))) != address(copied)


def test_zero_copy_pipeline_beats_round_trips():
    """At 2^24 rows the host round trips cost more than the views, in the hand-offs and end to end
    (the whole pipeline: medians of back-to-back runs, both stacks in one sweep)."""
    need("gpu-zero-copy")
    spec = SweepSpec("pipeline", PIPELINE_GPU, (2 ** 24,), "float32", min_repeats=7, budget_s=0.0)
    rows = {r["backend"]: r for r in rows_of(spec)}
    assert all(r["status"] == "ok" for r in rows.values()), {b: r["message"] for b, r in rows.items()}
    zero, trips = rows["gpu-zero-copy"], rows["gpu-round-trips"]
    assert _hand_offs(zero) < _hand_offs(trips), (zero["stages"], trips["stages"])
    assert zero["compute_median_s"] < trips["compute_median_s"], (zero["stages"], trips["stages"])


def test_pipeline_in_a_worker_thread():
    """cuDF, CuPy and Numba CUDA state is per thread: the zero-copy stack must work off the main thread."""
    need("gpu-zero-copy")
    rows = in_a_worker_thread(lambda: sweep("pipeline", "gpu-zero-copy", "float32", sizes=(10_000,)))
    check(rows, "pipeline", "float32")


def test_mixed_sweeps_stay_true_once_cudf_has_taken_over_the_allocators():
    need("cudf")
    import cudf  # noqa: F401 - RMM is now the allocator of CuPy and Numba in this process
    got = alternating_rounds("source_terms", usable_gpu_backends("source_terms"), rows_of)
    for order in ("forward", "reversed"):
        assert_same_as_alone(got[order], got["alone"])
