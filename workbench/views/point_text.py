"""What a point's hover says beyond its times: what bounds it, its memory (the first call's apart),
the kernels one call launches, its energy."""
from __future__ import annotations

import math
from typing import Any, Mapping

from workbench.core import bounds, units


def _known(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def memory_text(row: Mapping[str, Any]) -> str:
    """'memory a call: host 16 MiB, device 32 MiB; first call: host 187 MiB' ('' where none was read)."""
    said = []
    for what, steady, first in (("host", "peak_host_bytes", "first_call_host_bytes"),
                                ("device", "peak_device_bytes", "first_call_device_bytes")):
        if _known(row.get(steady)):
            said.append((what, units.nbytes(row[steady]),
                         units.nbytes(row[first]) if _known(row.get(first)) else ""))
    if not said:
        return ""
    text = "memory a call: " + ", ".join(f"{what} {value}" for what, value, _ in said)
    firsts = [f"{what} {first}" for what, _, first in said if first]
    return text + (f"; first call: {', '.join(firsts)}" if firsts else "")


def bound_text(row: Mapping[str, Any]) -> str:
    """'bound: memory (L3), 85 % of its ceiling (188 GB/s)' ('' for a row without a bound)."""
    said = bounds.text(row.get("bound"), row.get("of_bound"))
    if not said:
        return ""
    bound = str(row.get("bound"))
    roof = ""
    if bound.startswith("memory") and _known(row.get("gbps_limit")):
        roof = f" of {row['gbps_limit']:.4g} GB/s"
    elif bound == "compute" and _known(row.get("gflops_limit")):
        roof = f" of {row['gflops_limit']:.4g} GFLOP/s"
    what = {"launch": " of the call is device work", "transfer": " of end-to-end is transfers"}.get(bound, roof)
    return f"bound: {said}{what}"


def roofline_text(row: Mapping[str, Any]) -> str:
    """'intensity 10.7 FLOP/byte, 91.5 GFLOP/s (8.58 GB/s)': where the roofline chart draws the row."""
    gflops, gbps = row.get("gflops"), row.get("gbps")
    if not (_known(gflops) and _known(gbps) and gflops > 0 and gbps > 0):
        return ""
    return f"intensity {gflops / gbps:.3g} FLOP/byte, {gflops:.3g} GFLOP/s ({gbps:.3g} GB/s)"


def kernels_text(row: Mapping[str, Any]) -> str:
    """'a call launches 3 kernels (12 µs): cupy_multiply 5 µs, ...' ('' where none were recorded)."""
    from workbench.measure.gpu.kernels import decode, summary
    said = summary(decode(row.get("kernels")))
    return f"a call launches {said}" if said else ""


def energy_text(row: Mapping[str, Any]) -> str:
    """'energy of the compute: 1.9 mJ a call (412 W while running, 74 W idle taken off); 8.1 GFLOP/J',
    with a GPU row's whole call beside it, or why not."""
    from workbench.measure.energy import text
    joules, whole, idle = row.get("energy_j"), row.get("energy_e2e_j"), row.get("idle_w", math.nan)
    if not _known(joules) and row.get("host_memory") and _known(whole):
        # The whole call alone: the compute's was below the counter's resolution, or a file of
        # before did not read it apart; its energy_source says which.
        source = row.get("energy_source") if isinstance(row.get("energy_source"), str) else ""
        why = next((part for part in source.split("; ") if "compute's" in part), "the compute's was not read")
        return ("energy end to end, copies and all: " + text(whole, row.get("power_e2e_w", math.nan), idle)
                + f" ({why})")
    if not _known(joules):
        source = row.get("energy_source")
        return f"energy {source}" if isinstance(source, str) and source.startswith("not measured") else ""
    said = "energy of the compute: " + text(joules, row.get("power_w", math.nan), idle)
    if row.get("host_memory") and _known(whole) and whole != joules:     # a GPU row: its whole call too
        said += "; end to end, copies and all: " + text(whole, row.get("power_e2e_w", math.nan), idle)
    if _known(row.get("gflop_per_j")):
        said += f"; {row['gflop_per_j']:.3g} GFLOP/J"
    elif joules > 0 and _known(row.get("size")):
        said += f"; {units.count(row['size'] / joules)} items/J"
    return said
