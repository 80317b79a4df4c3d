"""Lessons, one click each: a preset sweep per claim, and what its numbers say.

Each lesson is a module of this package that holds its declaration as data, ``LESSON`` (a
:class:`Lesson`: workload, backends, sizes, runs, the chart that shows it), and ``explain(measured,
lesson, say)``, which reads the rows just measured and says what they show, with the marks to draw
(break-evens, memory walls). :data:`LESSON_MODULES` names the modules, in the order a user meets
them: adding a lesson is one new module and one line there.

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
import logging
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

#: The lesson modules, in the order the command line lists them and the window's menu shows them. A
#: name without a dot is a module of this package; a dotted one is imported as it is written.
LESSON_MODULES = (
    "small_problems", "transfers", "first_call", "float32_float64", "divergence", "kernel_style",
    "memory_wall", "pipeline", "dataframes", "energy",
)


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


def declared() -> dict[str, Lesson]:
    """Every lesson :data:`LESSON_MODULES` names, by name, in its order. Read at each call (the
    modules are imported once), so the tuple is the registry and nothing else holds a copy."""
    out: dict[str, Lesson] = {}
    for entry in LESSON_MODULES:
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
