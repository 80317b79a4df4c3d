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
from PySide6.QtCore import QEvent, QObject, QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from panels.window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))

class AtFirstPaint(QObject):
    # The modules at the window's first Paint event, taken inside it: what was loaded to draw the
    # first frame, before anything that waits for that frame (panels.first_frame) has begun.
    first = None
    def eventFilter(self, watched, event):
        if watched is w and event.type() == QEvent.Type.Paint and self.first is None:
            self.first = sorted(sys.modules)
        return False

seen = AtFirstPaint()
w.installEventFilter(seen)
w.show()
w.ready.connect(lambda: (print(json.dumps([seen.first, sorted(sys.modules)]), flush=True), w.close(), app.quit()))
app.exec()
"""

#: Loaded after the first frame, when a sweep, an export, a file or a click asks for them: each
#: costs tens to hundreds of milliseconds (pandas about 300 ms on this project's 2-core VM), and
#: the timeline's window is made at the first click on a point.
DEFERRED = ("pandas", "workbench.lessons", "matplotlib", "numba", "llvmlite", "scipy", "cupy", "cudf", "dask", "distributed",
            "pyarrow", "cupti", "OpenGL", "pyqtgraph.opengl", "panels.timeline_view", "panels.timeline_chart",
            "workbench.views.trace")


def test_the_first_frame_imports_none_of_what_it_does_not_draw(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(tmp_path / "settings.ini")], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    at_first_frame, when_ready = (set(m) for m in json.loads(done.stdout.strip().splitlines()[-1]))
    assert "panels.window" in at_first_frame and "pyqtgraph" in at_first_frame     # it did draw the window
    early = sorted(m for m in at_first_frame if m.split(".")[0] in DEFERRED or m in DEFERRED)
    assert early == [], early
    # What waits for the first frame is loaded once it is painted, before the window says it is ready
    # (off the GUI thread: panels.worker.PRELOAD), not at a lesson's or a sweep's first use.
    assert "workbench.lessons" in when_ready - at_first_frame


def test_a_launch_reports_its_first_frame_and_closes(tmp_path):
    """What benchmarks/gui_responsiveness.py times: ``gpu-workbench`` with a fresh settings folder
    writes the wall clock of its first frame, then closes by itself (status 0, no settings of the
    user's read or written: they go to the folder given)."""
    import time
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path),
               GPU_WORKBENCH_FIRST_FRAME=str(tmp_path / "shown"))
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "workbench"], capture_output=True, text=True, timeout=120, env=env)
    ended = time.time()
    assert done.returncode == 0, done.stderr[-2000:]
    shown = float((tmp_path / "shown").read_text())
    assert started < shown < ended
    assert list(tmp_path.glob("GPU Workbench/*.conf"))          # the settings went where they were sent
