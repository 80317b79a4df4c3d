"""The workbench's GPU times against NVIDIA nvbench's (``cuda-bench``), the same kernels in one run.

    python3 benchmarks/nvbench_side_by_side.py OUTDIR            # on a machine with a GPU and cuda-bench

nvbench's batch figure of a Python-launched kernel shorter than the Python call is the rate at
which Python can launch it (its batch has no blocking kernel), so for small kernels the warm
figures compare with nvbench's cold ones only where launch gaps are hidden; the table shows both.

Both tools time the very same callables: the workbench's own implementations (CuPy plain, fused,
CUB reduction, cuBLAS matmul, a Numba CUDA kernel), made by their factories on data already on
the device. nvbench runs them on its stream (``state.exec``: cold samples after an L2 flush,
batched warm samples behind its blocking kernel, its own noise-based stop); the workbench runs
them through its engine (warm, cold and call figures, its interval-based stop). The table
printed last compares the medians (nvbench: the median where its JSON has one, else the mean),
and each tool's wall time. Full logs and both tools' raw output go under OUTDIR.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (workload, backend, sizes): four sizes from 2^16 to 2^26 elements (matmul: N x N = the same counts).
CASES = [
    ("source_terms", "cupy", (2 ** 16, 2 ** 20, 2 ** 24, 2 ** 26)),
    ("source_terms", "cupy-fused", (2 ** 16, 2 ** 20, 2 ** 24, 2 ** 26)),
    ("reduction", "cupy", (2 ** 16, 2 ** 20, 2 ** 24, 2 ** 26)),
    ("matmul", "cupy", (256, 1024, 4096, 8192)),
    ("source_terms", "numba-cuda", (2 ** 16, 2 ** 20, 2 ** 24, 2 ** 26)),
]
DTYPE = "float32"


def _name(workload: str, backend: str) -> str:
    return f"{workload}:{backend}"


# nvbench's side (a child process: run_all_benchmarks takes the process over) -----------------------

def nvbench_main(json_path: str) -> None:
    import cuda.bench as bench
    import numpy as np

    from workbench.measure.sessions import open_session
    from workbench.catalog.workloads import REGISTRY, Context, Phases

    for workload_name, backend, sizes in CASES:
        def run(state, workload_name=workload_name, backend=backend):
            import cupy as cp
            size = state.get_int64("Size")
            w = REGISTRY.get(workload_name)
            session = open_session(backend)
            pointer = state.get_stream().addressof()
            stream = cp.cuda.ExternalStream(pointer)                # CuPy runs on the current stream
            if backend.startswith("numba"):
                from numba import cuda
                session.stream = cuda.external_stream(pointer)      # its launches name the stream
            else:
                session.stream = stream
            inputs = w.make_inputs(size, np.dtype(DTYPE), "", np.random.default_rng(0))
            ctx = Context(size=size, dtype=np.dtype(DTYPE), variant="", host_memory="pageable", session=session)
            with stream:
                made = w.implementations[backend].factory(inputs, ctx)
                phases = made if isinstance(made, Phases) else Phases(compute=made)
                if phases.h2d is not None:
                    phases.h2d()                  # the data on the device, as the workbench's warm samples
                phases.compute()
            cp.cuda.runtime.deviceSynchronize()
            flops, nbytes = w.flops_and_bytes(size, np.dtype(DTYPE).itemsize)
            state.add_element_count(int(size))
            state.add_global_memory_reads(int(nbytes))

            def launcher(launch):
                with cp.cuda.ExternalStream(launch.get_stream().addressof()):
                    phases.compute()
            state.exec(launcher)
        b = bench.register(run)
        b.set_name(_name(workload_name, backend))
        b.add_int64_axis("Size", list(sizes))
    bench.run_all_benchmarks([sys.argv[0], "--json", json_path])


def _nvbench_figures(json_path: Path) -> dict:
    """{(name, size): {cold, batch, cold_cpu}} in seconds, from nvbench's JSON output."""
    data = json.loads(json_path.read_text())
    out = {}
    for b in data.get("benchmarks", []):
        for st in b.get("states", []):
            size = next(int(a["value"]) for a in st.get("axis_values") or [] if a.get("name") == "Size")
            tags = {}
            for s in st.get("summaries") or []:
                values = {d.get("name"): d.get("value") for d in s.get("data", [])}
                if "value" in values:
                    try:
                        tags[s.get("tag")] = float(values["value"])
                    except (TypeError, ValueError):
                        pass

            def pick(prefix: str) -> float:
                for suffix in ("median", "mean"):
                    if f"{prefix}/{suffix}" in tags:
                        return tags[f"{prefix}/{suffix}"]
                return math.nan
            out[(b["name"], size)] = {"cold": pick("nv/cold/time/gpu"), "batch": pick("nv/batch/time/gpu"),
                                      "cold_cpu": pick("nv/cold/time/cpu"),
                                      # its bytes/s and share of the device's peak bandwidth (BWUtil)
                                      "bps": tags.get("nv/cold/bw/global/bytes_per_second", math.nan),
                                      "util": tags.get("nv/cold/bw/global/utilization", math.nan),
                                      "tags": sorted(tags),
                                      "noise": tags.get("nv/cold/time/gpu/stdev/relative", math.nan)}
    return out


# The workbench's side ---------------------------------------------------------------------------

def workbench_rows() -> tuple[dict, float]:
    from workbench.measure import engine
    from workbench.measure import protocol
    rows = {}
    t0 = time.perf_counter()
    for workload_name, backend, sizes in CASES:
        spec = engine.SweepSpec(workload_name, (backend,), tuple(sizes), DTYPE)
        for r in protocol.rows(engine.run_sweep(spec)):
            rows[(_name(workload_name, backend), int(r["size"]))] = r
    return rows, time.perf_counter() - t0


def _bytes(key: tuple) -> tuple[float, float]:
    import numpy as np
    from workbench.catalog.workloads import REGISTRY
    return REGISTRY.get(key[0].split(":")[0]).flops_and_bytes(key[1], np.dtype(DTYPE).itemsize)


def _us(s: float) -> str:
    return "-" if not (isinstance(s, float) and math.isfinite(s)) else f"{s * 1e6:,.1f}"


def _pct(a: float, b: float) -> str:
    return "-" if not (math.isfinite(a) and math.isfinite(b) and b > 0) else f"{100 * (a / b - 1):+.1f} %"


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "nvbench.json"
    t0 = time.perf_counter()
    with open(out / "nvbench.log", "w") as log:
        rc = subprocess.run([sys.executable, __file__, "--nvbench", str(json_path)], stdout=log,
                            stderr=subprocess.STDOUT, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}).returncode
    nv_wall = time.perf_counter() - t0
    print(f"nvbench exit {rc} in {nv_wall:.1f} s")
    nv = _nvbench_figures(json_path) if json_path.exists() else {}
    (out / "nvbench_figures.json").write_text(json.dumps({f"{k[0]}@{k[1]}": v for k, v in nv.items()}, indent=1))
    wb, wb_wall = workbench_rows()
    (out / "workbench_rows.json").write_text(json.dumps({f"{k[0]}@{k[1]}": v for k, v in wb.items()},
                                                       default=str, indent=1))
    print(f"workbench: {len(wb)} points in {wb_wall:.1f} s; nvbench: {len(nv)} states in {nv_wall:.1f} s")
    head = ("| kernel | size | warm: workbench | nvbench batch | diff | cold: workbench | nvbench cold | diff "
            "| call (workbench) | nvbench cold CPU | n | status |")
    lines = [head, "|" + "---|" * 12]
    # The share of peak bandwidth (issue 29): nvbench's BWUtil is its bytes/s over the device's
    # theoretical peak (memory clock x bus width); the workbench's rate over that same peak is set
    # beside it, and beside that the workbench's own share, of the copy rate it measured (of_bound).
    bw_head = ("| kernel | size | nvbench GB/s | nvbench BWUtil | workbench GB/s (cold) | workbench share of that peak "
               "| difference (points) | workbench bound, of measured roof |")
    bw_lines = [bw_head, "|" + "---|" * 8]
    for key in sorted(wb, key=lambda k: (k[0], k[1])):
        r, n = wb[key], nv.get(key, {})
        warm, cold = float(r["compute_median_s"]), float(r["cold_median_s"])
        lines.append(f"| {key[0]} | {key[1]:,} | {_us(warm)} | {_us(n.get('batch', math.nan))} | "
                     f"{_pct(warm, n.get('batch', math.nan))} | {_us(cold)} | {_us(n.get('cold', math.nan))} | "
                     f"{_pct(cold, n.get('cold', math.nan))} | {_us(float(r['call_median_s']))} | "
                     f"{_us(n.get('cold_cpu', math.nan))} | {r['repeats']} | {r['status']} |")
        bps, util = n.get("bps", math.nan), n.get("util", math.nan)
        if math.isfinite(bps) and math.isfinite(util) and util > 0:
            flops, nbytes = _bytes(key)
            wb_cold = nbytes / cold if cold > 0 else math.nan
            share = wb_cold / (bps / util)
            bw_lines.append(f"| {key[0]} | {key[1]:,} | {bps / 1e9:,.0f} | {100 * util:.1f} % | {wb_cold / 1e9:,.0f} | "
                            f"{100 * share:.1f} % | {100 * (share - util):+.1f} | {r.get('bound')} "
                            f"{100 * float(r.get('of_bound') or math.nan):.0f} % |")
    table = "\n".join(lines) + "\n\nBandwidth, cold samples (L2 flushed), bytes as the workload counts them\n" + \
        "\n".join(bw_lines)
    (out / "side_by_side.md").write_text(table + "\n")
    print("times in microseconds\n" + table)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--nvbench":
        nvbench_main(sys.argv[2])
    else:
        sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/nvbench-side-by-side")))
