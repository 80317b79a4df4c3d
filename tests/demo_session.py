"""A demo session in a real window: two sweeps, a Stop, close. Exit 0 when all went well.

Run by tests/test_xvfb.py under Xvfb with Qt's xcb platform (a real X server, not the
offscreen platform); it also works on a desktop: python tests/demo_session.py
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from session import LoopWaiter, Session, Sweep
    from panels.window import MainWindow
    app = QApplication([])
    w = MainWindow(QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat))
    w.resize(1280, 720)
    w.show()
    wait = LoopWaiter()
    with wait.signal(w.ready):
        pass
    s = Session(w, wait)
    s.run(Sweep("source_terms", ("numpy",), "2^8", "2^12", 3))
    s.run(Sweep("matmul", ("numpy",), "32", "256", 8, "float64", repeats=400, stop=True))
    points = len(w.rows)
    w.close()
    alive = w.controller.background.running
    app.quit()
    print(f"demo ok: platform {app.platformName()}, {s.sweeps} sweeps, {points} points in the last, "
          f"worker thread {'still running' if alive else 'ended'}")
    return 1 if alive else 0


if __name__ == "__main__":
    sys.exit(main())
