"""The memory wall: a point too large for the GPU's memory fails, and float32 moves the wall twice as far."""
from __future__ import annotations

import math
import re

from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, Run, gpu, pow2
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, gib, times
from workbench.results.rows import human_bytes

#: What a point that ran out of device memory says in its message (CuPy, Numba, RMM, the engine).
OUT_OF_MEMORY = re.compile(r"out of (?:device )?memory|outofmemory|memoryerror|memory limit|cudaErrorMemoryAllocation|"
                           r"CUDA_ERROR_OUT_OF_MEMORY|bad_alloc|exceeds? the (?:device )?memory", re.IGNORECASE)

LESSON = Lesson(
    order=70,
    name="memory-wall", title="The memory wall",
    claim="A GPU's memory runs out: a point too large for it fails. float32 needs half the bytes of float64, "
          "so the wall moves twice as far.",
    workload="source_terms", backends=("cupy", "numba-cuda"), sizes=pow2(22, 27, 1),
    runs=(Run("float32", dtype="float32"), Run("float64", dtype="float64")), chart="memory",
    device_memory_limit=1280 * 2 ** 20, min_repeats=2, expected_failures=OUT_OF_MEMORY, needs_gpu=True,
    on_gpu="under a device-memory cap each GPU backend ends in an out-of-memory error row at the first size "
           "whose arrays no longer fit, float64 one doubling before float32.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    f32, f64 = ls.runs[0].label, ls.runs[1].label
    limit = ls.device_memory_limit
    frame = m.frame
    for b in (g for g in ls.backends if gpu(g)):
        walls = {}
        for run in (f32, f64):
            rows = frame[(frame["backend"] == b) & (frame["variant"] == run)].sort_values("size")
            oom = rows[(rows["status"] != "ok") & rows["message"].astype(str).str.contains(OUT_OF_MEMORY)]
            walls[run] = int(oom["size"].iloc[0]) if len(oom) else None
        if not m.has(b, f32) and not m.has(b, f64) and walls[f32] is None and walls[f64] is None:
            continue
        if walls[f64] is not None and walls[f32] is not None:
            say.claim(walls[f32] >= 2 * walls[f64],
                      f"{b} ran out of device memory at {fmt_size(walls[f64])} in float64 and at "
                      f"{fmt_size(walls[f32])} in float32: float32 moved the wall {times(walls[f32] / walls[f64])} "
                      "further.",
                      f"{b} ran out of device memory at {fmt_size(walls[f64])} in float64 and at "
                      f"{fmt_size(walls[f32])} in float32: float32 did not move the wall twice as far.")
            say.mark(walls[f64], f"float64 wall ({b})")
            say.mark(walls[f32], f"float32 wall ({b})")
            continue
        if walls[f64] is not None:
            say.note(f"{b} ran out of device memory at {fmt_size(walls[f64])} in float64; float32 fit at every "
                     "size measured.")
            say.mark(walls[f64], f"float64 wall ({b})")
        # No wall (or only one) reached: project it from what each element took.
        per = {}
        for run in (f32, f64):
            r = m.rows(b, run)
            r = r[r["peak_device_bytes"] > 0]
            if len(r):
                last = r.iloc[-1]
                per[run] = (float(last["peak_device_bytes"]) / float(last["size"]), int(last["size"]),
                            float(last["peak_device_bytes"]))
        if f32 in per and f64 in per:
            ratio = per[f64][0] / per[f32][0]
            cap = limit or None
            projected = ""
            if cap:
                fit32 = _fits(cap, per[f32][0])
                fit64 = _fits(cap, per[f64][0])
                projected = f"; under a {gib(cap)} cap float32 would fit up to {fmt_size(fit32)}, " \
                            f"float64 up to {fmt_size(fit64)}"
            say.claim(ratio >= 1.6,
                      f"{b} needed {per[f32][0]:.3g} bytes of device memory per element in float32 and "
                      f"{per[f64][0]:.3g} in float64 ({times(ratio)}){projected}.",
                      f"{b}'s device memory per element grew only {times(ratio)} from float32 to float64 "
                      f"({per[f32][0]:.3g} to {per[f64][0]:.3g} bytes){projected}.")
            if walls[f64] is None and walls[f32] is None:
                big = max(per[f32][2], per[f64][2])
                say.note(f"No point of {b} ran out of device memory: the largest used {human_bytes(big)}.")


def _fits(cap: float, per_element: float) -> int:
    """The largest power of two whose elements fit under ``cap``."""
    return 2 ** max(0, math.floor(math.log2(cap / per_element)))
