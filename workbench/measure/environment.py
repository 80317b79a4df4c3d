"""The environment record that goes with every result set."""
from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import platform
import sys
from typing import Any

import numpy  # noqa: F401 - NumPy's BLAS is loaded before threadpoolctl is asked about it
import psutil

from workbench.core import driver
from workbench.measure import limits
from workbench.measure.cpu import cpu_name

log = logging.getLogger(__name__)

LIBRARIES = ("gpu-workbench", "numpy", "scipy", "numba", "pandas", "pyarrow", "psutil", "llvmlite",
             "cupy-cuda13x", "cupy-cuda12x", "numba-cuda", "cudf-cu13", "cudf-cu12", "rmm-cu13", "rmm-cu12",
             "nvidia-ml-py", "PySide6-Essentials", "PySide6", "pyqtgraph")


def library_versions() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def blas_info() -> list[dict[str, Any]]:
    """The BLAS (and OpenMP) libraries NumPy loaded, with their thread counts."""
    try:
        from threadpoolctl import threadpool_info     # optional: a record without it says why
        return [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "filepath")}
                for d in threadpool_info()]
    except Exception as exc:  # noqa: BLE001
        return [{"error": str(exc)}]


def gpu_info() -> list[dict[str, Any]] | str:
    """Name, memory, driver and CUDA version of each GPU, through NVML; a reason when there is none."""
    d = driver.ask()     # the window and the command line record it too: no cuInit there
    if d.error:
        return d.error
    try:
        import pynvml
    except ImportError:
        return [{"devices": d.device_count, "cuda_driver": f"{d.cuda_version[0]}.{d.cuda_version[1]}",
                 "note": "install nvidia-ml-py for names and memory"}]
    try:
        pynvml.nvmlInit()
        try:
            drv = pynvml.nvmlSystemGetDriverVersion()
            cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
            gpus = []
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                mem = pynvml.nvmlDeviceGetMemoryInfo(h)
                gpus.append({"index": i, "name": _s(pynvml.nvmlDeviceGetName(h)), "memory_bytes": int(mem.total),
                             "free_bytes": int(mem.free), "driver": _s(drv),
                             "cuda_driver": f"{cuda // 1000}.{(cuda % 1000) // 10}"})
            return gpus
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # noqa: BLE001
        return f"NVML could not be queried: {exc}"


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def record() -> dict[str, Any]:
    vm = psutil.virtual_memory()
    return {
        "cpu": cpu_name(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "cpu_cores_logical": psutil.cpu_count(logical=True),
        "memory_bytes": int(vm.total),
        "memory_available_bytes": int(vm.available),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "libraries": library_versions(),
        "blas": blas_info(),
        "gpus": gpu_info(),
        "numba_threads": os.environ.get("NUMBA_NUM_THREADS", str(psutil.cpu_count(logical=True))),
        "numba_threading_layer": numba_threading_layer(),
        # The hardware limits each point was checked against (measured by the first sweep on a device).
        "limits": limits.recorded(),
    }


def merged(record_: dict[str, Any], engines: dict[str, Any]) -> dict[str, Any]:
    """``record_`` with an engine process's record over it (that is where the points ran and where
    the hardware limits were measured). Limits are kept per device, the engine's newest for a
    device both name (a second opinion may have raised a rung since), so that a sweep run in more
    than one engine (cudf-pandas has its own) keeps them all; an engine's empty value (a Numba
    layer it could not tell) does not overwrite a known one."""
    by_device = {x.get("device_id"): x for x in record_.get("limits", [])}
    by_device.update({x.get("device_id"): x for x in engines.get("limits", [])})
    known = {k: v for k, v in engines.items() if v not in ("", None, [], {}) and k != "limits"}
    return {**record_, **known, "limits": list(by_device.values())}


#: The layers Numba tries for each NUMBA_THREADING_LAYER, in its order (GNU OpenMP is not fork-safe).
_LAYER_ORDER = {"default": ("tbb", "omp", "workqueue"), "safe": ("tbb",), "threadsafe": ("tbb", "omp"),
                "forksafe": ("tbb", "workqueue")}


def numba_threading_layer() -> str:
    """The threading layer Numba's parallel loops use here: Numba's own answer once a parallel
    loop has run, else the first layer whose library loads in the order NUMBA_THREADING_LAYER
    names. It sets what a small parallel loop costs: on a 2-core machine a source_terms loop of
    2^14 elements took 4 us under omp and 106 us under workqueue (docs/PERFORMANCE.md). Empty in a
    process that has not imported Numba (the command line, the window): the engine's record says it."""
    if "numba" not in sys.modules:     # said by the engine that ran Numba; never worth importing it for
        return ""
    import numba
    try:
        return numba.threading_layer()
    except ValueError:                 # no parallel loop has run in this process yet
        pass
    wanted = os.environ.get("NUMBA_THREADING_LAYER", "default").lower()
    order = _LAYER_ORDER.get(wanted, (wanted,))
    for layer in order:
        try:
            importlib.import_module(f"numba.np.ufunc.{layer}pool" if layer != "workqueue"
                                    else "numba.np.ufunc.workqueue")
            return layer
        except Exception:  # noqa: BLE001 - a layer whose library is missing fails to load, in its own way
            continue
    return f"none of {', '.join(order)} loads"


def format_record(rec: dict[str, Any]) -> str:
    lines = []
    for key, value in rec.items():
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {v}" for k, v in value.items()]
        elif isinstance(value, list):
            lines.append(f"{key}:")
            for item in value:
                lines.append("  - " + ", ".join(f"{k}={v}" for k, v in item.items()) if isinstance(item, dict)
                             else f"  - {item}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)
