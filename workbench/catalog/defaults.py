"""What a workload declares when its author leaves a field out (``Workload``'s keyword defaults):
a title from the name, the NumPy implementation as the reference, the footprint from the inputs.
perfplot's way: the author writes what differs, the rest is derived from what was given."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

#: The sizes a workload is swept at when it names none: 2^10 to 2^22 elements, every factor of 4.
DEFAULT_SIZES = tuple(2 ** k for k in range(10, 23, 2))
DEFAULT_KIND = "array math"
# Host bytes a point holds over its inputs' bytes: the inputs, their float64 copy for the reference
# (twice a float32 input), the reference and a result.
FOOTPRINT_FACTOR = 4.0
PROBE_SIZES = (64, 256)    # small enough to make at once for an n^3 workload, apart enough to fit a power


def title_of(name: str) -> str:
    """'source_terms' -> 'Source terms'."""
    words = name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def nbytes(obj: Any) -> int:
    """Bytes held by an input: arrays, pandas objects, and tuples, lists or dicts of them."""
    if isinstance(obj, (tuple, list)):
        return sum(nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(nbytes(o) for o in obj.values())
    usage = getattr(obj, "memory_usage", None)
    if callable(usage) and hasattr(obj, "index"):        # a pandas frame or series
        total = usage(deep=True)
        return int(getattr(total, "sum", lambda: total)())
    parts = [getattr(obj, a, None) for a in ("data", "indices", "indptr", "row", "col", "offsets")]
    if not hasattr(obj, "nbytes") and any(hasattr(p, "nbytes") for p in parts):     # a scipy.sparse matrix
        return sum(int(p.nbytes) for p in parts if hasattr(p, "nbytes"))
    return int(getattr(obj, "nbytes", 0))       # 0: not known (a list of Python floats, a scalar)


def with_float_dtype(obj: Any, dtype: Any) -> Any:
    """Float arrays as ``dtype`` (complex ones as its complex twin), in tuples, lists and dicts too."""
    dtype = np.dtype(dtype)
    if isinstance(obj, (tuple, list)):
        return type(obj)(with_float_dtype(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: with_float_dtype(v, dtype) for k, v in obj.items()}
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fc" and dtype.kind == "f":
        return obj.astype(np.result_type(dtype, np.complex64) if obj.dtype.kind == "c" else dtype, copy=False)
    if type(obj).__module__.partition(".")[0] == "pandas" and dtype.kind == "f":   # a frame's float columns
        if hasattr(obj, "columns"):
            floats = {c: dtype for c, t in obj.dtypes.items() if getattr(t, "kind", "") == "f"}
            return obj.astype(floats) if floats else obj
        if getattr(getattr(obj, "dtype", None), "kind", "") == "f":
            return obj.astype(dtype)
    return obj


def as_float64(obj: Any) -> Any:
    """What the reference is computed from: float inputs widened to float64."""
    return with_float_dtype(obj, np.float64)


def size_of(inputs: Any) -> int:
    """The size a reference's Context is given: the first input's length (the reference is
    called with the inputs alone, not the point's size)."""
    first = inputs[0] if isinstance(inputs, (tuple, list)) and inputs else inputs
    return int(len(first)) if hasattr(first, "__len__") else 0


class InputsFootprint:
    """footprint(size, itemsize): the inputs made at two small sizes, their bytes fitted as a power
    of the size (n for a vector, n^2 for a matrix), times FOOTPRINT_FACTOR. A plug-in's fits are
    made in the child that vets it (``vetted``): its inputs are never made where it could take the
    window or a notebook down, and a fit the child could not make leaves the footprint unknown (NaN)."""

    def __init__(self, make_inputs: Callable) -> None:
        self.make_inputs = make_inputs
        self.fits: dict[int, tuple[float, float] | None] = {}
        self.vetted = False

    def fit(self, itemsize: int) -> tuple[float, float] | None:
        """(bytes at the smaller probe size, power of the size), made here unless vetted."""
        if itemsize not in self.fits and not self.vetted:
            dtype = np.dtype(f"f{itemsize}") if itemsize in (2, 4, 8) else np.dtype(np.float64)
            small, large = (nbytes(self.make_inputs(n, dtype, "", np.random.default_rng(0))) for n in PROBE_SIZES)
            if small <= 0 or large <= 0:        # inputs whose bytes cannot be read: unknown, not 0
                self.fits[itemsize] = None
            else:
                power = math.log(large / small) / math.log(PROBE_SIZES[1] / PROBE_SIZES[0])
                self.fits[itemsize] = (float(small), max(power, 0.0))
        return self.fits.get(itemsize)

    def __call__(self, size: int, itemsize: int) -> float:
        fit = self.fit(itemsize)
        if fit is None:
            return math.nan
        small, power = fit
        return FOOTPRINT_FACTOR * small * (size / PROBE_SIZES[0]) ** power


def not_counted(*_: Any) -> float:
    """FLOPs or bytes a workload does not count: its throughput columns read 0."""
    return 0.0
