"""Backends: who runs a workload, and whether they can run here.

A backend is declared by name with the runtime whose session times it ("cupy"; the measuring layer's
``workbench.measure.sessions`` says what each opens, and outside code may name a ``module:function``).
Whether it is usable is probed cheaply first (installed? a driver and a device?), then, for GPU
backends, by a tiny real computation in a child process, which catches a library that imports but
cannot work. A backend that changes a library for the whole process (cuDF's pandas accelerator)
names an ``engine``: a preparation run first thing in an engine process of its own.
See docs/ARCHITECTURE.md, "workbench/catalog/backends.py".
"""
from __future__ import annotations

import dataclasses
import functools
import re
import importlib.metadata
import importlib.util
import logging
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from workbench.core import driver

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Backend:
    name: str
    title: str
    device: str            # "cpu" or "gpu"
    module: str            # the import that must succeed
    distributions: tuple[str, ...]   # pip names that provide it, for versions and CUDA majors
    session: str           # the runtime whose session times it (workbench.measure.sessions), or "module:function"
    description: str
    # The preparation of a dedicated engine process, run before anything else is imported there
    # (cudf.pandas.install(): a runtime of workbench.measure.sessions, or "module:function");
    # '' runs the backend in the shared engine process.
    engine: str = ""


@dataclass(frozen=True)
class Availability:
    usable: bool
    reason: str = ""       # why not, in words a user can act on
    version: str = ""


BACKENDS: dict[str, Backend] = {b.name: b for b in (
    Backend("numpy", "NumPy", "cpu", "numpy", ("numpy",), "cpu",
            "NumPy on the CPU: vectorised array expressions and the BLAS/FFT libraries it links."),
    Backend("numba", "Numba (CPU)", "cpu", "numba", ("numba",), "cpu",
            "Numba on the CPU: @njit(parallel=True) loops over all cores."),
    Backend("pandas", "pandas", "cpu", "pandas", ("pandas",), "cpu",
            "pandas DataFrames on the CPU."),
    Backend("scipy", "SciPy", "cpu", "scipy", ("scipy",), "cpu",
            "SciPy on the CPU: scipy.sparse's compiled kernels (one thread)."),
    Backend("cupy", "CuPy", "gpu", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"),
            "cupy",
            "CuPy as people write it first: NumPy-like expressions, one kernel per operation, cuBLAS/cuFFT/CUB."),
    Backend("cupy-fused", "CuPy fused kernel", "gpu", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"),
            "cupy",
            "CuPy with the expression fused into one ElementwiseKernel: one element per thread, one pass over memory."),
    Backend("cupy-raw", "CuPy raw kernel", "gpu", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"),
            "cupy",
            "CuPy RawKernel in CUDA C: wide vector loads and several elements per thread, to reach the memory's bandwidth."),
    Backend("numba-cuda", "Numba CUDA", "gpu", "numba.cuda", ("numba-cuda",),
            "numba-cuda",
            "Hand-written @cuda.jit kernels, one element per thread, as the textbook writes them."),
    Backend("numba-cuda-x4", "Numba CUDA, 4 per thread", "gpu", "numba.cuda", ("numba-cuda",),
            "numba-cuda",
            "@cuda.jit kernels that give each thread four elements, loaded before use, so more bytes are in flight."),
    Backend("numba-cuda-warp", "Numba CUDA, a warp per row", "gpu", "numba.cuda", ("numba-cuda",),
            "numba-cuda",
            "@cuda.jit kernels that give each row a whole warp of 32 threads: coalesced reads along the row, "
            "lane sums combined by warp shuffles."),
    Backend("cudf", "cuDF", "gpu", "cudf", ("cudf-cu13", "cudf-cu12", "cudf"),
            "cudf",
            "cuDF DataFrames on the GPU (pandas in, cuDF on the device, pandas out)."),
    Backend("cudf-pandas", "cudf.pandas", "gpu", "cudf.pandas", ("cudf-cu13", "cudf-cu12", "cudf"),
            "cudf-pandas",
            "The pandas code unchanged, run under cuDF's pandas accelerator (cudf.pandas): each call runs in "
            "cuDF on the GPU where it can and falls back to pandas on the CPU where it cannot.",
            engine="cudf-pandas"),
    # Whole stacks, for workloads that chain a dataframe, an array and a kernel library (pipeline).
    # The GPU ones need CuPy and numba-cuda too: both are dependencies of cuDF.
    Backend("cpu-stack", "pandas + NumPy + Numba", "cpu", "numba", ("pandas", "numba"),
            "cpu",
            "The whole stack on the CPU: pandas for the frames, NumPy for array math, Numba for the kernel."),
    Backend("gpu-zero-copy", "cuDF + CuPy + Numba CUDA, zero-copy", "gpu", "cudf", ("cudf-cu13", "cudf-cu12", "cudf"),
            "cudf",
            "The whole stack on the GPU, each hand-off (cuDF to CuPy to Numba CUDA to cuDF) a view of the "
            "same device memory through __cuda_array_interface__: the data never leaves the device."),
    Backend("gpu-round-trips", "cuDF + CuPy + Numba CUDA, via the host", "gpu", "cudf",
            ("cudf-cu13", "cudf-cu12", "cudf"), "cudf",
            "The same GPU stages with every hand-off through host memory (device to host, host to device): "
            "the mistake to avoid."),
)}

BUILTIN_BACKENDS = frozenset(BACKENDS)
#: The runtimes a backend's ``session`` names (``workbench.measure.sessions`` opens each), and the
#: engine preparations ``engine`` names; outside code may give a ``module:function`` instead.
RUNTIMES = ("cpu", "cupy", "numba-cuda", "cudf", "cudf-pandas")
PREPARATIONS = ("cudf-pandas",)
_declared_by: dict[str, str] = {}       # a declared backend's name -> the file that declared it
_MODULE_FUNCTION = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def declare(name: str, like: str = "numpy", **fields: str) -> Backend:
    """Add backend ``name``, a copy of ``like`` with ``fields`` changed (title, description, session,
    engine, ...): how a plug-in names a backend of its own. Declaring it again (the file loaded anew
    in the engine, or after an edit) replaces it; a built-in name, or one another file declared, is refused."""
    if not isinstance(name, str) or not name.strip() or name != name.strip() or split_threads(name)[1]:
        raise ValueError(f"a backend's name is a word or a few, not {name!r} (nor one ending ' x4', a "
                         "backend at 4 threads)")
    if name in BUILTIN_BACKENDS:
        raise ValueError(f"a backend named {name!r} is built in; give yours another name")
    origin = sys._getframe(1).f_globals.get("__file__", "")        # the plug-in file declaring it
    if name in BACKENDS and _declared_by.get(name, origin) != origin:
        raise ValueError(f"a backend named {name!r} is declared by {_declared_by[name]} already; "
                         "give yours another name")
    template = get_backend(like)
    known = {f.name for f in dataclasses.fields(Backend)} - {"name"}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(f"backend {name!r}: no field {', '.join(unknown)}; the fields are {', '.join(sorted(known))}")
    runtime = fields.get("session")
    if runtime is not None and runtime not in RUNTIMES and not _MODULE_FUNCTION.fullmatch(str(runtime)):
        raise ValueError(f"backend {name!r}: session={runtime!r}: a runtime ({', '.join(RUNTIMES)}) "
                         "or a 'module:function' of your own")
    engine = fields.get("engine")
    if engine and engine not in PREPARATIONS and not _MODULE_FUNCTION.fullmatch(str(engine)):
        raise ValueError(f"backend {name!r}: engine={engine!r}: a preparation ({', '.join(PREPARATIONS)}) "
                         "or a 'module:function' of your own")
    made = dataclasses.replace(template, **{"name": name, "title": name,
                                            "description": f"{template.description} (as {name})", **fields})
    _probe_cached.cache_clear()         # a name declared again may be another library's now
    BACKENDS[name] = made
    _declared_by[name] = origin
    return made


#: A CPU backend swept at a set number of threads is the series ``numba x4`` (``--threads``): the
#: backend's name, this separator and the count.
THREADS_SEP = " x"


def split_threads(name: str) -> tuple[str, int]:
    """('numba', 4) for the series 'numba x4'; (name, 0) for a backend at its own threads."""
    base, sep, count = name.rpartition(THREADS_SEP)
    if sep and base and count.isdigit() and int(count) > 0:
        return base, int(count)
    return name, 0


def base_name(name: str) -> str:
    """The backend of a series: 'numba' for 'numba x4', the name itself otherwise."""
    return split_threads(name)[0]


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[base_name(name)]
    except KeyError:
        raise KeyError(f"unknown backend {name!r}; valid: {', '.join(BACKENDS)}") from None


def is_gpu(name: str) -> bool:
    """Whether backend ``name`` runs on a GPU (and so moves data over PCIe): asked in this one place."""
    return get_backend(name).device == "gpu"


def engine_of(name: str) -> str:
    """The dedicated engine a backend's points run in ('' for the shared one): asked in this one place."""
    return get_backend(name).engine


def _version(backend: Backend) -> str:
    for dist in backend.distributions:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return ""


def _installed(module: str) -> bool:
    # Only the top-level package: find_spec("numba.cuda") would import numba itself (seconds).
    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):   # "numba.cuda" when numba itself is missing
        return False


def _cuda_major_needed(backend: Backend) -> int | None:
    """The CUDA major a wheel was built for, read from its distribution name."""
    for dist in backend.distributions:
        try:
            importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        for major in (13, 12, 11):
            if f"cuda{major}" in dist or f"cu{major}" in dist:
                return major
    return None


# A tiny real computation per GPU library, checked against its known answer.
_PROBES = {
    "cupy": "import cupy as cp; v = int((cp.arange(8) * 2).sum()); assert v == 56, v",
    "numba.cuda": (
        "import numpy as np\nfrom numba import cuda\n"
        "@cuda.jit\ndef k(a):\n    i = cuda.grid(1)\n    if i < a.size:\n        a[i] = 2 * i\n"
        "d = cuda.to_device(np.zeros(8, np.int64)); k[1, 8](d); v = int(d.copy_to_host().sum())\n"
        "assert v == 56, v"),
    "cudf": "import cudf; v = int(cudf.DataFrame({'a': [1, 1, 2]}).groupby('a').size().sum()); assert v == 3, v",
    # Installed before pandas is imported, as the dedicated engine does; the frame must be cuDF's proxy.
    "cudf.pandas": (
        "import cudf.pandas\ncudf.pandas.install()\nimport pandas as pd\n"
        "df = pd.DataFrame({'a': [1, 1, 2]})\n"
        "assert cudf.pandas.is_proxy_object(df), f'pandas is not accelerated: {type(df)}'\n"
        "v = int(df.groupby('a').size().sum()); assert v == 3, v"),
}


_probe_lock = threading.Lock()


def _deep_probe(module: str, timeout: float = 120.0) -> str:
    """Run the library's tiny computation in a child process; '' if it worked.

    Several backends share one library (cupy, cupy-fused, cupy-raw): the lock and
    the cache make that one child process, not three.
    """
    with _probe_lock:
        return _deep_probe_once(module, timeout)


@functools.cache
def _deep_probe_once(module: str, timeout: float) -> str:
    try:
        # errors="replace": a library that writes bytes that are no UTF-8 is still probed, not a traceback.
        proc = subprocess.run([sys.executable, "-c", _PROBES[module]], capture_output=True, text=True,
                              errors="replace", stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"installed, but a tiny {module} computation did not finish in {timeout:.0f} s"
    if proc.returncode == 0:
        return ""
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else f"exit status {proc.returncode}"
    return f"installed but broken: {last}"


def probe(name: str, deep: bool = True) -> Availability:
    """Whether backend ``name`` can run here, and if not, why."""
    return _probe_cached(name, deep)


@functools.cache
def _probe_cached(name: str, deep: bool) -> Availability:
    backend = get_backend(name)
    version = _version(backend)
    if not _installed(backend.module) or (backend.device == "gpu" and not version):
        pip = backend.distributions[0]
        if backend.device == "cpu":
            return Availability(False, f"{pip} is not installed")
        info = driver.ask()
        if info.error:      # no GPU here: an extra would not make it run, so do not send the user to one
            return Availability(False, f"no NVIDIA GPU ({info.error})")
        return Availability(False, f"{pip} is not installed (install the cuda12 or cuda13 extra)")
    if backend.device == "cpu":
        return Availability(True, "", version)
    info = driver.ask()
    if info.error:
        return Availability(False, info.error, version)
    need = _cuda_major_needed(backend)
    if need and info.cuda_version[0] < need:
        return Availability(False, f"driver too old: it supports CUDA {info.cuda_version[0]}.{info.cuda_version[1]}, "
                                   f"{backend.distributions[0]} {version} needs CUDA {need}", version)
    if deep:
        problem = _deep_probe(backend.module)
        if problem:
            return Availability(False, problem, version)
    return Availability(True, "", version)


def forget_probes() -> None:
    """Probe again at the next call rather than answer from memory (a library or driver changed; tests)."""
    _probe_cached.cache_clear()
    _deep_probe_once.cache_clear()


def availability_among(name: str, known: dict[str, Availability]) -> Availability | None:
    """Whether backend ``name`` can run, from what ``known`` says of the others: a plug-in's backend
    declared after the probes (``declare``) is as usable as one that imports the same library; a
    CPU one with a library of its own is probed at once (no child process); else None, not known."""
    if name in known:
        return known[name]
    try:
        backend = get_backend(name)
    except KeyError:
        return None
    same = [known[n] for n, b in BACKENDS.items() if n in known and (b.module, b.device) == (backend.module,
                                                                                            backend.device)]
    if same:
        return same[0]
    return probe(name, deep=False) if backend.device == "cpu" else None


def probe_all(names: list[str] | None = None, deep: bool = True) -> dict[str, Availability]:
    """Probe several backends at once; the deep probes' child processes run side by side."""
    names = list(names or BACKENDS)
    if not deep:        # no child process to wait for: a pool's threads cost more than the lookups (launch)
        return {n: probe(n, False) for n in names}
    with ThreadPoolExecutor(max_workers=len(names) or 1) as pool:
        return dict(zip(names, pool.map(lambda n: probe(n, deep), names)))
