"""Old import paths that keep working after their names moved: NumPy's and napari's way, a
``DeprecationWarning`` naming the new place for a release before the old one goes."""
from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any, Callable

#: Packages whose own imports of an old path are not warned about: the warning is for users' code.
OURS = ("workbench", "workloads", "panels")


def moved(old: str, target: str, public: str,
          names: tuple[str, ...] = ()) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for module ``old``, whose names now live in ``target``;
    the warning sends users to ``public``. Names are looked up on each use, not at import, so
    every importing file is warned, not only the first. ``names``: what ``import *`` took from it."""

    def __getattr__(name: str) -> Any:
        if name == "__all__" and names:
            return list(names)
        if name.startswith("__"):        # import machinery probing (__path__, __file__ ...)
            raise AttributeError(name)
        value = getattr(importlib.import_module(target), name)   # AttributeError as usual
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.partition(".")[0] not in OURS:
            warnings.warn(f"{old} is deprecated; import from {public}", DeprecationWarning, stacklevel=2)
        return value

    def __dir__() -> list[str]:
        return dir(importlib.import_module(target))

    return __getattr__, __dir__
