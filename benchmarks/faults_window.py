"""The faults sweep through the window, offscreen: it must stay up and say what happened.

Run (on a GPU machine): QT_QPA_PLATFORM=offscreen python benchmarks/faults_window.py OUT.png
Prints every row and the status line; saves a screenshot after the sweep.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PLUGIN = str(ROOT / "benchmarks" / "faults_plugin.py")

from PySide6.QtCore import QObject, QSettings, QTimer, Slot  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


class Driver(QObject):
    def __init__(self, window, out: Path) -> None:
        super().__init__()
        self.window, self.out = window, out
        window.ready.connect(self.start)
        window.sweepCompleted.connect(self.done)

    @Slot()
    def start(self) -> None:
        e = self.window.experiment
        e.select_workload("faults")
        e.set_checked_backends(["cupy", "numba-cuda"])
        e.sizeFrom.setText("1")
        e.sizeTo.setText("5")
        e.sizeSteps.setValue(7)          # log spacing: 1, 2, 3, 4, 5 (5 steps would skip 4)
        print("checked:", e.checked_backends(), "sizes:", e.sizes(), flush=True)
        self.window.run()

    @Slot(bool)
    def done(self, cancelled: bool) -> None:
        QTimer.singleShot(500, self.save)

    @Slot()
    def save(self) -> None:
        for r in self.window.rows:
            print(f"{r['backend']:<11} size {r['size']}: {r['status']:<9} {r['message'][:150]}")
        print("status bar:", self.window.statusBar().currentMessage())
        print("engine restarts:", self.window.controller.worker.engine.restarts)
        self.window.grab().save(str(self.out))
        self.window.close()
        QApplication.instance().quit()


def main() -> None:
    from workbench.measure import plugins
    plugins.load(PLUGIN)
    app = QApplication([])
    from panels.window import MainWindow
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, plugins=(PLUGIN,))
    window.resize(1600, 1000)
    window.show()
    driver = Driver(window, Path(sys.argv[1]))  # noqa: F841 - kept alive by this frame
    app.exec()


if __name__ == "__main__":
    main()
