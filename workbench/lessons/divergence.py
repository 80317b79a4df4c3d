"""Branch divergence: a warp runs as long as its slowest thread; sorted input, where neighbours agree, runs faster."""
from __future__ import annotations

from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, gpu, pow2
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, times

LESSON = Lesson(
    order=50,
    name="divergence", title="Branch divergence",
    claim="GPU threads run in warps that step together: when their branches or loop counts differ, the warp "
          "runs as long as its slowest thread. The same work on sorted input, where neighbours agree, runs "
          "faster; the CPU hardly cares.",
    workload="divergence", backends=("numba", "cupy-fused", "numba-cuda"), sizes=pow2(16, 22),
    variants=("random", "sorted"), chart="runtime", baseline="numba",
    on_gpu="cupy-fused and numba-cuda, one element per thread with a data-dependent loop, take longer on "
           "random input than on sorted input, where every warp's threads loop about as often: 1.8x and "
           "1.9x at 2^22 on the H200 of docs/PERFORMANCE.md. numba on the CPU has no warps; there its "
           "parallel loop was slower on sorted input, whose long loops all fall into the last threads' blocks.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    for b in ls.backends:
        s = m.across(b, ("random", "sorted"))
        if s is None:
            continue
        r = m.value(b, s, "compute_median_s", "random") / m.value(b, s, "compute_median_s", "sorted")
        said = f"{b}: random order took {times(r)} the time of sorted at {fmt_size(s)}"
        slower, v = m.takes_at_least(1.3, b, b, s, "compute_median_s", "random", "sorted")
        faster_sorted, _ = m.takes_at_least(1.3, b, b, s, "compute_median_s", "sorted", "random")
        if gpu(b):
            say.decide(slower, f"{said}: each warp waits for its slowest thread.",
                       f"{said}: divergence cost little here.", v)
        elif faster_sorted is None and r <= 1 / 1.3:
            say.decide(None, "", f"{said}: on the CPU sorted input looked slower.", v)
        elif faster_sorted:
            # Not divergence: prange gives each thread an equal block of elements, and sorted input
            # puts every long loop into the last blocks, so one thread works far longer than the rest.
            say.claim(False, "", f"{said}: on the CPU sorted input was the slower one, for another reason: "
                                 "numba's parallel loop gives each thread an equal block of elements, and "
                                 "sorted input puts the longest loops all into the last blocks (load imbalance).")
        else:
            say.decide(None if slower is None else not slower, f"{said}: a CPU core follows its own branch.",
                       f"{said}: the order mattered on the CPU too (branch prediction, vector lanes).", v)
