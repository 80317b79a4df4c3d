"""The runtimes a backend runs on: which session times its calls, which preparation its engine needs.

The catalogue below names a backend's runtime ("cupy", "cudf-pandas"); this module, in the layer
that measures, says what that opens, with imports the import contract sees. Outside code may still
give a ``module:function`` of its own, as an entry point does.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

from workbench.catalog.backends import Backend, get_backend


def _cpu():
    from workbench.measure.cpu import CpuSession
    return CpuSession


def _cupy():
    from workbench.measure.gpu.cupy_session import CupySession
    return CupySession


def _numba_cuda():
    from workbench.measure.gpu.numba_session import NumbaCudaSession
    return NumbaCudaSession


def _cudf():
    from workbench.measure.gpu.cudf_session import CudfSession
    return CudfSession


def _cudf_pandas():
    from workbench.measure.gpu.cudf_pandas import CudfPandasSession
    return CudfPandasSession


def _cudf_pandas_install():
    from workbench.measure.gpu.cudf_pandas import install
    return install


# Imported when a sweep first needs one: a GPU library is never loaded by a process that does not use it.
SESSIONS: dict[str, Callable[[], Callable[[Backend], Any]]] = {
    "cpu": _cpu, "cupy": _cupy, "numba-cuda": _numba_cuda, "cudf": _cudf, "cudf-pandas": _cudf_pandas}
PREPARATIONS: dict[str, Callable[[], Callable[[], Any]]] = {"cudf-pandas": _cudf_pandas_install}


#: The ``module:function`` paths the built-in backends named before the runtimes (and before the
#: layers split): a plug-in that copied one still gets that runtime.
FORMER_PATHS = {
    "workbench.measure:CpuSession": "cpu", "workbench.measure.cpu:CpuSession": "cpu",
    "workbench.gpu.cupy_session:CupySession": "cupy", "workbench.measure.gpu.cupy_session:CupySession": "cupy",
    "workbench.gpu.numba_session:NumbaCudaSession": "numba-cuda",
    "workbench.measure.gpu.numba_session:NumbaCudaSession": "numba-cuda",
    "workbench.gpu.cudf_session:CudfSession": "cudf", "workbench.measure.gpu.cudf_session:CudfSession": "cudf",
    "workbench.gpu.cudf_pandas:CudfPandasSession": "cudf-pandas",
    "workbench.measure.gpu.cudf_pandas:CudfPandasSession": "cudf-pandas",
    "workbench.gpu.cudf_pandas:install": "cudf-pandas", "workbench.measure.gpu.cudf_pandas:install": "cudf-pandas",
}


def resolve(target: str, table: dict[str, Callable[[], Any]]) -> Any:
    """A runtime's entry in ``table``, or the object a ``module:function`` names."""
    target = FORMER_PATHS.get(target, target)
    if target in table:
        return table[target]()
    module, colon, attr = target.partition(":")
    if not colon or ":" in attr:
        raise ValueError(f"unknown runtime {target!r}; known: {', '.join(table)}, or a module:function")
    return getattr(importlib.import_module(module), attr)


def open_session(name: str):
    """Open backend ``name``'s session in the calling thread (GPU objects are per thread)."""
    backend = get_backend(name)
    return resolve(backend.session, SESSIONS)(backend)


def preparation(target: str) -> Callable[[], Any]:
    """The function a dedicated engine process runs first of all (``Backend.engine``)."""
    return resolve(target, PREPARATIONS)
