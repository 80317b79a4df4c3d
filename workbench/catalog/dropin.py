"""A user's own function, unchanged, on the backends it may run on: the drop-ins (issue 36).

Given ``f``, the NumPy kernel of plain callables, each drop-in is a backend of its own, named for
what was done to ``f`` and verified against ``f``'s own float64 result as every backend is:

- ``numba.njit (drop-in)`` and ``numba.njit parallel (drop-in)``: ``f`` compiled by Numba; where
  it does not compile, the compiler's reason in one line. The compilation is the first call's.
- ``cupy (drop-in)``: ``f`` called with its arrays as CuPy arrays (copied in and out as the
  transfers), reaching CuPy through NumPy's dispatch (``__array_function__``, ``__array_ufunc__``).
  A call that leaves the device (``np.asarray`` on a CuPy array, a NumPy array returned) is said
  as such and never measured as a GPU point.

Where a drop-in's library cannot run here, the sweep says why in one line (``workbench.api``).
The factories are module-level functions: a workload made of them pickles, as a cluster needs.
"""
from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from workbench.catalog.workloads import REGISTRY, Context, Phases, Workload, _kernel_factory


class DropInError(RuntimeError):
    """A drop-in that cannot run ``f`` unchanged: one line saying what ``f`` did."""


@dataclass(frozen=True)
class DropIn:
    name: str                   # the series, named for what was done to f
    like: str                   # the built-in backend whose runtime it runs in
    factory: Callable[..., Any]  # factory(f, inputs, ctx) -> Phases or compute


#: Lines of a Numba error that say where, not what: the pipeline's step, the source, the pass.
_WHERE = ("Failed in ", "File ", "During:", "<source", "^", "Enable logging")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MODULE = re.compile(r"<module '([^']+)' from '[^']*'>")


def _one_line(exc: BaseException, most: int = 200) -> str:
    """What an exception says, in one line: the first line that says what went wrong (Numba's
    first says which pipeline step failed, in colour), a module's file left out."""
    lines = [ln.strip() for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()]
    at = next((i for i, ln in enumerate(lines) if not ln.startswith(_WHERE)), 0)
    said = lines[at] if lines else type(exc).__name__
    if said.endswith(":") and at + 1 < len(lines):       # 'found for signature:' and the signature below
        said += " " + lines[at + 1]
    said = _MODULE.sub(r"\1", said)
    return said if len(said) <= most else said[:most - 3] + "..."


def _njit(f: Callable, inputs: Any, ctx: Context, parallel: bool = False) -> Callable[[], Any]:
    import numba
    jitted = numba.njit(parallel=parallel)(f)

    def compute() -> Any:
        try:
            return jitted(inputs)
        except numba.core.errors.NumbaError as exc:
            raise DropInError(f"does not compile under Numba: {_one_line(exc)}") from None
    return compute


def _arrays(inputs: Any) -> tuple[list, Callable[[list], Any]]:
    """The inputs' items (an array, or a tuple or list of them) and how to make the same shape again."""
    if isinstance(inputs, (tuple, list)):
        return list(inputs), type(inputs)
    return [inputs], lambda items: items[0]


def _cupy(f: Callable, inputs: Any, ctx: Context) -> Phases:
    s = ctx.session
    cp = s.cp
    items, rebuild = _arrays(inputs)
    held: dict[str, Any] = {}

    def h2d() -> None:
        if not any(isinstance(a, np.ndarray) for a in items):
            raise DropInError("takes no NumPy array: nothing to move to CuPy (a pandas frame's place is "
                              "cudf.pandas)")
        held["in"] = rebuild([cp.asarray(a) if isinstance(a, np.ndarray) else a for a in items])

    def compute() -> None:
        try:
            out = f(held["in"])
        except TypeError as exc:
            if "Implicit conversion to a NumPy array" in str(exc):
                raise DropInError("falls back to the host: it converts a CuPy array to NumPy "
                                  f"(np.asarray or a NumPy-only call): {_one_line(exc)}") from None
            raise
        if isinstance(out, np.ndarray) or (isinstance(out, (tuple, list)) and
                                           any(isinstance(o, np.ndarray) for o in out)):
            raise DropInError("falls back to the host: given CuPy arrays, it returned a NumPy array")
        held["out"] = out

    def d2h() -> Any:
        out = held["out"]
        if isinstance(out, (tuple, list)):
            return type(out)(cp.asnumpy(o) for o in out)
        return cp.asnumpy(out)
    return Phases(h2d=h2d, compute=compute, d2h=d2h)


DROP_INS = (
    DropIn("numba.njit (drop-in)", "numba", _njit),
    DropIn("numba.njit parallel (drop-in)", "numba", functools.partial(_njit, parallel=True)),
    DropIn("cupy (drop-in)", "cupy", _cupy),
)
NAMES = tuple(d.name for d in DROP_INS)


def add(workload: Workload, f: Callable[[Any], Any]) -> None:
    """Every drop-in of ``f`` as a backend of ``workload``, each declared like its library's."""
    from workbench.catalog import backends
    for d in DROP_INS:
        if d.name not in backends.BACKENDS:
            backends.declare(d.name, like=d.like, description=f"your function, unchanged, as {d.name}")
        workload.implement(d.name)(functools.partial(_factory, d.factory, f))


def _factory(make: Callable[..., Any], f: Callable, inputs: Any, ctx: Context) -> Any:
    return make(f, inputs, ctx)


def function_of(workload: Workload) -> Callable[[Any], Any]:
    """The function a workload's NumPy backend runs, where it was declared as a kernel ``f(inputs)``
    (``Workload.kernel``, the callables of ``workbench.sweep``); ValueError where it has none."""
    impl = workload.implementations.get("numpy")
    factory = getattr(impl, "factory", None)
    if isinstance(factory, functools.partial) and factory.func is _kernel_factory:
        return factory.args[0]
    raise ValueError(f"{workload.name}: drop-ins run the NumPy backend's own function, unchanged: declare it as "
                     "@workload.kernel('numpy') def f(inputs): ... (a factory's set-up cannot be carried over)")


def land(name: str) -> None:
    """In a process that loaded the workload's file (the engine, the command line): the workload
    declared again with its drop-ins, so that the file saying this declares it, as a loaded file must."""
    workload = copy.copy(REGISTRY.get(name))
    workload.implementations = dict(workload.implementations)
    add(workload, function_of(workload))
    REGISTRY.add(workload)
