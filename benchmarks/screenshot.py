"""Run one sweep in the window (or open result files), offscreen, then save the whole set of
screenshots of it.

Every combination of 1920x1080 and 1280x720, normal and presentation mode, light and dark
theme goes into OUTDIR as PREFIX-WxH-MODE-THEME.png (eight files), and each chart, exported
from the window (File > Export chart, slide preset), into OUTDIR/PREFIX-charts/.

Run: QT_QPA_PLATFORM=offscreen python benchmarks/screenshot.py OUTDIR WORKLOAD BACKENDS FROM TO STEPS
         [--dtype float32] [--prefix NAME] [--budget 0.25] [--threads 1,all]
         [--shot 1280x720-normal-light ...] [--roofline]
     QT_QPA_PLATFORM=offscreen python benchmarks/screenshot.py OUTDIR --open A.csv [--open B.csv ...]
         [--baseline numpy@2] --prefix NAME        (several files: the first compared with the others)
e.g. ... docs/screens source_terms numpy,numba 2^10 2^24 8 --prefix cpu-source_terms
     ... shots matmul numpy,numba 64 1024 5 --threads 1,all --shot 1280x720-normal-light --roofline
         (each series at 1 thread and at every core; the roofline chart alone too, as PREFIX-roofline-...)
On a GPU machine (docs/GPU.md):
     ... shots source_terms numpy,numba,cupy,cupy-fused,cupy-raw,numba-cuda,numba-cuda-x4 2^10 2^26 9 --prefix h200-source_terms
     ... shots groupby pandas,cudf 10,000 100,000,000 5 --prefix h200-groupby
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEventLoop, QObject, QSettings, Qt, QTimer, Slot  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

SIZES = ((1920, 1080), (1280, 720))
MODES = ("normal", "presentation")
THEMES = ("light", "dark")
SETTLE_MS = 600     # let a resize or a mode change lay out and paint before the grab


class Shooter(QObject):
    """Lives in the GUI thread: its slots run there (a plain function would run in the worker's)."""

    def __init__(self, window, args) -> None:
        super().__init__()
        self.window, self.args = window, args
        self.args.out.mkdir(parents=True, exist_ok=True)
        self.shots = [(size, mode, theme, alone) for alone in ((False, True) if args.roofline else (False,))
                      for size in SIZES for mode in MODES for theme in THEMES
                      if not args.shot or f"{size[0]}x{size[1]}-{mode}-{theme}" in args.shot]
        self.saved: list[Path] = []
        window.ready.connect(self.start)
        window.sweepCompleted.connect(self.done)

    @Slot()
    def start(self) -> None:
        if self.args.open:
            # Read in the files panel's job and drawn a step per tick: shot once drawn, not before
            # (the shot of a window still saying "Measuring the first point...").
            files, plots = self.window.files, self.window.plots
            files.problem.connect(self.cannot_open, Qt.ConnectionType.SingleShotConnection)
            files.opened.connect(lambda _sets: plots.updated.connect(self.opened, Qt.ConnectionType.SingleShotConnection),
                                 Qt.ConnectionType.SingleShotConnection)
            if not files.open_results(self.args.open):
                self.cannot_open(self.window.notice.label.text())
            return
        a, e = self.args, self.window.experiment
        e.select_workload(a.workload)
        e.set_checked_backends(a.backends.split(","))
        e.sizeFrom.setText(a.lo)
        e.sizeTo.setText(a.hi)
        e.sizeSteps.setValue(a.steps)
        e.dtypeCombo.setCurrentText(a.dtype)
        e.budgetSpin.setValue(a.budget)
        if a.threads:
            e.threadsEdit.setText(a.threads)
        missing = set(a.backends.split(",")) - set(e.checked_backends())
        if missing:
            print(f"not usable here, left out: {sorted(missing)}: {e.backendStatus.text()}")
        if e.problem:
            print(f"cannot run: {e.problem}")
            self.finish()
            return
        self.window.run()

    @Slot(bool)
    @Slot(str)
    def cannot_open(self, text: str) -> None:
        print(f"cannot open: {text}")
        self.finish()

    @Slot()
    def opened(self) -> None:
        self.window.files.problem.disconnect(self.cannot_open)
        combo = self.window.plots.baselineCombo
        if self.args.baseline and combo.findData(self.args.baseline) not in (-1, combo.currentIndex()):
            combo.setCurrentIndex(combo.findData(self.args.baseline))
            loop = QEventLoop()             # the speedup chart is made again off the GUI thread
            self.window.plots.updated.connect(loop.quit)
            loop.exec()
        self.done(False)

    def done(self, cancelled: bool) -> None:
        folder = self.args.out / f"{self.args.prefix}-charts"
        folder.mkdir(parents=True, exist_ok=True)
        files = self.window.files
        files.exported.connect(self.charts_written, Qt.ConnectionType.SingleShotConnection)
        if not files.export_chart(folder / "chart.png"):
            files.exported.disconnect(self.charts_written)
            self.charts_written([])

    @Slot(list)
    def charts_written(self, charts: list) -> None:
        print(f"charts: {[str(c) for c in charts]}")
        self.window.resultsTable.scrollToTop()
        self.next_shot()

    @Slot()
    def next_shot(self) -> None:
        if not self.shots:
            self.finish()
            return
        (width, height), mode, theme, alone = self.shots[0]
        w = self.window
        w.plots.rooflineAction.setChecked(alone)
        w.presentation.set_presenting(mode == "presentation")
        w.presentation.set_dark(theme == "dark")
        w.resize(width, height)
        QTimer.singleShot(SETTLE_MS, self.grab)

    @Slot()
    def grab(self) -> None:
        (width, height), mode, theme, alone = self.shots.pop(0)
        prefix = f"{self.args.prefix}-roofline" if alone else self.args.prefix
        path = self.args.out / f"{prefix}-{width}x{height}-{mode}-{theme}.png"
        image = self.window.grab()
        image.save(str(path))
        self.saved.append(path)
        print(f"saved {path} ({image.width()}x{image.height()})")
        self.next_shot()

    def finish(self) -> None:
        rows = self.window.rows
        print(f"{len(rows)} points, {sum(r['status'] != 'ok' for r in rows)} not ok; {len(self.saved)} screenshots")
        if self.window.experiment.threadsEdit.text():
            print(f"CPU threads: {self.window.experiment.threadsEdit.text()}")
        self.window.close()
        QApplication.instance().quit()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("sweep", nargs="*", metavar="WORKLOAD BACKENDS FROM TO STEPS")
    p.add_argument("--open", action="append", default=[], metavar="RESULTS",
                   help="show result files instead of a sweep (repeat it to compare them)")
    p.add_argument("--baseline", help="the speedup baseline, as the exports name it: numpy, numpy@2")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--prefix", default="")
    p.add_argument("--budget", type=float, default=0.25, help="seconds per point (default 0.25)")
    p.add_argument("--threads", default="", metavar="COUNTS",
                   help="the panel's CPU threads: each CPU backend whose threads can be set once per count (1,all)")
    p.add_argument("--shot", action="append", default=[], metavar="WxH-MODE-THEME",
                   help="only these screenshots, e.g. 1280x720-normal-light (repeatable; default: all eight)")
    p.add_argument("--roofline", action="store_true",
                   help="each screenshot again with the roofline chart alone (View > Roofline chart)")
    args = p.parse_args()
    if args.open and args.sweep or not args.open and len(args.sweep) != 5:
        p.error("give WORKLOAD BACKENDS FROM TO STEPS, or --open RESULTS")
    known = {f"{w}x{h}-{m}-{t}" for w, h in SIZES for m in MODES for t in THEMES}
    if set(args.shot) - known:
        p.error(f"--shot: one of {', '.join(sorted(known))}")
    if not args.open:
        args.workload, args.backends, args.lo, args.hi, steps = args.sweep
        args.steps = int(steps)
    args.prefix = args.prefix or (args.workload if not args.open else Path(args.open[0]).stem)
    app = QApplication([])
    from panels.window import MainWindow
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.resize(*SIZES[0])
    window.show()
    shooter = Shooter(window, args)  # noqa: F841 - kept alive by this frame
    app.exec()


if __name__ == "__main__":
    main()
