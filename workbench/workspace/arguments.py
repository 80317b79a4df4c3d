"""What a Python caller passes to ``workbench.sweep``, read into an :class:`Experiment`'s plain
values, with a message naming the argument where one cannot be read (never a bare TypeError)."""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

import numpy as np

from workbench.workspace.experiment import Experiment


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
    items = [sizes] if isinstance(sizes, numbers.Real) else list(sizes)
    if not items:
        raise ValueError("sizes=[]: give at least one size")
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
            continue
        n = _number("sizes", item, whole=True)
        if n < 1:
            raise ValueError(f"sizes: {item!r} is not a size (a size is 1 or more)")
        out.append(str(n))
    return ",".join(out)


def experiment(name: str, backends: str | Iterable[str] | None, sizes: Any, dtype: Any, noise: Any,
               budget: Any, repeats: Any) -> Experiment:
    if isinstance(backends, str):
        backends = [b.strip() for b in backends.split(",") if b.strip()]
    try:
        dtype = np.dtype(dtype).name
    except TypeError:
        raise ValueError(f"dtype={dtype!r}: give float32 or float64") from None
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
