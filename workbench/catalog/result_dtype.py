"""Whether a result's dtype is its point's: a float32 point whose result is float64 computed in float64.

Its values are right, so the error against the float64 reference cannot tell: under NumPy 2 one
``np.float64`` scalar in an expression promotes a float32 array (NEP 50), and the float32 figures
are float64 work. The rule: the floating part of every float or complex part of the result has the
point's precision (complex64 is float32's), and a complex part is allowed only where the reference
is complex. Integer, boolean and other parts (keys, counts, labels) are not checked, nor is a
Python number (Numba hands back a float32 scalar as a Python float). Only ``.dtype`` and
``.dtypes`` are read: a CuPy or cuDF result is never copied to the host for it.
"""
from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

import numpy as np


def dtype_problem(result: Any, reference: Any, dtype: Any, free: Collection[str] = ()) -> str:
    """'' when ``result`` keeps to the point's ``dtype``, else one sentence saying how it does not.
    ``free`` names frame columns (or a Series) whose dtype the library chooses (a groupby mean)."""
    dtype = np.dtype(dtype)
    reference_complex = any(d.kind == "c" for _, d in _parts(reference))
    for label, got in _parts(result):
        if got.kind not in "fc" or (label is not None and label in free):
            continue
        what = "result" if label is None else f"result column {label!r}"
        if got.kind == "c" and not reference_complex:
            return f"{what} is {got} in a {dtype} point whose reference is real"
        precision = np.finfo(got).dtype             # complex64's floating part is float32
        if precision != dtype:
            return f"{what} is {got} in a {dtype} point: it computes in {precision}"
    return ""


def _parts(value: Any) -> Iterator[tuple[Any, np.dtype]]:
    """(column or Series name, or None; NumPy dtype) of each part of a result that has a dtype."""
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _parts(item)
        return
    dtypes = getattr(value, "dtypes", None)
    if hasattr(value, "columns") and hasattr(dtypes, "items"):      # a pandas or cuDF frame
        for column, d in dtypes.items():
            if (d := _numpy(d)) is not None:
                yield column, d
        return
    d = _numpy(getattr(value, "dtype", None))
    if d is not None:
        yield getattr(value, "name", None) if hasattr(value, "index") else None, d


def _numpy(d: Any) -> np.dtype | None:
    """A NumPy dtype, or None where there is none (categories, strings, cuDF's nested types)."""
    if d is None:
        return None
    try:
        return np.dtype(getattr(d, "numpy_dtype", d))   # pandas' nullable Float32 has one
    except (TypeError, ValueError):
        return None
