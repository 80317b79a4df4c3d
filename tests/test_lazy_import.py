"""A module imported lazily while another thread is still importing it (the window's worker thread
imports pandas and the lessons after the first frame, as a click may ask for them): the stand-in
waits for that import to finish instead of reading the half-made module from sys.modules."""
from __future__ import annotations

import sys
import threading

from workbench.core.lazy import LazyModule, lazy_module

SLOW = """
import slow_gate
slow_gate.started.set()
slow_gate.go.wait(30)
VALUE = 42
"""
GATE = "import threading\nstarted = threading.Event()\ngo = threading.Event()\n"


def test_a_module_another_thread_is_importing_is_read_once_that_import_ends(tmp_path, monkeypatch):
    (tmp_path / "slow_mod.py").write_text(SLOW)
    (tmp_path / "slow_gate.py").write_text(GATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("slow_mod", "slow_gate"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import slow_gate
    importer = threading.Thread(target=__import__, args=("slow_mod",))
    importer.start()
    assert slow_gate.started.wait(30)               # slow_mod is in sys.modules, half executed
    assert "slow_mod" in sys.modules and not hasattr(sys.modules["slow_mod"], "VALUE")
    module = lazy_module("slow_mod")
    assert isinstance(module, LazyModule)           # not the half-made module itself
    # The gate opens a moment later, from another thread: this read must wait for the import.
    opener = threading.Timer(0.2, slow_gate.go.set)
    opener.start()
    try:
        assert module.VALUE == 42
    finally:
        slow_gate.go.set()
        importer.join(30)
        opener.join(30)
