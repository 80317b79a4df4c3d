"""Mixed sweeps against each backend alone, on the GPU: the figures must not depend on company.

1. The crossover sweep: source_terms, float32, 2^10 to 2^26 (x4), every CPU backend and every CuPy
   and Numba CUDA variant in ONE sweep; then each GPU backend alone over the same sizes.
2. The bandwidth table: source_terms (2^26), flux and stencil (8192^2), float32 and float64, every
   GPU variant in one sweep (after a smaller size, so all sessions are open), then each alone.

Mixed and alone alternate for ROUNDS rounds, and each point's figure is the median over its
rounds, so that a drift of the machine (clocks, a neighbour) is not taken for a difference the
company of other backends makes. For every point where the kernel takes at least 100 us, the
mixed figure is compared with the alone one (target: within 5 %). Writes OUTDIR/mixed_vs_alone.md,
OUTDIR/crossover.csv (the first mixed sweep) and prints the tables.

Run: python benchmarks/mixed_vs_alone.py OUTDIR [--rounds N] [--tables WORKLOAD:DTYPE,...] [--no-crossover]
(--tables none: only the crossover; a run cut short by a time limit can be finished piece by piece)
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _lines import say, write_lines  # noqa: E402
from crossover import crossover  # noqa: E402
from workbench.measure import limits  # noqa: E402
from workbench.results import rows as results
from workbench.results import files as result_files
from workbench.catalog.backends import probe  # noqa: E402
from workbench.measure.engine import SweepSpec, run_sweep  # noqa: E402
from workbench.measure import protocol  # noqa: E402
from workbench.measure.environment import record  # noqa: E402

ARGS = argparse.ArgumentParser()
ARGS.add_argument("out", nargs="?", default=".")
ARGS.add_argument("--rounds", type=int, default=2)
ARGS.add_argument("--tables", default="all", help="WORKLOAD:DTYPE,... of the bandwidth table, or all, or none")
ARGS.add_argument("--no-crossover", action="store_true")
OPTS = ARGS.parse_args()
OUT = Path(OPTS.out)
GPU = tuple(b for b in ("cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4") if probe(b).usable)
CPU = ("numpy", "numba")
TARGET = 0.05
LONG_ENOUGH_S = 100e-6
ROUNDS = OPTS.rounds
T0 = time.perf_counter()


def rows(workload, backends, sizes, dtype):
    spec = SweepSpec(workload, tuple(backends), tuple(sizes), dtype, min_repeats=3, budget_s=0.02)
    return protocol.rows(run_sweep(spec))


def rounds(workload, mixed_backends, sizes, dtype, keep=lambda r: True):
    """ROUNDS alternations of one mixed sweep and each GPU backend alone; per point, the row of
    the first round with its compute median replaced by the median over the rounds."""
    runs = {"mixed": [], "alone": []}
    for _ in range(ROUNDS):
        runs["mixed"].append([r for r in rows(workload, mixed_backends, sizes, dtype) if keep(r)])
        runs["alone"].append([r for b in GPU for r in rows(workload, (b,), sizes, dtype) if keep(r)])
    out = {}
    for kind, sweeps in runs.items():
        out[kind] = []
        for row in sweeps[0]:
            key = (row["backend"], row["size"])
            seen = [r["compute_median_s"] for sweep in sweeps for r in sweep if (r["backend"], r["size"]) == key]
            median = statistics.median(seen)
            out[kind].append(dict(row, compute_median_s=median, gbps=row["gbps"] * row["compute_median_s"] / median,
                                  rounds=seen))
    say(f"({workload} {dtype}: {ROUNDS} rounds done at {time.perf_counter() - T0:.0f} s)\n")
    return out, runs["mixed"][0]


def compare(mixed: list[dict], alone: list[dict], copy_gbps: float, title: str) -> list[float]:
    """A table of mixed against alone; returns the relative differences of long-enough kernels."""
    ref = {(r["backend"], r["size"]): r for r in alone}
    say(f"### {title} (medians over {ROUNDS} alternating rounds)\n")
    say("| backend | size | mixed compute | alone compute | difference | GB/s (mixed) | of copy | status mixed / alone "
        "| rounds mixed / alone (ms) |")
    say("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    diffs = []
    for r in mixed:
        a = ref.get((r["backend"], r["size"]))
        if a is None:
            continue
        diff = r["compute_median_s"] / a["compute_median_s"] - 1
        counted = a["compute_median_s"] >= LONG_ENOUGH_S
        if counted:
            diffs.append(diff)
        say(f"| {r['backend']} | {r['size']} | {r['compute_median_s'] * 1e3:.4f} ms | "
            f"{a['compute_median_s'] * 1e3:.4f} ms | {diff * 100:+.1f} %{'' if counted else ' (under 100 us)'} | "
            f"{r['gbps']:.0f} | {r['gbps'] / copy_gbps * 100:.0f} % | {r['status']} / {a['status']} | "
            f"{' '.join(f'{v * 1e3:.4f}' for v in r['rounds'])} / {' '.join(f'{v * 1e3:.4f}' for v in a['rounds'])} |")
    say()
    return diffs


def main() -> None:
    env = record()
    say(f"# Mixed sweeps against each backend alone, {datetime.date.today()}\n")
    say(f"GPU: {env['gpus']}\n")
    say(f"GPU backends: {', '.join(GPU)}\n")
    all_diffs = []

    from workbench.measure.gpu.cupy_session import CupySession
    lim = limits.limits_for(CupySession())
    copy = lim.copy_bytes_per_s / 1e9
    say(f"Device-to-device copy (the sanity check's ceiling past the caches): {copy:.0f} GB/s; "
        f"peak {lim.record()['peak_gflops']} GFLOP/s ({lim.flops_basis})\n")
    say("## 1. The bandwidth table from mixed sweeps\n")
    for workload, small, large in (("source_terms", 2 ** 22, 2 ** 26), ("flux", 2048, 8192), ("stencil", 2048, 8192)):
        for dtype in ("float32", "float64"):
            if OPTS.tables != "all" and f"{workload}:{dtype}" not in OPTS.tables.split(","):
                continue
            both, _ = rounds(workload, GPU, (small, large), dtype, keep=lambda r: r["size"] == large)
            all_diffs += compare(both["mixed"], both["alone"], copy, f"{workload} {large} {dtype}")
            write_lines(OUT / "mixed_vs_alone.md")          # what is done so far survives a time limit

    if OPTS.no_crossover:
        return verdict(all_diffs)
    sizes = [2 ** k for k in range(10, 27, 2)]
    both, mixed = rounds("source_terms", CPU + GPU, sizes, "float32")
    frame = results.to_frame(mixed)
    OUT.mkdir(parents=True, exist_ok=True)
    result_files.save(frame, OUT / "crossover.csv", record())
    say("## 2. The crossover sweep, source_terms float32, every backend in one sweep\n")
    for column, label in (("total_median_s", "end-to-end"), ("compute_median_s", "compute only")):
        say(f"Crossover on {label} (from the mixed sweep):\n")
        for backend, size in crossover(frame, column).items():
            say(f"- {backend}: " + (f"faster than every CPU backend from size {size} up" if size
                                    else "never faster than the best CPU backend at every larger size"))
        say()
    all_diffs += compare([r for r in both["mixed"] if r["backend"] in GPU], both["alone"], copy,
                         "source_terms float32, 2^10 to 2^26")

    verdict(all_diffs)


def verdict(all_diffs: list[float]) -> None:
    write_lines(OUT / "mixed_vs_alone.md")
    if not all_diffs:
        say("## Verdict\n\nNo kernel of 100 us or more was compared.")
        return write_lines(OUT / "mixed_vs_alone.md")
    worst = max(abs(d) for d in all_diffs)
    say(f"## Verdict\n\n{len(all_diffs)} kernels of 100 us or more compared; the largest difference between "
        f"a mixed sweep and the backend alone is {worst * 100:.1f} % (target {TARGET * 100:.0f} %): "
        + ("met." if worst <= TARGET else "NOT met."))
    write_lines(OUT / "mixed_vs_alone.md")


if __name__ == "__main__":
    main()
