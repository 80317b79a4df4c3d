"""A notebook's plain callables as a workload, carried to the engine process.

The engine is a spawned process that learns workloads by loading plug-in files; the callables are
pickled (cloudpickle where installed: lambdas and a notebook's
functions travel by value; else pickle: top-level functions of importable modules only) beside a
two-line plug-in file that unpickles and registers it there."""
from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path
from typing import Any, Callable, Mapping

from workbench.catalog import backends, defaults, dropin
from workbench.catalog.workloads import REGISTRY, Workload

try:
    import cloudpickle as _pickler
except ImportError:         # optional: without it, only importable top-level functions travel
    _pickler = pickle


def from_callables(name: str, setup: Callable[[int], Any], kernels: Mapping[str, Callable[[Any], Any]],
                   drop_in: bool = False) -> Workload:
    """perfplot's form: ``setup(n)`` makes the inputs (float arrays cast to the sweep's dtype),
    each kernel takes them; a kernel's name that is no backend becomes one, like NumPy.
    ``drop_in``: the NumPy kernel, unchanged, on every drop-in too (``workbench.catalog.dropin``)."""
    for backend in kernels:
        if backend not in backends.BACKENDS:
            backends.declare(backend, like="numpy")
    workload = Workload(name, make_inputs=functools.partial(_inputs, setup), description="plain callables")
    for backend, fn in kernels.items():
        workload.kernel(backend)(fn)
    if drop_in:
        dropin.add(workload, drop_in_function(kernels))
    return workload


def drop_in_function(kernels: Mapping[str, Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """The function the drop-ins run: the NumPy kernel, or the only kernel given."""
    if "numpy" in kernels:
        return kernels["numpy"]
    if len(kernels) == 1:
        return next(iter(kernels.values()))
    raise ValueError("drop_in=True runs your NumPy function on the other backends: give it as "
                     "kernels={'numpy': f}")


def _inputs(setup: Callable[[int], Any], size: int, dtype: Any, variant: str, rng: Any) -> Any:
    return defaults.with_float_dtype(setup(size), dtype)


def ship(name: str, setup: Callable[[int], Any], kernels: Mapping[str, Callable[[Any], Any]], folder: Path,
         drop_in: bool = False) -> Path:
    """Write the callables to ``folder``; returns the plug-in file that makes their workload."""
    if not name.strip():
        raise ValueError("name the callables' workload: an empty name cannot be listed")
    if drop_in:
        drop_in_function(kernels)         # refused here, before anything is written
    try:
        data = _pickler.dumps((name, setup, dict(kernels), drop_in))
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        fix = ("make them picklable (a lock, a generator or an open file cannot travel)" if _pickler is not pickle
               else "install cloudpickle, or make them top-level functions of an importable module")
        raise TypeError(f"the callables of {name!r} cannot be sent to the engine process ({exc}): {fix}") from None
    # The file is named for the workload's hash, not its name: a name is any text ('a/b', '<b>', 300 characters).
    stem = "shipped_" + hashlib.sha1(name.encode()).hexdigest()[:16]
    data_path, plugin = folder / f"{stem}.pkl", folder / f"{stem}.py"
    data_path.write_bytes(data)
    plugin.write_text(f"from workbench.catalog.shipped import land\nland({str(data_path)!r})\n", encoding="utf-8")
    return plugin


def land(path: str) -> None:
    """In the process loading the plug-in file: make the workload and register it."""
    REGISTRY.add(from_callables(*pickle.loads(Path(path).read_bytes())))
