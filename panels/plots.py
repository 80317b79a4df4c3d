"""The live plots: runtime, memory, transfer split, speedup and first call against size.

Every plot is fed the same result table (a pandas DataFrame) and keeps one item
per series, updated in place with ``setData`` as points arrive (pyqtgraph's
PlotSpeedTest pattern); nothing is cleared and redrawn.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from panels import style
from workbench.summary import summarize

TITLE_STYLE = {"color": "#222", "size": "11pt"}


def _series(frame: pd.DataFrame):
    """(backend, variant, rows sorted by size) for every series in the table, ok points only."""
    ok = frame[frame["status"] == "ok"]
    for (backend, variant), g in ok.groupby(["backend", "variant"], sort=False):
        yield backend, variant, g.sort_values("size")


def _label(backend: str, variant: str) -> str:
    return f"{backend} ({variant})" if variant else backend


def _positive(a) -> np.ndarray:
    """Log axes cannot show zero or NaN: such values become NaN, and pyqtgraph leaves a gap."""
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, a, np.nan)


class _Plot(pg.PlotWidget):
    """A plot whose items are created once per key and updated in place."""

    def __init__(self, name: str, title: str, left: str, bottom: str = "size", logx=True, logy=True):
        super().__init__()
        self.setObjectName(name)    # PlotWidget passes unknown keywords on to PlotItem.plot()
        self.setTitle(title, **TITLE_STYLE)
        self.setLabel("left", left)
        self.setLabel("bottom", bottom)
        self.setLogMode(logx, logy)
        self.showGrid(x=True, y=True, alpha=0.25)
        for axis in ("left", "bottom"):
            self.getAxis(axis).enableAutoSIPrefix(False)   # "seconds (x0.001)" on a log axis misleads
        self.legend = self.addLegend(offset=(5, 5), labelTextSize="8pt")
        self.series: dict = {}

    def show(self, key, backend: str, label: str | None, x, y, dashed=False, symbol="o") -> None:
        """Set a series' points, leaving out those a log axis cannot show (zero, negative, NaN).

        pyqtgraph computes bounds with NumPy inside Qt's paint callbacks, where a warning
        about NaN becomes an exception that PySide cannot carry: better never to hand it one.
        """
        x, y = np.asarray(x, float), np.asarray(y, float)
        keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
        self.curve(key, backend, label, dashed, symbol).setData(x[keep], y[keep])

    def curve(self, key, backend: str, label: str | None, dashed=False, symbol="o"):
        item = self.series.get(key)
        if item is None:
            c = style.color(backend)
            item = self.plot([], [], pen=style.pen(backend, dashed), symbol=symbol, symbolSize=6,
                             symbolBrush=c if not dashed else None, symbolPen=c, name=label)
            self.series[key] = item
        return item

    def points(self) -> dict:
        """What each series draws: {key: (x, y)}, for tests and exports."""
        out = {}
        for key, item in self.series.items():
            if isinstance(item, pg.PlotDataItem):   # xData/yData: as given, before the log transform
                x, y = item.xData, item.yData
                out[key] = (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))
        return out


class RuntimePlot(_Plot):
    def __init__(self):
        super().__init__("runtimePlot", "Runtime: compute (solid, q1-q3 bars), end-to-end (dashed)",
                         "seconds")

    def update_from(self, frame: pd.DataFrame) -> None:
        for backend, variant, g in _series(frame):
            sizes = g["size"].to_numpy(float)
            label = _label(backend, variant)
            sym = style.VARIANT_SYMBOLS.get(variant, "o")
            self.show(("compute", backend, variant), backend, label, sizes, _positive(g["compute_median_s"]), symbol=sym)
            # Spread: an error bar from the first to the third quartile, in log coordinates.
            bars = self.series.get(("spread", backend, variant))
            if bars is None:
                bars = pg.ErrorBarItem(pen=style.pen(backend, width=1.5), beam=0.0)
                self.addItem(bars)
                self.series[("spread", backend, variant)] = bars
            med = _positive(g["compute_median_s"])
            q1, q3 = _positive(g["compute_q1_s"]), _positive(g["compute_q3_s"])
            ok = np.isfinite(med) & np.isfinite(q1) & np.isfinite(q3)
            lm = np.log10(med[ok])
            bars.setData(x=np.log10(sizes[ok]), y=lm, top=np.log10(q3[ok]) - lm, bottom=lm - np.log10(q1[ok]))
            if (g["host_memory"] != "").any():   # a device backend: transfers make end-to-end differ
                self.show(("total", backend, variant), backend, None, sizes, _positive(g["total_median_s"]), dashed=True, symbol="s")


class MemoryPlot(_Plot):
    def __init__(self):
        super().__init__("memoryPlot", "Peak memory: host (solid), device (dashed)", "bytes")

    def update_from(self, frame: pd.DataFrame) -> None:
        for backend, variant, g in _series(frame):
            sizes = g["size"].to_numpy(float)
            host = _positive(g["peak_host_bytes"])
            self.show(("host", backend, variant), backend, _label(backend, variant), sizes, host)
            dev = _positive(g["peak_device_bytes"])
            if np.isfinite(dev).any():
                self.show(("device", backend, variant), backend, None, sizes, dev, dashed=True, symbol="s")


class TransferPlot(pg.PlotWidget):
    """For each size and device backend, the end-to-end time split into h2d, compute, d2h (in %)."""

    def __init__(self):
        super().__init__()
        self.setObjectName("transferPlot")
        self.setTitle("Where GPU end-to-end time goes", **TITLE_STYLE)
        self.setLabel("left", "share of end-to-end time", units="%")
        self.setLabel("bottom", "size (log2); one bar per GPU backend")
        self.showGrid(y=True, alpha=0.25)
        self.setYRange(0, 118, padding=0)   # headroom above 100 % for the legend
        self.getAxis("left").setTicks([[(v, str(v)) for v in range(0, 101, 20)]])
        self.legend = self.addLegend(offset=(5, 2), labelTextSize="8pt", colCount=3)
        self.bars = {}
        for phase in ("h2d", "compute", "d2h"):
            item = pg.BarGraphItem(x=[], height=[], width=0.2, brush=style.PHASE_COLORS[phase], pen=None)
            self.addItem(item)
            self.legend.addItem(item, {"h2d": "host to device", "compute": "compute",
                                       "d2h": "device to host"}[phase])
            self.bars[phase] = item
        self.outline = pg.BarGraphItem(x=[], height=[], width=0.2, brush=None, pen=pg.mkPen("#222", width=0.5))
        self.addItem(self.outline)
        self.setXRange(0, 1)
        self.hint = pg.TextItem("No GPU backend in this sweep:\nCPU backends move no data,\n"
                                "all their time is compute.", color="#666", anchor=(0.5, 0.5))
        self.hint.setPos(0.5, 50)
        self.addItem(self.hint)
        self.data = pd.DataFrame()

    def update_from(self, frame: pd.DataFrame) -> None:
        ok = frame[(frame["status"] == "ok") & (frame["host_memory"] != "")]
        self.hint.setVisible(ok.empty)
        if ok.empty:
            return
        backends = list(dict.fromkeys(ok["backend"] + ok["variant"].map(lambda v: f" ({v})" if v else "")))
        width = 0.8 / max(len(backends), 1)
        ok = ok[np.isfinite(ok[["h2d_s", "compute_median_s", "d2h_s"]].to_numpy(float)).all(axis=1)]
        if ok.empty:
            return
        key = ok["backend"] + ok["variant"].map(lambda v: f" ({v})" if v else "")
        x = np.log2(ok["size"].to_numpy(float)) + np.array([backends.index(k) for k in key]) * width \
            - 0.4 + width / 2
        h2d, comp, d2h = (ok[c].to_numpy(float) for c in ("h2d_s", "compute_median_s", "d2h_s"))
        total = h2d + comp + d2h
        total = np.where(total > 0, total, np.nan)
        parts = [np.nan_to_num(100 * p / total) for p in (h2d, comp, d2h)]
        base = np.zeros_like(parts[0])
        for phase, share in zip(("h2d", "compute", "d2h"), parts):
            self.bars[phase].setOpts(x=x, height=share, y0=base, width=width * 0.9)
            base = base + share
        self.outline.setOpts(x=x, height=base, y0=np.zeros_like(base), width=width * 0.9,
                             pens=[pg.mkPen(style.color(b), width=2) for b in ok["backend"]])
        self.data = pd.DataFrame({"series": key.to_numpy(), "size": ok["size"].to_numpy(), "h2d_pct": parts[0],
                                  "compute_pct": parts[1], "d2h_pct": parts[2]})
        ticks = sorted(set(np.log2(ok["size"].to_numpy(float)).round().astype(int)))
        step = max(1, (len(ticks) + 7) // 8)          # at most about eight labels
        self.getAxis("bottom").setTicks([[(t, f"2^{t}") for t in ticks[::step]]])
        self.setXRange(ticks[0] - 0.6, ticks[-1] + 0.6, padding=0)   # the hint's range is not the data's


class SpeedupPlot(_Plot):
    def __init__(self):
        super().__init__("speedupPlot", "Speedup: end-to-end (solid), compute (dashed)",
                         "times faster than the baseline")
        self.baseline = ""
        self.ref_line = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#888", width=1, style=Qt.PenStyle.DotLine))
        self.addItem(self.ref_line)   # speedup 1 (log10 1 = 0)

    def update_from(self, frame: pd.DataFrame) -> None:
        ok = frame[frame["status"] == "ok"]
        base = ok[ok["backend"] == self.baseline]
        for key in list(self.series):   # series of a previous baseline: empty them, keep the items
            self.series[key].setData([], [])
        if base.empty:
            return
        base = base.groupby(["size", "variant"])[["total_median_s", "compute_median_s"]].first()
        for backend, variant, g in _series(frame):
            idx = list(zip(g["size"], g["variant"]))
            have = [i in base.index for i in idx]
            if not any(have):
                continue
            g = g[have]
            b = base.loc[list(zip(g["size"], g["variant"]))]
            sizes = g["size"].to_numpy(float)
            self.show(("total", backend, variant), backend, _label(backend, variant), sizes, _positive(b["total_median_s"].to_numpy() / g["total_median_s"].to_numpy()))
            self.show(("compute", backend, variant), backend, None, sizes, _positive(b["compute_median_s"].to_numpy() / g["compute_median_s"].to_numpy()), dashed=True, symbol="s")


class FirstCallPlot(_Plot):
    def __init__(self):
        super().__init__("firstCallPlot", "First call (dashed) vs steady call (solid)", "seconds")

    def update_from(self, frame: pd.DataFrame) -> None:
        for backend, variant, g in _series(frame):
            sizes = g["size"].to_numpy(float)
            self.show(("steady", backend, variant), backend, _label(backend, variant), sizes, _positive(g["total_median_s"]))
            self.show(("first", backend, variant), backend, None, sizes, _positive(g["first_call_s"]), dashed=True, symbol="t")


class PlotsPanel(QWidget):
    """The five plots in a grid, and the speedup baseline chooser.

    ``schedule`` updates one plot per timer tick, so each plot's update and repaint is its own
    short slice of the GUI thread (tens of ms) rather than one long stall for all five.
    """

    updated = Signal()     # every plot shows the last scheduled table

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style.setup_pyqtgraph()
        self._pending: list = []
        self.stagger = QTimer(self, interval=15)
        self.stagger.timeout.connect(self._next)
        self.runtimePlot = RuntimePlot()
        self.memoryPlot = MemoryPlot()
        self.transferPlot = TransferPlot()
        self.speedupPlot = SpeedupPlot()
        self.firstCallPlot = FirstCallPlot()
        self.baselineCombo = QComboBox(objectName="speedupBaseline")
        self.baselineCombo.currentTextChanged.connect(self._baseline_changed)
        self.frame = pd.DataFrame()

        speed = QWidget()
        sl = QVBoxLayout(speed)
        sl.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(QLabel("Speedup baseline:"))
        top.addWidget(self.baselineCombo, 1)
        sl.addLayout(top)
        sl.addWidget(self.speedupPlot)

        grid = QGridLayout(self)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.addWidget(self.runtimePlot, 0, 0)
        grid.addWidget(speed, 0, 1)
        grid.addWidget(self.transferPlot, 0, 2)
        grid.addWidget(self.memoryPlot, 1, 0)
        grid.addWidget(self.firstCallPlot, 1, 1)
        self.summary = QLabel(wordWrap=True, objectName="plotSummary")
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.summary.setStyleSheet("font-size: 11pt; padding: 8px;")
        grid.addWidget(self.summary, 1, 2)

    def plots(self) -> list[pg.PlotWidget]:
        return [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot, self.firstCallPlot]

    def clear(self) -> None:
        """A new sweep: empty every series (the items stay, for the next data)."""
        for p in (self.runtimePlot, self.memoryPlot, self.speedupPlot, self.firstCallPlot):
            for item in p.series.values():
                if isinstance(item, pg.PlotDataItem):
                    item.setData([], [])
                else:   # error bars: top/bottom must shrink with x/y, or a paint indexes past them
                    empty = np.array([])
                    item.setData(x=empty, y=empty, top=empty, bottom=empty)
        for item in list(self.transferPlot.bars.values()) + [self.transferPlot.outline]:
            item.setOpts(x=[], height=[])
        self.frame = pd.DataFrame()
        self._pending = []
        self.stagger.stop()
        self.summary.setText("")

    def schedule(self, frame: pd.DataFrame) -> None:
        """Update the plots from ``frame``, one per timer tick; ``updated`` fires when all are done."""
        self._prepare(frame)
        self._pending = [self.runtimePlot, self.speedupPlot, self.transferPlot, self.memoryPlot,
                         self.firstCallPlot, None]   # None: the summary text
        if not self.stagger.isActive():
            self.stagger.start()

    def _next(self) -> None:
        if not self._pending:
            self.stagger.stop()
            self.updated.emit()
            return
        item = self._pending.pop(0)
        if item is None:
            self.summary.setText(summarize(self.frame, self.speedupPlot.baseline))
        else:
            item.update_from(self.frame)

    def update_from(self, frame: pd.DataFrame) -> None:
        """Update every plot now (exports and tests; the window uses ``schedule``)."""
        self._prepare(frame)
        for p in (self.runtimePlot, self.memoryPlot, self.transferPlot, self.speedupPlot, self.firstCallPlot):
            p.update_from(frame)
        self.summary.setText(summarize(frame, self.speedupPlot.baseline))

    def _prepare(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        backends = list(dict.fromkeys(frame["backend"]))
        if backends and [self.baselineCombo.itemText(i) for i in range(self.baselineCombo.count())] != backends:
            current = self.baselineCombo.currentText()
            self.baselineCombo.blockSignals(True)
            self.baselineCombo.clear()
            self.baselineCombo.addItems(backends)
            cpu = [b for b in backends if b in ("numpy", "pandas", "numba")]
            self.baselineCombo.setCurrentText(current if current in backends else (cpu or backends)[0])
            self.baselineCombo.blockSignals(False)
        self.speedupPlot.baseline = self.baselineCombo.currentText()

    def _baseline_changed(self, name: str) -> None:
        self.speedupPlot.baseline = name
        if not self.frame.empty:
            self.speedupPlot.update_from(self.frame)
            self.summary.setText(summarize(self.frame, name))
