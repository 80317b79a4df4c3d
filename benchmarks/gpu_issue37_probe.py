"""Issue 37, on the accelerator machine, before the workload is written: what CUPTI's copy and
kernel records hold for copies on several streams (pinned and pageable), what its runtime records
cost a call, and how far chunked copies over k streams overlap in CuPy and Numba CUDA.
    python3 benchmarks/gpu_issue37_probe.py OUTDIR        (prints a short table last)"""
from __future__ import annotations

import json
import sys
import time

import cupy as cp
import cupyx
import numpy as np
from numba import cuda

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
N = 2 ** 26
REPS = 32          # sin-FMA steps per element: compute of the order of a copy
lines: list[str] = []

src = f"""
float v = x;
for (int i = 0; i < REPS; ++i) v = sinf(v) * 0.999f + 0.5f;
y = v;
""".replace("REPS", "{reps}")


def kernel(reps: int):
    return cp.ElementwiseKernel("float32 x", "float32 y", src.format(reps=reps), f"heavy{reps}")


@cuda.jit
def nb_heavy(x, y, reps):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(reps):
            v = np.float32(np.sin(v) * np.float32(0.999) + np.float32(0.5))
        y[i] = v


def cupy_run(host_in, host_out, k: int, reps: int) -> float:
    k_ = kernel(reps)
    chunk = N // k
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(k)]
    dx = cp.empty(N, cp.float32)
    dy = cp.empty(N, cp.float32)
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for j, s in enumerate(streams):
        sl = slice(j * chunk, (j + 1) * chunk)
        with s:
            dx[sl].set(host_in[sl], stream=s)
            k_(dx[sl], dy[sl])
            dy[sl].get(stream=s, out=host_out[sl])
    for s in streams:
        s.synchronize()
    return time.perf_counter() - t


def numba_run(host_in, host_out, k: int, reps: int) -> float:
    chunk = N // k
    streams = [cuda.stream() for _ in range(k)]
    dx = cuda.device_array(N, np.float32)
    dy = cuda.device_array(N, np.float32)
    cuda.synchronize()
    t = time.perf_counter()
    for j, s in enumerate(streams):
        a, b = j * chunk, (j + 1) * chunk
        dx[a:b].copy_to_device(host_in[a:b], stream=s)
        nb_heavy[(chunk + 255) // 256, 256, s](dx[a:b], dy[a:b], reps)
        dy[a:b].copy_to_host(host_out[a:b], stream=s)
    for s in streams:
        s.synchronize()
    return time.perf_counter() - t


def best(f, *a, n=5):
    f(*a)
    return min(f(*a) for _ in range(n))


def main() -> None:
    dev = cp.cuda.runtime.getDeviceProperties(0)
    lines.append(f"device {dev['name'].decode()}, asyncEngineCount {dev['asyncEngineCount']}")
    pinned_in = cupyx.empty_pinned(N, np.float32); pinned_in[:] = np.random.default_rng(0).random(N, np.float32)
    pinned_out = cupyx.empty_pinned(N, np.float32)
    page_in = np.array(pinned_in); page_out = np.empty(N, np.float32)
    nb_pin_in = cuda.pinned_array(N, np.float32); nb_pin_in[:] = pinned_in
    nb_pin_out = cuda.pinned_array(N, np.float32)
    # phases alone, for the limit
    dx = cp.empty(N, cp.float32); dy = cp.empty(N, cp.float32)
    for reps in (1, 8, 32):
        k_ = kernel(reps); k_(dx, dy); cp.cuda.Device().synchronize()
        t = time.perf_counter(); k_(dx, dy); cp.cuda.Device().synchronize(); comp = time.perf_counter() - t
        lines.append(f"compute reps={reps}: {comp*1e3:.3f} ms")
    t = time.perf_counter(); dx.set(pinned_in); cp.cuda.Device().synchronize(); h2d = time.perf_counter() - t
    t = time.perf_counter(); dx.get(out=pinned_out); d2h = time.perf_counter() - t
    lines.append(f"pinned h2d {h2d*1e3:.3f} ms, d2h {d2h*1e3:.3f} ms")
    res = {}
    for reps in (1, REPS):
        for k in (1, 2, 4, 8):
            res[("cupy", "pinned", k, reps)] = best(cupy_run, pinned_in, pinned_out, k, reps)
            res[("cupy", "pageable", k, reps)] = best(cupy_run, page_in, page_out, k, reps)
            res[("numba", "pinned", k, reps)] = best(numba_run, nb_pin_in, nb_pin_out, k, reps)
            res[("numba", "pageable", k, reps)] = best(numba_run, page_in, page_out, k, reps)
    for key, v in sorted(res.items()):
        lines.append(f"{key}: {v*1e3:.3f} ms")
    # CUPTI: what the records hold
    from cupti import cupti
    recs = []
    cupti.activity_register_callbacks(lambda: (8 << 20, 0), lambda acts: recs.extend(acts))
    kinds = [cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY, cupti.ActivityKind.MEMSET,
             cupti.ActivityKind.RUNTIME, cupti.ActivityKind.DRIVER]
    for k_ in kinds:
        cupti.activity_enable(k_)
    t0 = cupti.get_timestamp()
    cupy_run(pinned_in, pinned_out, 4, REPS)
    cupy_run(page_in, page_out, 2, 1)
    numba_run(nb_pin_in, nb_pin_out, 2, 1)
    cupti.activity_flush_all(1)
    for k_ in kinds:
        cupti.activity_disable(k_)
    dump = []
    for r in recs:
        d = {"kind": int(r.kind), "start": int(r.start) - t0, "end": int(r.end) - t0}
        for f in ("stream_id", "correlation_id", "bytes", "copy_kind", "src_kind", "dst_kind", "name", "cbid",
                  "thread_id", "context_id", "device_id"):
            if hasattr(r, f):
                try:
                    v = getattr(r, f)
                    d[f] = v if isinstance(v, (int, float)) else str(v)
                except Exception as exc:  # noqa: BLE001
                    d[f] = f"! {exc}"
        if hasattr(r, "cbid") and "name" not in d:
            try:
                dom = cupti.CallbackDomain.RUNTIME_API if r.kind == cupti.ActivityKind.RUNTIME else cupti.CallbackDomain.DRIVER_API
                d["api"] = str(cupti.get_callback_name(dom, r.cbid))
            except Exception as exc:  # noqa: BLE001
                d["api"] = f"! {exc}"
        dump.append(d)
    json.dump(dump, open(f"{OUT}/cupti-records.json", "w"), indent=0)
    by = {}
    for d in dump:
        by[d["kind"]] = by.get(d["kind"], 0) + 1
    lines.append(f"records by kind: {by}")
    lines.append("copies: " + "; ".join(f"s{d.get('stream_id')} {d.get('bytes')}B ck{d.get('copy_kind')} "
                                       f"src{d.get('src_kind')} dst{d.get('dst_kind')} {(d['end']-d['start'])/1e3:.0f}us"
                                       for d in dump if "bytes" in d and "copy_kind" in d)[:1500])
    # cost of runtime records: 2000 small launches
    small = cp.zeros(1024, cp.float32)
    def launches():
        cp.cuda.Device().synchronize(); t = time.perf_counter()
        for _ in range(2000):
            cp.add(small, 1, out=small)
        cp.cuda.Device().synchronize(); return time.perf_counter() - t
    base = best(launches)
    costs = {}
    for name, ks in (("gpu only", kinds[:3]), ("gpu+runtime", kinds[:4]), ("gpu+runtime+driver", kinds)):
        for k_ in ks:
            cupti.activity_enable(k_)
        costs[name] = best(launches)
        for k_ in ks:
            cupti.activity_disable(k_)
        cupti.activity_flush_all(1)
    lines.append(f"2000 launches: bare {base*1e3:.2f} ms; " + "; ".join(f"{k} {v*1e3:.2f} ms" for k, v in costs.items()))
    print("\n".join(lines))
    open(f"{OUT}/probe37.txt", "w").write("\n".join(lines))


if __name__ == "__main__":
    main()
