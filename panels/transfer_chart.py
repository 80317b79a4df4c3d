"""Where GPU end-to-end time goes: for each size and GPU backend, h2d / compute / d2h in %.

Bars stand at log10(size) (so the size axis reads like the other charts'), one bar
per GPU backend (and compared set) side by side, outlined in the backend's colour; the phases are
filled with colours no backend uses (their key is in the panel's legend strip).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFont

from panels import axes, style
from panels.charts import MIN_CHART, Titled
from panels.style import Look
from workbench.views.compare import Overlay
from workbench.results.rows import human_seconds
from workbench.core.sizes import fmt_size

PHASES = ("h2d", "compute", "d2h")
#: A compared set's bars are outlined in a line style of their own (the exports hatch them).
SET_LINES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)


class TransferChart(Titled, pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__(axisItems={"bottom": axes.ReadableAxis("bottom", axes.fmt_power_of_two, 2),
                                    "left": axes.PercentAxis("left")})
        self.setObjectName("transferPlot")
        self.setMinimumSize(*MIN_CHART)
        self.title_text, self.left_text, self.bottom_text = "Where GPU time goes", "% of end-to-end", "size"
        self._shown_title = ""
        self.look = style.NORMAL
        self.getPlotItem().hideButtons()
        self.showGrid(y=True, alpha=0.25)
        self.setYRange(0, 100, padding=0.02)
        self.bars = {}
        for phase in PHASES:
            item = pg.BarGraphItem(x=[], height=[], width=0.2, brush=style.PHASE_COLORS[phase], pen=None)
            self.addItem(item)
            self.bars[phase] = item
        self.outline = pg.BarGraphItem(x=[], height=[], width=0.2, brush=None, pen=pg.mkPen("#222", width=0.5))
        self.addItem(self.outline)
        self.setXRange(0, 1)
        self.getAxis("bottom").setStyle(showValues=False)
        self.hint = pg.TextItem("No GPU backend:\nCPU backends\nmove no data", color="#666", anchor=(0.5, 0.5))
        self.hint.setPos(0.5, 50)
        self.addItem(self.hint)
        self.data = pd.DataFrame()
        self.describe = lambda row, set_index: ""
        self.kind = "transfer"
        self._rows = pd.DataFrame()           # each bar's row, in the order of _x
        self._x = np.array([])
        self._width = 0.0
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.apply_look(self.look)

    def update_from(self, overlay: Overlay) -> None:
        parts = [s.rows.assign(series=s.label, set_index=s.set_index) for s in overlay.series if s.moves_data]
        ok = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        if not ok.empty:
            ok = ok[np.isfinite(ok[["h2d_s", "compute_median_s", "d2h_s"]].to_numpy(float)).all(axis=1)]
        self.hint.setVisible(ok.empty)
        self.getAxis("bottom").setStyle(showValues=not ok.empty)   # no sizes to name without bars
        if ok.empty:
            self.clear_series()
            return
        key = ok["series"]
        series = list(dict.fromkeys(key))
        where = np.log10(ok["size"].to_numpy(float))
        distinct = np.unique(where)
        gap = float(np.min(np.diff(distinct))) if len(distinct) > 1 else 0.3
        width = 0.8 * gap / len(series)        # the bars of one size share 80 % of the gap to the next
        x = where + (np.array([series.index(k) for k in key]) - (len(series) - 1) / 2) * width
        h2d, comp, d2h = (ok[c].to_numpy(float) for c in ("h2d_s", "compute_median_s", "d2h_s"))
        total = h2d + comp + d2h
        total = np.where(total > 0, total, np.nan)
        parts = [np.nan_to_num(100 * p / total) for p in (h2d, comp, d2h)]
        base = np.zeros_like(parts[0])
        for phase, share in zip(PHASES, parts):
            self.bars[phase].setOpts(x=x, height=share, y0=base, width=width * 0.9)
            base = base + share
        self.outline.setOpts(x=x, height=base, y0=np.zeros_like(base), width=width * 0.9,
                             pens=[pg.mkPen(style.color(b, self.look), width=self.look.line_px,
                                            style=SET_LINES[i % len(SET_LINES)] if overlay.compare else SET_LINES[0])
                                   for b, i in zip(ok["backend"], ok["set_index"])])
        self.data = pd.DataFrame({"series": key.to_numpy(), "size": ok["size"].to_numpy(), "h2d_pct": parts[0],
                                  "compute_pct": parts[1], "d2h_pct": parts[2]})
        # A frame, each bar's row made a dict only when hovered: dicts of every row at every update
        # were half this chart's time in a live sweep.
        self._rows, self._x, self._width = ok.drop(columns="series").reset_index(drop=True), x, width
        self.getAxis("bottom").set_format(*axes.size_format(ok["size"].to_numpy(), self._unit))
        self.setXRange(distinct[0] - gap / 2, distinct[-1] + gap / 2, padding=0)

    _unit = "size"

    def set_size_axis(self, sizes, unit: str) -> None:
        self._unit = unit
        text = unit.split(" (")[0] or "size"
        if text != self.bottom_text:
            self.bottom_text = text
            self._labels()

    def clear_series(self) -> None:
        # Every per-bar option at once: a y0 (or pens) left from more bars breaks the next layout.
        for item in self.bars.values():
            item.setOpts(x=[], height=[], y0=[])
        self.outline.setOpts(x=[], height=[], y0=[], pens=None)
        self.data = pd.DataFrame()
        self._rows, self._x = pd.DataFrame(), np.array([])

    def hover_text(self, scene_pos: QPointF) -> str:
        """The phases of the bar under the pointer."""
        if self._rows.empty:
            return ""
        p = self.getViewBox().mapSceneToView(scene_pos)
        hit = np.flatnonzero((np.abs(self._x - p.x()) <= self._width * 0.45) & (p.y() >= 0) & (p.y() <= 100))
        if not len(hit):
            return ""
        r = self._rows.iloc[int(hit[0])].to_dict()
        total = r["h2d_s"] + r["compute_median_s"] + r["d2h_s"]
        shares = ", ".join(f"{style.PHASE_LABELS[ph]} {100 * r[c] / total:.0f} % ({human_seconds(r[c])})"
                           for ph, c in zip(PHASES, ("h2d_s", "compute_median_s", "d2h_s")))
        return f"<b>{r['backend']}</b> at {fmt_size(r['size'])}: {shares}<br>{self.describe(r, r['set_index'])}"

    def apply_look(self, look: Look) -> None:
        self.look = look
        font = QFont()
        font.setPointSize(look.font_pt)
        self.setBackground(look.background)
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(look.foreground)
            axis.setTextPen(look.foreground)
            axis.setTickFont(font)
        self.hint.setColor(look.muted)
        self.hint.setFont(font)
        self.outline.setOpts(pen=pg.mkPen(look.foreground, width=0.5))
        self._labels()
