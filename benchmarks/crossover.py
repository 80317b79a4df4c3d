"""Where do the GPU backends overtake the CPU ones?  Reads a result CSV or JSON.

For each GPU backend, the smallest size from which it beats the fastest CPU
backend at every larger size too, on end-to-end time (transfers included) and
on compute time alone.

Run: python benchmarks/crossover.py results.csv
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.results import files as result_files  # noqa: E402
from workbench.catalog.backends import BACKENDS  # noqa: E402


def crossover(frame, column: str) -> dict[str, int | None]:
    ok = frame[frame["status"] == "ok"]
    cpu = ok[ok["backend"].map(lambda b: BACKENDS[b].device == "cpu")]
    best_cpu = cpu.groupby("size")[column].min()
    out = {}
    for backend in ok["backend"].unique():
        if BACKENDS[backend].device != "gpu":
            continue
        g = ok[ok["backend"] == backend].set_index("size")[column]
        sizes = sorted(set(g.index) & set(best_cpu.index))
        wins = [g[s] < best_cpu[s] for s in sizes]
        out[backend] = None
        for k in range(len(sizes)):
            if all(wins[k:]):
                out[backend] = sizes[k]
                break
    return out


def main(path: str) -> None:
    frame, _ = result_files.load(path)
    for column, label in (("total_median_s", "end-to-end (transfers included)"), ("compute_median_s", "compute only")):
        print(f"Crossover on {label}:")
        for backend, size in crossover(frame, column).items():
            print(f"  {backend:<14} " + (f"faster than every CPU backend from size {size} up" if size
                                         else "never faster than the best CPU backend at every larger size"))


if __name__ == "__main__":
    main(sys.argv[1])
