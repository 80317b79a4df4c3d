"""What a Python caller passes to ``workbench.sweep``, read into an :class:`Experiment`'s plain
values, with a message naming the argument where one cannot be read (never a bare TypeError)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from workbench.workspace.experiment import Experiment

FLOATS = ("float32", "float64")


def _number(name: str, value: Any, whole: bool = False) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name}={value!r}: give a number")
    if whole:
        if value != int(value):
            raise ValueError(f"{name}={value!r}: give a whole number")
        return int(value)
    return float(value)


def sizes_text(sizes: Any) -> str | None:
    """An expression as the command line takes it, from an expression, a size, or a list of either."""
    if sizes is None or isinstance(sizes, str):
        return sizes
    if isinstance(sizes, np.ndarray):
        sizes = sizes.tolist()
    if isinstance(sizes, (bytes, Mapping)) or not isinstance(sizes, (numbers.Real, Iterable)):
        raise ValueError(f"sizes={sizes!r}: give a size, a list of sizes, or an expression such as '2^10:2^20:x4'")
    items = [sizes] if isinstance(sizes, numbers.Real) else list(sizes)
    if not items:
        raise ValueError("sizes=[]: give at least one size")
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
            continue
        n = _number("sizes", item, whole=True) if item is not None else 0
        if n < 1:
            raise ValueError(f"sizes: {item!r} is not a size (a size is 1 or more)")
        out.append(str(n))
    return ",".join(out)


def experiment(name: str, backends: str | Iterable[str] | None, sizes: Any, dtype: Any, noise: Any,
               budget: Any, repeats: Any) -> Experiment:
    """The sweep ``workbench.sweep`` was asked for, each argument read as the command line reads its option."""
    if isinstance(backends, str):
        backends = [b.strip() for b in backends.split(",") if b.strip()]
    elif backends is not None:
        given = list(backends) if isinstance(backends, Iterable) and not isinstance(backends, (bytes, Mapping)) \
            else None
        if given is None or not all(isinstance(b, str) for b in given):
            raise ValueError(f"backends={backends!r}: give backend names, as a list or 'numpy,numba'")
        backends = given
    try:
        dtype_name = np.dtype(dtype).name if dtype is not None else ""
    except TypeError:
        dtype_name = ""
    if dtype_name not in FLOATS:
        raise ValueError(f"dtype={dtype!r}: give one of {', '.join(FLOATS)}")
    dtype = dtype_name
    return Experiment(workload=name, backends=tuple(backends) if backends is not None else None,
                      sizes=sizes_text(sizes), dtype=dtype, noise=_number("noise", noise),
                      budget_s=_number("budget", budget), repeats=_number("repeats", repeats, whole=True))


def timeout(value: Any, default: float) -> float:
    """The time limit of a point: ``default`` where none is given."""
    seconds = _number("point_timeout", value)
    if seconds is None:
        return default
    if seconds <= 0:
        raise ValueError(f"point_timeout={value!r}: give a time in seconds, more than 0")
    return seconds
