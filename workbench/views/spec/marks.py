"""The lines a chart draws across itself, as data: a lesson's marks (a break-even, a memory wall
it names), where each series ran out of device memory, and a reference value; and the lesson's
statement that a chart carries as its caption.

A lesson (``workbench.lessons``) says its marks as (size, label) pairs and keeps them, with its
statement, in its result set's settings (``settings["lesson"]``); the charts read them from
there or take them as given, and never import the lessons (they sit in a layer above).
"""
from __future__ import annotations

import re
from typing import Sequence

from workbench.results.files import ResultSet
from workbench.results.rows import memory_walls
from workbench.views import palette
from workbench.views.spec.model import DASHED, DOTTED, INK, Mark

#: The charts whose x axis is the size: lesson marks are drawn on these.
SIZE_KINDS = ("runtime", "speedup", "memory", "first-call")
#: The charts that mark where each series ran out of device memory (the memory wall).
WALL_KINDS = ("runtime", "memory")
#: Wall labels at one height would overlap: they take this many rows, top down.
LABEL_ROWS = 4


def lesson_of(sets: Sequence[ResultSet]) -> dict | None:
    """The lesson statement a single result set carries in its settings, if any."""
    if len(sets) != 1:
        return None
    told = sets[0].settings.get("lesson")
    return told if isinstance(told, dict) and told.get("statement") else None


def lesson_caption(told: dict) -> str:
    """A lesson's statement as a caption: its title, the verdict, the sentences with their numbers."""
    head = f"Lesson: {told.get('title') or told.get('name', '')}."
    return " ".join(x for x in (head, told.get("verdict", ""), told.get("statement", "")) if x)


def lesson_marks(told: dict | None) -> list[tuple[float, str]]:
    """A lesson's (size, label) marks as its settings keep them; none for a malformed entry."""
    out = []
    for mark in (told or {}).get("marks", []) or []:
        try:
            size, label = mark
            out.append((float(size), str(label)))
        except (TypeError, ValueError):
            continue
    return out


def label_parts(label: str) -> tuple[str, list[str]]:
    """A mark's label as its head and the names in its tail: "float64 wall (cupy, numba-cuda)" is
    ("float64 wall", ["cupy", "numba-cuda"]); a label without a tail has none."""
    m = re.fullmatch(r"(.+) \((.+)\)", label)
    return (m.group(1), [n.strip() for n in m.group(2).split(",")]) if m else (label, [])


def merge_labels(labels: Sequence[str]) -> str:
    """Labels of marks at one size as one: "float64 wall (cupy)" and "float64 wall (numba-cuda)"
    become "float64 wall (cupy, numba-cuda)"; labels without such a tail are joined with "; "."""
    heads: dict[str, list[str]] = {}
    for label in labels:
        head, names = label_parts(label)
        heads.setdefault(head, []).extend(names)
    return "; ".join(f"{h} ({', '.join(t)})" if t else h for h, t in heads.items())


def walled(marks: Sequence[tuple[float, str]]) -> dict[float, set[str]]:
    """{size: the backends named by a lesson's wall marks there} ("float64 wall (cupy, numba-cuda)")."""
    out: dict[float, set[str]] = {}
    for size, label in marks:
        head, names = label_parts(label)
        if names and re.search(r"\bwall$", head):
            out.setdefault(float(size), set()).update(names)
    return out


def walls(sets: Sequence[ResultSet], labels: Sequence[str], marks: Sequence[tuple[float, str]]) -> list[Mark]:
    """A dotted vertical line in the series' colour at each series' first out-of-memory size, and
    one label per size naming every series that hit the wall there (several backends at one size
    were four labels stacked over each other), unless a lesson's mark there names them already."""
    compare = len(sets) > 1
    named = walled(marks)
    at: dict[int, list[tuple[str, str]]] = {}
    lines: list[tuple[int, str, str]] = []
    for rs, set_label in zip(sets, labels):
        if not (rs.frame["status"] == "error").any():      # the common case, and a quick one
            continue
        for (backend, variant), size in memory_walls(rs.frame).items():
            name = f"{backend} ({variant})" if variant else backend
            label = f"{name}, {set_label}" if compare and set_label else name
            color = palette.color(backend, INK)
            lines.append((size, color, label))
            if backend not in named.get(float(size), ()):
                at.setdefault(size, []).append((label, color))
    said: dict[int, tuple[str, str, int]] = {}
    for k, (size, who) in enumerate(sorted(at.items())):
        colors = {color for _, color in who}
        said[size] = (f"{', '.join(n for n, _ in who)}: out of memory",
                      colors.pop() if len(colors) == 1 else INK, k % LABEL_ROWS)
    out = []
    for size, color, name in lines:
        text, label_color, row = said.pop(size, ("", color, 0))     # the label goes with the size's first line
        out.append(Mark("wall", float(size), text, color, DOTTED, True, label_color, row, name))
    return out


def lesson_lines(marks: Sequence[tuple[float, str]], x_range: tuple[float, float] | None) -> list[Mark]:
    """A lesson's marks as labelled vertical lines, one per size (two walls at one size: one line
    whose label names both), those within the size axis' range only (a line off the measured range
    would stretch the axis to reach it)."""
    if x_range is None:
        return []
    merged: dict[float, list[str]] = {}
    for size, label in marks:
        if label not in merged.setdefault(float(size), []):
            merged[float(size)].append(label)
    lo, hi = x_range
    return [Mark("lesson", size, merge_labels(labels), INK, DASHED, name=merge_labels(labels))
            for size, labels in merged.items() if lo <= size <= hi]
