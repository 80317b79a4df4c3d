"""Chart specs: one plain-data description of each chart, which the window's pyqtgraph charts
(``panels.charts``) and the exported matplotlib figures (``workbench.views.matplotlib_charts``)
both only draw.

Two hand-kept descriptions of one chart drifted (the window's speedup axis labelled one tick
where the export labelled three; solid and dashed meant opposite things); a spec is made once,
by :func:`build`, from the result sets, and holds every decision: which points, which styles
and what they mean, axes with their ranges, ticks and tick labels, marks, legend entries,
caption. ``tests/test_chart_parity.py`` renders each kind both ways and compares what each drew.

No Qt and no matplotlib here: the window imports this at start-up.
"""
from __future__ import annotations

import logging
from typing import Sequence

from workbench.results.files import ResultSet
from workbench.views import provenance
from workbench.views.compare import Baseline, baseline as find_baseline
from workbench.views.spec import kinds
from workbench.views.spec.density import thinned
from workbench.views.spec.kinds import KEY_COLOR, RING_COLOR, RING_SCALE, left_out  # noqa: F401 - the API
from workbench.views.spec.marks import (SIZE_KINDS, WALL_KINDS, label_parts, lesson_caption, lesson_marks,  # noqa: F401
                                        lesson_of, merge_labels)
from workbench.views.spec.model import (DASHDOT, DASHED, DOTTED, INK, SOLID, Axis, Band, Bars, ChartSpec,  # noqa: F401
                                        Label, LegendEntry, Mark, Series, SPAN_HEIGHT, Span)
from workbench.views.spec.ticks import AXIS_HI, AXIS_LO, log_ticks  # noqa: F401 - the API
from workbench.views import chart_kinds

log = logging.getLogger(__name__)


def context(sets: Sequence[ResultSet], *, labels: Sequence[str] | None = None,
            marks: Sequence[tuple[float, str]] | None = None, caption: str | None = None,
            series: Sequence | None = None) -> kinds.Context:
    """What the charts of ``sets`` share, worked out once: a window builds its five specs from one.
    ``series``: the sets' series where the caller has them (``workbench.views.compare.Overlay``)."""
    labels = list(labels) if labels is not None else provenance.labels(sets)
    return kinds.Context.of(sets, labels, marks, caption, series)


def build(kind: str, sets: Sequence[ResultSet] = (), *, labels: Sequence[str] | None = None,
          baseline: Baseline | str | None = None, marks: Sequence[tuple[float, str]] | None = None,
          caption: str | None = None, shared: kinds.Context | None = None,
          point: tuple | None = None) -> ChartSpec:
    """The spec of chart ``kind`` over ``sets`` (several: overlaid, each labelled by what differs).

    ``baseline``: the speedup chart's (a :class:`Baseline`, or its text as
    ``workbench.views.compare.baseline`` reads it; None, the default one). ``marks`` (size, label)
    and ``caption``: a lesson's; left out, those a single set's settings carry. ``shared``: a
    :func:`context` of the sets made once for several charts (the others are then not read).
    ``point``: (backend, size, variant) of a one-point chart (the timeline); None, any.
    """
    declared = chart_kinds.get(kind)
    c = shared if shared is not None else context(sets, labels=labels, marks=marks, caption=caption)
    c.zeros = []
    c.point = point
    if kind == "speedup":
        b = baseline if isinstance(baseline, Baseline) else find_baseline(c.sets, baseline, c.labels)
        return thinned(kinds.shortened(kinds.speedup(c, b)))
    if declared.shipped:
        return thinned(kinds.shortened(declared.build(c)))
    try:                # another package's kind: its failure empties its own chart, never the others
        return thinned(kinds.shortened(declared.build(c)))
    except Exception as exc:  # noqa: BLE001
        log.warning("chart %s (%s) failed: %s: %s", kind, declared.where, type(exc).__name__, exc)
        return ChartSpec(kind, declared.short_title, Axis("", "count"), Axis("", "count"),
                         short_title=declared.short_title,
                         empty=f"This chart could not be drawn: {declared.where} raised {type(exc).__name__}: {exc}")
