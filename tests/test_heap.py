"""The window keeps the objects of the modules it imported out of Python's full collections
(``panels.heap``): scanned in the GUI thread when one came due, they were 20-50 ms stalls at 5,000
points (issue 38). Only where modules were imported since the last time: a handful a session."""
from __future__ import annotations

import gc
import sys
import types

import pytest

from panels import heap


@pytest.fixture
def thawed():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_settled_heap_is_out_of_the_full_scans_until_modules_come(thawed, monkeypatch):
    monkeypatch.setattr(heap, "_modules", 0)
    ballast = [[i] for i in range(200_000)]     # as a module's objects: alive for good, tracked
    assert heap.settle() and gc.get_freeze_count() >= len(ballast)
    gc.collect()                                # what is frozen stays out of every later scan
    assert gc.get_freeze_count() >= len(ballast)
    frozen = gc.get_freeze_count()
    assert not heap.settle() and gc.get_freeze_count() == frozen     # nothing imported since
    monkeypatch.setitem(sys.modules, "workbench_test_heap_module", types.ModuleType("workbench_test_heap_module"))
    more = [[i] for i in range(1000)]
    assert heap.settle() and gc.get_freeze_count() >= frozen + len(more)


def test_the_window_settles_its_heap_at_its_first_frame(qtbot, thawed, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings
    from panels.window import MainWindow
    monkeypatch.setattr(heap, "_modules", 0)
    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.firstFrame.painted, timeout=10_000):
        pass
    assert heap._modules > 0 and gc.get_freeze_count() > 10_000
    w.close()
