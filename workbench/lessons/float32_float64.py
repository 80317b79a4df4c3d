"""float32 against float64: twice the bytes, twice the time where the bytes set it; is float32 enough?"""
from __future__ import annotations

from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, Run, gpu, pow2
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, times
from workbench.results.rows import human_bytes

LESSON = Lesson(
    order=40,
    name="float32-float64", title="float32 against float64: speed and memory",
    claim="float64 takes twice the memory of float32, and work bound by memory bandwidth twice the time; "
          "use float32 where its precision is enough, and check that the results still hold.",
    workload="source_terms", backends=("numpy", "cupy", "numba-cuda"), sizes=pow2(20, 26),
    runs=(Run("float32", dtype="float32"), Run("float64", dtype="float64")), chart="runtime",
    on_gpu="float64 takes twice the device memory of float32; its time depends on how well the float32 "
           "kernel used the bandwidth: on the H200 of docs/PERFORMANCE.md (source_terms at 2^26) float64 "
           "took 1.1x the time for plain cupy, whose float32 kernel reached only 28 % of the bandwidth, "
           "and 1.6x for numba-cuda.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    f32, f64 = ls.runs[0].label, ls.runs[1].label
    for b in ls.backends:
        s = m.across(b, (f32, f64))
        if s is None:
            continue
        t32, t64 = m.value(b, s, "compute_median_s", f32), m.value(b, s, "compute_median_s", f64)
        col = "peak_device_bytes" if gpu(b) else "peak_host_bytes"
        where = "device" if gpu(b) else "host"
        m32, m64 = m.value(b, s, col, f32), m.value(b, s, col, f64)
        rt = t64 / t32
        memory = ""
        if m32 > 0 and m64 > 0:
            memory = f" and {times(m64 / m32)} the {where} memory ({human_bytes(m64)} against {human_bytes(m32)})"
        longer, v = m.takes_at_least(1.4, b, b, s, "compute_median_s", f64, f32)
        say.decide(longer, f"{b}: float64 took {times(rt)} the time of float32 at {fmt_size(s)}{memory}.",
                   f"{b}: float64 took only {times(rt)} the time of float32 at {fmt_size(s)}{memory}: here its "
                   "time is not set by the bytes it moves.", v)
        ratios = _memory_ratios(m, b, col, f32, f64)
        if len(ratios) > 1:
            lo, hi = min(ratios.values()), max(ratios.values())
            span = f"{times(lo)}" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}x"
            say.note(f"{b}: float64 held {span} the {where} memory of float32 at each size from "
                     f"{fmt_size(min(ratios))} to {fmt_size(max(ratios))}.")
        if m32 > 0 and m64 > 0 and m64 / m32 < 1.5:
            say.claim(False, "", f"{b}'s peak {where} memory did not double ({human_bytes(m32)} to "
                                 f"{human_bytes(m64)}): part of it does not scale with the element size.")
    errors = m.ok[m.ok["variant"] == f32]["max_rel_error"]
    wrong = m.frame[(m.frame["variant"] == f32) & (m.frame["status"] == "wrong")]
    if len(wrong):
        say.claim(False, "", f"float32 was not accurate enough for {', '.join(wrong['backend'].unique())}: "
                             f"{wrong['message'].iloc[0]}")
    elif errors.notna().any():
        say.note(f"float32 results stayed within a relative error of {errors.max():.1e} of the float64 reference.")


#: From this many bytes a point's arrays outweigh what does not scale with the element size (a
#: page per allocation, a result's few objects): its memory ratio says the dtype's, not the noise's.
RATIO_FROM_BYTES = 2 ** 20


def _memory_ratios(m: Measured, b: str, col: str, f32: str, f64: str) -> dict[int, float]:
    """{size: float64's memory over float32's} at each size both measured, from a float32 point of
    RATIO_FROM_BYTES up."""
    out = {}
    for s in m.common([b], f32):
        m32, m64 = m.value(b, s, col, f32), m.value(b, s, col, f64)
        if m32 >= RATIO_FROM_BYTES and m64 > 0:
            out[int(s)] = m64 / m32
    return out
