"""Transfers eat the speedup: the kernel alone against end to end, pageable against pinned host memory."""
from __future__ import annotations

from workbench.core.lazy import lazy_module
from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, Run, gpu, pow2
from workbench.lessons.measured import Measured, crossing
from workbench.lessons.say import Say, percent, times
from workbench.results.rows import human_seconds

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

LESSON = Lesson(
    order=20,
    name="transfers", title="Transfers eat the speedup",
    claim="Moving data over PCIe is far slower than work on the GPU: a kernel's speedup shrinks, end to end, "
          "by the transfers around it. Pinned (page-locked) host memory moves them faster than pageable.",
    workload="source_terms", backends=("numpy", "cupy"), sizes=pow2(16, 26),
    runs=(Run("pageable", host_memory="pageable"), Run("pinned", host_memory="pinned")), chart="speedup",
    needs_gpu=True,
    on_gpu="the kernel alone is far faster than NumPy and the transfers eat most of it: on the H200 of "
           "docs/PERFORMANCE.md (docs/lessons/transfers), cupy's kernel is 160x numpy at 2^26 cells but "
           "end-to-end only 1.4x, the pageable transfers taking 99 % of the GPU's time; pinned host memory "
           "moved the same data 4.9x faster, for 6.3x numpy end to end.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    page, pin = ls.runs[0].label, ls.runs[1].label
    gpus = m.backends((b for b in ls.backends if gpu(b)), page) or m.backends((b for b in ls.backends if gpu(b)), pin)
    if not gpus:
        return
    b = gpus[0]
    s = m.largest([b, base], page)
    if s is not None:
        kernel = m.value(base, s, "compute_median_s", page) / m.value(b, s, "compute_median_s", page)
        end = m.value(base, s, "total_median_s", page) / m.value(b, s, "total_median_s", page)
        share = _transfer_share(m.row(b, s, page))
        say.claim(share >= 0.5 and end < kernel / 2,
                  f"At {fmt_size(s)}, {b}'s kernel alone is {times(kernel)} {base}; end-to-end only {times(end)}: "
                  f"transfers take {percent(share)} of the GPU's time (pageable host memory).",
                  f"At {fmt_size(s)}, transfers took only {percent(share)} of {b}'s end-to-end time (pageable "
                  f"host memory): kernel-only {times(kernel)} {base}, end-to-end {times(end)}; here they did "
                  "not eat the speedup.")
        c = crossing(m, b, base, "total_median_s", page)
        k = crossing(m, b, base, "compute_median_s", page)
        if c is not None and c.holds:
            say.note(f"End-to-end, {b} breaks even with {base} near {c.near}"
                     + (f"; on the kernel alone already near {k.near}." if k is not None and k.holds
                        else f"; on the kernel alone it wins at every size from {fmt_size(k.comparison.sizes[0])}."
                        if k is not None and k.always else "."))
            say.mark(c.size, "break-even end-to-end (pageable)", break_even=True)
        elif c is not None and c.never:
            say.note(f"End-to-end, {b} never beat {base} at these sizes.")
    s2 = m.across(b, (page, pin))
    if s2 is not None and m.has(base, pin):
        rp, rq = m.row(b, s2, page), m.row(b, s2, pin)
        tp, tq = rp["h2d_s"] + rp["d2h_s"], rq["h2d_s"] + rq["d2h_s"]
        end_pin = m.value(base, s2, "total_median_s", pin) / rq["total_median_s"]
        say.claim(tq < tp / 1.2,
                  f"Pinned host memory moved the same data {times(tp / tq)} faster ({human_seconds(tp)} down to "
                  f"{human_seconds(tq)} at {fmt_size(s2)}): end-to-end {times(end_pin)} {base}, transfers "
                  f"{percent(_transfer_share(rq))} of the GPU's time.",
                  f"Pinned host memory was not faster here: its transfers took {human_seconds(tq)} at "
                  f"{fmt_size(s2)} against {human_seconds(tp)} pageable.")


def _transfer_share(row: pd.Series | None) -> float:
    if row is None or not row["total_median_s"] > 0:
        return float("nan")
    return float((row["h2d_s"] + row["d2h_s"]) / row["total_median_s"])
