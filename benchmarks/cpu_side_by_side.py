"""The workbench's CPU times against timeit and perfplot, the same callables in one run.

    python3 benchmarks/cpu_side_by_side.py [OUTDIR]          # needs perfplot (pip install perfplot)

For each NumPy and Numba point, the very callable the workbench times (its implementation, made by
its factory) is also timed by ``timeit.repeat`` (the median per call of 31 repeats of at least a
millisecond each) and by ``perfplot.bench`` (which reports the minimum). Point by point the
workbench measures first, timeit right after, so both see the machine in about the same state;
perfplot then runs all points in one call, as its users run it. The table printed last compares
the medians (and perfplot's minimum with the workbench's) and each tool's wall time.
"""
from __future__ import annotations

import math
import sys
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES = [("source_terms", ("numpy", "numba")), ("reduction", ("numpy", "numba"))]
SIZES = (2 ** 10, 2 ** 14, 2 ** 18, 2 ** 22)
DTYPE = "float32"


def callable_of(workload: str, backend: str, size: int):
    from workbench.measure.sessions import open_session
    from workbench.catalog.workloads import REGISTRY, Context, Phases
    w = REGISTRY.get(workload)
    inputs = w.make_inputs(size, np.dtype(DTYPE), "", np.random.default_rng(0))
    session = open_session(backend)
    ctx = Context(size=size, dtype=np.dtype(DTYPE), variant="", host_memory="", session=session)
    made = w.implementations[backend].factory(inputs, ctx)
    compute = made.compute if isinstance(made, Phases) else made
    compute()                      # compiled and warm, as the workbench's first call leaves it
    return compute


def timeit_median(fn) -> tuple[float, float]:
    """Median seconds per call over 31 repeats of at least 1 ms each; and the wall time it took."""
    t0 = time.perf_counter()
    number = max(1, math.ceil(1e-3 / max(timeit.timeit(fn, number=1), 1e-9)))
    times = np.array(timeit.repeat(fn, number=number, repeat=31)) / number
    return float(np.median(times)), time.perf_counter() - t0


def main(out: Path) -> int:
    import perfplot

    from workbench.measure import engine
    from workbench.measure import protocol
    out.mkdir(parents=True, exist_ok=True)
    rows, ti, wb_wall, ti_wall = {}, {}, 0.0, 0.0
    for workload, backends in CASES:
        for size in SIZES:
            t0 = time.perf_counter()
            for r in protocol.rows(engine.run_sweep(engine.SweepSpec(workload, backends, (size,), DTYPE))):
                rows[(workload, r["backend"], size)] = r
            wb_wall += time.perf_counter() - t0
            for backend in backends:
                median, wall = timeit_median(callable_of(workload, backend, size))
                ti[(workload, backend, size)] = median
                ti_wall += wall
    pp, pp_wall = {}, 0.0
    for workload, backends in CASES:
        t0 = time.perf_counter()
        data = perfplot.bench(setup=lambda n, w=workload, bs=backends: [callable_of(w, b, n) for b in bs],
                              kernels=[lambda fs, i=i: fs[i]() for i in range(len(backends))],
                              labels=list(backends), n_range=list(SIZES), equality_check=None)
        pp_wall += time.perf_counter() - t0
        for i, backend in enumerate(backends):
            for j, size in enumerate(SIZES):
                pp[(workload, backend, size)] = float(data.timings_s[i][j])
    lines = ["| point | workbench median [95 % CI] | n | timeit median | diff | workbench min | perfplot min | diff | noisy |",
             "|---|---|---|---|---|---|---|---|---|"]
    for key, r in rows.items():
        med, lo, hi = r["compute_median_s"], r["compute_ci_lo_s"], r["compute_ci_hi_s"]
        lines.append(f"| {key[0]} {key[1]} {key[2]:,} | {med * 1e6:,.2f} us [{lo * 1e6:,.2f}-{hi * 1e6:,.2f}] | "
                     f"{r['repeats']} | {ti[key] * 1e6:,.2f} us | {100 * (med / ti[key] - 1):+.1f} % | "
                     f"{r['compute_min_s'] * 1e6:,.2f} us | {pp[key] * 1e6:,.2f} us | "
                     f"{100 * (r['compute_min_s'] / pp[key] - 1):+.1f} % | {'yes' if r['noisy'] else ''} |")
    lines.append(f"\nwall time for these {len(rows)} points: workbench {wb_wall:.1f} s (noise target 1 %, "
                 f"{engine.DEFAULT_ROUNDS} rounds), timeit {ti_wall:.1f} s (31 repeats of 1 ms or more), "
                 f"perfplot {pp_wall:.1f} s (its defaults)")
    table = "\n".join(lines)
    (out / "cpu_side_by_side.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/cpu-side-by-side")))
