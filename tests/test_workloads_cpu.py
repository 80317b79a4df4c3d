"""Every workload on every CPU backend, both dtypes, tiny sizes: each point verified."""
from __future__ import annotations

import pytest

from workbench.catalog.backends import BACKENDS
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.measure import protocol
from workbench.catalog.workloads import REGISTRY

CPU = tuple(name for name, b in BACKENDS.items() if b.device == "cpu")
TINY = {"matmul": (8, 33), "fft": (16, 100), "transfer": (1024, 3000), "stencil": (8, 21)}
CASES = [(w.name, b) for w in REGISTRY.all() for b in w.backends if b in CPU]


def test_every_workload_has_a_cpu_implementation():
    """A CPU baseline for each, save a workload that declares its subject needs a GPU (overlap)."""
    assert {w for w, _ in CASES} == {n for n in REGISTRY.names() if not REGISTRY.get(n).needs_gpu}
    assert {n for n in REGISTRY.names() if REGISTRY.get(n).needs_gpu} == {"overlap"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("workload,backend", CASES)
def test_cpu_point_is_verified(workload, backend, dtype):
    sizes = TINY.get(workload, (64, 1000))
    spec = SweepSpec(workload, (backend,), sizes, dtype, min_repeats=2, budget_s=0.0)
    rows = protocol.rows(run_sweep(spec))
    variants = REGISTRY.get(workload).variants
    assert len(rows) == len(sizes) * len(variants)
    for row in rows:
        assert row["status"] == "ok", row["message"]
        assert row["verified"] and row["max_rel_error"] <= REGISTRY.get(workload).tolerance[dtype]
        assert row["repeats"] >= 2
        assert row["compute_min_s"] <= row["compute_median_s"] <= row["compute_max_s"]
        assert row["h2d_s"] == 0 and row["d2h_s"] == 0          # CPU backends move nothing
        assert row["total_median_s"] == pytest.approx(row["compute_median_s"])
        assert row["device"].startswith("CPU")


def test_workload_declarations_are_complete():
    for w in REGISTRY.all():
        assert w.description and w.lesson and w.size_unit and w.default_sizes, w.name
        assert set(w.dtypes) == {"float32", "float64"}
        assert set(w.tolerance) >= set(w.dtypes)
        for size in w.default_sizes[:2]:
            assert w.flops(size) >= 0 and w.bytes_moved(size, 4) > 0 and w.footprint(size, 4) > 0


def test_gpu_backend_names_follow_the_brief():
    assert {"numpy", "numba", "pandas", "cupy", "numba-cuda", "cudf"} <= set(BACKENDS)
    assert {"scipy", "numba-cuda-warp", "cpu-stack", "gpu-zero-copy", "gpu-round-trips"} <= set(BACKENDS)  # issue 11
    assert {"scipy", "numba", "cupy", "numba-cuda", "numba-cuda-warp"} == set(REGISTRY.get("spmv").backends)
    assert "numba-cuda" not in REGISTRY.get("fft").backends      # no FFT in Numba CUDA: not offered
