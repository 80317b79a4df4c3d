"""The first call pays for compilation: a JIT's first call against a steady one, and when it pays back."""
from __future__ import annotations

import math

from workbench.core import stats
from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, times
from workbench.results.rows import human_bytes, human_seconds

#: The backends that compile at their first call: the ones the claim is about.
JIT_BACKENDS = ("numba", "numba-cuda", "numba-cuda-x4")

LESSON = Lesson(
    order=30,
    name="first-call", title="The first call pays for compilation",
    claim="A JIT compiler (Numba on the CPU, Numba CUDA) compiles at the first call: it costs far more than "
          "a steady call, and pays back only over many calls.",
    workload="source_terms", backends=("numpy", "numba", "cupy", "cupy-fused", "numba-cuda"),
    sizes=(2 ** 12, 2 ** 16, 2 ** 20), chart="first-call", fresh_engine=True,
    on_gpu="numba-cuda's first call compiles its kernel (324 ms on the H200 machine of docs/PERFORMANCE.md "
           "at 2^12 cells, 1,115x a steady call), CuPy's loads its kernels from its cache (24 ms).")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    for b in m.backends(ls.backends):
        r = m.rows(b).iloc[0]                 # the first size: the one that compiled
        first, steady = float(r["first_call_s"]), float(r["total_median_s"])
        if not (first > 0 and steady > 0):
            continue
        ratio = first / steady
        said = f"{b}'s first call took {human_seconds(first)}, {times(ratio)} a steady call " \
               f"({human_seconds(steady)}) at {fmt_size(int(r['size']))}" + _memory(r)
        if b in JIT_BACKENDS:
            say.claim(ratio >= 10 and first - steady >= 1e-3, f"{said}: compilation.",
                      f"{said}: it compiled nothing here (a kernel compiled earlier in the same process, or "
                      "a cache).")
            _pays_back(m, say, b, base, first - steady)
        else:
            say.note(f"{said}" + (": no compiler, only first-touch costs." if b == "numpy" else "."))


def _pays_back(m: Measured, say: Say, b: str, base: str, overhead: float) -> None:
    s = m.largest([b, base])
    if s is None or b == base:
        return
    gain = m.value(base, s, "total_median_s") - m.value(b, s, "total_median_s")
    v = m.verdict(b, base, s)
    if v.verdict in ("same", "undecided") and gain > 0:
        say.note(f"At {fmt_size(s)} {b} and {base} could not be told apart ({stats.describe(v)}): whether its "
                 "compilation pays back is not decided by these points.")
    elif v.verdict == "faster":
        say.note(f"At {fmt_size(s)} {b} saves {human_seconds(gain)} a call over {base}: its compilation pays "
                 f"back after about {math.ceil(overhead / gain):,} calls.")
    else:
        say.note(f"At {fmt_size(s)} {b} is no faster than {base}: its compilation never pays back at this size.")


def _memory(r) -> str:
    """', and 187 MiB of host memory against a steady call's 64 MiB': where the first call held more."""
    for what in ("host", "device"):
        first, steady = float(r.get(f"first_call_{what}_bytes", math.nan)), float(r.get(f"peak_{what}_bytes", math.nan))
        if math.isfinite(first) and math.isfinite(steady) and first > steady + 2 ** 20:
            return f", and {human_bytes(first)} of {what} memory against a steady call's {human_bytes(steady)}"
    return ""
