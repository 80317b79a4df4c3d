"""What the window's plots panel shows of one update, made away from its GUI thread: the result
sets' series, verdicts, baseline, the five charts' specs and the summary, as plain data.

``prepare`` runs in the spec process (``workbench.views.spec_process``), or in the panel's
spec thread where that process cannot run; ``panels.plots`` then only draws what it made.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from html import escape
from typing import Any, Sequence

from workbench.core.lazy import lazy_module

from workbench.results.files import ResultSet
from workbench.views import compare, overlay_verdicts, spec
from workbench.views.compare import Baseline, Overlay
from workbench.views.presets import KINDS
from workbench.views.summary import sentences

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

#: What the summary says before anything was measured or opened.
EMPTY_MESSAGE = "Pick a workload and press Run (Ctrl+R)"
#: The charts in the order a live update draws them: every kind, as the presets declare them.
KIND_ORDER = KINDS


@dataclass
class Prepared:
    """Everything the panel shows of one update: plain data only."""

    generation: int
    overlay: Overlay | None               # None where made in the spec process: the panel makes its own if asked
    verdicts: list
    choices: list[tuple[str, str]]        # the baseline chooser's (shown, text) items
    baseline_text: str                    # the one chosen, as the chooser will hold it
    baseline: Baseline
    context: Any                          # workbench.views.spec.context of the sets (None, as overlay)
    specs: dict = field(default_factory=dict)     # chart kind -> its spec
    summary: str | None = ""
    transfers: bool = False
    labels: tuple[str, ...] = ()          # each set's label
    made_of: tuple | None = None          # what the window's pipeline knows its data by (``panels.spec_pipeline``)

    def sent(self) -> "Prepared":
        """This, without the sets themselves (their tables: 1.2 MB of pickle at 500 points, against
        96 kB for the rest): what the spec process sends back."""
        return dataclasses.replace(self, overlay=None, context=None)


def prepare(generation: int, data, baseline_text: str | None,
            marks: Sequence[tuple[float, str]] | None) -> Prepared:
    """The result sets of ``data`` (a table or sets), their series, verdicts, baseline, the five
    charts' specs and the summary."""
    sets = [ResultSet(data)] if isinstance(data, pd.DataFrame) else list(data)
    o = Overlay.of(sets)
    found = overlay_verdicts.of_sets(o.sets, o.labels) if o.compare else []
    choices = [(b.describe(o.labels), b.text) for b in compare.baseline_choices(o.sets, o.labels)]
    texts = [text for _, text in choices]
    if texts and baseline_text not in texts:
        baseline_text = compare.baseline(o.sets, labels=o.labels).text
    if not baseline_text:
        b = Baseline("")
    else:
        try:
            b = compare.baseline(o.sets, baseline_text, o.labels)
        except ValueError:
            b = compare.baseline(o.sets, labels=o.labels)
    c = spec.context(o.sets, labels=o.labels, marks=marks, series=o.series)
    specs = {kind: spec.build(kind, baseline=b if kind == "speedup" else None, shared=c) for kind in KIND_ORDER}
    frames = [rs.frame for rs in sets if not rs.frame.empty]
    return Prepared(generation, o, found, choices, baseline_text or "", b, c, specs,
                    summary_text(o, b.backend, found) if o.sets else "",
                    any((f["host_memory"] != "").any() for f in frames), tuple(o.labels))


def summary_text(o: Overlay, base: str, found: Sequence[overlay_verdicts.SetVerdicts]) -> str:
    """The summary of each set against the baseline ``base`` (its own, where a set lacks that
    backend); when sets are compared, each later set's verdicts against the first after them.
    No Qt: the spec thread makes it too."""
    if not o.sets:
        return EMPTY_MESSAGE
    if not o.compare:
        return summary_html(o.sets[0].frame, base)
    parts = []
    for rs, label in zip(o.sets, o.labels):
        here = base if (rs.frame["backend"] == base).any() else \
            (str(rs.frame["backend"].iloc[0]) if len(rs.frame) else "")
        parts.append(f"<b>{escape(label)}</b>: " + summary_html(rs.frame, here))
    parts += [verdicts_html(sv) for sv in found]
    return "<br><br>".join(parts)


# Where workbench.views.summary stresses a figure; private-use characters, so that no name can hold them.
_STRONG, _PLAIN = "\ue000", "\ue001"


def summary_html(frame: pd.DataFrame, baseline: str) -> str:
    """``workbench.views.summary``'s sentences as rich text, every name in them escaped (a backend named
    ``numba<!--`` opened a comment that hid the rest of the summary) and their emphasis kept."""
    said = sentences(frame, baseline, strong=lambda text: f"{_STRONG}{text}{_PLAIN}")
    return "<br>".join(escape(line).replace(_STRONG, "<b>").replace(_PLAIN, "</b>") for line in said)


def verdicts_html(sv: overlay_verdicts.SetVerdicts) -> str:
    """One later set's verdicts against the first, as the summary shows them; names escaped."""
    head = (f"<b>{escape(sv.label)}</b> against <b>{escape(sv.base_label)}</b>, "
            f"{overlay_verdicts.FIGURE_NAME[overlay_verdicts.FIGURE]} time"
            + (", matched across dtypes" if sv.across_dtypes else ""))
    if not sv.points:
        return head + ": no point measured ok in both"
    return head + f" ({escape(sv.counts())}):<br>" + "<br>".join(escape(line) for line in sv.lines())
