"""Parse the sizes a user types: ``1024,2^20``, ``2^10:2^20`` (doubling) or ``A:B:xF``; and amounts
of memory: ``8GiB``, ``512 MiB``, ``8GB``, ``2^33``."""
from __future__ import annotations

import math
import re

from workbench.core import units

_POWER = re.compile(r"^\s*(\d+)\s*\^\s*(\d+)\s*$")
# Digits grouped by three with "," or a space: how the window (and people) write 10,000,000.
_GROUPED = re.compile(r"\d{1,3}([, ]\d{3})+")
# In a comma list, digits grouped by three are one number where a group begins with 0 (10,000,
# 1,048,576, 2,048): no list of sizes holds 000 or 048. 256,512 or 1,500 stay lists of two sizes.
_GROUPED_IN_LIST = re.compile(r"(?<![\w^.])\d{1,3}(?:,\d{3})*,0\d{2}(?:,\d{3})*(?![\w^.])")
_FACTOR = re.compile(r"x?(\d{1,6}(?:\.\d{1,12})?)")
MAX_POINTS = 1000
#: The largest size anyone can mean: 2^53 elements of one byte are 8 PiB, and sizes must stay exact
#: as floats for the workloads' byte and FLOP counts.
MAX_SIZE = 2 ** 53
_MAX_STEPS = 100_000      # a geometric range longer than this is refused before it is walked


def _checked(value: int, text: str) -> int:
    if value > MAX_SIZE:
        raise ValueError(f"{text.strip()!r} is too large (at most 2^53)")
    return value


def parse_int(text: str) -> int:
    """``1024``, ``2^20``, ``1e6``, ``10_000``, ``10,000``; anything else raises ValueError."""
    t = text.strip().replace("_", "")
    if len(t) > 40:
        raise ValueError(f"{text.strip()[:20]!r}... is too long to be a size")
    if _GROUPED.fullmatch(t):
        t = t.replace(",", "").replace(" ", "")
    m = _POWER.match(t)
    if m:
        base, exp = int(m.group(1)), int(m.group(2))
        if exp > 64 or (base > 1 and exp * math.log2(base) > 64):
            raise ValueError(f"{text.strip()!r} is too large (at most 2^53)")
        return _checked(base ** exp, text)
    if re.fullmatch(r"\d+", t):
        return _checked(int(t), text)
    if re.fullmatch(r"\d+(\.\d+)?[eE]\d+", t):
        value = float(t)
        if not math.isfinite(value) or value > MAX_SIZE:
            raise ValueError(f"{text.strip()!r} is too large (at most 2^53)")
        if value != int(value):
            raise ValueError(f"{text.strip()!r} is not an integer")
        return int(value)
    raise ValueError(f"cannot read {text.strip()!r} as a size (examples: 4096, 2^20, 1e6)")


def fmt_size(n: int) -> str:
    """How the window shows a size, in a form parse_int reads back: 2^k for powers of two
    from 2^10 on (how sweeps are usually spaced), else digits grouped as 10,000
    (``workbench.core.units.size``)."""
    return units.size(n)


def geometric(start: int, stop: int, factor: float = 2.0) -> list[int]:
    """start, start*factor, ... up to stop (stop included when the steps land on it)."""
    if start <= 0 or stop <= 0:
        raise ValueError("sizes must be positive")
    if start > stop:
        raise ValueError(f"the range starts at {start}, above its end {stop}")
    if not (math.isfinite(factor) and factor > 1):
        raise ValueError(f"the range factor must be a number above 1, not {factor}")
    if math.log(stop / start) / math.log(factor) > _MAX_STEPS:
        raise ValueError(f"the range {start}:{stop} in steps of x{factor} has more than {MAX_POINTS} sizes")
    sizes, value = [], float(start)
    while round(value) <= stop:
        if not sizes or round(value) != sizes[-1]:
            sizes.append(int(round(value)))
        value *= factor
        if len(sizes) > MAX_POINTS:
            raise ValueError(f"the range has more than {MAX_POINTS} sizes")
    return sizes


def steps(start: int, stop: int, count: int) -> list[int]:
    """``count`` sizes spaced evenly on a log scale from start to stop, both included."""
    if count < 1:
        raise ValueError("the number of steps must be at least 1")
    if start <= 0 or stop <= 0:
        raise ValueError("sizes must be positive")
    if start > stop:
        raise ValueError(f"the range starts at {start}, above its end {stop}")
    if count == 1 or start == stop:
        return [start]
    ratio = (stop / start) ** (1.0 / (count - 1))
    out: list[int] = []
    for k in range(count):
        v = stop if k == count - 1 else int(round(start * ratio ** k))
        if not out or v != out[-1]:
            out.append(v)
    return out


def parse_sizes(text: str) -> list[int]:
    """A comma list of sizes and ranges, each size as :func:`parse_int` reads it (the window's size
    fields too); raises ValueError with a message for a person.

    Commas also group digits where that cannot be a list: ``10,000`` is ten thousand (a size 000
    does not exist), ``1,048,576`` one size; ``256,512`` and ``1,500`` are two (write 1500 or 1_500).
    """
    if not text or not text.strip():
        raise ValueError("no size given")
    text = _GROUPED_IN_LIST.sub(lambda m: m.group(0).replace(",", ""), text)
    sizes: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            fields = part.split(":")
            if len(fields) not in (2, 3):
                raise ValueError(f"cannot read the range {part!r} (use A:B or A:B:xF)")
            start, stop = parse_int(fields[0]), parse_int(fields[1])
            factor = 2.0
            if len(fields) == 3:
                m = _FACTOR.fullmatch(fields[2].strip().lower())
                if not m:     # float() alone would take "+2", "1e1", "nan" or "inf"
                    raise ValueError(f"cannot read the factor {fields[2]!r} (use x2, x4, x1.5)")
                factor = float(m.group(1))
            sizes.extend(geometric(start, stop, factor))
        else:
            sizes.append(parse_int(part))
    for s in sizes:
        if s <= 0:
            raise ValueError(f"size {s} must be positive")
    # Ranges that meet (2^10:2^20,2^20:2^24) name a size twice: measure it once.
    return list(dict.fromkeys(sizes))


#: Binary units are what memory is sold and reported in (nvidia-smi's MiB); decimal ones are
#: accepted because people type them, and mean what they say (8 GB = 8e9 bytes, not 8 GiB).
_BYTE_UNITS = {"": 1, "b": 1,
               "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40,
               "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30, "t": 2 ** 40,
               "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12}
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?|\d+\s*\^\s*\d+)\s*([a-zA-Z]*)\s*$")


def parse_bytes(text: str) -> int:
    """An amount of memory: ``8GiB``, ``1.5 GiB``, ``512MiB``, ``8GB`` (10^9), ``2^33`` or plain
    bytes; raises ValueError with a message for a person (zero and junk are refused)."""
    t = text.strip().replace("_", "")
    m = _AMOUNT.match(t) if len(t) <= 40 else None
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _BYTE_UNITS:
        raise ValueError(f"cannot read {text.strip()[:40]!r} as an amount of memory "
                         "(examples: 8GiB, 512MiB, 8GB, 2000000000)")
    number = m.group(1)
    if "^" in number:
        value = float(parse_int(number))
    else:
        value = float(number)
    value *= _BYTE_UNITS[unit]
    if not math.isfinite(value) or value > MAX_SIZE:
        raise ValueError(f"{text.strip()!r} is too large")
    if value < 1:
        raise ValueError(f"{text.strip()!r} is no memory at all: give a positive amount such as 8GiB")
    return int(value)


def fmt_bytes_exact(n: int) -> str:
    """An amount of memory in the largest binary unit that holds it exactly (``1280MiB``, ``8GiB``),
    as parse_bytes reads it back: what a field shows of a cap that was set elsewhere."""
    for unit, scale in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(int(n))
