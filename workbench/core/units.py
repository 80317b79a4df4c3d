"""Units as every view writes them: the table, the charts (both renderers), the summary, the
lessons, the report and the command line.

One rule per kind of number, so that the window's table cannot say "us" where its charts say
"µs", nor "1e+03 us" where a chart's tick says "1 ms", nor "384.0 KiB" in a message where an axis
says "384 KiB". nvbench formats each summary by its hint (duration, bytes, ...); here each kind
of number has one function, and a chart axis names its kind (:data:`FORMATS`) so that both
renderers label it with the same one.

Every function takes a float (or None) and gives "-" for a missing value (None, NaN).
"""
from __future__ import annotations

import math
from typing import Callable

#: Each time in the largest unit it reaches, within rounding to 3 significant figures.
TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
#: Binary units, as memory is sold and reported (nvidia-smi's MiB).
BYTE_UNITS = ((2 ** 40, "TiB"), (2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB"), (1, "B"))
#: Counts in thousands, millions and billions (a size axis that is not in powers of two).
COUNT_UNITS = ((1e9, "G"), (1e6, "M"), (1e3, "k"))
MISSING = "-"
#: Past this, digits grouped by thousands are no longer read: a value so far off scale (a frame
#: holding 1e308) keeps its exponent.
GROUPED_BELOW = 1e15
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: Within rounding to 3 significant figures, a value this close under a unit's scale is written in it
#: (0.9996 ms is "1 ms", not "1e+03 µs").
_ROUNDS_UP = 0.9995


def _missing(value) -> bool:
    if value is None:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures without an exponent: 0.00123, 12.3, 1,230 (the
    "g" format wrote 1e+03 for a thousand seconds); only a value beyond any scale keeps one."""
    if not math.isfinite(value):
        return f"{value}"
    if 10 ** digits <= abs(value) < GROUPED_BELOW:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def _scaled(value: float, scales) -> str:
    for scale, unit in scales:
        if abs(value) >= scale * _ROUNDS_UP or scale == scales[-1][0]:
            return f"{significant(value / scale)} {unit}"
    return str(value)   # not reached: the last scale always takes it


def seconds(value: float | None) -> str:
    """1e-05 -> '10 µs', 0.0009996 -> '1 ms', 1234 -> '1,234 s'."""
    if _missing(value):
        return MISSING
    return _scaled(float(value), TIME_UNITS)


def nbytes(value: float | None) -> str:
    """262144 -> '256 KiB', 1.5 * 2**20 -> '1.5 MiB', 1000 -> '1,000 B'."""
    if _missing(value):
        return MISSING
    v = float(value)
    if not math.isfinite(v):
        return f"{v} B"
    return _scaled(v, BYTE_UNITS)


def count(value: float | None) -> str:
    """A number of things: 1000 -> '1k', 2.5e6 -> '2.5M', 300 -> '300'."""
    if _missing(value):
        return MISSING
    v = float(value)
    if not math.isfinite(v):
        return significant(v)
    for scale, unit in COUNT_UNITS:
        if abs(v) >= scale * _ROUNDS_UP:
            return f"{significant(v / scale)}{unit}"
    return significant(v)


def power(value: float | None, base: int = 2, superscript: bool = False) -> str:
    """A power of ``base`` as people write it in text ('2^20') or on an axis ('2²⁰'); another value
    is written as a count ('3,000' in text, '3k' on an axis)."""
    if _missing(value):
        return MISSING
    v = float(value)
    k = math.log(v, base) if v > 0 and math.isfinite(v) else float("nan")
    if math.isfinite(k) and abs(k - round(k)) < 1e-9:
        exponent = str(round(k))
        return f"{base}{exponent.translate(_SUPERSCRIPT)}" if superscript else f"{base}^{exponent}"
    return count(v) if superscript else (f"{v:,.0f}" if abs(v) >= 1 else f"{v:g}")


def size(value: float | None) -> str:
    """A problem size in text, in a form ``workbench.core.sizes.parse_int`` reads back: 2^k for the
    powers of two from 2^10 on (how sweeps are usually spaced), else digits grouped as 10,000."""
    if _missing(value):
        return MISSING
    n = int(value)
    k = n.bit_length() - 1
    return f"2^{k}" if n > 0 and n == 1 << k and k >= 10 else f"{n:,}"


def speedup(value: float | None) -> str:
    """A ratio of times on a chart: '2×', '0.5×', '1.25×'."""
    if _missing(value):
        return MISSING
    return f"{significant(float(value))}×"


def percent(value: float | None) -> str:
    """A share already in per cent: 25 -> '25'; the axis names the unit once ('%')."""
    if _missing(value):
        return MISSING
    return significant(float(value))


#: What an axis of each kind of number is labelled with: a chart spec names its axis' kind, and
#: both renderers (and the window, past the ticks a spec chose, when zoomed) format by it.
def joules(value: float | None) -> str:
    """'1.9 mJ', '412 J': an energy in the largest unit it reaches."""
    if _missing(value):
        return MISSING
    return _scaled(float(value), ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ"), (1e-9, "nJ")))


FORMATS: dict[str, Callable[[float], str]] = {
    "seconds": seconds,
    "joules": joules,
    "bytes": nbytes,
    "count": count,
    "power-of-two": lambda v: power(v, 2, superscript=True),
    "power-of-ten": lambda v: power(v, 10, superscript=True),
    "speedup": speedup,
    "percent": percent,
}


def formatter(kind: str) -> Callable[[float], str]:
    """The formatter of an axis kind (:data:`FORMATS`); plain 3 significant figures otherwise."""
    return FORMATS.get(kind, lambda v: MISSING if _missing(v) else significant(float(v)))
