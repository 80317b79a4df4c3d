"""GPU backends on a real GPU: every workload, both dtypes, main thread and a worker thread.

Marked ``gpu``: skipped, with the reason, where no GPU is usable (CI). Run on the
accelerator machine before GPU work is called done (docs/GPU.md says how).
cuDF tests come last in this file: importing cuDF makes RMM the allocator of
CuPy and Numba for the rest of the process.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from workbench.backends import probe
from workbench.engine import PointFinished, SweepSpec, run_sweep
from workbench.registry import REGISTRY

pytestmark = pytest.mark.gpu

ARRAY_GPU = ("cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4")
SMALL = {"matmul": (16, 67), "fft": (64, 1000), "transfer": (4096, 10_000), "stencil": (16, 45),
         "flux": (16, 45)}
ARRAY_CASES = [(w.name, b) for w in REGISTRY.all() for b in w.backends if b in ARRAY_GPU]
FRAME_CASES = [(w.name, "cudf") for w in REGISTRY.all() if "cudf" in w.backends]


def need(backend: str) -> None:
    a = probe(backend)
    if not a.usable:
        pytest.skip(f"{backend} not usable here: {a.reason}")


def sweep(workload, backend, dtype, sizes=None, **kw):
    spec = SweepSpec(workload, (backend,), sizes or SMALL.get(workload, (100, 5000)), dtype,
                     min_repeats=kw.pop("min_repeats", 2), budget_s=0.0, **kw)
    return [e.row for e in run_sweep(spec) if isinstance(e, PointFinished)]


def check(rows, workload, dtype):
    assert rows
    for row in rows:
        assert row["status"] == "ok", f"{row['backend']} {row['size']}: {row['message']}"
        assert row["max_rel_error"] <= REGISTRY.get(workload).tolerance[dtype]
        assert row["device"].startswith("GPU")
        assert row["compute_q1_s"] <= row["compute_median_s"] <= row["compute_q3_s"]
        # Totals come from end-to-end repeats, compute from back-to-back ones: separate samples.
        assert row["total_median_s"] > 0 and row["h2d_s"] > 0 and row["d2h_s"] > 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("workload,backend", ARRAY_CASES)
def test_gpu_point_is_verified(workload, backend, dtype):
    need(backend)
    check(sweep(workload, backend, dtype), workload, dtype)


@pytest.mark.parametrize("workload,backend", ARRAY_CASES)
def test_gpu_point_in_a_worker_thread(workload, backend):
    """The GUI runs the engine in a thread that is not the main one; GPU objects are per thread."""
    need(backend)
    box = {}

    def work():
        try:
            box["rows"] = sweep(workload, backend, "float32")
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=300)
    assert not t.is_alive()
    assert "error" not in box, box.get("error")
    check(box["rows"], workload, "float32")


def test_availability_of_array_backends():
    for name in ("cupy", "numba-cuda"):
        a = probe(name)
        assert a.usable, a.reason
        assert a.version


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
def test_device_memory_is_read_and_released(backend):
    need(backend)
    n = 2 ** 22
    (row,) = sweep("source_terms", backend, "float32", sizes=(n,))
    # Two inputs and one output of 16 MiB each live on the device during the point.
    assert 3 * 4 * n <= row["peak_device_bytes"] <= 6 * 4 * n
    if backend == "cupy":
        import cupy as cp
        assert cp.get_default_memory_pool().used_bytes() == 0
        assert cp.get_default_memory_pool().total_bytes() == 0     # released between points


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
def test_pinned_transfers_beat_pageable(backend):
    need(backend)
    rows = {hm: sweep("transfer", backend, "float32", sizes=(2 ** 26,), host_memory=hm, min_repeats=5)[0]
            for hm in ("pageable", "pinned")}
    for hm, row in rows.items():
        assert row["status"] == "ok" and row["host_memory"] == hm
        assert row["h2d_s"] > 0 and row["d2h_s"] > 0
    assert rows["pinned"]["h2d_s"] < rows["pageable"]["h2d_s"]


def test_first_call_carries_compilation():
    need("numba-cuda")
    from workloads import divergence
    divergence._numba_cuda_kernel.cache_clear()     # a new dispatcher: the first call compiles
    (row,) = sweep("divergence", "numba-cuda", "float64", sizes=(1000,), variants=("random",))
    assert row["first_call_s"] > 10 * row["total_median_s"]


def test_broken_library_is_reported_not_crashed(monkeypatch):
    """A library that imports but cannot compute (numba-cuda 0.30 under NumPy 2.5) is caught by
    the child-process probe and reported with the library's own error."""
    from workbench import backends
    monkeypatch.setitem(backends._PROBES, "numba.cuda",
                        "raise AttributeError(\"module 'numpy' has no attribute 'row_stack'\")")
    backends._probe_cached.cache_clear()
    backends._deep_probe_once.cache_clear()
    try:
        a = backends.probe("numba-cuda")
        assert not a.usable
        assert a.reason.startswith("installed but broken") and "row_stack" in a.reason
    finally:
        backends._probe_cached.cache_clear()
        backends._deep_probe_once.cache_clear()


# Any mix of GPU backends in one sweep measures what each measures alone -------------------------

# Large enough for a race to show (2^24 elements, a 4096^2 grid, 64 MiB), after a smaller size, so
# that every session of the sweep is open when the large points run.
MIXED_SIZES = {"matmul": (1024, 4096), "fft": (2 ** 20, 2 ** 24), "source_terms": (2 ** 20, 2 ** 24),
               "flux": (1024, 4096), "reduction": (2 ** 20, 2 ** 24), "stencil": (1024, 4096),
               "divergence": (2 ** 20, 2 ** 24), "transfer": (2 ** 20, 2 ** 26)}
MIXED_WORKLOADS = [w for w in MIXED_SIZES if any(b in ARRAY_GPU for b in REGISTRY.get(w).backends)]
SAME_WITHIN = 0.10          # mixed against alone, where a kernel takes at least:
LONG_ENOUGH_S = 100e-6


def usable_gpu_backends(workload: str) -> tuple[str, ...]:
    return tuple(b for b in REGISTRY.get(workload).backends if b in ARRAY_GPU and probe(b).usable)


def mixed_spec(workload: str, backends: tuple[str, ...]) -> SweepSpec:
    # Pinned transfers: pageable ones vary by a quarter from run to run on their own (docs/GPU.md).
    return SweepSpec(workload, backends, MIXED_SIZES[workload], "float32", host_memory="pinned",
                     min_repeats=3, budget_s=0.02)


def by_point(rows) -> dict:
    return {(r["backend"], r["size"], r["variant"]): r for r in rows}


def figure(row) -> float:
    """The figure compared: the kernel time, or end to end where the work is the transfer."""
    return row["total_median_s"] if row["workload"] == "transfer" else row["compute_median_s"]


def median_over(rounds: list[dict]) -> dict:
    """Per point, the first round's row with the median figure over the rounds (a drift of the
    GPU's clocks between sweeps is not the company's doing)."""
    out = {}
    for key, row in rounds[0].items():
        seen = [r[key] for r in rounds]
        bad = [r for r in seen if r["status"] != "ok"]
        out[key] = dict(bad[0] if bad else row, figure=float(np.median([figure(r) for r in seen])))
    return out


def assert_same_as_alone(mixed: dict, alone: dict) -> None:
    assert mixed.keys() == alone.keys()
    for key, row in mixed.items():
        ref = alone[key]
        assert row["status"] == "ok", f"mixed {key}: {row['status']}: {row['message']}"
        assert ref["status"] == "ok", f"alone {key}: {ref['status']}: {ref['message']}"
        if ref["figure"] >= LONG_ENOUGH_S:
            assert row["figure"] == pytest.approx(ref["figure"], rel=SAME_WITHIN), key


def alternating_rounds(workload: str, backends: tuple[str, ...], sweep, rounds: int = 2):
    """Mixed in both orders and each backend alone, alternating; medians over the rounds."""
    runs = {"forward": [], "reversed": [], "alone": []}
    for _ in range(rounds):
        runs["forward"].append(by_point(sweep(mixed_spec(workload, backends))))
        alone = {}
        for b in backends:
            alone.update(by_point(sweep(mixed_spec(workload, (b,)))))
        runs["alone"].append(alone)
        runs["reversed"].append(by_point(sweep(mixed_spec(workload, backends[::-1]))))
    return {k: median_over(v) for k, v in runs.items()}


@pytest.mark.parametrize("workload", MIXED_WORKLOADS)
def test_every_gpu_backend_in_one_sweep_measures_as_alone(workload):
    backends = usable_gpu_backends(workload)
    if not backends:
        pytest.skip(f"no usable GPU backend for {workload}")
    got = alternating_rounds(workload, backends, rows_of)
    for order in ("forward", "reversed"):
        assert_same_as_alone(got[order], got["alone"])


def test_sweeps_in_the_long_lived_engine_process_measure_as_alone():
    """The window's path: one supervised engine process, sweep after sweep, mixed and alone."""
    from workbench import protocol
    from workbench.supervisor import Supervisor
    backends = usable_gpu_backends("source_terms")
    engine = Supervisor()
    try:
        got = alternating_rounds("source_terms", backends, lambda spec: protocol.rows(engine.run(spec)))
        for order in ("forward", "reversed"):
            assert_same_as_alone(got[order], got["alone"])
        assert engine.restarts == 0
    finally:
        engine.close()


def test_the_device_limits_are_the_h200s_own():
    """The ceilings the sanity check uses are physical: a copy near the HBM's bandwidth, a peak
    from the SM count and clock."""
    from workbench import limits
    from workbench.gpu.cupy_session import CupySession
    need("cupy")
    lim = limits.limits_for(CupySession())
    assert 0.5e12 < lim.copy_bytes_per_s < 10e12
    assert 10e12 < lim.peak_flops["float32"] < 200e12
    (row,) = rows_of(SweepSpec("matmul", ("cupy",), (4096,), "float32", min_repeats=5, budget_s=0.05))
    assert row["status"] == "ok" and row["gflops"] < row["gflops_limit"]


def rows_of(spec):
    return [e.row for e in run_sweep(spec) if isinstance(e, PointFinished)]


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


def test_mixed_sweeps_stay_true_once_cudf_has_taken_over_the_allocators():
    need("cudf")
    import cudf  # noqa: F401 - RMM is now the allocator of CuPy and Numba in this process
    got = alternating_rounds("source_terms", usable_gpu_backends("source_terms"), rows_of)
    for order in ("forward", "reversed"):
        assert_same_as_alone(got[order], got["alone"])
