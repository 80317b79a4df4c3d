"""GPU benchmarks of the workbench, run on the accelerator machine.

1. fidelity: the engine's compute median for CuPy matmul (4096, float32), fft (2^24) and
   source_terms (2^26) against cupyx.profiler.benchmark's median GPU time for the same
   operation in the same process. Target: within 5 %.
2. bandwidth: source_terms (2^26), flux (8192^2) and stencil (8192^2), every GPU backend,
   float32 and float64, as a fraction of the device-to-device copy bandwidth measured here.
   Target: the best CuPy and the best Numba CUDA implementation each at 70 % or more.
3. transfers: the transfer workload with pinned memory against a plain pinned CuPy copy.
   Target: 90 % or more.
4. the Numba CUDA tiled matmul as a fraction of cuBLAS.
5. cuDF groupby and merge at 10 million rows against pandas (last: importing cuDF makes RMM
   the allocator of the whole process).

Run: python benchmarks/gpu_bench.py [OUTDIR]   (prints Markdown; writes OUTDIR/gpu_bench.md/.json)
"""
from __future__ import annotations

import datetime
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.catalog.backends import probe  # noqa: E402
from workbench.measure.engine import SweepSpec, run_sweep  # noqa: E402
from workbench.measure import protocol  # noqa: E402
from workbench.measure.environment import record  # noqa: E402
from _lines import say, write_lines  # noqa: E402

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
DATA: dict = {}


def rows(workload, backends, size, dtype, **kw):
    spec = SweepSpec(workload, tuple(backends), (size,), dtype, min_repeats=kw.pop("min_repeats", 10),
                     budget_s=kw.pop("budget_s", 0.3), **kw)
    out = protocol.rows(run_sweep(spec))
    for r in out:
        if r["status"] != "ok":
            say(f"  ! {workload} {r['backend']} {size} {dtype}: {r['status']}: {r['message']}")
    return out


def gpu_median(fn, n_repeat=100) -> float:
    """cupyx.profiler.benchmark's median GPU time, seconds."""
    from cupyx.profiler import benchmark
    res = benchmark(fn, n_repeat=n_repeat, n_warmup=10)
    return float(np.median(res.gpu_times[0]))


def free_device_memory() -> None:
    """Give back what a section's arrays left in CuPy's pools (called once they are out of scope)."""
    import cupy as cp
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


def fidelity() -> None:
    import cupy as cp
    say("## Fidelity: engine compute median vs cupyx.profiler.benchmark (same process)\n")
    say("| operation | engine median | cupyx median | difference |")
    say("| --- | --- | --- | --- |")
    rng = np.random.default_rng(0)
    cases = []
    n = 4096
    a = cp.asarray(rng.random((n, n), dtype=np.float32))
    b = cp.asarray(rng.random((n, n), dtype=np.float32))
    c = cp.empty((n, n), np.float32)
    cases.append(("matmul 4096 float32", ("matmul", "cupy", n, "float32"), lambda: cp.matmul(a, b, out=c)))
    x = cp.asarray((rng.random(2 ** 24) + 1j * rng.random(2 ** 24)).astype(np.complex64))
    cases.append(("fft 2^24 complex64", ("fft", "cupy", 2 ** 24, "float32"), lambda: cp.fft.fft(x)))
    co = cp.asarray(rng.random(2 ** 26, dtype=np.float32))
    ph = cp.asarray(rng.random(2 ** 26, dtype=np.float32))
    o = cp.empty_like(ph)
    cases.append(("source_terms 2^26 float32", ("source_terms", "cupy", 2 ** 26, "float32"),
                  lambda: cp.multiply(co, ph ** 2, out=o)))
    DATA["fidelity"] = []
    for label, (w, be, size, dt), fn in cases:
        es, cs = [], []
        for _ in range(3):   # alternate, compare medians of medians
            es.append(rows(w, [be], size, dt, min_repeats=30, budget_s=0.5)[0]["compute_median_s"])
            cs.append(gpu_median(fn))
        e, cx = statistics.median(es), statistics.median(cs)
        diff = (e - cx) / cx
        DATA["fidelity"].append({"case": label, "engine_s": e, "cupyx_s": cx, "diff": diff})
        say(f"| {label} | {e * 1e3:.4f} ms | {cx * 1e3:.4f} ms | {diff * 100:+.1f} % |")
    say()


def copy_bandwidth() -> float:
    """Device-to-device copy bandwidth (bytes read + written), the best of two ways to copy."""
    import cupy as cp
    n = 2 ** 27
    src = cp.ones(n, np.float32)
    dst = cp.empty_like(src)
    nbytes = src.nbytes
    t_kernel = gpu_median(lambda: cp.copyto(dst, src), 50)
    t_memcpy = gpu_median(lambda: dst.data.copy_from_device_async(src.data, nbytes), 50)
    best = 2 * nbytes / min(t_kernel, t_memcpy) / 1e9
    say(f"Device-to-device copy of {nbytes / 2**20:.0f} MiB: copy kernel {2 * nbytes / t_kernel / 1e9:.0f} GB/s, "
        f"cudaMemcpy {2 * nbytes / t_memcpy / 1e9:.0f} GB/s; the ceiling used below: {best:.0f} GB/s\n")
    return best


def bandwidth(copy_gbps: float) -> None:
    say("## Bandwidth: every GPU implementation as a fraction of the copy bandwidth\n")
    say("| workload | size | dtype | backend | compute median | GB/s | of copy |")
    say("| --- | --- | --- | --- | --- | --- | --- |")
    gpu = ["cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4"]
    DATA["bandwidth"] = []
    best: dict = {}
    for workload, size in (("source_terms", 2 ** 26), ("flux", 8192), ("stencil", 8192)):
        for dt in ("float32", "float64"):
            for r in rows(workload, gpu, size, dt, min_repeats=10, budget_s=0.3):
                frac = r["gbps"] / copy_gbps
                DATA["bandwidth"].append({k: r[k] for k in ("workload", "backend", "size", "dtype",
                                                            "compute_median_s", "gbps", "status")} | {"fraction": frac})
                say(f"| {workload} | {size} | {dt} | {r['backend']} | {r['compute_median_s'] * 1e3:.3f} ms | "
                    f"{r['gbps']:.0f} | {frac * 100:.0f} % |")
                family = "CuPy" if r["backend"].startswith("cupy") else "Numba CUDA"
                key = (workload, dt, family)
                if r["status"] == "ok" and frac > best.get(key, (0, ""))[0]:
                    best[key] = (frac, r["backend"])
    say("\nBest per library (target 70 %):\n")
    say("| workload | dtype | library | best backend | of copy | target met |")
    say("| --- | --- | --- | --- | --- | --- |")
    for (workload, dt, family), (frac, backend) in best.items():
        say(f"| {workload} | {dt} | {family} | {backend} | {frac * 100:.0f} % | {'yes' if frac >= 0.7 else 'NO'} |")
    say()


def transfers() -> None:
    import cupy as cp
    import cupyx
    say("## Transfers: the transfer workload against a plain CuPy copy\n")
    nbytes = 2 ** 28
    n = nbytes // 4
    plain = {}
    for kind in ("pinned", "pageable"):
        host = cupyx.empty_pinned(n, np.float32) if kind == "pinned" else np.empty(n, np.float32)
        host[...] = 1
        dev = cp.empty(n, np.float32)
        t_up = gpu_median(lambda dev=dev, host=host: dev.set(host), 20)
        t_down = gpu_median(lambda dev=dev, host=host: dev.get(out=host), 20)
        plain[kind] = (nbytes / t_up / 1e9, nbytes / t_down / 1e9)
    host = dev = None
    free_device_memory()
    say("| backend | host memory | h2d GB/s | plain CuPy h2d | ratio | d2h GB/s | plain CuPy d2h | ratio |")
    say("| --- | --- | --- | --- | --- | --- | --- | --- |")
    DATA["transfers"] = []
    for backend in ("cupy", "numba-cuda"):
        for kind in ("pinned", "pageable"):
            (r,) = rows("transfer", [backend], nbytes, "float32", host_memory=kind, min_repeats=10, budget_s=0.5)
            up, down = nbytes / r["h2d_s"] / 1e9, nbytes / r["d2h_s"] / 1e9
            pu, pd_ = plain[kind]
            DATA["transfers"].append({"backend": backend, "host_memory": kind, "h2d_gbps": up, "d2h_gbps": down,
                                      "plain_h2d_gbps": pu, "plain_d2h_gbps": pd_})
            say(f"| {backend} | {kind} | {up:.1f} | {pu:.1f} | {up / pu * 100:.0f} % | {down:.1f} | {pd_:.1f} | "
                f"{down / pd_ * 100:.0f} % |")
    say()


def tiled_matmul() -> None:
    say("## Numba CUDA tiled matmul against cuBLAS (CuPy)\n")
    say("| n | dtype | cuBLAS TFLOP/s | tiled TFLOP/s | fraction |")
    say("| --- | --- | --- | --- | --- |")
    DATA["matmul"] = []
    for n in (2048, 4096):
        for dt in ("float32", "float64"):
            rs = {r["backend"]: r for r in rows("matmul", ["cupy", "numba-cuda"], n, dt, min_repeats=5)}
            cub, til = rs["cupy"]["gflops"] / 1e3, rs["numba-cuda"]["gflops"] / 1e3
            DATA["matmul"].append({"n": n, "dtype": dt, "cublas_tflops": cub, "tiled_tflops": til})
            say(f"| {n} | {dt} | {cub:.1f} | {til:.2f} | {til / cub * 100:.1f} % |")
    say()


def dataframes() -> None:
    say("## cuDF against pandas at 10 million rows\n")
    a = probe("cudf")
    if not a.usable:
        say(f"cuDF not usable here: {a.reason}\n")
        return
    say("| workload | dtype | pandas compute | cuDF compute | speedup | cuDF h2d + d2h | speedup end-to-end |")
    say("| --- | --- | --- | --- | --- | --- | --- |")
    DATA["dataframes"] = []
    for workload in ("groupby", "merge"):
        for dt in ("float64",):
            rs = {r["backend"]: r for r in rows(workload, ["pandas", "cudf"], 10_000_000, dt, min_repeats=3,
                                                 budget_s=1.0)}
            p, c = rs["pandas"], rs["cudf"]
            DATA["dataframes"].append({"workload": workload, "dtype": dt, "pandas_s": p["compute_median_s"],
                                       "cudf_s": c["compute_median_s"], "cudf_total_s": c["total_median_s"]})
            say(f"| {workload} | {dt} | {p['compute_median_s'] * 1e3:.1f} ms | {c['compute_median_s'] * 1e3:.2f} ms | "
                f"{p['compute_median_s'] / c['compute_median_s']:.0f}x | {(c['h2d_s'] + c['d2h_s']) * 1e3:.1f} ms | "
                f"{p['total_median_s'] / c['total_median_s']:.1f}x |")
    say()


def main() -> None:
    env = record()
    gpus = env["gpus"]
    say(f"# GPU benchmarks, {datetime.date.today()}\n")
    say(f"GPU: {gpus}\n")
    say(f"Libraries: {env['libraries']}; CPU: {env['cpu']} ({env['cpu_cores_logical']} threads)\n")
    DATA["environment"] = env
    fidelity()
    free_device_memory()
    copy = copy_bandwidth()
    free_device_memory()
    DATA["copy_gbps"] = copy
    bandwidth(copy)
    transfers()
    tiled_matmul()
    dataframes()
    write_lines(OUT / "gpu_bench.md")
    (OUT / "gpu_bench.json").write_text(json.dumps(DATA, indent=1, default=str))


if __name__ == "__main__":
    main()
