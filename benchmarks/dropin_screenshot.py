"""The window after Run > Try it on every backend (issue 36), offscreen at 1280x720: a workload file's
NumPy function swept on NumPy and each drop-in that runs here, saved as a PNG.

    QT_QPA_PLATFORM=offscreen python benchmarks/dropin_screenshot.py FILE.py WORKLOAD OUT.png [FROM TO STEPS DTYPE]
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QLineEdit, QSpinBox  # noqa: E402


def wait(signal, ms: int = 600_000) -> None:
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main(path: str, workload: str, out: str, lo: str = "2^10", hi: str = "2^22", steps: str = "7",
         dtype: str = "float64") -> None:
    from panels.window import MainWindow
    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "shot.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings)
    w.resize(1280, 720)
    w.show()
    w.workloadFiles.open(path)
    wait(w.workloadFiles.loaded)
    w.experiment.select_workload(workload)
    w.dropIns.try_current()
    w.findChild(QLineEdit, "sizeFrom").setText(lo)
    w.findChild(QLineEdit, "sizeTo").setText(hi)
    w.findChild(QSpinBox, "sizeSteps").setValue(int(steps))
    w.experiment.budgetSpin.setValue(0.2)
    w.experiment.dtypeCombo.setCurrentText(dtype)
    w.run()
    wait(w.sweepCompleted)
    w.resize(1280, 720)                       # after the show: a restored geometry does not win
    loop = QEventLoop()
    QTimer.singleShot(800, loop.quit)         # the layout and the last repaint
    loop.exec()
    w.grab().save(out)
    print("wrote", out, len(w.rows), "points")
    w.close()
    app.quit()


if __name__ == "__main__":
    main(*sys.argv[1:])
