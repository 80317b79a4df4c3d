"""The window at 1280x720 with a results file open and the timeline of two of its points, offscreen:
each timeline window grabbed to a PNG beside the main window's, and each point's timeline exported as
the export dialog writes it (slide PNG and Chrome trace JSON), to hold the two side by side.

Run: QT_QPA_PLATFORM=offscreen python benchmarks/timeline_screenshot.py RESULTS OUTDIR POINT [POINT ...]
     where POINT is BACKEND@SIZE:VARIANT, e.g. "cupy@2^26:pinned sequential" "cupy@2^26:pinned 4 streams"
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def settle(ms: int = 500) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main() -> int:
    results, out, points = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    out.mkdir(parents=True, exist_ok=True)
    from panels.window import MainWindow
    from workbench.cli.charts import point_of
    from workbench.views import matplotlib_charts, presets
    from workbench.results.files import open_results
    app = QApplication.instance() or QApplication([])
    w = MainWindow(QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat))
    w.resize(1280, 720)
    w.show()
    loop = QEventLoop()
    w.ready.connect(loop.quit)
    loop.exec()
    drawn = QEventLoop()                # read in the files panel's job, drawn a step per tick
    w.plots.updated.connect(drawn.quit)
    w.files.problem.connect(drawn.quit)
    if not w.files.open_results([results]):
        print("cannot open", results)
        return 1
    drawn.exec()
    settle(1500)
    w.grab().save(str(out / "window-1280x720.png"))
    rs = open_results(results)
    for text in points:
        backend, size, variant = point_of(text)
        view = w.show_timeline((backend, variant or "", size, 0))
        view.resize(1280, 720)
        settle(600)
        name = f"timeline-{backend}-{size}-{(variant or '').replace(' ', '_')}"
        view.grab().save(str(out / f"{name}-window.png"))
        with matplotlib_charts.style(presets.preset()):
            matplotlib_charts.export([rs], out / f"{name}-export.png", "timeline", point=(backend, size, variant))
        matplotlib_charts.export([rs], out / f"{name}.json", "timeline", point=(backend, size, variant))
        print("saved", name)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
