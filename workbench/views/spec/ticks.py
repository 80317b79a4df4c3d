"""Axes people read, decided once for both renderers: log scales with ticks at powers (and 2 and 5
times them on a narrow axis), each labelled in its unit (``workbench.core.units``).

The spec holds the ticks and their labels, and both renderers put exactly those on the axis: an
axis reads the same in the window and in an export.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from workbench.core import units
from workbench.views.spec.model import Axis

#: No log axis reaches past these: a value beyond them (1e308, 1e-320; files are checked when read,
#: a frame handed in is not) is drawn at the edge, so that no tick or limit overflows a float.
AXIS_LO, AXIS_HI = 1e-100, 1e100
#: At most this many ticks on an axis: at a slide's size and at a small window's, labels have room.
MOST_TICKS = 7
#: A size axis reaches this far past the first and last size, in powers of its base.
SIZE_PAD = 0.3


def clamp(values) -> np.ndarray:
    return np.clip(np.asarray(values, dtype=float), AXIS_LO, AXIS_HI)


def held(a) -> np.ndarray:
    """Positive values (an infinity too) held within [AXIS_LO, AXIS_HI]; the others as they are."""
    a = np.asarray(a, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(a > 0, np.clip(a, AXIS_LO, AXIS_HI), a)


def positive(a) -> np.ndarray:
    """What a log axis can show: NaN for zero, a negative value or NaN; the rest held in range."""
    a = held(a)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(a) & (a > 0), a, np.nan)


def _power(base: int, k: int, factor: float = 1) -> float:
    """factor * base**k, dividing for negative k so that 5e-06 is 5e-06 and not 4.999...e-06."""
    return factor * float(base) ** k if k >= 0 else factor / float(base) ** -k


def log_ticks(lo: float, hi: float, base: int, most: int = 8) -> list[float]:
    """Powers of ``base`` inside [lo, hi], every k-th one so there are at most ``most``.

    In base 10, an axis too narrow for three powers gets 2 and 5 times them as well, and if
    that is still too few, 1.5, 3 and 7: a narrow axis still carries labels. [lo, hi] is held
    within [AXIS_LO, AXIS_HI]; NaN, zero or a negative end gives no ticks.
    """
    if not (lo > 0 and hi > lo):
        return []
    lo, hi = max(lo, AXIS_LO), min(hi, AXIS_HI)
    if not hi > lo:
        return []
    exps = range(math.floor(math.log(lo, base) + 1e-9), math.ceil(math.log(hi, base) - 1e-9) + 1)
    steps = ((1,), (1, 2, 5), (1, 1.5, 2, 3, 5, 7)) if base == 10 else ((1,),)
    for subs in steps:
        inside = [(k, s) for k in exps for s in subs if lo * (1 - 1e-9) <= _power(base, k, s) <= hi * (1 + 1e-9)]
        if len(inside) >= 3:
            break
    if not inside:
        return []
    stride = max(1, math.ceil(len(inside) / most))
    if subs == (1,) and stride > 1:    # aligned strides (2^10, 2^12, ...), not whatever the edge gives
        first = inside[0][0]
        return [_power(base, k) for k, _ in inside if (k - first) % stride == 0]
    return [_power(base, k, s) for k, s in inside[::stride]]


def _labelled(label: str, unit: str, scale: str, base: int, lo: float, hi: float,
              ticks: Iterable[float]) -> Axis:
    ticks = tuple(float(t) for t in ticks)
    fmt = units.formatter(unit)
    return Axis(label, unit, scale, base, (float(lo), float(hi)), ticks, tuple(fmt(t) for t in ticks))


def size_axis(label: str, sizes: np.ndarray, bytes_unit: bool = False) -> Axis:
    """The log x axis of sizes: powers of two where every size is one (ticks at the measured sizes
    when there are few), else 1-2-5 decades as counts; a size in bytes is labelled in KiB/MiB."""
    sizes = np.asarray(sizes, dtype=float)
    sizes = clamp(sizes[np.isfinite(sizes) & (sizes > 0)])
    pow2 = len(sizes) > 0 and all(float(s).is_integer() and int(s) & (int(s) - 1) == 0 for s in sizes)
    base = 2 if pow2 or bytes_unit else 10
    unit = "bytes" if bytes_unit else "power-of-two" if pow2 else "count"
    if not len(sizes):
        return Axis(label, unit, "log", base)
    lo, hi = float(sizes.min()), float(sizes.max())
    measured = sorted(set(sizes.tolist()))
    ticks = measured if pow2 and len(measured) <= MOST_TICKS else log_ticks(lo, hi, base, most=MOST_TICKS)
    return _labelled(label, unit, "log", base, lo / base ** SIZE_PAD, hi * base ** SIZE_PAD, ticks)


def value_axis(label: str, values: Iterable[np.ndarray], unit: str, base: int = 10) -> Axis:
    """A log y axis over every value drawn (and the values a chart must show, such as 1x): a flat
    line gets room, and a little margin above and below."""
    parts = [np.asarray(v, dtype=float).ravel() for v in values]
    data = np.concatenate(parts) if parts else np.array([])
    data = clamp(data[np.isfinite(data) & (data > 0)])
    if not len(data):
        return Axis(label, unit, "log", base)
    lo, hi = float(data.min()), float(data.max())
    if hi / lo < 1.5:                      # a flat line: give it room, and ticks
        lo, hi = lo / 1.5, hi * 1.5
    pad = (hi / lo) ** 0.06                # at most 1e12: the range is clamped
    lo, hi = lo / pad, hi * pad
    return _labelled(label, unit, "log", base, lo, hi, log_ticks(lo, hi, base, most=MOST_TICKS))


def percent_axis(label: str) -> Axis:
    return _labelled(label, "percent", "linear", 10, 0.0, 100.0, (0, 25, 50, 75, 100))


def category_axis(label: str, sizes: list[float], bytes_unit: bool = False) -> Axis:
    """Sizes side by side at 0, 1, 2, ... (bars), each labelled as the size axes label it; at most
    ten labels (every k-th size)."""
    pow2 = all(float(s).is_integer() and int(s) & (int(s) - 1) == 0 for s in sizes)
    fmt = units.formatter("bytes" if bytes_unit else "power-of-two" if pow2 else "count")
    step = max(1, math.ceil(len(sizes) / 10))
    where = range(0, len(sizes), step)
    return Axis(label, "category", "category", 10, (-0.6, len(sizes) - 0.4) if sizes else None,
                tuple(float(i) for i in where), tuple(fmt(sizes[i]) for i in where))


def linear_ticks(hi: float, most: int = 7) -> list[float]:
    """Ticks from 0 to ``hi`` at a step of 1, 2 or 5 times a power of ten, at most ``most`` + 1."""
    if not (hi > 0 and math.isfinite(hi)):
        return [0.0]
    raw = hi / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(math.floor(hi / step + 1e-9)) + 1)]


def time_axis(label: str, end_s: float) -> Axis:
    """A linear axis of seconds from 0 to a little past ``end_s``, its ticks labelled in µs (the
    unit of Chrome's traces and of Nsight's zoomed views), grouped by thousands."""
    hi = end_s * 1.03 if end_s > 0 else 1e-6
    where = [t * 1e-6 for t in linear_ticks(hi * 1e6)]
    return Axis(f"{label} (µs)", "seconds", "linear", 10, (0.0, hi), tuple(where),
                tuple(f"{t * 1e6:,.6g}" if t * 1e6 < 1e6 else f"{t * 1e6:,.0f}" for t in where))


def lane_axis(label: str, lanes: list[str]) -> Axis:
    """Lanes as categories, the first at the top: lane i sits at y = n - 1 - i."""
    n = len(lanes)
    return Axis(label, "category", "category", 10, (-0.6, n - 0.4) if n else None,
                tuple(float(i) for i in range(n)), tuple(reversed(lanes)))
