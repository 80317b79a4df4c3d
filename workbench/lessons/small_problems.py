"""Small problems lose: below a size the CPU wins, above it the GPU does; the break-even between."""
from __future__ import annotations

from workbench.core.sizes import fmt_size
from workbench.lessons import claims
from workbench.lessons.core import Lesson, gpu, pow2
from workbench.lessons.measured import Measured, crossing
from workbench.lessons.say import Say
from workbench.results.rows import human_seconds

LESSON = Lesson(
    order=10,
    name="small-problems", title="Small problems lose; the break-even size",
    claim="The GPU does not always help: on small problems launch and transfer costs erase the gain. "
          "There is a size below which the CPU wins and above which the GPU does.",
    workload="source_terms", backends=("numpy", "numba", "cupy", "numba-cuda"), sizes=pow2(10, 26),
    chart="speedup",
    on_gpu="cupy and numba-cuda lose to numpy on small arrays, where a launch and a transfer cost tens of "
           "microseconds, and win end-to-end only on large ones: on the H200 of docs/PERFORMANCE.md "
           "(source_terms, float32) from about 2^23 cells.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    found = []
    for b in m.backends(g for g in ls.backends if gpu(g)):
        c = crossing(m, b, base)
        if c is not None:
            found.append((b, c))
    if found:
        # The lesson's example: the GPU backend that breaks even first (or wins most at the largest size).
        b, c = min(found, key=lambda bc: (bc[1].size is None, bc[1].size or 0))
        claims.break_even(m, say, b, base, c, "end-to-end (transfers included)")
        for other, oc in found:
            if other != b:
                say.note(f"{other}: " + (f"break-even near {oc.near}." if oc.holds
                                         else oc.comparison.sentence() if not oc.never else
                                         f"never faster than {base} at these sizes."))
    cpu = crossing(m, "numba", base) if m.has("numba") and m.has(base) else None
    if cpu is not None:
        # Threads have their start-up cost too: without a GPU this is the lesson's measured part.
        lo = cpu.comparison.sizes[0]
        yes = (f"On the CPU the same holds for threads: numba's parallel loop loses to {base} up to "
               f"{fmt_size(cpu.last_loss)} (at {fmt_size(lo)} {human_seconds(m.value('numba', lo, 'total_median_s'))} "
               f"against {human_seconds(m.value(base, lo, 'total_median_s'))}: the cost of waking its threads) and "
               f"wins from {fmt_size(cpu.first_win)} on{claims.band(cpu)}, break-even near {cpu.near}.") \
            if cpu.holds else ""
        no = "On the CPU: " + cpu.comparison.sentence()
        if found:
            say.note(yes or no)
        else:
            say.claim(cpu.holds, yes, no)
            if cpu.holds:
                say.mark(cpu.size, f"break-even numba vs {base}", break_even=True)
