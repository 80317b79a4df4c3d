"""Every built-in workload's NumPy and Numba points, tiny to a few hundred MiB, through the sanity
check against the hardware: how many are called implausible (issue 17: none should be).

    python3 benchmarks/implausible_check.py [RUNS]      # prints one line per workload and run
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 256 * 2 ** 20


def sizes_for(w, isz: int) -> tuple[int, ...]:
    """From the workload's smallest default size up by 4x while its footprint stays within TARGET."""
    out, s = [], max(1, min(w.default_sizes))
    while w.footprint(s, isz) <= TARGET and len(out) < 8:
        out.append(s)
        s *= 4
    return tuple(out)


def main(runs: int) -> int:
    from workbench.measure import engine
    from workbench.measure import protocol
    from workbench.catalog.workloads import REGISTRY
    bad = 0
    for run in range(runs):
        for w in REGISTRY.all():
            backends = tuple(b for b in ("numpy", "numba") if b in w.implementations)
            if not backends or "float32" not in w.dtypes:
                continue
            sizes = sizes_for(w, 4)
            if not sizes:
                continue
            rows = protocol.rows(engine.run_sweep(engine.SweepSpec(w.name, backends, sizes, "float32", budget_s=0.2)))
            flagged = [f"{r['backend']}@{r['size']}: {r['message']}" for r in rows if r["status"] == "implausible"]
            bad += len(flagged)
            print(f"run {run + 1} {w.name}: {len(rows)} points, sizes {sizes[0]}..{sizes[-1]}, "
                  f"{len(flagged)} implausible" + ("".join(f"\n    {f}" for f in flagged)), flush=True)
    print(f"implausible in all: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2))
