"""How the kernel is written: one kernel per operation, a fused kernel, several elements per thread."""
from __future__ import annotations

import math

from workbench.core import stats
from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, gpu, pow2
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, percent

LESSON = Lesson(
    order=60,
    name="kernel-style", title="How the kernel is written",
    claim="A plain array expression runs one kernel per operation and makes temporaries; a fused kernel "
          "makes one pass over memory; several elements per thread with wide loads keep more bytes in "
          "flight and come closest to the memory's bandwidth.",
    workload="source_terms",
    backends=("numpy", "numba", "cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4"),
    sizes=pow2(20, 26), chart="runtime",
    on_gpu="on the H200 of docs/PERFORMANCE.md (source_terms, float32, 2^26), plain cupy reached 28 % of "
           "the copy bandwidth, cupy-fused 57 %, cupy-raw (wide loads, several elements per thread) 98 %; "
           "numba-cuda 73 % with one element per thread, 93 % with four.")

#: How each backend writes the kernel, as the statement names it.
DESCRIBED = {"cupy": "one kernel per operation, with a temporary", "cupy-fused": "fused into one kernel",
             "cupy-raw": "several elements per thread, wide loads", "numba-cuda": "one element per thread",
             "numba-cuda-x4": "four elements per thread"}
#: (better, worse, what the better one does): each step of the lesson, checked where both ran.
STEPS = (("cupy-fused", "cupy", "Fusing the expression into one kernel"),
         ("cupy-raw", "cupy-fused", "Several elements per thread"),
         ("numba-cuda-x4", "numba-cuda", "Four elements per thread"))


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    measured = m.backends(ls.backends)
    s = max((m.rows(b)["size"].max() for b in measured), default=None)
    if s is None:
        return

    def bw(b: str) -> float:
        return m.value(b, s, "gbps")

    def said(b: str) -> str:
        limit = m.value(b, s, "gbps_limit")
        return f"{bw(b):,.0f} GB/s" + (f" ({percent(bw(b) / limit)})" if limit > 0 else "")

    gpus = [b for b in measured if gpu(b) and math.isfinite(bw(b))]
    if gpus:
        shares = any(m.value(b, s, "gbps_limit") > 0 for b in gpus)
        say.note(f"At {fmt_size(s)}" + (", in GB/s and as a share of the device's copy bandwidth" if shares else "")
                 + ": " + "; ".join(f"{b} ({DESCRIBED.get(b, b)}) {said(b)}" for b in gpus) + ".")
    launched = {b: int(m.value(b, s, "kernel_count")) for b in gpus if m.value(b, s, "kernel_count") > 0}
    if launched:        # CUPTI's records of one call (workbench.measure.gpu.kernels)
        say.note("One call launches " + "; ".join(
            f"{b} {n} kernel{'s' if n != 1 else ''}" for b, n in launched.items()) + ".")
    for better, worse, what in STEPS:
        if better in gpus and worse in gpus:
            # The same bytes: 10 % more bandwidth is 10 % less time, decided with the intervals.
            helped, v = m.takes_at_least(1.1, worse, better, s, "compute_median_s")
            say.decide(helped,
                       f"{what} took {worse}'s {bw(worse):,.0f} GB/s to {bw(better):,.0f} GB/s.",
                       f"{what} did not help here: {better} {bw(better):,.0f} GB/s against {worse}'s "
                       f"{bw(worse):,.0f} GB/s.", v)
    if "numpy" in measured and "numba" in measured and math.isfinite(bw("numpy")) and math.isfinite(bw("numba")):
        # One pass against temporaries holds on the CPU too: without a GPU, this is the measured part.
        yes = (f"On the CPU the same holds: numba's single loop moved {bw('numba'):,.1f} GB/s, numpy's "
               f"expression with its temporaries {bw('numpy'):,.1f} GB/s.")
        no = (f"On the CPU numba's single loop ({bw('numba'):,.1f} GB/s) was no faster than numpy's expression "
              f"with its temporaries ({bw('numpy'):,.1f} GB/s).")
        helped, v = m.takes_at_least(1.1, "numpy", "numba", s, "compute_median_s")
        if gpus:
            say.note(yes if helped else no if helped is False else f"Undecided ({stats.describe(v)}): {yes}")
        else:
            say.decide(helped, yes, no, v)
