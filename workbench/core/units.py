"""Units as every view writes them: the table, the charts (both renderers), the summary, the
lessons and the command line. One rule, so that the window's table cannot say "us" where its
charts say "µs", nor "1e+03 us" where a chart's tick says "1 ms"."""
from __future__ import annotations

import math

#: Each time in the largest unit it reaches, within rounding to 3 significant figures.
TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def seconds(value: float) -> str:
    """1e-05 -> '10 µs', 0.0009996 -> '1 ms'; '-' for a missing value (None, NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    for scale, unit in TIME_UNITS:
        if abs(value) >= scale * 0.9995 or unit == "ns":
            return f"{value / scale:.3g} {unit}"
    return str(value)
