"""Chart kinds, each declared by :func:`chart_kind` on the function that builds its spec.

The shipped kinds are found by importing the modules of ``workbench.views.spec``; another package
adds its own under the entry-point group ``gpu_workbench.chart_kinds``. :data:`KINDS` reads the
names at first use, so a command line that only parses pays for none of it.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import logging
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

log = logging.getLogger(__name__)

GROUP = "gpu_workbench.chart_kinds"
SHIPPED = "workbench.views.spec"


@dataclass(frozen=True)
class ChartKind:
    """A chart kind: its name, its short title and y label (for a chart shrunk to a corner), where it
    stands among the others, and the function that builds its spec from a ``spec.kinds.Context``."""

    name: str
    short_title: str
    short_y: str
    order: float
    build: Callable

    @property
    def where(self) -> str:
        """The module and name of its builder: who to ask when it fails."""
        return _where(self.build)

    @property
    def shipped(self) -> bool:
        return self.where.startswith(SHIPPED + ".")


_declared: dict[str, ChartKind] = {}
_found: tuple[ChartKind, ...] | None = None


def chart_kind(name: str, *, short_title: str, short_y: str, order: float) -> Callable[[Callable], Callable]:
    """Declare the decorated function as the builder of chart ``name``."""
    def declare(build: Callable) -> Callable:
        global _found
        before = _declared.get(name)
        if before is not None and _where(before.build) != _where(build):      # the same one again: a reload
            raise ValueError(f"a chart kind named {name!r} is declared by {_where(before.build)} already")
        _declared[name] = ChartKind(name, short_title, short_y, order, build)
        _found = None          # a kind declared after the first look is seen at the next
        return build
    return declare


def _where(build: Callable) -> str:
    return f"{getattr(build, '__module__', '?')}.{getattr(build, '__qualname__', '?')}"


def declared() -> tuple[ChartKind, ...]:
    """Every chart kind, in the order the window, the exports and the report show them."""
    global _found
    if _found is None:
        package = importlib.import_module(SHIPPED)
        for module in pkgutil.iter_modules(package.__path__, SHIPPED + "."):
            importlib.import_module(module.name)
        for entry in importlib.metadata.entry_points(group=GROUP):
            try:
                entry.load()
            except Exception as exc:  # noqa: BLE001 - a broken package costs its kinds, not the charts
                log.warning("chart kinds of %s not loaded: %s: %s", entry.value, type(exc).__name__, exc)
        _found = tuple(sorted(_declared.values(), key=lambda k: (k.order, k.name)))
    return _found


def get(name: str) -> ChartKind:
    for kind in declared():
        if kind.name == name:
            return kind
    raise ValueError(f"unknown chart {name!r}: use one of {', '.join(KINDS)}")


class Names(Sequence):
    """The kinds' names (and ``extra`` after them), read when first asked: an argparse ``choices``
    or a module's constant that costs nothing until used."""

    def __init__(self, extra: tuple[str, ...] = ()) -> None:
        self.extra = extra

    def _names(self) -> tuple[str, ...]:
        return tuple(k.name for k in declared()) + self.extra

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._names())


KINDS = Names()
