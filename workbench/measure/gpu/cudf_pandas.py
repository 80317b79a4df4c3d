"""cudf.pandas: the pandas code of the dataframe workloads, unchanged, under cuDF's pandas accelerator.

``cudf.pandas.install()`` replaces ``pandas`` itself, for the whole process, and must come before
pandas is first imported: so :func:`install` is the backend's engine preparation (``Backend.engine``),
run first of all in an engine process of its own. Inputs are made through the proxies; the float64
reference is computed by pandas itself from host copies (:func:`real_pandas`). After the point, an
untimed rerun under cudf.pandas's profiler counts the calls that fell back to the CPU
(:func:`fallback_note`).
See docs/ARCHITECTURE.md, "workbench/measure/gpu/cudf_pandas.py".
"""
from __future__ import annotations

import logging
import sys
from typing import Any, Callable, Mapping

from workbench.catalog.accelerated import real_pandas
from workbench.measure.gpu.cudf_session import CudfSession

log = logging.getLogger(__name__)


def install() -> Callable[[Any], Any]:
    """The dedicated engine's preparation: cuDF's pandas accelerator before anything imports pandas.
    Returns what the engine computes the float64 reference from: the real pandas objects."""
    if "pandas" in sys.modules:     # it still works (the accelerator renames the loaded modules): say so
        log.warning("pandas was imported before cudf.pandas.install(); objects made before stay plain pandas")
    import cudf.pandas
    cudf.pandas.install()
    return real_pandas


class CudfPandasSession(CudfSession):
    """cuDF's session (host clock after a device synchronisation, RMM statistics), in a process
    whose pandas is cudf.pandas's; refuses to open anywhere else, so a point can never pass plain
    pandas off as accelerated."""

    def __init__(self, backend: Any = None) -> None:
        import cudf.pandas
        import pandas
        if not cudf.pandas.is_proxy_object(pandas.DataFrame()):
            raise RuntimeError("cudf-pandas runs only in an engine process started with cuDF's pandas accelerator "
                               "installed before pandas was imported (the supervisor starts one; --in-process "
                               "cannot)")
        super().__init__(backend)

    def diagnose(self, compute: Callable[[], Any]) -> str:
        """Run ``compute`` once more, untimed, under cudf.pandas's profiler (it traces every call, far
        too slow to time) and say where its pandas calls ran."""
        try:
            from cudf.pandas import Profiler
            with Profiler() as profiler:
                compute()
            return fallback_note(profiler.per_function_stats)
        except Exception as exc:  # noqa: BLE001 - the profiler's internals change between cuDF versions
            log.info("cudf.pandas profiler failed: %s", exc)
            return f"cudf.pandas: where the calls ran was not measured ({type(exc).__name__}: {exc})"


def fallback_note(per_function: Mapping[str, Mapping[str, list]]) -> str:
    """One sentence from cudf.pandas's per-function statistics ({function: {"gpu": [seconds...],
    "cpu": [seconds...]}}): how many calls ran on the GPU, and which fell back to the CPU."""
    gpu = sum(len(calls.get("gpu", ())) for calls in per_function.values())
    fell = {name: len(calls.get("cpu", ())) for name, calls in per_function.items() if calls.get("cpu")}
    cpu = sum(fell.values())
    if not gpu and not cpu:
        return "cudf.pandas: the profiler saw no pandas call"
    on_gpu = f"{gpu} pandas call{'s' if gpu != 1 else ''} on the GPU"
    if not cpu:
        return f"cudf.pandas: {on_gpu}, none fell back to the CPU"
    names = ", ".join(sorted(fell))
    return (f"cudf.pandas: {on_gpu}, {cpu} fell back to the CPU ({names}): pandas ran those, "
            "with copies between the devices")
