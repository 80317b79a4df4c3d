"""Why numba-cuda's 1 MiB transfer ran slower in a sweep mixed with CuPy than alone: the
parts of its time (h2d, d2h) mixed, in both orders, and alone, three times (run on the H200:
``python3 benchmarks/transfer_mixed_probe.py``; 2026-12-04: numba-cuda 140-153 us end to end,
of which h2d 95-105 us against CuPy's 26 us for the same bytes: per-copy host work)."""
import sys
sys.path.insert(0, ".")
from workbench.measure import protocol
from workbench.measure.engine import SweepSpec, run_sweep

def sweep(backends, rounds=1):
    spec = SweepSpec("transfer", backends, (2 ** 20, 2 ** 26), "float32", host_memory="pinned",
                     min_repeats=3, budget_s=0.02, rounds=rounds)
    return {(r["backend"], r["size"]): r for r in protocol.rows(run_sweep(spec))}

cols = ("total_median_s", "h2d_s", "d2h_s", "compute_median_s", "host_issue_s", "repeats", "noise")
for it in range(3):
    for name, bs in (("forward", ("cupy", "numba-cuda")), ("reversed", ("numba-cuda", "cupy")),
                     ("alone-nc", ("numba-cuda",)), ("alone-cp", ("cupy",)), ("r5-forward", ("cupy", "numba-cuda"))):
        got = sweep(bs, 5 if name.startswith("r5") else 1)
        for (b, n), r in sorted(got.items()):
            if n == 2 ** 20:
                print(f"{it} {name:10s} {b:10s} " + " ".join(f"{c}={r.get(c, float('nan')) * (1e6 if c.endswith('_s') else 1):.1f}" for c in cols), flush=True)
