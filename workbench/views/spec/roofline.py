"""The roofline chart: each ok point at its arithmetic intensity (FLOPs per byte moved,
``gflops / gbps``) and its achieved GFLOP/s, under the roofs of the device it ran on.

The roofs are measured, never assumed: each memory level's best bandwidth and each dtype's peak
from the set's environment record (``limits``, ``workbench.measure.limits``), else the ceilings
the rows themselves carry (``gbps_limit``, ``gflops_limit``). A row without ceilings (a file from
before them) gets neither point nor roof; a workload without FLOPs has no intensity, and the chart
says that its points are not drawn.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from workbench.core.lazy import lazy_module

from workbench.views.chart_kinds import chart_kind
from workbench.views.spec import ticks
from workbench.views.spec.model import DASHED, INK, SOLID, Axis, ChartSpec, Label, LegendEntry, Series

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

TITLE = "Roofline: achieved GFLOP/s against arithmetic intensity"
X_LABEL = "arithmetic intensity (FLOP per byte moved)"
Y_LABEL = "achieved GFLOP/s"
#: Memory roofs closer than this factor share one label (L2 103 and L3 98 GB/s are one line to the
#: eye, and two labels there would overlap).
ONE_LABEL = 1.25
#: Two levels within this factor of each other are one roof (the rows' ceilings are the record's, unrounded).
SAME_ROOF = 1.02


@dataclass(frozen=True)
class Roof:
    device: str
    what: str          # "L3", "memory", "peak float32"
    value: float       # GB/s of a memory roof, GFLOP/s of a compute roof
    memory: bool

    @property
    def text(self) -> str:
        unit = "GB/s" if self.memory else "GFLOP/s"
        return f"{self.what} {self.value:.3g} {unit}"


def _finite(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame:
        return np.full(len(frame), np.nan)
    return pd.to_numeric(frame[column], errors="coerce").to_numpy(float)


def placed(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: intensity, GFLOP/s, whether it is drawn, whether it has no FLOPs, whether it lacks
    its device's ceilings (an older file)."""
    gflops, gbps = _finite(frame, "gflops"), _finite(frame, "gbps")
    limited = (_finite(frame, "gbps_limit") > 0) & (_finite(frame, "gflops_limit") > 0)
    no_flops = ~(gflops > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = gflops / gbps
    drawn = limited & ~no_flops & np.isfinite(intensity) & (intensity > 0)
    return intensity, gflops, drawn, no_flops, ~limited


def _recorded(sets, device: str) -> dict | None:
    """The environment's limits of ``device`` (the first set that has them)."""
    for rs in sets:
        for rec in (rs.environment or {}).get("limits", []) or []:
            if isinstance(rec, dict) and rec.get("device") == device:
                return rec
    return None


def roofs(sets, rows: pd.DataFrame) -> list[Roof]:
    """The roofs of the devices and dtypes of ``rows`` (the drawn ones): every level of the
    environment's ladder where recorded, else the distinct ceilings of the rows."""
    out: list[Roof] = []
    for device, on in rows.groupby("device", sort=True):
        rec = _recorded(sets, device)
        levels = [(str(lv.get("level")), float(lv["best_gbps"])) for lv in (rec or {}).get("levels", []) or []
                  if isinstance(lv, dict) and isinstance(lv.get("best_gbps"), (int, float)) and lv["best_gbps"] > 0]
        if levels:
            out += [Roof(device, name, gbps, True) for name, gbps in levels]
        else:
            for gbps in sorted(set(_finite(on, "gbps_limit").tolist()), reverse=True):
                if not any(r.memory and r.device == device and _same(r.value, gbps) for r in out):
                    out.append(Roof(device, "memory", gbps, True))
        peaks = (rec or {}).get("peak_gflops") or {}
        for dtype, of_dtype in on.groupby("dtype", sort=True):
            peak = peaks.get(dtype)
            peak = float(peak) if isinstance(peak, (int, float)) and peak > 0 else float(of_dtype["gflops_limit"].max())
            out.append(Roof(device, f"peak {dtype}", peak, False))
    return out


def _same(a: float, b: float) -> bool:
    return max(a, b) / min(a, b) < SAME_ROOF


def _roof_lines(found: list[Roof], lo: float, hi: float) -> list[tuple[Roof, list[float], list[float]]]:
    """Each memory roof from the left edge to where it meets its device's highest peak; each peak
    flat from where its device's fastest memory roof meets it to the right edge."""
    out = []
    for r in found:
        same = [q for q in found if q.device == r.device and q.memory != r.memory]
        if not same:
            continue
        if r.memory:
            ridge = max(q.value for q in same) / r.value
            xs = [lo, max(lo, ridge)]
            out.append((r, xs, [r.value * x for x in xs]))
        else:
            ridge = r.value / max(q.value for q in same)
            out.append((r, [min(hi, max(lo, ridge)), hi], [r.value, r.value]))
    return out


def _labels(found: list[Roof], x_range, y_range) -> list[Label]:
    """Each memory roof's name where its line enters the chart at the left, under it (the line
    rises away from the text); roofs of nearly one bandwidth named together, on the highest. Each peak's name above its line at the right."""
    (lo, hi), (y_lo, _) = x_range, y_range
    out = []
    memory = sorted((r for r in found if r.memory), key=lambda r: (r.device, -r.value))
    groups: list[list[Roof]] = []
    for r in memory:
        if groups and groups[-1][0].device == r.device and groups[-1][-1].value / r.value < ONE_LABEL:
            groups[-1].append(r)
        else:
            groups.append([r])
    for g in groups:
        top = g[0]
        at_x = max(lo * 1.05, 1.05 * y_lo / top.value)     # where the line comes into view
        text = top.text if len(g) == 1 else " / ".join(f"{r.what} {r.value:.3g}" for r in g) + " GB/s"
        out.append(Label(at_x, top.value * at_x, text, "left", above=False))
    out += [Label(hi / 1.05, r.value, r.text, "right") for r in found if not r.memory]
    return out


@chart_kind("roofline", short_title="Roofline", short_y="GFLOP/s", order=6)
def roofline(c) -> ChartSpec:
    """Each series' ok rows that have FLOPs and ceilings, at (intensity, GFLOP/s), joined in the
    order of their sizes; the roofs of their devices, each labelled on its line."""
    drawn, rows, kept, notes = [], [], [], []
    no_flops = unlimited = 0
    for s in c.series:
        intensity, gflops, ok, none, old = placed(s.rows)
        no_flops += int((none & ~old).sum())
        unlimited += int(old.sum())
        if not ok.any():
            continue
        rows.append(s)
        kept.append(s.rows[ok])
        line = c.line(s, "compute", intensity, np.where(ok, gflops, np.nan))
        # x is no size here: each point keeps the size it stands for, for the hover
        drawn.append(replace(line, sizes=tuple(s.rows["size"].to_numpy(float)[ok].tolist())))
    if no_flops:
        notes.append(f"{no_flops} point{'s' if no_flops > 1 else ''} of a workload without FLOPs "
                     "(no arithmetic intensity): not drawn")
    if unlimited:
        notes.append(f"{unlimited} point{'s' if unlimited > 1 else ''} without the device's ceilings "
                     "(an older file): not drawn, no roof")
    x_short = X_LABEL.split(" (")[0]
    if not drawn:
        return ChartSpec("roofline", TITLE, Axis(X_LABEL, "", short=x_short), Axis(Y_LABEL, ""), caption=c.caption,
                         footnote=c.left_out,     # what was left out said across it: an empty chart has no notes
                         empty="\n".join(["No point to draw: no ok result with FLOPs and its device's ceilings",
                                          *notes]))
    found = roofs(c.sets, pd.concat(kept))
    peaks = [r.value for r in found if not r.memory]
    xs = np.concatenate([np.asarray(s.xs) for s in drawn])
    ridges = [p.value / m.value for p in found if not p.memory for m in found if m.memory and m.device == p.device]
    x = ticks.value_axis(X_LABEL, [xs, np.asarray(ridges)], "")
    y = ticks.value_axis(Y_LABEL, [np.asarray(s.ys) for s in drawn] + [np.asarray(peaks)], "")
    lo, hi = x.range
    series = list(drawn)
    for r, rx, ry in _roof_lines(found, lo, hi):
        series.append(Series(("roof", r.device, r.text), r.text, "roof", "", r.device, 0, tuple(rx), tuple(ry),
                             INK, "", DASHED if r.memory else SOLID))
    labels = _labels(found, x.range, y.range)
    legend = c.identities(rows) + [LegendEntry("memory roof (measured)", "key", INK, DASHED),
                                   LegendEntry("compute roof (peak)", "key", INK, SOLID)]
    return ChartSpec("roofline", TITLE, x, y, series=tuple(series), legend=tuple(legend), caption=c.caption,
                     notes=tuple(notes), footnote=c.left_out, labels=tuple(labels))
