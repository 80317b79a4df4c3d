"""The soak: 500 points in one window session through the supervised engine, one engine crash
every 50 points; then Stop pressed in every phase of a point.

1. Ten sweeps of 50 points of the misbehaving workload (tests/plugins/misbehaving.py): 49 quick
   points, then one that segfaults the engine. Reports the window's resident memory after the
   first and the last sweep (target: under 50 MB of growth), the time from each crash's error
   row to the next point's row (target: under 3 s; it includes starting a fresh engine), and the
   Python threads and child processes left after the window closes (target: none).
2. Stop latency, from Stop to the window's sweepCompleted (target: under 1 s), pressed: before the
   engine has read the request; between repeats of quick points; during one long repeat in
   Python; during a C call that holds the GIL; during a hung point; while the float64 reference
   of a large matrix product is being made.

Run: QT_QPA_PLATFORM=offscreen python benchmarks/soak.py [--sweeps 10]
"""
from __future__ import annotations

import argparse
import datetime
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
sys.path.insert(0, str(ROOT / "tests"))
PLUGIN = str(ROOT / "tests" / "plugins" / "misbehaving.py")


from PySide6.QtCore import QObject, QTimer, Slot  # noqa: E402


class Recorder(QObject):
    """Lives in the GUI thread, so its slot runs there when a message arrives (a plain function
    connected to the worker's signal would run in the worker's thread, which has no event loop
    while a sweep runs: a timer started there would never fire)."""

    def __init__(self, window, pressed: list) -> None:
        super().__init__()
        self.window, self.pressed = window, pressed
        self.arrivals: list[tuple[float, object]] = []
        self.stop_when = None
        self.completed: list[float] = []

    @Slot(object)
    def on_message(self, m) -> None:
        self.arrivals.append((time.perf_counter(), m))
        if self.stop_when is not None and self.stop_when(m):
            self.stop_when = None
            QTimer.singleShot(self.delay_ms, self.press_stop)

    @Slot(bool)
    def on_completed(self, _cancelled: bool) -> None:
        self.completed.append(time.perf_counter())

    @Slot()
    def press_stop(self) -> None:
        self.pressed.append(time.perf_counter())
        self.window.stop()



def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", type=int, default=10)
    args = ap.parse_args()
    import faulthandler
    faulthandler.dump_traceback_later(240, repeat=True)     # a hang shows where it hangs

    import psutil
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from session import LoopWaiter
    from workbench.measure import plugins
    from workbench.measure import protocol
    from workbench.measure.engine import SweepSpec
    plugins.load(PLUGIN)
    app = QApplication.instance() or QApplication([])  # noqa: F841 - kept alive by this frame
    from panels.window import MainWindow
    threads_before = {t.ident for t in threading.enumerate()}
    w = MainWindow(QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat),
                   plugins=(PLUGIN,))
    w.resize(1600, 1000)
    w.show()
    wait = LoopWaiter()
    with wait.signal(w.ready):
        pass
    pressed: list[float] = []
    recorder = Recorder(w, pressed)
    arrivals = recorder.arrivals
    w.controller.worker.message.connect(recorder.on_message)
    w.sweepCompleted.connect(recorder.on_completed)
    proc = psutil.Process()

    def sweep(spec: SweepSpec, stop_after=None) -> float:
        """Run ``spec`` through the window; with ``stop_after(message)``, press Stop when it says so
        and return the seconds from Stop to sweepCompleted."""
        w.experiment.spec = lambda: spec               # the experiment panel cannot type 49 ones
        w.experiment.validate = lambda: True
        pressed.clear()
        if stop_after is not None and stop_after is not STOP_AT_ONCE:
            recorder.stop_when, recorder.delay_ms = stop_after, stop_after.delay_ms
        with wait.signal(w.sweepCompleted, timeout=600_000):
            w.run()
            if stop_after is not None and stop_after is STOP_AT_ONCE:
                pressed.append(time.perf_counter())
                w.stop()
        recorder.stop_when = None
        return recorder.completed[-1] - pressed[0] if pressed else float("nan")

    # 1. 500 points, a crash every 50 -------------------------------------------------------------
    rss, crash_gaps = [], []
    t0 = time.perf_counter()
    for k in range(args.sweeps):
        arrivals.clear()
        sweep(SweepSpec("misbehaving", ("numpy",), (1,) * 49 + (2,), "float64", min_repeats=1, budget_s=0.0))
        rows = [(t, m.row) for t, m in arrivals if isinstance(m, protocol.PointFinished)]
        assert len(rows) == 50 and rows[-1][1]["status"] == "error", [(type(m).__name__, getattr(m, "row", {}).get("message")) for _, m in arrivals]
        assert len(w.rows) == 50
        # the crash is the sweep's last point: time to the next point is the next sweep's first
        crash_t = rows[-1][0]
        arrivals.clear()
        sweep(SweepSpec("misbehaving", ("numpy",), (1,), "float64", min_repeats=1, budget_s=0.0))
        first_row_t = next(t for t, m in arrivals if isinstance(m, protocol.PointFinished))
        crash_gaps.append(first_row_t - crash_t)
        app.processEvents()
        rss.append(proc.memory_info().rss)
        print(f"(sweep {k + 1}: {len(w.rows)} rows, crash to next point {crash_gaps[-1]:.2f} s)", file=sys.stderr, flush=True)
    soak_s = time.perf_counter() - t0

    # 2. Stop in every phase ----------------------------------------------------------------------
    def on(kind, size=None, delay_ms=0):
        def pred(m):
            return isinstance(m, kind) and (size is None or getattr(m, "size", None) == size)
        pred.delay_ms = delay_ms
        return pred

    global STOP_AT_ONCE
    STOP_AT_ONCE = on(protocol.SweepStarted)
    quick = SweepSpec("misbehaving", ("numpy",), (1,) * 200, "float64", min_repeats=2000, budget_s=0.0,
                      max_repeats=2000)
    phases = [
        ("before the engine read the request", quick, STOP_AT_ONCE),
        ("between repeats of quick points", quick, on(protocol.PointStarted, 1, 300)),
        ("during one 30 s repeat in Python", SweepSpec("misbehaving", ("numpy",), (5,), "float64",
                                                        min_repeats=1, budget_s=0.0), on(protocol.PointStarted, 5, 500)),
        ("during a 30 s C call holding the GIL", SweepSpec("misbehaving", ("numpy",), (7,), "float64",
                                                            min_repeats=1, budget_s=0.0), on(protocol.PointStarted, 7, 500)),
        ("during a hung point", SweepSpec("misbehaving", ("numpy",), (4,), "float64",
                                          min_repeats=1, budget_s=0.0), on(protocol.PointStarted, 4, 500)),
        ("while a float64 reference is made (matmul n=6000)",
         SweepSpec("matmul", ("numpy",), (6000,), "float32", min_repeats=1, budget_s=0.0),
         on(protocol.PointStarted, 6000, 300)),
    ]
    latencies = []
    for name, spec, when in phases:
        latencies.append((name, sweep(spec, when)))
        print(f"(stop {name}: {latencies[-1][1] * 1e3:.0f} ms)", file=sys.stderr, flush=True)

    engine_children = len(proc.children(recursive=True))
    restarts = w.controller.worker.engine.restarts
    w.close()
    app.processEvents()
    deadline = time.perf_counter() + 10
    while proc.children(recursive=True) and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.05)
    # multiprocessing's resource tracker (started with the first spawned engine, ends with this
    # process) is Python's own helper, not an engine: named apart from anything else left.
    children = proc.children(recursive=True)
    trackers = [p for p in children if "resource_tracker" in " ".join(p.cmdline())]
    left_procs = [p for p in children if p not in trackers]
    left_threads = [t.name for t in threading.enumerate()
                    if t.ident not in threads_before and t.is_alive() and not isinstance(t, threading._DummyThread)]

    mb = 2 ** 20
    print(f"Soak, {datetime.date.today()}: {args.sweeps * 50} points in {args.sweeps} sweeps of 50, "
          f"one engine crash (SIGSEGV) per sweep, {soak_s:.0f} s; engine restarts {restarts}")
    print(f"  window memory (RSS): {rss[0] / mb:.1f} MB after the first sweep, {rss[-1] / mb:.1f} MB after the last "
          f"(+{(rss[-1] - rss[0]) / mb:.1f} MB; target under 50 MB)")
    print(f"  crash to the next point's row: median {statistics.median(crash_gaps):.2f} s, "
          f"max {max(crash_gaps):.2f} s over {len(crash_gaps)} crashes (target under 3 s)")
    print(f"  engine processes while the window was open: {engine_children}; after close: "
          f"{len(left_procs)} processes ({len(trackers)} multiprocessing resource tracker beside), "
          f"{len(left_threads)} Python threads left {left_threads} (target: none)")
    print("  Stop to sweep ended (target under 1 s):")
    for name, s in latencies:
        print(f"    {name:<52} {s * 1e3:7.0f} ms")


STOP_AT_ONCE = None

if __name__ == "__main__":
    main()
