"""The GUI thread's longest stall while a 500-point session arrives (issue 19: under 16 ms, one frame).

A fake engine stands in for the supervised one inside the window's own worker thread: it yields
the protocol's messages (SweepStarted, then PointStarted and PointFinished per point, then
SweepFinished) at a realistic rate, with rows shaped as the engine's (four backends, two of them
GPU backends with transfers, 125 sizes, samples and rounds). Nothing is measured for real, so
the engine takes no core from the window: what stalls is the window's own work.

A 1 ms heartbeat timer (Qt's precise timer) records the gap between its ticks from Run to the
last point drawn, with the GUI thread's own CPU time within each gap (``time.thread_time``),
which tells the window's work from a core taken by a neighbour on a shared machine.

Run: QT_QPA_PLATFORM=offscreen python benchmarks/gui_500_points.py [--points 500] [--every-ms 40]
     [--series 10 --points 5000]   (issue 38: ten series x 500 sizes)
     [--after [--compare]]   (then hover, zoom, a baseline change, exports, a compared set: each one's stall)
     [--profile]   (cProfile of the GUI thread's slots, the 25 costliest by cumulative time)
     [--trace]     (each gap over 16 ms: when, and the events handled within it that took 2 ms or more)
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BACKENDS = ("numpy", "numba", "cupy", "numba-cuda")
#: Issue 38's sweep: ten series (``--series 10``): NumPy, Numba at 1, 2, 4 and 8 threads
#: (``--threads 1,2,4,8``) and source_terms' five GPU backends; with 500 sizes, 5,000 points.
SERIES_10 = ("numpy", "numba x1", "numba x2", "numba x4", "numba x8",
             "cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4")
WORKLOAD = "source_terms"


def fake_rows(points: int = 500, seed: int = 0, backends: tuple[str, ...] = BACKENDS) -> list[dict]:
    """``points`` rows as the engine would send them, in its order (sizes outer, backends inner)."""
    import numpy as np

    from workbench.catalog.backends import is_gpu, split_threads
    from workbench.results.rows import empty_row, encode_samples
    rng = np.random.default_rng(seed)
    n_sizes = math.ceil(points / len(backends))
    sizes = sorted({int(s) for s in np.geomspace(2 ** 8, 2 ** 24, n_sizes)})
    while len(sizes) < n_sizes:                     # geomspace rounds a few small sizes together
        sizes.append(sizes[-1] * 2)
    rows = []
    for size in sizes:
        for backend in backends:
            if len(rows) == points:
                return rows
            gpu, threads = is_gpu(backend), split_threads(backend)[1]
            compute = (2e-5 if gpu else 1e-6) + size * (2e-10 if gpu else 3e-9) * (0.7 if "numba" in backend else 1)
            h2d = d2h = size * 4 / 12e9 if gpu else 0.0
            total = compute + h2d + d2h
            samples = compute * (1 + 0.02 * rng.standard_normal(40))
            rounds = {"group": f"fake:{size}", "compute": [float(v) for v in samples[:5]],
                      "total": [float(v + h2d + d2h) for v in samples[:5]]}
            rows.append(empty_row(
                workload=WORKLOAD, backend=backend, device="GPU: fake" if gpu else "CPU: fake", size=size,
                dtype="float32", host_memory="pageable" if gpu else "", repeats=40,
                first_call_s=compute * (5000 if "numba" in backend else 3), compute_median_s=compute,
                compute_min_s=compute * 0.95, compute_max_s=compute * 1.3, compute_q1_s=compute * 0.98,
                compute_q3_s=compute * 1.02, host_issue_s=compute * 0.1 if gpu else math.nan, h2d_s=h2d,
                d2h_s=d2h, total_median_s=total, total_q1_s=total * 0.98, total_q3_s=total * 1.02,
                compute_ci_lo_s=compute * 0.99, compute_ci_hi_s=compute * 1.01, total_ci_lo_s=total * 0.99,
                total_ci_hi_s=total * 1.01, noise=0.01, converged=True,
                cold_median_s=compute * 1.2 if gpu else math.nan, call_median_s=compute * 1.1 if gpu else math.nan,
                others_cores=0.1, canary_s=1e-6, dropped=0, peak_host_bytes=float(size * 12),
                peak_device_bytes=float(size * 12) if gpu else math.nan, gflops=size * 10 / compute / 1e9,
                gbps=size * 12 / compute / 1e9, gbps_limit=math.inf, gflops_limit=math.inf, max_rel_error=1e-7,
                verified=True, status="ok", threads=threads, samples=encode_samples({"compute": samples.tolist()}),
                rounds=json.dumps(rounds, separators=(",", ":"))))
    return rows


class FakeEngine:
    """What the window's worker needs of ``workbench.measure.supervisor.Supervisor``, with the
    points made up: ``run`` yields one point every ``every_s`` seconds (the worker thread sleeps
    between them, as it waits on the engine's pipe)."""

    def __init__(self, rows: list[dict], every_s: float, journal=None) -> None:
        self.rows, self.every_s, self.journal = rows, every_s, journal
        self.backends = tuple(dict.fromkeys(r["backend"] for r in rows))
        self._stop = threading.Event()

    def run(self, spec):
        from workbench.measure import engine, protocol
        self._stop.clear()
        sizes = tuple(sorted({r["size"] for r in self.rows}))
        spec = engine.SweepSpec(workload=WORKLOAD, backends=self.backends, sizes=sizes)
        total, t0 = len(self.rows), time.perf_counter()
        yield protocol.SweepStarted(total, spec)
        for index, row in enumerate(self.rows):
            if self._stop.is_set():
                yield protocol.SweepFinished(True, time.perf_counter() - t0, index)
                return
            yield protocol.PointStarted(index, total, row["backend"], row["size"], row["variant"])
            # The next point is due every_s after the start of the last: the rate stays the same
            # whatever the window does with the messages.
            time.sleep(max(0.0, t0 + (index + 1) * self.every_s - time.perf_counter()))
            if self.journal is not None:
                self.journal.append(row)
            yield protocol.PointFinished(index, total, dict(row))
        yield protocol.SweepFinished(False, time.perf_counter() - t0, total)

    def probe(self):
        return iter(())

    def arm(self) -> None:
        self._stop.clear()

    def stop(self) -> None:
        self._stop.set()

    def abort(self) -> None:
        self._stop.set()

    def renew(self) -> None:
        pass

    def close(self) -> None:
        self._stop.set()


class Heartbeat:
    """The gaps between the ticks of a 1 ms timer, and the GUI thread's CPU time within each."""

    def __init__(self, interval_ms: int = 1) -> None:
        from PySide6.QtCore import Qt, QTimer
        self.gaps: list[float] = []
        self.ends: list[float] = []
        self.cpu: list[float] = []
        self.last = self.last_cpu = 0.0
        self.timer = QTimer(interval=interval_ms)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self.tick)

    def start(self) -> None:
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.timer.start()

    def tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.gaps.append(now - self.last)
        self.ends.append(now)
        self.cpu.append(cpu - self.last_cpu)
        self.last, self.last_cpu = now, cpu

    def stop(self) -> None:
        self.tick()
        self.timer.stop()


def traced_application():
    """A QApplication that times every event it delivers (``events``: start, seconds, depth, what)."""
    from PySide6.QtWidgets import QApplication

    class Traced(QApplication):
        def __init__(self, argv) -> None:
            super().__init__(argv)
            self.events: list[tuple[float, float, int, str]] = []
            self.depth = 0

        def notify(self, receiver, event) -> bool:
            t0 = time.perf_counter()
            self.depth += 1
            try:
                return super().notify(receiver, event)
            finally:
                self.depth -= 1
                took = time.perf_counter() - t0
                if took > 0.002:
                    try:
                        name = receiver.objectName()
                        up = receiver
                        while not name and up is not None:     # a nameless widget: where it lives
                            up = up.parent()
                            name = f"in {up.objectName() or type(up).__name__}" if up is not None else ""
                    except (RuntimeError, TypeError, AttributeError):    # deleted, or no QObject
                        name = "?"
                    self.events.append((t0, took, self.depth, f"{type(receiver).__name__}({name}) {event.type().name}"))
    return Traced([])


def offscreen_screen(width: int, height: int) -> None:
    """Qt's offscreen platform has one 800x800 screen, and the window fits itself to its screen
    (``panels.window_settings``): a 1600x1000 window asked for was measured at 796x821 until
    2026-12-07. A screen as large as the window is given through the platform's config file;
    call before the QApplication exists."""
    if os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        return
    config = Path(tempfile.mkdtemp()) / "screen.json"
    # A margin for the window's frame, which the fit takes off the screen's area.
    config.write_text(json.dumps({"screens": [{"name": "bench", "x": 0, "y": 0, "width": width + 64,
                                               "height": height + 64, "logicalDpi": 96, "logicalBaseDpi": 96,
                                               "dpr": 1}]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"


def _wait(ms: int, signal=None) -> None:
    """Run the event loop for ``ms`` ms, or until ``signal`` fires and then 300 ms more (what it
    set off is drawn)."""
    from PySide6.QtCore import QEventLoop, QTimer
    loop = QEventLoop()
    if signal is not None:
        signal.connect(lambda *_: QTimer.singleShot(300, loop.quit))
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _worst(beat: Heartbeat, since: int) -> tuple[float, float]:
    """The longest gap since tick ``since`` and the GUI thread's longest CPU time within one (ms)."""
    return max(beat.gaps[since:], default=0.0) * 1e3, max(beat.cpu[since:], default=0.0) * 1e3


def after_sweep(w, beat: Heartbeat, folder: Path, compare: bool) -> dict[str, tuple[float, float, str]]:
    """What a user does once the points are in, each from the event loop as a click would come,
    its stall measured by the heartbeat: {action: (longest gap ms, its CPU ms, what it did)}."""
    from PySide6.QtCore import QObject, QPoint, QPointF, Qt, QTimer, Signal
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    class Done(QObject):
        done = Signal()
    moved = Done()
    out: dict[str, tuple[float, float, str]] = {}
    chart = w.plots.runtimePlot

    def measure(name: str, action, ms: int, signal=None) -> None:
        since, said = len(beat.gaps), []
        QTimer.singleShot(0, lambda: said.append(action()))
        _wait(ms, signal)
        out[name] = (*_worst(beat, since), str(said[0]) if said else "not run")

    def hover() -> str:
        """40 pointer moves along the view's diagonal, each 10 ms after the last was handled
        (moves that queued up behind a slow one would be counted in the next action's stall)."""
        from PySide6.QtWidgets import QToolTip
        rect = chart.getViewBox().sceneBoundingRect()
        def move(i: int) -> None:
            f = (i + 0.5) / 40
            chart.scene().sigMouseMoved.emit(QPointF(rect.left() + f * rect.width(), rect.bottom() - f * rect.height()))
            hits.append(bool(QToolTip.text()))
            if i < 39:
                QTimer.singleShot(10, lambda: move(i + 1))
            else:
                moved.done.emit()               # the last move: measure() waits for this, then 300 ms
        move(0)
        return "40 moves"

    def zoom() -> str:          # one wheel notch in, at the runtime chart's middle
        vp = chart.viewport()
        at = QPointF(vp.width() / 2, vp.height() / 2)
        before = chart.getViewBox().viewRange()
        QApplication.sendEvent(vp, QWheelEvent(at, QPointF(vp.mapToGlobal(at.toPoint())), QPoint(), QPoint(0, 120),
                                               Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                               Qt.ScrollPhase.NoScrollPhase, False))
        return "zoomed" if chart.getViewBox().viewRange() != before else "range unchanged"

    def baseline() -> str:      # the chooser's next baseline
        combo = w.plots.baselineCombo
        combo.setCurrentIndex((combo.currentIndex() + 1) % max(combo.count(), 1))
        return combo.currentText()

    hits: list[bool] = []
    measure("hover", hover, 60_000, moved.done)
    out["hover"] = (*out["hover"][:2], f"a tooltip after {sum(hits)} of {len(hits)} moves")
    measure("zoom", zoom, 700)
    measure("baseline", baseline, 3000, w.plots.updated)
    csv = folder / "results.csv"
    measure("export results", lambda: w.files.export_results(csv), 30_000, w.files.exported)    # written off the GUI thread
    measure("export charts", lambda: w.files.export_chart(folder / "charts.png"), 30_000, w.files.exported)
    if compare:
        measure("compare", lambda: w.files.compare_with([csv]), 30_000, w.plots.updated)
        out["compare"] = (*out["compare"][:2], f"{sum(len(s.frame) for s in w.result_sets())} points in "
                          f"{len(w.result_sets())} sets")
    return out


def session(points: int = 500, every_ms: float = 40.0, size: tuple[int, int] = (1600, 1000),
            profile: bool = False, trace: bool = False, backends: tuple[str, ...] = BACKENDS,
            after: bool = False, compare: bool = False) -> dict:
    """One window, one fake sweep of ``points`` points; the heartbeat's figures."""
    import cProfile
    import pstats

    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from panels.window import MainWindow
    app = QApplication.instance() or (traced_application() if trace else QApplication([]))
    w = MainWindow(QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat))
    w.resize(*size)
    w.show()
    loop = QEventLoop()
    w.ready.connect(loop.quit)
    QTimer.singleShot(120_000, loop.quit)
    loop.exec()
    if (w.width(), w.height()) != tuple(size):      # a screen smaller than the window: say so
        print(f"the window is {w.width()}x{w.height()}, not {size[0]}x{size[1]}: the screen is smaller")
    charts = " ".join(f"{c.objectName()} {c.viewport().width()}x{c.viewport().height()}"
                      for c in w.plots.plots() if c.isVisible())
    print(f"window {w.width()}x{w.height()}; charts' viewports: {charts}")
    if trace:                         # the charts' scenes and viewports by their charts' names
        for chart in w.plots.plots():
            chart.scene().setObjectName(chart.objectName())
            chart.viewport().setObjectName(f"{chart.objectName()}.viewport")
    rows = fake_rows(points, backends=backends)
    w.controller.worker.engine = FakeEngine(rows, every_ms / 1e3, w.journal)
    w.experiment.select_workload(WORKLOAD)
    w.experiment.set_checked_backends(["numpy"])
    # What choosing the workload and backends asked for (the lists' repaints, a relayout) is done
    # before Run, as it is before a user's click on Run can be handled: otherwise it would count
    # in Run's gap, which is the click's own.
    settle = QEventLoop()
    QTimer.singleShot(300, settle.quit)
    settle.exec()
    beat = Heartbeat()
    done = QEventLoop()
    w.sweepCompleted.connect(done.quit)
    profiler = cProfile.Profile() if profile else None
    beat.start()
    if profiler:
        profiler.enable()
    t0 = time.perf_counter()
    w.run()
    QTimer.singleShot(int(points * every_ms * 3 + 60_000), done.quit)
    done.exec()
    seconds = time.perf_counter() - t0
    if profiler:
        profiler.disable()
    shown, ticks = len(w.rows), len(beat.gaps)
    actions = after_sweep(w, beat, Path(tempfile.mkdtemp()), compare) if after else {}
    beat.stop()
    w.close()
    gaps, cpu = sorted(beat.gaps[:ticks]), beat.cpu[:ticks]
    result = {"points": shown, "seconds": seconds, "ticks": len(gaps), "max_ms": gaps[-1] * 1e3,
              "p99_ms": statistics.quantiles(gaps, n=100)[98] * 1e3, "over_16": sum(g > 0.016 for g in gaps),
              "max_cpu_ms": max(cpu) * 1e3, "cpu_over_16": sum(c > 0.016 for c in cpu),
              "load": os.getloadavg()[0], "after": actions}
    if trace:
        events = getattr(app, "events", [])
        long = sorted(range(len(beat.gaps)), key=lambda i: -beat.gaps[i])[:25]
        for i in sorted(long):
            end, start = beat.ends[i], beat.ends[i] - beat.gaps[i]
            print(f"gap at {start - t0:6.3f} s: {beat.gaps[i] * 1e3:5.1f} ms wall, {beat.cpu[i] * 1e3:5.1f} ms CPU")
            for e0, took, depth, what in events:
                if e0 >= start - 1e-4 and e0 + took <= end + 1e-4:
                    print(f"    {'  ' * depth}{(e0 - start) * 1e3:5.1f} +{took * 1e3:5.1f} ms {what}")
    if profiler:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(25)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=500)
    parser.add_argument("--every-ms", type=float, default=40.0, help="one point every so many ms (default 40)")
    parser.add_argument("--size", default="1600x1000", help="the window's size, WxH")
    parser.add_argument("--series", type=int, choices=(4, 10), default=4,
                        help="4 backends (issue 19) or 10 series (issue 38: with --points 5000, 500 sizes)")
    parser.add_argument("--after", action="store_true",
                        help="then hover, zoom, change the baseline, export the results and the charts")
    parser.add_argument("--compare", action="store_true", help="with --after: then compare with the results exported")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    from workbench.measure.cpu import cpu_name
    width, height = (int(v) for v in args.size.split("x"))
    offscreen_screen(width, height)
    print(f"GUI stalls over a {args.points}-point session, {datetime.date.today()}, {cpu_name()}, "
          f"{os.cpu_count()} cores, QT_QPA_PLATFORM={os.environ['QT_QPA_PLATFORM']}, window {args.size}")
    r = session(args.points, args.every_ms, (width, height), args.profile, args.trace,
                SERIES_10 if args.series == 10 else BACKENDS, args.after, args.compare)
    print(f"{r['points']} points, one every {args.every_ms:g} ms, in {r['seconds']:.1f} s; heartbeat every 1 ms, "
          f"{r['ticks']} gaps: longest {r['max_ms']:.1f} ms, 99th percentile {r['p99_ms']:.1f} ms, "
          f"{r['over_16']} over 16 ms (target: none)")
    print(f"GUI-thread CPU time within one gap: longest {r['max_cpu_ms']:.1f} ms, {r['cpu_over_16']} over 16 ms; "
          f"load average {r['load']:.1f}")
    for name, (gap, cpu, what) in r["after"].items():
        print(f"after the sweep, {name}: longest gap {gap:.1f} ms, GUI-thread CPU {cpu:.1f} ms ({what})")


if __name__ == "__main__":
    main()
