"""A result file's cells, each checked against its column's kind and bounds: what a file may
hold, whoever wrote it (an older version, a spreadsheet, a hand)."""
from __future__ import annotations

import json
import math
from typing import Any, Callable

import numpy as np

from workbench.results.rows import BOOL_COLUMNS, INTEGER_COLUMNS, JSON_COLUMNS, TEXT_COLUMNS

_DEFAULTS = {"repeats": 0, "verified": False, "dropped": 0, "threads": 0, "kernel_count": 0, "converged": True}
_INT64_MAX = 2 ** 63 - 1
#: A time (a column named ``..._s``) is 0 or from MIN_SECONDS to MAX_SECONDS: no clock measures a
#: shorter one (1e-320 is underflow), and no point runs for 11 days. Within these bounds every chart's
#: log axis has room: 1e308 or 1e-320 would overflow its tick code.
MIN_SECONDS, MAX_SECONDS = 1e-30, 1e6
#: Float columns that are not times: (lowest, highest); an infinity is allowed only where named in
#: _INFINITE. Anything else (a column added later) is finite and within +-_MAX_FIGURE.
_MAX_FIGURE = 1e30
_RANGES = {"peak_host_bytes": (0.0, 2.0 ** 63), "peak_device_bytes": (0.0, 2.0 ** 63),
           "first_call_host_bytes": (0.0, 2.0 ** 63), "first_call_device_bytes": (0.0, 2.0 ** 63),
           "gflops": (0.0, _MAX_FIGURE), "gbps": (0.0, _MAX_FIGURE), "gbps_limit": (0.0, _MAX_FIGURE),
           "gflops_limit": (0.0, _MAX_FIGURE), "max_rel_error": (0.0, _MAX_FIGURE), "noise": (0.0, _MAX_FIGURE),
           "energy_j": (0.0, _MAX_FIGURE), "energy_lo_j": (0.0, _MAX_FIGURE), "energy_hi_j": (0.0, _MAX_FIGURE),
           "energy_e2e_j": (0.0, _MAX_FIGURE), "energy_e2e_lo_j": (0.0, _MAX_FIGURE),
           "energy_e2e_hi_j": (0.0, _MAX_FIGURE), "power_e2e_w": (0.0, 1e6),
           "power_w": (0.0, 1e6), "idle_w": (0.0, 1e6), "gflop_per_j": (0.0, _MAX_FIGURE),
           "others_cores": (0.0, 1e6), "sm_clock_mhz": (0.0, 1e6), "mem_clock_mhz": (0.0, 1e6)}
#: Where an infinity is a value the engine writes: an interval too wide to decide anything from
#: (too few samples), a ceiling not known, an error of a result holding NaN, the spread of one sample.
_INFINITE = {"compute_ci_lo_s": -math.inf, "total_ci_lo_s": -math.inf, "compute_ci_hi_s": math.inf,
             "total_ci_hi_s": math.inf, "gbps_limit": math.inf, "gflops_limit": math.inf,
             "max_rel_error": math.inf, "noise": math.inf}
_TRUE, _FALSE = frozenset({"true", "1"}), frozenset({"false", "0", ""})


def compact(value: Any) -> str:
    """The text a JSON column holds in a frame (what ``rows.encode_samples`` and the others write)."""
    return json.dumps(value, separators=(",", ":"))


def value(column: str, value: Any, wrong: Callable[[str], Exception]) -> Any:
    """One cell, of the column's kind: text, a whole number, true/false or a float (NaN if empty);
    ``wrong(expected)`` is the error raised for one that is not."""
    empty = value is None or (isinstance(value, float) and math.isnan(value)) or value == ""
    if column in JSON_COLUMNS and isinstance(value, (dict, list)):     # schema 4's nested value
        return compact(value)
    if column in TEXT_COLUMNS:
        if empty:
            return ""
        if not isinstance(value, str):
            raise wrong("text")
        return value
    if column in BOOL_COLUMNS:
        if empty:
            return _DEFAULTS.get(column, False)
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise wrong("true or false")
    if isinstance(value, bool):
        raise wrong("a number")
    if empty:
        if column in INTEGER_COLUMNS:
            if column in _DEFAULTS:
                return _DEFAULTS[column]
            raise wrong("a whole number")
        return math.nan
    if column in INTEGER_COLUMNS:
        try:
            number = int(value) if isinstance(value, int) else float(str(value).strip())
        except ValueError:
            raise wrong("a whole number") from None
        low = 1 if column == "size" else 0
        if isinstance(number, float):
            if not (math.isfinite(number) and number.is_integer()):
                raise wrong("a whole number")
            number = int(number)
        if not low <= number <= _INT64_MAX:
            raise wrong(f"a whole number from {low} to 2^63-1")
        return number
    try:
        number = float(value) if isinstance(value, (int, float)) else float(str(value).strip())
    except (ValueError, OverflowError):
        raise wrong("a number") from None
    return _in_range(column, number, wrong)


def _in_range(column: str, number: float, wrong) -> float:
    """A float cell checked against its column's bounds (see MIN_SECONDS, _RANGES, _INFINITE)."""
    if math.isnan(number):
        raise wrong("a number (NaN; an empty cell is how a figure not measured is written)")
    if math.isinf(number):
        if _INFINITE.get(column) == number:
            return number
        raise wrong("a finite number")
    if column.endswith("_s"):
        if not (number == 0 or MIN_SECONDS <= number <= MAX_SECONDS):
            raise wrong(f"a time in seconds (0, or {MIN_SECONDS:g} to {MAX_SECONDS:g})")
        return number
    low, high = _RANGES.get(column, (-_MAX_FIGURE, _MAX_FIGURE))
    if not low <= number <= high:
        raise wrong(f"a number from {low:g} to {high:g}")
    return number


# A whole column at once --------------------------------------------------------------------------

def column(name: str, values: list) -> list | None:
    """A whole column's cells as :func:`value` makes them, where every one is of the plain kind
    files of ours hold (text, true/false, a number or its text, empty); None where any is not, or
    any is out of its column's bounds: the caller then checks each with :func:`value`, which says
    which cell is wrong and why. Cell by cell, 5,000 rows took 0.6 s of a journal's 0.7 s read
    before the window's first frame (issue 38); this takes a few ms."""
    if name in JSON_COLUMNS and any(v.__class__ in (dict, list) for v in values):
        return None
    if name in TEXT_COLUMNS:
        out = ["" if v is None or v == "" or v != v else v for v in values]
        return out if all(v.__class__ is str for v in out) else None
    if name in BOOL_COLUMNS:
        return _bools(name, values)
    empty = [v is None or v == "" or v != v for v in values]      # v != v: NaN, and only NaN
    if any(not e and (v.__class__ not in (str, float, int) or (name in INTEGER_COLUMNS and v.__class__ is int))
           for v, e in zip(values, empty)):
        return None       # a true/false where a number belongs; a whole number of the file's own (exact)
    try:
        numbers = np.array(["nan" if e else v for v, e in zip(values, empty)], dtype=object).astype(float)
    except (ValueError, OverflowError, TypeError):
        return None
    blank = np.asarray(empty, dtype=bool)
    if np.isnan(numbers[~blank]).any():
        return None       # "nan" written out: not how a figure not measured is written
    if name in INTEGER_COLUMNS:
        if blank.any():
            if name not in _DEFAULTS:
                return None
            numbers[blank] = _DEFAULTS[name]
        low = 1 if name == "size" else 0
        if not (np.isfinite(numbers).all() and (numbers == np.floor(numbers)).all()
                and (numbers >= low).all() and (numbers < 2.0 ** 63).all()):     # 2^63-1 as a float is 2^63
            return None
        return [int(n) for n in numbers.tolist()]
    return numbers.tolist() if _within(name, numbers[~blank]) else None


def _empty(v: Any) -> bool:
    return v is None or v == "" or v != v


def _bools(name: str, values: list) -> list | None:
    out = []
    for v in values:
        if _empty(v):
            out.append(_DEFAULTS.get(name, False))
        elif v.__class__ is bool:
            out.append(v)
        elif v.__class__ is str and (text := v.strip().lower()) in _TRUE | _FALSE:
            out.append(text in _TRUE)
        else:
            return None
    return out


def _within(name: str, numbers: np.ndarray) -> bool:
    """Whether every (non-empty) figure of column ``name`` is within its bounds, as :func:`_in_range` says."""
    infinite = np.isinf(numbers)
    if infinite.any() and not (numbers[infinite] == _INFINITE.get(name, math.nan)).all():
        return False
    finite = numbers[~infinite]
    if name.endswith("_s"):
        return bool(((finite == 0) | ((finite >= MIN_SECONDS) & (finite <= MAX_SECONDS))).all())
    low, high = _RANGES.get(name, (-_MAX_FIGURE, _MAX_FIGURE))
    return bool(((finite >= low) & (finite <= high)).all())
