"""What a point says when the pointer is on it: the rich text of a chart's hover."""
from __future__ import annotations

from html import escape
from typing import Any, Callable, Mapping, Sequence

from workbench.core import stats, verdicts
from workbench.core.sizes import fmt_size
from workbench.results.rows import human_seconds
from workbench.results.sets import SetParts
from workbench.views.table_text import caution, interval_text
from workbench.views import overlap, overlay_verdicts, point_text
from workbench.views.compare import Baseline
from workbench.views.point_rows import PointRows

CAUTION_COLOR = "#8a5a00"      # amber, as the experiment panel's notes: read with care, not an error


class HoverRows:
    """The rows behind a plots panel's hover: where a point's row and its baseline's are found, by
    key, in the live rows when the sets are not made in this process (made for a hover, 0.2-1 s at
    5,000 points, issue 38); the panel owns one and says when the points shown change (``forget``).
    ``parts``: the live parts shown, or None where the panel's sets are made here (``sets``).

    A live sweep's index outlives its updates: where the points shown are the same rows, appended
    to, and the same sets compared, only the rows new since are indexed (``catch_up``, which the
    panel calls as each update is drawn), not every row at the first hover after the sweep."""

    def __init__(self, parts: Callable[[], Any], sets: Callable[[], Sequence]) -> None:
        self.parts, self.sets = parts, sets
        self._rows: PointRows | None = None     # made at the first hover after new points are shown
        self._of: tuple = ()                    # the parts' rows, epoch and compared sets it indexes
        self._stale = False

    def forget(self) -> None:
        """The points shown changed: the index is checked against them at the next look-up."""
        self._stale = True

    def rows(self) -> PointRows:
        if self._rows is None or self._stale:
            parts = self.parts()
            live = isinstance(parts, SetParts)
            of = (parts.rows, parts.epoch, parts.compared) if live else ()
            if not (live and self._rows is not None and self._same(of)):
                self._rows = PointRows.of_parts(parts) if live else PointRows.of_sets(self.sets())
            self._of, self._stale = of, False
        return self._rows

    def _same(self, of: tuple) -> bool:
        """Whether ``of`` names the very rows and sets indexed (by identity: a list appended to is
        the same list, and its index catches up)."""
        if not self._of:
            return False
        (rows, epoch, compared), (was_rows, was_epoch, was_compared) = of, self._of
        return (rows is was_rows and epoch == was_epoch and len(compared) == len(was_compared)
                and all(a is b for a, b in zip(compared, was_compared)))

    def catch_up(self) -> None:
        """Index the live rows that came since the last look-up (a few a drawn update), so that
        the first hover after the sweep finds them indexed; a compared set's table is indexed at
        the first hover. Where the sets are made in this process, an index of sets no longer
        shown is let go (it held a closed set's table), and made at the next hover."""
        if isinstance(self.parts(), SetParts):
            self.rows().catch_up_live()
        elif self._stale:
            self._rows, self._of = None, ()


def describe(row: dict, set_index: int, labels: Sequence[str], baseline: Baseline,
             set_verdicts: Sequence[overlay_verdicts.SetVerdicts], rows: PointRows) -> str:
    """Backend, size, median with its 95 % interval and sample count, end-to-end, speedup over
    ``baseline``; a caution where the machine or the noise asks for one; when sets are compared,
    the verdict against the first. Rich text: every name in it is escaped (a backend may be ``numba<!--``).
    ``labels``: the sets'; ``rows``: their points' rows, where the baseline's is found."""
    label = row["backend"] + (f" ({row['variant']})" if row["variant"] else "")
    b = baseline
    where = f" ({escape(labels[set_index])})" if len(labels) > 1 and set_index < len(labels) else ""
    gpu = bool(row.get("host_memory"))
    lines = [f"<b>{escape(label)}</b>{where} at {fmt_size(row['size'])}",
             f"compute median {human_seconds(row['compute_median_s'])}, {spread_text(row, 'compute')}",
             f"end-to-end {human_seconds(row['total_median_s'])}"
             + (f", {spread_text(row, 'total')}" if gpu else "")]
    base = rows.baseline_row(b, set_index, row["variant"], row["size"]) if b.backend else None
    if base is not None and not (row["backend"] == b.backend and b.set_index in (None, set_index)):
        if row["total_median_s"] > 0:
            said = stats.describe(verdicts.compare_rows(row, base, "total_median_s"))
            lines.append(f"speedup over {escape(b.describe(labels))}: "
                         f"{base['total_median_s'] / row['total_median_s']:.3g}x "
                         f"end-to-end, {base['compute_median_s'] / row['compute_median_s']:.3g}x compute; "
                         f"end-to-end {escape(said)}")
    said = overlay_verdicts.point(set_verdicts, row, set_index) if set_index else None
    if said is not None:
        lines.append(f"end-to-end against {escape(labels[0])}: <b>{escape(said['described'])}</b>")
    for extra in (point_text.bound_text(row), overlap.limit_text(row) if overlap.is_overlapped(row) else "", point_text.memory_text(row),
                  point_text.kernels_text(row), point_text.energy_text(row)):
        if extra:
            lines.append(escape(extra))
    careful = caution(row)
    if careful:
        lines.append(f"<span style='color: {CAUTION_COLOR}'>{escape(careful)}</span>")
    return "<br>".join(lines)


def spread_text(row: Mapping[str, Any], figure: str) -> str:
    """'95 % interval 1.2 ms-1.3 ms, n = 40' for ``figure`` ("compute" or "total") of a row; a file
    from before the intervals were kept gives its quartiles instead, and says so."""
    interval = interval_text(row.get(f"{figure}_ci_lo_s"), row.get(f"{figure}_ci_hi_s"))
    if interval != "-":
        return f"95 % interval {interval}, n = {int(row.get('repeats') or 0)}"
    return (f"q1 {human_seconds(row.get(f'{figure}_q1_s'))}, q3 {human_seconds(row.get(f'{figure}_q3_s'))} "
            f"(no interval in the file)")
