"""A module imported at its first use, not at the importer's: the window shows before pandas loads."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """Stands for module ``name``; the first attribute read imports it. ``name in sys.modules``
    stays true only once it was really imported (tests ask it to see what a command loaded)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attr: str) -> Any:
        # Through the import system, never straight from sys.modules: the window's worker thread
        # imports pandas and the lessons after the first frame, and a module another thread is
        # still executing is in sys.modules half made ("partially initialized module 'pandas' has
        # no attribute 'DataFrame'"); import_module waits for that thread to finish it.
        module = importlib.import_module(self.__name__)
        value = getattr(module, attr)
        setattr(self, attr, value)      # read once through here, then a plain attribute
        return value


def lazy_module(name: str) -> Any:
    """``name`` itself where it is imported already (and finished), else a stand-in that imports it
    when used."""
    module = sys.modules.get(name)
    if module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False):
        return module
    return LazyModule(name)
