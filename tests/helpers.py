"""Synthetic workloads of known behaviour, for testing the engine itself."""
from __future__ import annotations

import time

import numpy as np

from workbench.registry import Workload


def busy_wait(seconds: float) -> None:
    """Spin for ``seconds``: a computation of known duration (no sleep, no scheduler wake-up jitter)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def synthetic(name: str = "synthetic", **overrides) -> Workload:
    fields = dict(
        name=name, title="Synthetic", kind="kernels", description="a test workload", lesson="none",
        size_unit="elements", default_sizes=(8,),
        make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
        reference=lambda inp: inp[0].astype(np.float64) * 2,
        flops=lambda n: float(n), bytes_moved=lambda n, isz: 2.0 * n * isz,
        footprint=lambda n, isz: n * isz * 4,
    )
    fields.update(overrides)
    return Workload(**fields)


def result_set(dtype: str = "float32", scale: float = 1.0, libraries: dict | None = None, source: str = "",
               gpu: str = "Test GPU"):
    """A result set of known points: numpy and numba on the CPU, cupy on a GPU, sizes 2^10..2^16,
    plus one failed and one implausible point that no chart may draw."""
    from workbench import results
    from workbench.result_files import ResultSet
    rows = []
    for k, size in enumerate((2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16)):
        for backend, speed in (("numpy", 1.0), ("numba", 0.5), ("cupy", 0.1)):
            gpu_row = backend == "cupy"
            compute = scale * speed * size * 1e-9
            h2d = d2h = 2e-6 * (k + 1) if gpu_row else 0.0
            rows.append(results.empty_row(
                workload="source_terms", backend=backend, device=f"GPU: {gpu}" if gpu_row else "CPU: Test CPU",
                size=size, dtype=dtype, host_memory="pageable" if gpu_row else "", repeats=5,
                first_call_s=compute * 100, compute_median_s=compute, compute_min_s=compute * 0.9,
                compute_max_s=compute * 1.2, compute_q1_s=compute * 0.95, compute_q3_s=compute * 1.1,
                h2d_s=h2d, d2h_s=d2h, total_median_s=compute + h2d + d2h, total_q1_s=compute + h2d + d2h,
                total_q3_s=compute + h2d + d2h, peak_host_bytes=8.0 * size,
                peak_device_bytes=16.0 * size if gpu_row else float("nan"), gflops=1.0, gbps=1.0,
                max_rel_error=0.0, verified=True, status="ok"))
    rows.append(results.empty_row(workload="source_terms", backend="numba", size=2 ** 18, dtype=dtype,
                                  status="error", message="MemoryError"))
    rows.append(results.empty_row(workload="source_terms", backend="cupy", size=2 ** 18, dtype=dtype,
                                  host_memory="pageable", status="implausible", message="too fast",
                                  compute_median_s=1e-12, total_median_s=1e-12))
    env = {"cpu": "Test CPU", "libraries": libraries or {"numpy": "2.0.0", "numba": "0.60.0",
                                                         "cupy-cuda12x": "13.3.0", "pandas": "2.2.0"}}
    return ResultSet(results.to_frame(rows), env, {"dtype": dtype}, "2026-01-02T03:04:05+00:00", "testhost",
                     source)
