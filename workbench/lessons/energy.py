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
           "idle draw: a GPU's compute alone, repeated back to back as its time is measured, with its whole call, "
           "copies and all, beside it; a CPU's call, which is all compute.")


def _joules(row: pd.Series, key: str = "") -> tuple[float, float, float]:
    """(median, lowest, highest) of a row's compute energy, or its whole call's with ``key='_e2e'``."""
    return tuple(float(row.get(f"energy{key}{k}", math.nan)) for k in ("_j", "_lo_j", "_hi_j"))


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
            said = (f"{name} at {fmt_size(s)}: compute {human_seconds(float(r['compute_median_s']))} and {_mj(j)} "
                    f"a call ({_mj(lo)}-{_mj(hi)} over {3} readings; {float(r['power_w']):.0f} W while running, "
                    f"{float(r['idle_w']):.0f} W idle taken off: {r['energy_source']})")
            whole = _joules(r, "_e2e")[0]
            if gpu(b) and math.isfinite(whole):
                said += (f"; its whole call, copies and all, {human_seconds(float(r['total_median_s']))} and "
                         f"{_mj(whole)} at {float(r['power_e2e_w']):.0f} W")
            say.note(said + ".")
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
            # The compute's energy against the CPU's call (all compute): what the GPU's kernels cost.
            # Cheaper only where every reading of one lies below every reading of the other.
            if jg[2] < jc[1]:
                say.claim(v.verdict == "faster",
                          f"At {fmt_size(s)} {gn} is {faster} than {cn} end to end, and its compute spends "
                          f"{times(jc[0] / jg[0])} less energy a call than {cn}'s.",
                          f"At {fmt_size(s)} {gn}'s compute spends {times(jc[0] / jg[0])} less energy a call than "
                          f"{cn}'s, yet {gn} is {faster} end to end.")
            elif jc[2] < jg[1]:
                say.claim(False, "", f"At {fmt_size(s)} {gn} is {faster} than {cn} end to end, but its compute "
                                     f"spends {times(jg[0] / jc[0])} more energy a call than {cn}'s.")
            else:
                say.note(f"At {fmt_size(s)} the energy of {gn}'s compute and {cn}'s could not be told apart: their "
                         "readings overlap.")
            whole = _joules(rows[g], "_e2e")
            if math.isfinite(whole[0]) and whole[0] != jg[0]:
                # As for the compute: less or more only where the readings do not overlap.
                if whole[2] < jc[1] or jc[2] < whole[1]:
                    more = "less" if whole[2] < jc[1] else "more"
                    ratio = jc[0] / whole[0] if more == "less" else whole[0] / jc[0]
                    compared = f"{times(ratio)} {more} than {cn}"
                else:
                    compared = f"not told apart from {cn}'s {_mj(jc[0])} (their readings overlap)"
                say.note(f"End to end, copies and all, {gn} spends {_mj(whole[0])} a call, {compared}: the board "
                         "draws near its idle power while the host copies.")
