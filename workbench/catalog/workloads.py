"""Workloads and their implementations, registered by declaration.

A workload module declares one :class:`Workload` and decorates one factory per
backend with :meth:`Workload.implement`.  Declaring imports nothing heavy: a
factory imports Numba, CuPy or cuDF only when it is called, so listing the
workloads (the command line's ``list``, the GUI's first paint) stays fast.
"""
from __future__ import annotations

import functools
import importlib
import reprlib
import importlib.machinery
import importlib.metadata
import importlib.util
import logging
import pkgutil
import threading
import sys
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from workbench.catalog import defaults, result_dtype
from workbench.catalog.backends import BACKENDS
from workbench.core import regular_file

log = logging.getLogger(__name__)

#: The package whose modules are the built-in workloads (each declares its own, with its ``order``).
BUILTIN_PACKAGE = "workloads"
#: Where other packages declare theirs: name = "package.module" (importing it registers them).
ENTRY_POINT_GROUP = "gpu_workbench.workloads"
#: The largest workload file read: far beyond a hand-written one, far below what would exhaust memory.
MAX_FILE_BYTES = 64 * 2 ** 20
KINDS = ("array math", "kernels", "data movement", "dataframes")


def shown(text: str) -> str:
    """A user's input quoted in a message, cut short: a 10,000-character name stays one readable line."""
    return _SHORT.repr(text)


_SHORT = reprlib.Repr()
_SHORT.maxstring = 40        # keyword arguments to Repr() need Python 3.12


@dataclass
class Phases:
    """What one implementation does per repeat, split so each phase is timed alone.

    ``compute`` is required.  ``h2d`` moves inputs to the device and ``d2h``
    returns the host result; CPU implementations leave both out, and then
    ``compute``'s return value is the result.  ``close`` frees what the
    implementation holds (device buffers) when the point is done.

    ``stages``, where given, returns the seconds of each named stage of the
    last ``compute`` call, in the order they ran (a pipeline's steps and the
    hand-offs between them: a name ``a->b`` is the hand-off from ``a`` to
    ``b``).  The implementation times them itself, with a clock that nests
    inside the engine's: the session's ``timed`` where that is a host clock
    (CPU, cuDF), never the CUDA events the engine is timing ``compute`` with.

    ``whole``, where given, is the call done at once: the copies and the compute overlapped on
    several streams (the ``overlap`` workload). Its time is the end-to-end figure and its result
    the one verified; ``h2d``, ``compute`` and ``d2h`` are still timed alone, each over the whole
    input, and they bound what the overlapped call can reach (``workbench.views.overlap``).
    """

    compute: Callable[[], Any]
    h2d: Callable[[], Any] | None = None
    d2h: Callable[[], Any] | None = None
    close: Callable[[], None] | None = None
    stages: Callable[[], Mapping[str, float]] | None = None
    whole: Callable[[], Any] | None = None


@dataclass(frozen=True)
class Context:
    """What an implementation may know about the point it runs."""

    size: int
    dtype: np.dtype
    variant: str = ""
    host_memory: str = "pageable"   # or "pinned": how GPU backends hold host buffers
    session: Any = None             # the backend's per-thread GPU objects (stream, ...)


#: Whose threads a CPU implementation runs on (``workbench.measure.threads`` counts them): Numba's
#: parallel loops, the BLAS pool (threadpoolctl), or one thread; "" takes the backend's own
#: (Numba's for numba, one for the rest).
THREADS = ("numba", "blas", "one", "")


@dataclass(frozen=True)
class Implementation:
    workload: str
    backend: str
    factory: Callable[[Any, Context], Phases | Callable[[], Any]]
    note: str = ""
    threads: str = ""


@dataclass(eq=False)
class Workload:
    """A benchmark problem: its inputs, reference, tolerances and counts.

    Only ``name`` and ``make_inputs`` are needed (``catalog.defaults`` derives the rest): the title
    from the name, the reference from the NumPy implementation run on float64 copies of the inputs,
    the footprint from the inputs' bytes; FLOPs and bytes left out are not counted (0)."""

    name: str
    title: str = ""
    kind: str = defaults.DEFAULT_KIND   # one of KINDS: how the GUI groups workloads
    description: str = ""           # what it computes
    lesson: str = ""                # which lesson of GPU computing it shows
    size_unit: str = "elements"     # what "size" means
    default_sizes: tuple[int, ...] = defaults.DEFAULT_SIZES
    make_inputs: Callable[[int, np.dtype, str, np.random.Generator], Any] | None = None
    reference: Callable[[Any], Any] | None = None  # float64 NumPy/pandas reference of the inputs
    flops: Callable[[int], float] = defaults.not_counted
    bytes_moved: Callable[[int, int], float] = defaults.not_counted  # (size, itemsize) -> bytes a perfect kernel moves
    footprint: Callable[[int, int], float] | None = None   # (size, itemsize) -> host bytes one point holds
    tolerance: Mapping[str, float] = field(default_factory=lambda: {"float32": 1e-5, "float64": 1e-12})
    dtypes: tuple[str, ...] = ("float32", "float64")
    variants: tuple[str, ...] = ("",)          # e.g. input order for divergence
    compare: Callable[[Any, Any], float] | None = None  # (result, reference) -> relative error
    throughput_on: str = "compute"   # or "total": transfer's bytes move in h2d and d2h
    # (size, itemsize, variant) -> (flops, bytes), for a workload whose counts depend on the variant
    # (spmv: 5 or 7 nonzeros per row); when set, the engine uses it instead of flops and bytes_moved.
    counts: Callable[[int, int, str], tuple[float, float]] | None = None
    # (size, itemsize) -> device bytes one point holds on a GPU backend, for the memory wall's
    # warnings before a sweep; None: the bytes a perfect kernel moves (inputs read, outputs written).
    device_footprint: Callable[[int, int], float] | None = None
    # (size, itemsize) -> bytes the kernel itself holds while it runs, on any backend (which cache it
    # runs from, for the sanity check's ceiling); None: the device footprint, else bytes_moved. Not
    # the host footprint: that counts the reference and temporaries the kernel never touches.
    working_set: Callable[[int, int], float] | None = None
    # Result columns (or a Series' name) whose float dtype the library chooses, left out of the check
    # that a result has the point's dtype: a groupby mean is float64 on cuDF, and on pandas by the data.
    library_dtypes: tuple[str, ...] = ()
    # variant -> the host memory ("pinned" or "pageable") its GPU buffers are in, where the variant
    # chooses it (overlap's 'pinned 4 streams'); None: the sweep's --pinned choice, for every variant.
    host_memory_of: Callable[[str], str] | None = None
    # Every implementation is a GPU one, on purpose (overlap: its subject is the host-device copies);
    # every other workload has a CPU baseline (tests/test_workloads_cpu.py holds that).
    needs_gpu: bool = False
    # Where it stands in lists, lowest first (the built-ins: the order a user meets them); a plug-in's
    # workloads follow the built-in ones in the order they were loaded, whatever they declare.
    order: int = 0
    implementations: dict[str, Implementation] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.make_inputs is None:
            raise TypeError(f"workload {self.name!r}: make_inputs(size, dtype, variant, rng) is required")
        self.title = self.title or defaults.title_of(self.name)
        self.default_sizes = tuple(self.default_sizes)
        if self.reference is None:
            self.reference = self._numpy_reference
        if self.footprint is None:
            self.footprint = defaults.InputsFootprint(self.make_inputs)

    def _numpy_reference(self, inputs: Any, size: int | None = None) -> Any:
        """The NumPy implementation (else the first one) on float64 copies of the inputs; its
        Context is told ``size``, the point's, where the caller knows it (``reference_at``)."""
        numpy = self.implementations.get("numpy") or next(iter(self.implementations.values()), None)
        if numpy is None:
            raise ValueError(f"workload {self.name!r} has no reference: give reference= or an implementation")
        wide = defaults.as_float64(inputs)
        made = numpy.factory(wide, Context(defaults.size_of(wide) if size is None else size, np.dtype(np.float64)))
        return (made.compute if isinstance(made, Phases) else made)()

    def reference_at(self, inputs: Any, size: int) -> Any:
        """The float64 reference of the inputs made at ``size``: a given ``reference(inputs)``, or
        the NumPy implementation run with the point's size in its Context, as the timed one is."""
        if self.reference == self._numpy_reference:
            return self._numpy_reference(inputs, size)
        return self.reference(inputs)

    def kernel(self, backend: str, note: str = "", threads: str = "") -> Callable:
        """Decorator: register ``fn(inputs)``, called once per repeat, as this workload on ``backend``
        (perfplot's kernels; :meth:`implement` where set-up must stay out of the timing)."""
        def deco(fn: Callable[[Any], Any]) -> Callable:
            self.implement(backend, note, threads)(functools.partial(_kernel_factory, fn))
            return fn
        return deco

    def implement(self, backend: str, note: str = "", threads: str = "") -> Callable:
        """Decorator: register ``factory(inputs, ctx)`` as this workload on ``backend``;
        ``threads``: whose threads it runs on, where not the backend's own (one of THREADS)."""
        if threads not in THREADS:
            raise ValueError(f"threads must be one of {', '.join(repr(t) for t in THREADS)}, not {threads!r}")

        def deco(factory: Callable) -> Callable:
            self.implementations[backend] = Implementation(self.name, backend, factory, note, threads)
            return factory
        return deco

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(self.implementations)

    def flops_and_bytes(self, size: int, itemsize: int, variant: str = "") -> tuple[float, float]:
        """The FLOP and byte counts of one point (what the throughput columns divide)."""
        if self.counts is not None:
            return self.counts(size, itemsize, variant)
        return self.flops(size), self.bytes_moved(size, itemsize)

    def device_bytes(self, size: int, itemsize: int) -> float:
        """The estimated device memory one point holds (what the memory cap is compared with)."""
        if self.device_footprint is not None:
            return float(self.device_footprint(size, itemsize))
        return float(self.bytes_moved(size, itemsize))

    def working_set_bytes(self, size: int, itemsize: int) -> float:
        """The bytes one point's kernel holds (what the limits check places in a cache level)."""
        if self.working_set is not None:
            return float(self.working_set(size, itemsize))
        return self.device_bytes(size, itemsize)

    def relative_error(self, result: Any, reference: Any) -> float:
        if self.compare is not None:
            return float(self.compare(result, reference))
        return max_relative_error(result, reference)

    def dtype_problem(self, result: Any, reference: Any, dtype: np.dtype) -> str:
        """'' when the result is of the point's dtype, else why it is not (``result_dtype``)."""
        return result_dtype.dtype_problem(result, reference, dtype, self.library_dtypes)


def _kernel_factory(fn: Callable[[Any], Any], inputs: Any, ctx: Context) -> Callable[[], Any]:
    # module level, so a kernel's workload pickles (a cluster worker) as its function does
    return functools.partial(fn, inputs)


def max_relative_error(result: Any, reference: Any) -> float:
    """Largest absolute difference over the largest reference magnitude.

    Normwise rather than elementwise, so that a reference value near zero does
    not turn a rounding difference into an infinite error.
    """
    res = np.asarray(result)
    ref = np.asarray(reference)
    if res.shape != ref.shape:
        raise ValueError(f"result has shape {res.shape}, reference {ref.shape}")
    finite, expected = np.isfinite(res), np.isfinite(ref)
    if not finite.all():
        # NaN and inf where the reference has the same: the kernel computed what the reference did
        if not (np.array_equal(finite, expected) and np.array_equal(res[~finite], ref[~expected], equal_nan=True)):
            return float("inf")
        res, ref = res[finite], ref[expected]
    elif not expected.all():
        return float("inf")
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    diff = float(np.max(np.abs(res.astype(np.complex128 if np.iscomplexobj(res) else np.float64) - ref))) if ref.size else 0.0
    return diff / scale if scale else diff


class PluginError(ValueError):
    """A workload file that cannot be used; the message is one line for the user."""


def check_file(path: str | Path) -> None:
    """PluginError, in one line, unless ``path`` is a regular file of at most MAX_FILE_BYTES: a
    FIFO, a device (``/dev/zero``) or a file that grows without end is refused, never read."""
    try:
        regular_file.checked(path, MAX_FILE_BYTES, "a workload file")
    except OSError as exc:
        raise _unreadable(path, exc) from None


def read_file(path: str | Path) -> bytes:
    """The bytes of the workload file ``path``, refused as :func:`check_file` says, never read past its limit."""
    try:
        return regular_file.read_bytes(path, MAX_FILE_BYTES, "a workload file")
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: str | Path, exc: OSError) -> PluginError:
    if isinstance(exc, regular_file.Refused):
        return PluginError(str(exc))
    if isinstance(exc, FileNotFoundError):
        return PluginError(f"no such workload file: {path}")
    return PluginError(f"{path}: cannot read it: {exc.strerror or exc}")


class _RegularSource(importlib.machinery.SourceFileLoader):
    """Python's own loader, reading as :func:`read_file` does: a file swapped for a FIFO or a device
    after the check cannot block the import (a cached .pyc refused so is only not used)."""

    def get_data(self, path: str) -> bytes:
        return regular_file.read_bytes(path, MAX_FILE_BYTES, "a workload file")


class Registry:
    """Workloads by name, loaded on first use."""

    def __init__(self) -> None:
        self._workloads: dict[str, Workload] = {}
        self._builtin: set[str] = set()
        self._origin: dict[str, str] = {}     # a plug-in workload's name -> the file or entry point declaring it
        self._loaded = False
        # This thread imports the built-in modules, whose register() calls come here; another thread's
        # wait for the walk (the lock), so that a clash with a built-in name is always seen.
        self._walk = threading.local()
        self._lock = threading.RLock()
        self.load_errors: list[str] = []

    def add(self, workload: Workload) -> Workload:
        if workload.kind not in KINDS:
            raise ValueError(f"workload {workload.name!r}: kind must be one of {KINDS}")
        if not getattr(self._walk, "on", False):
            self._load()            # the built-in names first: a clash is refused now, not replaced later
        if workload.name in self._builtin:
            raise PluginError(f"a workload named {workload.name!r} is built in; give yours another name")
        self._workloads[workload.name] = workload
        return workload

    def reload_entry_points(self) -> None:
        """Look the entry points up again at the next use (a package installed since; tests)."""
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if not self._loaded:
                self._walk_and_load()

    def _walk_and_load(self) -> None:
        # The built-in ones are this package's modules, found by walking it (no list to keep, and a
        # source tree that was never installed has them too), then sorted by their declared order.
        self._walk.on = True
        try:
            package = importlib.import_module(BUILTIN_PACKAGE)
            for info in pkgutil.iter_modules(package.__path__):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{BUILTIN_PACKAGE}.{info.name}")
        finally:
            self._walk.on = False
        self._workloads = dict(sorted(self._workloads.items(), key=lambda item: item[1].order))
        self._builtin = set(self._workloads)
        self._loaded = True
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            before = dict(self._workloads)
            try:
                ep.load()
                added = {n for n, w in self._workloads.items() if before.get(n) is not w}
                self._claim(added, before, f"entry point {ep.name}")
                self._check_backends(added - set(before), f"entry point {ep.name}")
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the workbench down
                self._workloads = before
                self.load_errors.append(f"entry point {ep.name}: {exc}")
                log.warning("could not load workload plug-in %s: %s", ep.name, exc)

    def _check_backends(self, names: set[str], origin: str) -> None:
        """Refuse workloads that name a backend the workbench does not have (and drop them)."""
        for name in sorted(names):
            unknown = sorted(set(self._workloads[name].implementations) - set(BACKENDS))
            if unknown:
                for n in names:
                    self._workloads.pop(n, None)
                raise PluginError(f"{origin}: workload {name!r} names unknown backend(s) {', '.join(unknown)}; "
                                  f"the backends are: {', '.join(BACKENDS)}")

    def _claim(self, added: set[str], before: dict, origin: str, where: str = "") -> None:
        """Record ``origin`` as the declarer of ``added``; refuse a name another origin declared."""
        for name in sorted(added):
            other = self._origin.get(name, "another module") if name in before else origin
            if other != origin:
                raise PluginError(f"{where}a workload named {shown(name)} is declared by {other} already; "
                                  "give yours another name")
        self._origin.update(dict.fromkeys(added, origin))

    def load_file(self, path: str | Path, exclusive: bool = False) -> list[str]:
        """Import a Python file that declares workloads; returns their names.

        Whatever goes wrong (not a Python file, an exception at import, a clash with a built-in,
        an unknown backend) is one PluginError line, and nothing of the file stays registered.
        ``exclusive`` refuses a name that another file or entry point declared, as the command line
        does; without it the file's declaration replaces the other's (a Dask worker outlives a
        sweep and keeps an earlier sweep's plug-ins, which the new sweep never asked for)."""
        self._load()
        path = Path(path)
        check_file(path)
        if path.suffix != ".py":
            raise PluginError(f"{path}: not a Python file (a workload plug-in is a .py file)")
        before = dict(self._workloads)
        # Named for the file's place, not only its name: two folders' mine.py are two modules (the
        # second replaced the first in sys.modules, even where it was then refused).
        name = f"gpu_workbench_external_{path.stem}_{zlib.crc32(str(path.resolve()).encode()):08x}"
        try:
            spec = importlib.util.spec_from_file_location(name, path, loader=_RegularSource(name, str(path)))
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", DeprecationWarning)
                spec.loader.exec_module(module)
            _said_to_its_author(said)
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a plug-in, too; not Ctrl-C
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._workloads = before
            sys.modules.pop(name, None)
            if isinstance(exc, regular_file.Refused) and exc.path == str(path):    # swapped after the check
                raise PluginError(str(exc)) from None
            if isinstance(exc, PluginError):
                raise PluginError(f"{path}: {exc}") from None
            raise PluginError(f"{path}: {type(exc).__name__} while loading it: {exc}") from None
        # New names, and names this file declares again (a file loaded anew after an edit, by a
        # process that outlives a sweep: a Dask worker).
        added = {n for n, w in self._workloads.items() if before.get(n) is not w}
        if not added:
            raise PluginError(f"{path}: declares no workload (register(Workload(...)) at module level)")
        try:
            if exclusive:
                self._claim(added, before, str(path.resolve()), where=f"{path}: ")
            self._check_backends(added, str(path))
        except PluginError:
            self._workloads = before
            sys.modules.pop(name, None)
            raise
        self._origin.update(dict.fromkeys(added, str(path.resolve())))
        return sorted(added)

    def origin(self, name: str) -> str:
        """The file or entry point that declared workload ``name``: '' for a built-in one, or one
        registered by code in this process (a notebook's), which an engine process cannot load."""
        self._load()
        return self._origin.get(name, "")

    def builtin(self, name: str) -> bool:
        self._load()
        return name in self._builtin

    def names(self) -> list[str]:
        self._load()
        return list(self._workloads)

    def get(self, name: str) -> Workload:
        self._load()
        try:
            return self._workloads[name]
        except KeyError:
            raise KeyError(f"unknown workload {shown(name)}; valid: {', '.join(self._workloads)}") from None

    def all(self) -> list[Workload]:
        self._load()
        return list(self._workloads.values())


REGISTRY = Registry()


def register(workload: Workload) -> Workload:
    """Declare a workload (used at module level by each workload module)."""
    return REGISTRY.add(workload)


def _said_to_its_author(said: list) -> None:
    """The warnings a plug-in's import raised, raised again as its author's own code's: Python shows
    a DeprecationWarning only from ``__main__``, and a plug-in on an old import path must hear it;
    once a line, and by the process the user started (its engine and vetting children load it too)."""
    import multiprocessing
    if multiprocessing.parent_process() is not None:
        return
    seen = set()
    for w in said:
        key = (str(w.message), w.filename, w.lineno)
        if key in seen:
            continue
        seen.add(key)
        if issubclass(w.category, DeprecationWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, module="__main__")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
