"""Faster and cheaper? A GPU's call against the CPU's, in time and in energy, both measured."""
from __future__ import annotations

import math

from workbench.core.lazy import lazy_module
from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, gpu, pow2
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, times
from workbench.results.rows import human_seconds
from workbench.views.summary import named

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

LESSON = Lesson(
    order=100,
    name="energy", title="Faster and cheaper?",
    claim="A GPU that runs a large call many times faster than the CPU also spends less energy on it, though "
          "it draws several times the power while it runs; on a small call its idle draw and launch cost "
          "dominate.",
    workload="source_terms", backends=("numpy", "numba", "cupy-fused"),
    sizes=pow2(20, 26, 3), chart="runtime", energy=True, needs_gpu=True,
    on_gpu="energy per call from the GPU board's counter (NVML) and the CPU packages' (RAPL), each above its "
           "idle draw, set beside the time of the same calls.")


def _joules(row: pd.Series) -> tuple[float, float, float]:
    return tuple(float(row.get(k, math.nan)) for k in ("energy_j", "energy_lo_j", "energy_hi_j"))


def _mj(j: float) -> str:
    return f"{j * 1e3:.3g} mJ" if j < 1 else f"{j:.3g} J"


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    measured = m.backends(ls.backends)
    s = m.largest(measured)
    if s is None:
        return
    rows = {b: m.row(b, s) for b in measured}
    names = {b: named(b, r) for b, r in rows.items() if r is not None}
    for b, r in rows.items():
        if r is None:
            continue
        j, lo, hi = _joules(r)
        name = names[b]
        if math.isfinite(j):
            say.note(f"{name} at {fmt_size(s)}: {human_seconds(float(r['total_median_s']))} and {_mj(j)} a call "
                     f"({_mj(lo)}-{_mj(hi)} over {3} readings; {float(r['power_w']):.0f} W while running, "
                     f"{float(r['idle_w']):.0f} W idle taken off: {r['energy_source']}).")
        else:
            say.note(f"{name}: energy {r.get('energy_source') or 'not measured'}.")
    gpus = [b for b in measured if gpu(b) and math.isfinite(_joules(rows[b])[0])]
    cpus = [b for b in measured if not gpu(b)]
    for g in gpus:
        for c in cpus:
            jc = _joules(rows[c])
            jg = _joules(rows[g])
            v = m.verdict(g, c, s)
            if not math.isfinite(jc[0]):
                say.note(f"Whether {names[g]} is also cheaper than {names[c]} is not said: the CPU's energy is not measured "
                         "here, and no figure is guessed for it.")
                continue
            gn, cn = names[g], names[c]
            faster = f"{times(1 / v.ratio)} faster" if v.verdict == "faster" else f"not faster ({v.verdict})"
            # Cheaper only where every reading of one lies below every reading of the other.
            if jg[2] < jc[1]:
                say.claim(v.verdict == "faster",
                          f"At {fmt_size(s)} {gn} is {faster} than {cn} end to end and spends {times(jc[0] / jg[0])} "
                          "less energy a call.",
                          f"At {fmt_size(s)} {gn} spends {times(jc[0] / jg[0])} less energy a call than {cn}, yet is "
                          f"{faster}.")
            elif jc[2] < jg[1]:
                say.claim(False, "", f"At {fmt_size(s)} {gn} is {faster} than {cn} but spends "
                                     f"{times(jg[0] / jc[0])} more energy a call.")
            else:
                say.note(f"At {fmt_size(s)} the energy of {gn} and {cn} could not be told apart: their readings "
                         "overlap.")
