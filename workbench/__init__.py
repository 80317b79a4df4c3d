"""GPU Workbench: see what a GPU does for your Python code.

``workbench.api`` is the public surface (docs/API.md); its names are here too, imported on first
use so that ``import workbench`` (and the window's launch) stays cheap. The engine, the registry
and the result table import no Qt; the window lives in ``panels``.
"""
import importlib

__version__ = "0.1.0"

_API = ("Backend", "Context", "Phases", "PluginError", "Workload", "backend", "compare", "plot", "register", "sweep",
        "timeline_trace", "try_on_gpu")


def __getattr__(name: str):
    if name in _API:
        # By name: a lower layer's ``from workbench import __version__`` must not read, to the
        # import contract, as an import of the API (and so of every layer) through this package.
        return getattr(importlib.import_module("workbench.api"), name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
