"""The memory pass (issue 27): its figures run after run, and what it costs a sweep.

    python benchmarks/memory_pass.py

1. source_terms on numpy, 2^16 to 2^22 float32, three sweeps in one process, then float64: each
   point's host memory, which must be the output array's bytes every time.
2. The same sweep (numpy and numba) with the pass and without it (``Point.measure_memory``
   made a no-op), interleaved three times: the sweep's wall time and the compute medians.
Prints two tables for docs/PERFORMANCE.md.
"""
from __future__ import annotations

import platform
import statistics
import time

from workbench.measure import protocol
from workbench.measure.cpu import cpu_name
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.measure.point import Point

SIZES = (2 ** 16, 2 ** 18, 2 ** 20, 2 ** 22)


def sweep(backends, dtype):
    spec = SweepSpec("source_terms", backends, SIZES, dtype)
    t0 = time.perf_counter()
    rows = protocol.rows(run_sweep(spec))
    return rows, time.perf_counter() - t0


def main() -> None:
    print(f"# {cpu_name()}, {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    print("\n| run | dtype | " + " | ".join(f"2^{s.bit_length() - 1}" for s in SIZES) + " |")
    print("| --- | --- |" + " --- |" * len(SIZES))
    for run, dtype in enumerate(("float32", "float32", "float32", "float64"), 1):
        rows, _ = sweep(("numpy",), dtype)
        got = {r["size"]: r["peak_host_bytes"] / 2 ** 20 for r in rows}
        print(f"| {run} | {dtype} | " + " | ".join(f"{got[s]:.2f} MiB" for s in SIZES) + " |")

    walls: dict[str, list[float]] = {"with the pass": [], "without": []}
    medians: dict[str, dict] = {k: {} for k in walls}
    plain = Point.measure_memory
    for _ in range(3):
        for label in walls:
            Point.measure_memory = plain if label == "with the pass" else (lambda self: None)
            rows, wall = sweep(("numpy", "numba"), "float32")
            walls[label].append(wall)
            for r in rows:
                medians[label].setdefault((r["backend"], r["size"]), []).append(r["compute_median_s"])
    Point.measure_memory = plain
    print("\n| sweep (numpy, numba, 4 sizes) | wall, 3 runs | compute median at 2^22, numpy / numba |")
    print("| --- | --- | --- |")
    for label, w in walls.items():
        m = medians[label]
        at = [statistics.median(m[(b, SIZES[-1])]) * 1e6 for b in ("numpy", "numba")]
        print(f"| {label} | {' / '.join(f'{x:.2f} s' for x in w)} | {at[0]:.0f} / {at[1]:.0f} us |")


if __name__ == "__main__":
    main()
