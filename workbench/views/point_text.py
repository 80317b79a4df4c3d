"""What a point's hover says beyond its times: its memory, the first call's apart."""
from __future__ import annotations

import math
from typing import Any, Mapping

from workbench.core import units


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
