"""What a point's hover says beyond its times: what bounds it, its memory (the first call's apart)."""
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
