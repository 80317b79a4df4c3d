"""Combining cuDF, CuPy and Numba CUDA: keep the data on the GPU between them, or pay PCIe at each hand-off."""
from __future__ import annotations

import math

from workbench.core.lazy import lazy_module
from workbench.core.sizes import fmt_size
from workbench.lessons.core import TENS, Lesson
from workbench.lessons.measured import Measured, crossing
from workbench.lessons.say import Say, faster, percent, times
from workbench.results.rows import decode_stages, human_seconds

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

LESSON = Lesson(
    order=80,
    name="pipeline", title="Combining the three: keep the data on the GPU",
    claim="cuDF, CuPy and Numba CUDA combine well when the data stays on the GPU between them (zero-copy "
          "views); a host round trip at every hand-off pays PCIe copies each time and eats the gain.",
    workload="pipeline", backends=("cpu-stack", "gpu-zero-copy", "gpu-round-trips"), sizes=TENS,
    baseline="cpu-stack", chart="runtime",
    on_gpu="the zero-copy GPU pipeline hands data from cuDF to CuPy to Numba CUDA and back as views of the "
           "same device memory, microseconds per hand-off; the round-trip pipeline pays a copy through host "
           "memory at each one.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    cpu, zc, rt = ls.backends
    s = m.largest([b for b in (cpu, zc, rt) if m.has(b)])
    if s is None:
        return
    t = {b: m.value(b, s, "total_median_s") for b in (cpu, zc, rt) if m.has(b)}
    if zc in t and cpu in t:
        v = m.verdict(zc, cpu, s)
        say.decide(None if v.verdict == "undecided" else v.verdict == "faster",
                   f"At {fmt_size(s)} rows the zero-copy GPU pipeline took {human_seconds(t[zc])}, "
                   f"{faster(t[zc], t[cpu])} than the CPU stack ({human_seconds(t[cpu])}).",
                   f"At {fmt_size(s)} rows the zero-copy GPU pipeline ({human_seconds(t[zc])}) was "
                   f"{faster(t[zc], t[cpu])} than the CPU stack ({human_seconds(t[cpu])}): the GPU did not pay off "
                   "at this size.", v)
        c = crossing(m, zc, cpu)
        if c is not None and c.holds:
            say.note(f"The zero-copy pipeline breaks even with the CPU stack near {c.near} rows.")
            say.mark(c.size, "break-even zero-copy vs CPU", break_even=True)
    if zc in t and rt in t:
        h_zc, h_rt = _handoffs(m.row(zc, s)), _handoffs(m.row(rt, s))
        share = f" ({percent(h_rt / t[rt])} of its time)" if math.isfinite(h_rt) else ""
        handed = f"; its hand-offs took {human_seconds(h_rt)}{share} against {human_seconds(h_zc)} zero-copy" \
            if math.isfinite(h_rt) and math.isfinite(h_zc) else ""
        costs, v = m.takes_at_least(1.05, rt, zc, s, "total_median_s")
        say.decide(costs,
                   f"With a host round trip at every hand-off the same GPU stages took {human_seconds(t[rt])}, "
                   f"{times(t[rt] / t[zc])} the zero-copy time{handed}.",
                   f"Host round trips cost little here: {human_seconds(t[rt])} against {human_seconds(t[zc])} "
                   f"zero-copy{handed}.", v)
    if cpu in t:
        stages = decode_stages(m.row(cpu, s)["stages"])
        total = sum(v for k, v in stages.items() if "->" not in k)
        if total > 0:
            say.note(f"On the CPU stack at {fmt_size(s)} rows: " + ", ".join(
                f"{k} {percent(v / total)}" for k, v in stages.items() if "->" not in k) + " of the stages' time.")


def _handoffs(row: pd.Series | None) -> float:
    """The seconds a pipeline point spent handing data from one stage to the next (stages 'a->b')."""
    if row is None:
        return float("nan")
    stages = decode_stages(row["stages"])
    hand = [v for k, v in stages.items() if "->" in k]
    return float(sum(hand)) if hand else float("nan")
