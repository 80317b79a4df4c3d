"""A user's own function, unchanged, on the backends it may run on: the drop-ins (issue 36).

Given ``f``, the NumPy kernel of plain callables, each drop-in is a backend of its own, named for
what was done to ``f`` and verified against ``f``'s own float64 result as every backend is:

- ``numba.njit (drop-in)`` and ``numba.njit parallel (drop-in)``: ``f`` compiled by Numba; where
  it does not compile, the compiler's reason in one line. The compilation is the first call's.
- ``cudf.pandas (drop-in)``: ``f``, a pandas function, on frames cuDF's pandas accelerator holds on
  the GPU, in the engine process of the built-in ``cudf-pandas`` backend; its profiler says how
  many pandas calls ran on the GPU and which fell back to the CPU.
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
import inspect
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from workbench.catalog.accelerated import accelerated
from workbench.catalog.workloads import REGISTRY, Context, Phases, Workload, _kernel_factory


class DropInError(RuntimeError):
    """A drop-in that cannot run ``f`` unchanged: one line saying what ``f`` did."""


@dataclass(frozen=True)
class DropIn:
    name: str                   # the series, named for what was done to f
    like: str                   # the built-in backend whose runtime it runs in
    factory: Callable[..., Any]  # factory(f, inputs, ctx) -> Phases or compute
    threads: str = ""           # whose threads it runs on (workloads.THREADS): what the threads column counts


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


#: A line of ``f`` run this many times in one call, or once per item of its inputs' first axis
#: (the larger), is a Python loop over elements: on CuPy each pass is a launch and a copy back.
#: A loop of a fixed count (time steps of a stencil) stays below it at any size that matters.
LOOP_LINES = 32


def _takes_xp(f: Callable) -> bool:
    """Whether ``f`` names its array module: ``def f(inputs, xp=np)`` (the array API's way)."""
    try:
        return "xp" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        return False


def _loop_guard(f: Callable, items: list) -> Callable[[Callable[[], Any]], Any]:
    """Run a call with ``f``'s own lines counted; DropInError as soon as one runs as often as a
    Python loop over the elements does (the call ends there, not after a million launches)."""
    code = getattr(f, "__code__", None)
    lead = max((a.shape[0] for a in items if getattr(a, "ndim", 0)), default=0)
    most = max(LOOP_LINES, lead // 2)

    def run(call: Callable[[], Any]) -> Any:
        if code is None:
            return call()
        counts: dict[int, int] = {}

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                counts[frame.f_lineno] = n = counts.get(frame.f_lineno, 0) + 1
                if n >= most:
                    raise DropInError(f"falls back to the host: it loops in Python over the elements (line "
                                      f"{frame.f_lineno} of {f.__name__} ran {n:,} times in one call, each a "
                                      "launch and a copy back)")
            return local

        def calls(frame: Any, event: str, arg: Any) -> Any:
            return local if frame.f_code is code else None     # f's own lines only: no cost elsewhere

        before = sys.gettrace()
        sys.settrace(calls)
        try:
            return call()
        finally:
            sys.settrace(before)
    return run


def _cupy(f: Callable, inputs: Any, ctx: Context) -> Phases:
    s = ctx.session
    cp = s.cp
    items, rebuild = _arrays(inputs)
    held: dict[str, Any] = {}
    call = functools.partial(f, xp=cp) if _takes_xp(f) else f
    guard = _loop_guard(f, items)

    def h2d() -> None:
        if not any(isinstance(a, np.ndarray) for a in items):
            raise DropInError("takes no NumPy array: nothing to move to CuPy (a pandas frame's place is "
                              "cudf.pandas)")
        held["in"] = rebuild([cp.asarray(a) if isinstance(a, np.ndarray) else a for a in items])

    def compute() -> None:
        try:
            if "out" in held:
                out = call(held["in"])
            else:               # the first call, f's lines counted: a loop over elements is no GPU point
                out = guard(lambda: call(held["in"]))
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


def _cudf_pandas(f: Callable, inputs: Any, ctx: Context) -> Phases:
    """``f`` itself on objects cuDF's pandas accelerator holds (the dedicated engine of the built-in
    ``cudf-pandas`` backend, whose profiler then says which calls fell back to the CPU)."""
    import pandas as pd                 # in that engine, the accelerator's
    items, _ = _arrays(inputs)
    if not any(isinstance(x, (pd.DataFrame, pd.Series)) for x in items):
        raise DropInError("takes no pandas object: cudf.pandas accelerates pandas code (a NumPy function's "
                          "drop-in is cupy)")
    return accelerated(functools.partial(_kernel_factory, f))(inputs, ctx)


DROP_INS = (
    # A plain njit runs on one thread whatever Numba's pool holds; parallel=True on the pool, whose
    # size the threads column and the compute ceiling must read (and a ' x4' series can set).
    DropIn("numba.njit (drop-in)", "numba", _njit, threads="one"),
    DropIn("numba.njit parallel (drop-in)", "numba", functools.partial(_njit, parallel=True), threads="numba"),
    DropIn("cupy (drop-in)", "cupy", _cupy),
    DropIn("cudf.pandas (drop-in)", "cudf-pandas", _cudf_pandas),
)
NAMES = tuple(d.name for d in DROP_INS)


def add(workload: Workload, f: Callable[[Any], Any]) -> None:
    """Every drop-in of ``f`` as a backend of ``workload``, each declared like its library's."""
    from workbench.catalog import backends
    for d in DROP_INS:
        if d.name not in backends.BACKENDS:
            backends.declare(d.name, like=d.like, description=f"your function, unchanged, as {d.name}")
        workload.implement(d.name, threads=d.threads)(functools.partial(_factory, d.factory, f))


def _factory(make: Callable[..., Any], f: Callable, inputs: Any, ctx: Context) -> Any:
    return make(f, inputs, ctx)


def function_of(workload: Workload) -> Callable[[Any], Any]:
    """The function a workload's NumPy (or pandas) backend runs, where it was declared as a kernel ``f(inputs)``
    (``Workload.kernel``, the callables of ``workbench.sweep``); ValueError where it has none."""
    for backend in ("numpy", "pandas"):         # a NumPy function, or a pandas one (cudf.pandas's)
        factory = getattr(workload.implementations.get(backend), "factory", None)
        if isinstance(factory, functools.partial) and factory.func is _kernel_factory:
            return factory.args[0]
    if REGISTRY.builtin(workload.name):
        raise ValueError(f"{workload.name}: drop-ins run the NumPy backend's own function, unchanged, and this "
                         "built-in workload has a backend written for each library already: try your own "
                         "function (a workload file's @workload.kernel('numpy'), or workbench.try_on_gpu)")
    raise ValueError(f"{workload.name}: drop-ins run the NumPy backend's own function, unchanged: declare it as "
                     "@workload.kernel('numpy') def f(inputs): ... (a factory's set-up cannot be carried over)")


def land(name: str, missing_ok: bool = False) -> None:
    """In a process that loaded the workload's file (the engine, the command line): the workload
    declared again with its drop-ins, so that the file saying this declares it, as a loaded file must.
    ``missing_ok``: a workload no longer declared (its file was edited or closed since) is passed
    over, not an engine that fails to load every workload file."""
    if missing_ok and name not in REGISTRY.names():
        return
    workload = copy.copy(REGISTRY.get(name))
    workload.implementations = dict(workload.implementations)
    add(workload, function_of(workload))
    REGISTRY.add(workload)
