"""GPU backends on a real GPU: every workload, both dtypes, main thread and a worker thread.

Marked ``gpu``: skipped, with the reason, where no GPU is usable (CI). Run on the
accelerator machine before GPU work is called done (docs/GPU.md says how).
cuDF tests come last, in tests/test_gpu_cudf.py (collected and run after this file): importing
cuDF makes RMM the allocator of CuPy and Numba for the rest of the process.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from workbench.measure import protocol
from workbench.catalog.backends import probe
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.catalog.workloads import REGISTRY

pytestmark = pytest.mark.gpu

ARRAY_GPU = ("cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4", "numba-cuda-warp")
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
    return protocol.rows(run_sweep(spec))


def in_a_worker_thread(fn):
    """``fn()`` in a thread that is not the main one, as the GUI runs the engine; its error is raised here."""
    box = {}

    def work():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=300)
    assert not t.is_alive()
    if "error" in box:
        raise box["error"]
    return box["value"]


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
    check(in_a_worker_thread(lambda: sweep(workload, backend, "float32")), workload, "float32")


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
def test_device_memory_is_read_with_rmm_imported_but_not_allocating(backend):
    """Importing cuDF imports RMM without making it CuPy's or Numba's allocator: a point read through
    RMM's statistics alone said 0 bytes for the three 16 MiB buffers (H200, after the cuDF tests)."""
    need(backend)
    pytest.importorskip("rmm")
    import cupy as cp
    from rmm.allocators.cupy import rmm_cupy_allocator
    if cp.cuda.get_allocator() is rmm_cupy_allocator:
        pytest.skip("an earlier test made RMM CuPy's allocator in this process")
    n = 2 ** 22
    (row,) = sweep("source_terms", backend, "float32", sizes=(n,))
    assert 3 * 4 * n <= row["peak_device_bytes"] <= 6 * 4 * n


def test_spmv_on_cupy_lets_its_matrix_go_when_the_point_closes():
    """cupyx's csr_matrix wraps the uploaded buffers; once the point's phases are closed only the
    output vectors may still be held, so the session's release can free the matrix."""
    need("cupy")
    import cupy as cp
    import numpy as np
    from workbench.measure.gpu.cupy_session import CupySession
    from workbench.catalog.workloads import Context
    from workloads import spmv
    n, dt = 2 ** 16, np.dtype(np.float64)
    inputs = spmv._inputs(n, dt, "3d", np.random.default_rng(0))
    session = CupySession()
    before = cp.get_default_memory_pool().used_bytes()
    try:
        with session.activate():          # as the engine runs a point: on the session's stream
            phases = spmv.W.implementations["cupy"].factory(inputs, Context(size=n, dtype=dt, session=session))
            phases.h2d()
            phases.compute()
            y = phases.d2h()
            session.synchronize()
            assert np.allclose(y, spmv._reference(inputs))
            phases.close()
        held = cp.get_default_memory_pool().used_bytes() - before
        assert held <= 2 * n * dt.itemsize + 4096, held      # y and the unused out buffer; no matrix
    finally:
        session.close()


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
    from workbench.catalog import backends
    monkeypatch.setitem(backends._PROBES, "numba.cuda",
                        "raise AttributeError(\"module 'numpy' has no attribute 'row_stack'\")")
    backends.forget_probes()
    try:
        a = backends.probe("numba-cuda")
        assert not a.usable
        assert a.reason.startswith("installed but broken") and "row_stack" in a.reason
    finally:
        backends.forget_probes()


def test_spmv_best_gpu_variant_reaches_60_percent_of_copy_bandwidth():
    """Issue 11's bar: the best GPU SpMV moves its CSR bytes at 60 % of the device's copy rate or more,
    at a size whose matrix (2^24 rows, 7 entries a row in 3-D, float64) is far larger than any cache."""
    from workbench.measure import limits
    from workbench.measure.gpu.cupy_session import CupySession
    need("cupy")
    gpu = tuple(b for b in ("cupy", "numba-cuda", "numba-cuda-warp") if probe(b).usable)
    copy = limits.limits_for(CupySession()).copy_bytes_per_s / 1e9      # the engine's own measurement
    rows = rows_of(SweepSpec("spmv", gpu, (2 ** 24,), "float64", min_repeats=5, budget_s=0.0))
    assert all(r["status"] == "ok" for r in rows), [(r["backend"], r["message"]) for r in rows]
    table = {(r["backend"], r["variant"]): round(r["gbps"]) for r in rows}
    best = max(table.values())
    assert best >= 0.6 * copy, f"copy {copy:.0f} GB/s; spmv GB/s: {table}"


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
                     min_repeats=3, budget_s=0.02, rounds=1)      # one round: mixed against alone is the point


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
    bus = max((r["gbps"] for r in alone.values() if r["status"] == "ok"), default=0.0)
    for key, row in mixed.items():
        ref = alone[key]
        assert row["status"] == "ok", f"mixed {key}: {row['status']}: {row['message']}"
        assert ref["status"] == "ok", f"alone {key}: {ref['status']}: {ref['message']}"
        if ref["figure"] >= LONG_ENOUGH_S and device_bound(ref, bus):
            assert row["figure"] == pytest.approx(ref["figure"], rel=SAME_WITHIN), key


def device_bound(row, bus: float) -> bool:
    """Whether the figure is the device's work rather than the host's: where issuing a call takes
    the host half the time the device needs or more (a Numba launch, a thousand tiny CuPy kernels,
    an allocation through RMM), the figure measures the host, whose speed drifts between sweeps by
    more than 10 % on its own (seen on the H200). A transfer is the bus's work where it runs at half
    the best rate any backend reached (``bus``) or more; numba-cuda's copies of 1 MiB ran at 11 GB/s
    against CuPy's 40 (2026-12-04): their time is its per-copy allocation and calls, host work, and
    mixed with CuPy they ran 15-25 % slower than alone in 3 of 4 runs while the bus's rate held."""
    if row["workload"] == "transfer":
        return row["gbps"] >= 0.5 * bus
    return row["host_issue_s"] < 0.5 * row["compute_median_s"]


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
    from workbench.measure import protocol
    from workbench.measure.supervisor import Supervisor
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
    from workbench.measure import limits
    from workbench.measure.gpu.cupy_session import CupySession
    need("cupy")
    lim = limits.limits_for(CupySession())
    assert 0.5e12 < lim.copy_bytes_per_s < 10e12
    assert 10e12 < lim.peak_flops["float32"] < 200e12
    (row,) = rows_of(SweepSpec("matmul", ("cupy",), (4096,), "float32", min_repeats=5, budget_s=0.05))
    assert row["status"] == "ok" and row["gflops"] < row["gflops_limit"]


def rows_of(spec):
    return protocol.rows(run_sweep(spec))
