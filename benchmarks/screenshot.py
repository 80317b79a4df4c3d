"""Run a sweep in the window, offscreen, and save a screenshot (and the charts) when it is done.

Run: QT_QPA_PLATFORM=offscreen python benchmarks/screenshot.py OUT.png WORKLOAD BACKENDS FROM TO STEPS [DTYPE]
e.g. ... docs/screenshot-cpu.png source_terms numpy,numba 2^10 2^24 8
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QObject, QSettings, QTimer, Slot  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


class Shooter(QObject):
    """Lives in the GUI thread: its slots run there (a plain function would run in the worker's)."""

    def __init__(self, window, out: Path, spec_args: list[str]) -> None:
        super().__init__()
        self.window, self.out, self.args = window, out, spec_args
        window.ready.connect(self.start)
        window.sweepCompleted.connect(self.done)

    @Slot()
    def start(self) -> None:
        workload, backends, lo, hi, steps, *rest = self.args
        e = self.window.experiment
        e.select_workload(workload)
        e.set_checked_backends(backends.split(","))
        e.sizeFrom.setText(lo)
        e.sizeTo.setText(hi)
        e.sizeSteps.setValue(int(steps))
        e.dtypeCombo.setCurrentText(rest[0] if rest else "float32")
        missing = set(backends.split(",")) - set(e.checked_backends())
        if missing:
            print(f"not usable here, left out: {sorted(missing)}: {e.backendStatus.text()}")
        self.window.run()

    @Slot(bool)
    def done(self, cancelled: bool) -> None:
        QTimer.singleShot(400, self.save)      # let the last plot refresh paint

    @Slot()
    def save(self) -> None:
        self.window.grab().save(str(self.out))
        folder = self.out.with_name(self.out.stem + "-charts")
        folder.mkdir(exist_ok=True)
        charts = self.window.export_charts(str(folder))
        rows = self.window.rows
        print(f"saved {self.out} ({len(rows)} points, {sum(r['status'] != 'ok' for r in rows)} not ok); "
              f"charts: {[c.name for c in charts]}")
        self.window.close()
        QApplication.instance().quit()


def main() -> None:
    out = Path(sys.argv[1])
    app = QApplication([])
    from workbench.app import MainWindow
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.resize(1800, 1100)
    window.show()
    shooter = Shooter(window, out, sys.argv[2:])  # noqa: F841 - kept alive by this frame
    app.exec()


if __name__ == "__main__":
    main()
