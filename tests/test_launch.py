"""What the window's first frame imports (issue 38): the import list, not a time, so that a module
the first frame does not draw cannot creep into the launch unseen. Measured in a process of its
own, as a user's launch is."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pytestqt")

FIRST_FRAME = r"""
import json, sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from panels.window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
w.show()
def first_frame():
    print(json.dumps(sorted(sys.modules)), flush=True)
    w.close(); app.quit()
QTimer.singleShot(0, first_frame)
app.exec()
"""

#: Loaded after the first frame, when a sweep, an export, a file or a click asks for them: each
#: costs tens to hundreds of milliseconds (pandas about 300 ms on this project's 2-core VM), and
#: the timeline's window is made at the first click on a point.
DEFERRED = ("pandas", "matplotlib", "numba", "llvmlite", "scipy", "cupy", "cudf", "dask", "distributed",
            "pyarrow", "cupti", "OpenGL", "pyqtgraph.opengl", "panels.timeline_view", "panels.timeline_chart",
            "workbench.views.trace")


def test_the_first_frame_imports_none_of_what_it_does_not_draw(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(tmp_path / "settings.ini")], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "panels.window" in modules and "pyqtgraph" in modules        # it did draw the window
    early = sorted(m for m in modules if m.split(".")[0] in DEFERRED or m in DEFERRED)
    assert early == [], early
