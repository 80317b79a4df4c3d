"""The window's charts: each draws the spec ``workbench.views.spec`` makes of the result sets on
screen, the same spec the exported chart draws.

A chart is fed the result sets (``workbench.views.compare.Overlay``: one live sweep, or several
sets compared), builds its kind's spec and draws it: the spec's series, bands, rings, marks,
axes (exactly the spec's ticks and labels, ``panels.axes.SpecAxis``), its key to the line styles
and its notes. Items are kept per series key and updated in place with ``setData`` as points
arrive (pyqtgraph's PlotSpeedTest pattern); nothing is cleared and redrawn. Who is who (each
series' colour and marker, what the band is) is in the panel's legend strip, from the same spec.

The chart kinds are here; what they share is ``panels.spec_chart`` (the spec, axes, key and
notes), ``panels.series_chart`` (series, bands, rings, marks, hover) and ``panels.chart_text``.
"""
from __future__ import annotations

from typing import Sequence

from panels.series_chart import HOVER_PX, Chart, positive  # noqa: F401 - their old home: importers find them here
from panels.spec_chart import SpecChart  # noqa: F401
from workbench.views import spec
from workbench.views.compare import Baseline, Overlay
from workbench.views.spec import ChartSpec


class RuntimeChart(Chart):
    """Each series' median, and around it the band ``workbench.views.bands`` describes."""

    def __init__(self) -> None:
        super().__init__("runtime", "runtimePlot")


class MemoryChart(Chart):
    def __init__(self) -> None:
        super().__init__("memory", "memoryPlot")


class EnergyChart(Chart):
    """Each series' energy per call above the idle draw: its compute with the band of its readings,
    a GPU series' whole call dashed."""

    def __init__(self) -> None:
        super().__init__("energy", "energyPlot")


class FirstCallChart(Chart):
    def __init__(self) -> None:
        super().__init__("first-call", "firstCallPlot")


class SpeedupChart(Chart):
    """Each backend's speedup over the chosen baseline, compute solid and end-to-end dashed; a
    grey ring around each point whose verdict against the baseline is ``same`` or ``undecided``
    (``workbench.views.compare.within_noise``): a ratio of 1.04 drawn alone reads as a win the
    measurement does not support."""

    def __init__(self) -> None:
        super().__init__("speedup", "speedupPlot")
        self.choice = Baseline("")
        self.title_text = "Speedup"

    @property
    def baseline(self) -> str:
        """The baseline's backend."""
        return self.choice.backend

    def set_baseline(self, choice: Baseline, labels: Sequence[str] = ()) -> None:
        """Divide by ``choice``: a backend of each set's own, or of one set (``set_index``)."""
        self.choice = choice

    def build(self, overlay: Overlay, shared=None) -> ChartSpec:
        shared = shared if shared is not None else spec.context(
            overlay.sets, labels=overlay.labels, marks=self.lesson_marks, caption=self.lesson_caption,
            series=overlay.series)
        return spec.build("speedup", baseline=self.choice, shared=shared)

    @property
    def ring_key_shown(self) -> bool:
        """Whether the key explains the within-the-noise rings (only while some are drawn)."""
        return any(e.role == "ring" for e, _ in self.key_items)
