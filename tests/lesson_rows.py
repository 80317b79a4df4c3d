"""Rows and statements for the lessons' tests: synthetic measured rows, and a lesson's statement
from them under a given availability of the backends (tests/test_lessons.py and its companions)."""
from __future__ import annotations

from helpers import measured

from workbench import lessons
from workbench.results import rows as results
from workbench.catalog.backends import BACKENDS, Availability


ALL_USABLE = {b: Availability(True, "", "test") for b in BACKENDS}
NO_GPU = {b: Availability(BACKENDS[b].device == "cpu", "" if BACKENDS[b].device == "cpu" else "no GPU here", "test")
          for b in BACKENDS}
POW2 = [2 ** k for k in range(10, 27, 2)]


def row(backend, size, total, compute=None, h2d=0.0, d2h=0.0, variant="", workload="source_terms",
        dtype="float32", host_memory=None, first=None, status="ok", **kw):
    gpu = backend in BACKENDS and BACKENDS[backend].device == "gpu"
    compute = total - h2d - d2h if compute is None else compute
    return measured(
        workload=workload, backend=backend, size=size, dtype=dtype, variant=variant,
        host_memory=(host_memory or "pageable") if gpu else "", compute_median_s=compute, total_median_s=total,
        h2d_s=h2d, d2h_s=d2h, first_call_s=2 * total if first is None else first, status=status, repeats=3,
        **kw)


def say(name, rows, availability=ALL_USABLE):
    p = lessons.plan(lessons.get(name), availability)
    return lessons.explain(p, results.to_frame(rows))
