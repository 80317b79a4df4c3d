"""The window owns its parts as objects and no part reads another's private attributes (issue 38).

The parts used to be mixins of MainWindow, each reaching into the others' state through the one
``self`` they shared; a scan of ``x._name`` could not see that, so the window's bases are checked
too. Both checks are shown to fail on a planted violation."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

PANELS = Path(__file__).resolve().parent.parent / "panels"

#: Private attributes of third-party objects read on purpose, each with its reason.
ALLOWED = {
    # pyqtgraph's LabelItem keeps its size hints in _sizeHint and offers no setter: a chart title
    # would otherwise never shrink below its widest layout (panels/chart_text.py says why).
    ("chart_text.py", "label._sizeHint"),
}


def private_reads(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every ``x._name`` (not a dunder) where ``x`` is not ``self``, ``cls`` or ``super()``:
    an object's private state read from outside it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and not _is_super(node.value)):
            found.append((node.lineno, ast.unparse(node)))
    return found


def _is_super(node: ast.AST) -> bool:
    """``super()``: an override reaching its own base's method (pyqtgraph's private hooks) is the
    object's own state, not another's."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def cross_object_reads() -> list[str]:
    return [f"panels/{path.name}:{line}: {expr}"
            for path in sorted(PANELS.glob("*.py"))
            for line, expr in private_reads(path.read_text(encoding="utf-8"))
            if (path.name, expr) not in ALLOWED]


def test_no_part_reads_another_objects_private_attributes():
    assert cross_object_reads() == []


def test_the_scan_catches_a_planted_read():
    planted = ("class Menus:\n"
               "    def sync(self, window, progress):\n"
               "        self._mine = 1\n"                       # its own: fine
               "        return window._finishing or self.progress._spec or progress._eta(0)\n")
    assert [expr for _, expr in private_reads(planted)] == [
        "window._finishing", "self.progress._spec", "progress._eta"]


def window_bases_from_panels(cls: type) -> list[str]:
    """The classes of ``panels`` that ``cls`` is made of, besides itself: parts mixed in, not owned."""
    return [f"{c.__module__}.{c.__qualname__}" for c in inspect.getmro(cls)[1:]
            if c.__module__.split(".")[0] == "panels"]


def test_the_window_owns_its_parts_rather_than_inheriting_them():
    from panels.window import MainWindow
    assert window_bases_from_panels(MainWindow) == []


def test_the_base_check_catches_a_planted_mixin():
    from PySide6.QtWidgets import QMainWindow

    mixin = type("LessonView", (), {"__module__": "panels.lesson_view"})     # a part as the window's were
    planted = type("MainWindow", (mixin, QMainWindow), {"__module__": "panels.window"})
    assert window_bases_from_panels(planted) == ["panels.lesson_view.LessonView"]
