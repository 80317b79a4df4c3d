"""Issue 29 on a GPU machine, in one call: every point placed against the machine's limits.

    python3 benchmarks/why_h200.py OUTDIR [--quick]

Runs, through the command line as a user would (supervised engine, JSON results under OUTDIR):
every backend of source_terms, stencil and reduction from 2^10 to 2^26 elements and of matmul up
to 8192 (the CPU ones to 2048); source_terms at 2^26 with numpy, numba (every thread) and
cupy-fused with ``--energy``. Prints last a short table: each series' bound and share at its
smallest and largest size, the kernels one call of plain and fused CuPy launches, and the energy
rows with the counter's measured step and the idle draw.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GPU = "cupy,cupy-fused,cupy-raw,numba-cuda,numba-cuda-x4"
SWEEPS = [
    ("source_terms", f"numpy,numba,{GPU}", "2^10:2^26:x4", []),
    ("stencil", f"numpy,numba,{GPU}", "32,128,512,2048,8192", []),
    ("reduction", "numpy,numba,cupy,numba-cuda", "2^10:2^26:x4", []),
    ("matmul", "numpy,cupy,numba-cuda", "256,1024,4096,8192", []),
    ("matmul", "numba", "256,1024", ["--budget", "0.5"]),
    ("source_terms", "numpy,numba,cupy-fused", "2^26", ["--energy", "--budget", "0.5"]),
]


def rows_of(path: Path) -> list[dict]:
    try:
        return json.loads(path.read_text()).get("rows", [])
    except (OSError, ValueError):
        return []


def main(out: Path, quick: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    found: list[tuple[str, list[dict]]] = []
    for i, (workload, backends, sizes, extra) in enumerate(SWEEPS):
        if quick and i not in (0, 3, 5):
            continue
        target = out / f"{i}-{workload}.json"
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "workbench", "run", "-w", workload, "-b", backends, "-s", sizes,
               "--budget", "0.1", *extra, "--out", str(target), "--force", "-q"]
        with open(out / f"{i}-{workload}.txt", "w") as log:
            rc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=420).returncode
        rows = rows_of(target)
        print(f"{workload} {backends} {sizes}: exit {rc}, {len(rows)} rows in {time.perf_counter() - t0:.0f} s",
              flush=True)
        found.append((workload, rows))
    print("\n| workload | backend | size | time | GB/s | GFLOP/s | bound | of bound | threads | kernels |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for workload, rows in found:
        series: dict[str, list[dict]] = {}
        for r in rows:
            series.setdefault(r["backend"], []).append(r)
        for backend, rs in series.items():
            rs.sort(key=lambda r: r["size"])
            for r in (rs[0], rs[-1]) if len(rs) > 1 else rs:
                share = r.get("of_bound")
                print(f"| {workload} | {backend} | {r['size']:,} | {_t(r.get('compute_median_s'))} | "
                      f"{_f(r.get('gbps'))} | {_f(r.get('gflops'))} | {r.get('bound') or r['status']} | "
                      f"{'-' if share is None else f'{100 * share:.0f} %'} | {r.get('threads') or '-'} | "
                      f"{r.get('kernel_count') or '-'} |")
    energy = found[-1][1] if found and found[-1][0] == "source_terms" else []
    print("\nEnergy, source_terms 2^26:")
    for r in energy:
        print(f"  {r['backend']}: {r.get('energy_j')} J a call, {r.get('power_w')} W running, "
              f"{r.get('idle_w')} W idle; {r.get('energy_source')}; time {_t(r.get('total_median_s'))}")
    print("\nKernels of one call, source_terms:")
    for workload, rows in found[:1]:
        for r in rows:
            if r["backend"] in ("cupy", "cupy-fused") and r["size"] in (2 ** 16, 2 ** 26):
                print(f"  {r['backend']} {r['size']:,}: {r.get('kernel_count')} kernels {r.get('kernels', '')[:300]}")
    return 0


def _t(s) -> str:
    return "-" if not isinstance(s, (int, float)) or not math.isfinite(s) else f"{s * 1e6:,.1f} µs"


def _f(v) -> str:
    return "-" if not isinstance(v, (int, float)) or not math.isfinite(v) else f"{v:,.0f}"


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(main(Path(args[0] if args else "/tmp/why-h200"), "--quick" in sys.argv))
