"""Measure each workload's host peak against its declared footprint, in a process of its own.

Run by tests/test_footprint.py (and by hand: python tests/footprint_probe.py [WORKLOAD...]).
For every CPU backend and dtype: one small point first (imports, JIT, caches), then the point at
the size whose declared footprint is about TARGET bytes, with the process's high-water mark reset
just before its inputs are made. Prints one JSON line per point.
"""
from __future__ import annotations

import json
import sys
import tracemalloc

import numpy as np

from workbench.measure import protocol
from workbench.catalog.backends import BACKENDS
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.measure.host_memory import HostPeak
from workbench.catalog.workloads import REGISTRY

TARGET = 256 * 2 ** 20


def size_for(workload, isz: int) -> int:
    """The largest size whose declared footprint stays within TARGET (sizes are whole numbers)."""
    lo, hi = 1, 2
    while workload.footprint(hi, isz) <= TARGET:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if workload.footprint(mid, isz) <= TARGET else (lo, mid)
    return lo


def point(workload: str, backend: str, size: int, dtype: str, variant: str) -> dict:
    spec = SweepSpec(workload, (backend,), (size,), dtype, variants=(variant,) if variant else (),
                     min_repeats=1, budget_s=0.0, max_repeats=1)
    (row,) = protocol.rows(run_sweep(spec))
    return row


def main(names: list[str]) -> None:
    tracemalloc.start()
    for name in names or REGISTRY.names():
        w = REGISTRY.get(name)
        for backend in w.backends:
            if BACKENDS[backend].device != "cpu":
                continue
            for dtype, variant in ((d, v) for d in w.dtypes for v in w.variants):
                isz = np.dtype(dtype).itemsize
                point(name, backend, w.default_sizes[0], dtype, variant)   # imports, JIT and caches first
                size = size_for(w, isz)
                with HostPeak().scope() as resident:     # allocators' free pages given back first
                    tracemalloc.reset_peak()
                    traced = tracemalloc.get_traced_memory()[0]
                    row = point(name, backend, size, dtype, variant)
                    # Two lower bounds of the true peak, the larger kept: tracemalloc misses what
                    # Numba allocates, the resident set what a page holds beside the point's data.
                    peak = max(resident(), tracemalloc.get_traced_memory()[1] - traced)
                print(json.dumps({"workload": name, "backend": backend, "dtype": dtype, "variant": variant, "size": size,
                                  "declared": w.footprint(size, isz), "peak": peak,
                                  "status": row["status"]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
