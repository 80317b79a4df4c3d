"""Lessons, one click each: a preset sweep per claim, and what its numbers say.

Each lesson is a module of this package that holds its declaration as data, ``LESSON`` (a
:class:`Lesson`: workload, backends, sizes, runs, the chart that shows it), and ``explain(measured,
lesson, say)``, which reads the rows just measured and says what they show, with the marks to draw
(break-evens, memory walls). Adding a lesson is one new module: the package is walked for modules
that declare ``LESSON``, and the lessons are listed by their ``order``. Another package adds its own
under the ``gpu_workbench.lessons`` entry-point group (name = "package.module").

The core the lessons share: :func:`plan` (``core``) turns a lesson into the sweeps this machine can
run, :func:`explain` (``core``) the rows measured into a :class:`Statement` (``say``), with the
lesson's own sentences and what every lesson says alike; ``measured`` reads the rows and finds
break-evens. Qt-free: the command line (``gpu-workbench lesson``), the window's Lessons menu and the
exports use the same words.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata
import logging
import pkgutil
from types import ModuleType
from typing import Iterator, Mapping

from workbench.lessons.core import (BUDGET_S, MIN_REPEATS, Lesson, Plan, Run, explain, plan, problems, tag,
                                    unexpected_failures)
from workbench.lessons.measured import Crossing, Measured, crossing
from workbench.lessons.say import Mark, Say, Statement

__all__ = ["LESSON_MODULES", "LESSONS", "get", "Lesson", "Run", "Plan", "plan", "problems", "tag",
           "unexpected_failures", "explain", "Statement", "Say", "Mark", "Measured", "Crossing", "crossing",
           "MIN_REPEATS", "BUDGET_S"]

log = logging.getLogger(__name__)

#: Where other packages declare lesson modules: name = "package.module".
ENTRY_POINT_GROUP = "gpu_workbench.lessons"


def module_name(entry: str) -> str:
    return entry if "." in entry else f"{__name__}.{entry}"


@functools.cache
def _lesson_of(module: ModuleType) -> Lesson:
    """The module's ``LESSON`` with its ``explain`` attached; once per module object."""
    ls = getattr(module, "LESSON", None)
    if not isinstance(ls, Lesson):
        raise TypeError(f"{module.__name__}: a lesson module declares LESSON = Lesson(...)")
    told = ls.explain or getattr(module, "explain", None)
    if not callable(told):
        raise TypeError(f"{module.__name__}: a lesson module defines explain(measured, lesson, say)")
    return dataclasses.replace(ls, explain=told)


@functools.cache
def _found() -> tuple[str, ...]:
    """This package's modules that declare ``LESSON``, then the entry points' modules, each by its
    lessons' ``order``: walked once, on the first look (not at import: the CLI's parser is quick)."""
    ours = [info.name for info in pkgutil.iter_modules(__path__)
            if hasattr(importlib.import_module(f"{__name__}.{info.name}"), "LESSON")]
    theirs = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            importlib.import_module(ep.value)
            theirs.append(ep.value)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not take the lessons down
            log.warning("could not load lesson plug-in %s: %s", ep.name, exc)
    return (*sorted(ours, key=_order), *sorted(theirs, key=_order))


def _order(entry: str) -> int:
    return getattr(getattr(importlib.import_module(module_name(entry)), "LESSON", None), "order", 0)


def __getattr__(name: str):
    # LESSON_MODULES: derived from the declarations when first asked for, not at import.
    if name == "LESSON_MODULES":
        return _found()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def declared() -> dict[str, Lesson]:
    """Every lesson, by name, in the order of :data:`LESSON_MODULES` (the modules :func:`_found`
    found): nothing else holds a copy."""
    out: dict[str, Lesson] = {}
    for entry in _found():
        ls = _lesson_of(importlib.import_module(module_name(entry)))
        if ls.name in out:
            raise ValueError(f"a lesson named {ls.name!r} is declared twice (again in {module_name(entry)})")
        out[ls.name] = ls
    return out


class _Lessons(Mapping[str, Lesson]):
    """The lessons by name, as :func:`declared` finds them at each look."""

    def __getitem__(self, name: str) -> Lesson:
        return declared()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(declared())

    def __len__(self) -> int:
        return len(declared())

    def __repr__(self) -> str:
        return f"LESSONS({', '.join(self)})"


LESSONS: Mapping[str, Lesson] = _Lessons()


def get(name: str) -> Lesson:
    found = declared()
    try:
        return found[name]
    except KeyError:
        raise KeyError(f"unknown lesson {name!r}; the lessons are: {', '.join(found)}") from None
