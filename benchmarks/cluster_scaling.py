"""Multi-GPU scaling curves: the seed's multi-GPU ground, measured against the number of GPUs.

    python benchmarks/cluster_scaling.py                       # every GPU here, strong and weak scaling
    python benchmarks/cluster_scaling.py --gpus 1,2,4,8 --rows 2^26 --out scaling.json
    python benchmarks/cluster_scaling.py --overhead            # dask-cudf on one GPU against cuDF alone, by size
    python benchmarks/cluster_scaling.py --cpu                 # only the dask.dataframe baseline (no GPU)

Workloads, each verified against the single-device (or pandas/NumPy) result before it is timed:

- ``groupby``: a group-by mean of R rows over 1000 keys with dask-cudf over N GPUs (one dask-cuda
  worker each); baseline: dask.dataframe with pandas partitions over N CPU workers;
- ``merge``: R rows merged with a 1000-row table (a broadcast join) then summed, the same way;
- ``reduction``: the sum of R float64 values in a ``dask.array`` of CuPy chunks over N GPUs (each
  GPU makes and sums its own chunks; the partial sums meet on the client), against ``cupy.sum`` on
  one GPU.

Strong scaling keeps R fixed as N grows; weak scaling gives each GPU R rows (R x N in all). Time
is the median of ``--repeats`` runs after one warm-up run, wall-clock on the client (what a user
of Dask waits for), data made on the workers and persisted before the clock starts. Written for any
number of GPUs: on a machine with one, N is 1 and the figures are the cost of the Dask layer; a
machine with eight runs it unchanged. No Qt, no workbench import: it runs wherever dask-cuda does.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

KEYS = 1000


def parse_n(text: str) -> int:
    text = text.strip().replace("_", "")
    return 2 ** int(text[2:]) if text.startswith("2^") else int(float(text))


def timed(fn, repeats: int) -> tuple[float, list[float]]:
    fn()                                            # warm-up: kernels compiled, plans and pools made
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples


def gpu_count() -> int:
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetCount()
    except Exception:  # noqa: BLE001 - no NVML: ask CuPy
        try:
            import cupy
            return cupy.cuda.runtime.getDeviceCount()
        except Exception:  # noqa: BLE001
            return 0


# The frames, made on the workers ----------------------------------------------------------------

def frame(rows: int, parts: int, gpu: bool):
    """A dask frame of ``rows`` rows (key in [0, KEYS), value float64) in ``parts`` partitions, each
    made where it lives (on its GPU with cudf), from a fixed seed per partition."""
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    sizes = [rows // parts + (1 if i < rows % parts else 0) for i in range(parts)]

    def part(i: int, n: int):
        rng = np.random.default_rng(1000 + i)
        pdf = pd.DataFrame({"key": rng.integers(0, KEYS, n, dtype=np.int64), "value": rng.random(n)})
        if gpu:
            import cudf
            return cudf.from_pandas(pdf)
        return pdf
    meta = part(0, 0)
    return dd.from_delayed([_delayed(part)(i, n) for i, n in enumerate(sizes)], meta=meta)


def _delayed(fn):
    import dask
    return dask.delayed(fn, pure=True)


def reference(rows: int, parts: int) -> tuple:
    """pandas' group-by mean and merge-sum of the same rows: what every run is checked against."""
    import pandas as pd
    sizes = [rows // parts + (1 if i < rows % parts else 0) for i in range(parts)]
    pdf = pd.concat([_pandas_part(i, n) for i, n in enumerate(sizes)])
    means = pdf.groupby("key")["value"].mean().sort_index()
    m = pdf.merge(_table(), on="key")
    return means, float((m["weight"] * m["value"]).sum())


def _pandas_part(i: int, n: int):
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(1000 + i)
    return pd.DataFrame({"key": rng.integers(0, KEYS, n, dtype=np.int64), "value": rng.random(n)})


def _table():
    import numpy as np
    import pandas as pd
    return pd.DataFrame({"key": np.arange(KEYS, dtype=np.int64), "weight": np.linspace(0.5, 1.5, KEYS)})


def run_frames(client, rows: int, parts: int, gpu: bool, repeats: int, check) -> dict:
    """Group-by and merge on the cluster of ``client``: medians, verified against ``check``."""
    import numpy as np
    df = frame(rows, parts, gpu).persist()
    from distributed import wait
    wait(df)
    table = _table()
    if gpu:
        import cudf
        table = cudf.from_pandas(table)

    def groupby():
        out = df.groupby("key")["value"].mean().compute()
        return out.to_pandas() if hasattr(out, "to_pandas") else out

    def merge():
        m = df.merge(table, on="key", broadcast=True)
        return float((m["weight"] * m["value"]).sum().compute())
    means, merged = check
    got = groupby().sort_index()
    ok_g = bool(np.allclose(got.to_numpy(), means.to_numpy(), rtol=1e-9, atol=0)) and len(got) == len(means)
    ok_m = math.isclose(merge(), merged, rel_tol=1e-9)
    tg, _ = timed(groupby, repeats)
    tm, _ = timed(merge, repeats)
    del df
    return {"groupby": (tg, ok_g), "merge": (tm, ok_m)}


def run_reduction(client, rows: int, parts: int, repeats: int) -> tuple[float, bool]:
    """The sum of ``rows`` float64 values in CuPy chunks on the workers, checked against one GPU's."""
    import cupy
    import dask.array as da
    from distributed import wait
    chunk = -(-rows // parts)
    x = da.random.RandomState(seed=7, RandomState=cupy.random.RandomState).random_sample(rows, chunks=chunk)
    x = x.persist()
    wait(x)
    total = float(x.sum().compute())
    one = _single_device_sum(x)
    ok = math.isclose(total, one, rel_tol=1e-12)
    t, _ = timed(lambda: float(x.sum().compute()), repeats)
    return t, ok


def _single_device_sum(x) -> float:
    """Every chunk brought to this process's GPU and summed there by ``cupy.sum``: one device's result."""
    import cupy
    return float(cupy.sum(cupy.asarray(x.compute())))


# Clusters ----------------------------------------------------------------------------------------

def gpu_cluster(n: int):
    from dask_cuda import LocalCUDACluster
    from distributed import Client
    visible = ",".join(str(i) for i in range(n))
    cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=visible, host="127.0.0.1", dashboard_address=None,
                               silence_logs=40)
    return cluster, Client(cluster)


def cpu_cluster(n: int):
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                           silence_logs=40)
    return cluster, Client(cluster)


def scaling(args) -> list[dict]:
    gpus = [int(g) for g in args.gpus.split(",")] if args.gpus else list(range(1, gpu_count() + 1))
    cpus = [int(c) for c in args.cpus.split(",")] if args.cpus else sorted({1, max(1, (os.cpu_count() or 2) // 2)})
    out = []
    modes = (("strong", lambda n: args.rows), ("weak", lambda n: args.rows * n))
    if not args.cpu:
        for n in gpus:
            cluster, client = gpu_cluster(n)
            try:
                for mode, rows_of in modes:
                    rows, parts = rows_of(n), max(n, args.parts_per_device * n)
                    check = reference(rows, parts) if rows <= args.check_rows else None
                    if check is not None:
                        res = run_frames(client, rows, parts, True, args.repeats, check)
                        for kind, (t, ok) in res.items():
                            out.append(dict(kind=kind, engine="dask-cudf", devices=n, mode=mode, rows=rows, seconds=t,
                                            verified=ok))
                    t, ok = run_reduction(client, rows, parts, args.repeats)
                    out.append(dict(kind="reduction", engine="dask.array+cupy", devices=n, mode=mode, rows=rows,
                                    seconds=t, verified=ok))
                    print(out[-1], file=sys.stderr, flush=True)
            finally:
                client.close()
                cluster.close()
    for n in cpus:
        cluster, client = cpu_cluster(n)
        try:
            for mode, rows_of in modes:
                rows, parts = rows_of(n), max(n, args.parts_per_device * n)
                if rows > args.check_rows:
                    continue
                res = run_frames(client, rows, parts, False, args.repeats, reference(rows, parts))
                for kind, (t, ok) in res.items():
                    out.append(dict(kind=kind, engine="dask.dataframe", devices=n, mode=mode, rows=rows, seconds=t,
                                    verified=ok))
                print(out[-1], file=sys.stderr, flush=True)
        finally:
            client.close()
            cluster.close()
    return out


def overhead(args) -> list[dict]:
    """dask-cudf on one GPU (one partition, one dask-cuda worker) against cuDF alone, by size: the
    cost of the Dask layer."""
    import cudf
    out = []
    cluster, client = gpu_cluster(1)
    try:
        for rows in args.sizes:
            pdf = _pandas_part(0, rows)
            gdf = cudf.from_pandas(pdf)
            alone, _ = timed(lambda: gdf.groupby("key")["value"].mean().to_pandas(), args.repeats)
            df = frame(rows, 1, True).persist()
            from distributed import wait
            wait(df)
            dask_t, _ = timed(lambda: df.groupby("key")["value"].mean().compute().to_pandas(), args.repeats)
            got = df.groupby("key")["value"].mean().compute().to_pandas().sort_index()
            want = pdf.groupby("key")["value"].mean().sort_index()
            import numpy as np
            ok = bool(np.allclose(got.to_numpy(), want.to_numpy(), rtol=1e-9, atol=0))
            out.append(dict(kind="groupby", engine="dask-cudf / cudf", devices=1, mode="overhead", rows=rows,
                            seconds=dask_t, alone_s=alone, verified=ok))
            print(out[-1], file=sys.stderr, flush=True)
            del df
    finally:
        client.close()
        cluster.close()
    return out


def table(rows: list[dict]) -> str:
    lines = [f"{'kind':<10} {'engine':<18} {'mode':<8} {'N':>3} {'rows':>12} {'time':>10} {'speedup':>8} {'ok':>3}"]
    base = {}
    for r in rows:
        key = (r["kind"], r["engine"], r["mode"])
        base.setdefault(key, r["seconds"])      # the first N of each curve: N=1 where it was measured
        if r["mode"] == "overhead":
            speed, extra = "", f" x{r['seconds'] / r['alone_s']:.2f} of cuDF alone ({r['alone_s'] * 1e3:.2f} ms)"
        else:     # t(first N) / t(N): strong scaling's ideal is N, weak scaling's 1.0 (N times the work)
            speed, extra = f"{base[key] / r['seconds']:.2f}", ""
        lines.append(f"{r['kind']:<10} {r['engine']:<18} {r['mode']:<8} {r['devices']:>3} {r['rows']:>12,} "
                     f"{r['seconds'] * 1e3:>8.2f}ms {speed:>8} {'yes' if r['verified'] else 'NO':>3}{extra}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", help="comma list of GPU counts (default 1 to every GPU here)")
    p.add_argument("--cpus", help="comma list of CPU worker counts for the dask.dataframe baseline")
    p.add_argument("--rows", type=parse_n, default=2 ** 24, help="rows (values) per run, strong scaling (default 2^24)")
    p.add_argument("--parts-per-device", type=int, default=4)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--check-rows", type=parse_n, default=2 ** 26,
                   help="the largest frame checked against pandas (and so measured); larger ones are skipped")
    p.add_argument("--cpu", action="store_true", help="only the dask.dataframe baseline")
    p.add_argument("--overhead", action="store_true", help="dask-cudf on one GPU against cuDF alone, by size")
    p.add_argument("--sizes", default="2^16,2^20,2^24", help="with --overhead: the sizes")
    p.add_argument("--out", help="write the rows as JSON here")
    args = p.parse_args(argv)
    args.sizes = [parse_n(s) for s in args.sizes.split(",")]
    rows = overhead(args) if args.overhead else scaling(args)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    print(table(rows))
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
