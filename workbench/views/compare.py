"""Result sets on the same axes: their series, the speedup baseline, and what it divides by.

The window's live plots (pyqtgraph) and the exported charts (matplotlib) draw the
same series and the same speedups from these functions, so a comparison reads the
same on screen and on a slide. No Qt and no matplotlib: the window imports this
module at start-up, and matplotlib only when something is exported. Each set is
labelled by ``workbench.views.provenance.labels``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from workbench.core.lazy import lazy_module

from workbench.views import palette
from workbench.views import provenance
from workbench.core import stats
from workbench.core import verdicts
from workbench.results.files import ResultSet

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

#: Baselines tried in this order when none is named: the CPU library people start from.
DEFAULT_BASELINES = ("numpy", "pandas", "numba")


@dataclass(frozen=True)
class Series:
    """The ok rows of one backend (and variant) of one result set, sorted by size."""

    backend: str
    variant: str
    set_index: int
    set_label: str        # what tells its set apart from the others ("" for a single set)
    rows: pd.DataFrame

    @property
    def label(self) -> str:
        name = f"{self.backend} ({self.variant})" if self.variant else self.backend
        return f"{name}, {self.set_label}" if self.set_label else name

    @property
    def color(self) -> str:
        return palette.color(self.backend)

    @property
    def moves_data(self) -> bool:
        """A GPU series: its rows name the host memory its transfers used (CPU rows leave it empty)."""
        return bool((self.rows["host_memory"] != "").any())


def series(sets: Sequence[ResultSet], labels: Sequence[str] | None = None) -> list[Series]:
    """Every series of every set, ok points only: any other status is a failed point, never drawn."""
    labels = list(labels) if labels is not None else provenance.labels(sets)
    out = []
    for i, (rs, set_label) in enumerate(zip(sets, labels)):
        ok = rs.frame[rs.frame["status"] == "ok"]
        for (backend, variant), rows in ok.groupby(["backend", "variant"], sort=False):
            out.append(Series(backend, variant, i, set_label, rows.sort_values("size")))
    return out


@dataclass(frozen=True)
class Overlay:
    """Result sets drawn on the same axes, as the window's charts take them: labelled, in series."""

    sets: tuple[ResultSet, ...]
    labels: tuple[str, ...]
    series: tuple[Series, ...]

    @classmethod
    def of(cls, sets: Sequence[ResultSet]) -> "Overlay":
        labels = provenance.labels(sets)
        return cls(tuple(sets), tuple(labels), tuple(series(sets, labels)))

    @property
    def compare(self) -> bool:
        """Several sets: each series is told apart by its set's marker and label."""
        return len(self.sets) > 1


# The speedup baseline --------------------------------------------------------------------------

@dataclass(frozen=True)
class Baseline:
    """The speedup chart's baseline: a backend, of one set (``set_index``) or of each set itself."""

    backend: str
    set_index: int | None = None

    def describe(self, labels: Sequence[str]) -> str:
        if self.set_index is None:
            return f"{self.backend} (each set's own)" if len(labels) > 1 else self.backend
        return f"{self.backend} ({labels[self.set_index]})" if labels[self.set_index] else self.backend

    @property
    def text(self) -> str:
        """What :func:`baseline` reads back: ``numpy``, or ``numpy@2`` for the second set's."""
        return self.backend if self.set_index is None else f"{self.backend}@{self.set_index + 1}"


def _ok_backends(rs: ResultSet) -> list[str]:
    """The backends with an ok point in the set, in their order (``unique``: pandas' loop, not
    Python's over every row, which the window paid as sets were shown)."""
    return list(rs.frame.loc[rs.frame["status"] == "ok", "backend"].unique())


def _present(sets: Sequence[ResultSet]) -> list[str]:
    return list(dict.fromkeys(b for rs in sets for b in _ok_backends(rs)))


def baseline(sets: Sequence[ResultSet], text: str | None = None, labels: Sequence[str] | None = None) -> Baseline:
    """Read ``numpy``, ``numpy@2`` (the second set) or ``numpy@float64`` (the set so labelled).

    Without a name: the first of numpy, pandas, numba in the results, else the first backend.
    ValueError names what is there when the baseline is not.
    """
    labels = list(labels) if labels is not None else provenance.labels(sets)
    present = _present(sets)
    if not text:
        for name in DEFAULT_BASELINES:
            if name in present:
                return Baseline(name)
        return Baseline(present[0] if present else "")
    # ``numpy@2`` names a set; ``cupy @ node2:GPU1`` is a series of its own (a device, workbench.cluster).
    backend, _, which = (text, "", "") if text in present else text.partition("@")
    index = None
    if which:
        stems = [Path(rs.source).stem if rs.source else "" for rs in sets]
        if which.isdigit() and 1 <= int(which) <= len(sets):
            index = int(which) - 1
        elif which in labels:
            index = labels.index(which)
        elif which in stems:
            index = stems.index(which)
        else:
            raise ValueError(f"baseline {text}: no result set {which!r}; give its number 1 to {len(sets)}"
                             + (f" or its label ({', '.join(labels)})" if any(labels) else ""))
    where = [rs for rs in sets] if index is None else [sets[index]]
    if not any(((rs.frame["backend"] == backend) & (rs.frame["status"] == "ok")).any() for rs in where):
        raise ValueError(f"baseline {text}: no ok point of {backend!r} there; the backends are: "
                         f"{', '.join(present) or 'none'}")
    return Baseline(backend, index)


def baseline_choices(sets: Sequence[ResultSet], labels: Sequence[str] | None = None) -> list[Baseline]:
    """Every baseline a chooser offers: each backend (of each set's own), and, when sets are
    compared, each backend of each set, so that one set's speedups can be over another's."""
    ok = [set(_ok_backends(rs)) for rs in sets]      # once per set, not once per backend and set
    out = []
    for backend in _present(sets):
        out.append(Baseline(backend))
        if len(sets) > 1:
            out += [Baseline(backend, i) for i, backends in enumerate(ok) if backend in backends]
    return out


def baseline_rows(sets: Sequence[ResultSet], b: Baseline, set_index: int) -> pd.DataFrame | None:
    """The baseline's ok rows for the series of ``set_index``: the named set's, else its own
    set's, else the first set's that has the backend. Every column: a verdict needs the
    intervals, the rounds and the machine's state, not only the medians."""
    order = [b.set_index] if b.set_index is not None else [set_index] + list(range(len(sets)))
    for i in order:
        f = sets[i].frame
        rows = f[(f["backend"] == b.backend) & (f["status"] == "ok")]
        if not rows.empty:
            return rows.drop_duplicates(["size", "variant"])
    return None


def is_baseline(s: Series, b: Baseline) -> bool:
    """``s`` is the baseline itself: its speedup is the line at 1."""
    return s.backend == b.backend and (b.set_index is None or b.set_index == s.set_index)


#: What a ring around a speedup point means, in the window's key and the exported chart's alike.
WITHIN_NOISE = "ring: not told from the baseline (noise)"
#: The verdicts a ring marks: the measurement cannot tell the point from its baseline.
RINGED = ("same", "undecided")
NO_INTERVAL = stats.NO_INTERVAL


def speedups(sets: Sequence[ResultSet], b: Baseline, labels: Sequence[str] | None = None,
             of: Sequence[Series] | None = None) -> Iterator[tuple[Series, pd.DataFrame]]:
    """Each series joined with its baseline on (size, variant): its columns, the baseline's figures
    that a verdict reads (``workbench.core.verdicts.READS``) as ``<column>_base``
    (``total_median_s_base``, ``compute_median_s_base``, ...), and the verdict of each figure against
    the baseline's, decided with both intervals (``workbench.core.verdicts``): ``verdict_total`` and
    ``verdict_compute``. A ratio of 1.04 says nothing by itself; the verdict says whether the noise
    allows it to be told from 1. The baseline itself is included (its ratios are 1, its verdicts
    ``same``): a chart may draw it or leave it out. ``of``: the sets' series where the caller has them
    already (an Overlay's), rather than grouped again."""
    refs: dict[int, pd.DataFrame | None] = {}      # each set's baseline rows, found once per call
    for s in (of if of is not None else series(sets, labels)):
        if s.set_index not in refs:
            ref = baseline_rows(sets, b, s.set_index)
            # Only what is read of the baseline: a join of every column (the samples' text among
            # them) for every series cost more than the rest of a live chart's update.
            refs[s.set_index] = None if ref is None else \
                ref[["size", "variant", *(c for c in verdicts.READS if c in ref.columns)]]
        ref = refs[s.set_index]
        if ref is None:
            continue
        joined = _joined(s.rows, ref)
        if joined.empty:
            continue
        found = _verdicts(joined, is_baseline(s, b))
        for figure, column in (("total", "total_median_s"), ("compute", "compute_median_s")):
            joined[f"verdict_{figure}"] = found[column]
        yield s, joined


def _joined(rows: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (sorted by size) with the baseline's row of the same size and variant beside each,
    its columns named ``<column>_base``; rows the baseline did not measure are left out. By position,
    not a pandas merge: this runs for every series at every update of a live chart."""
    where = {(v, sz): i for i, (sz, v) in enumerate(zip(ref["size"].tolist(), ref["variant"].tolist()))}
    pos = [where.get((v, sz), -1) for sz, v in zip(rows["size"].tolist(), rows["variant"].tolist())]
    keep = [i for i, j in enumerate(pos) if j >= 0]
    mine = rows.iloc[keep].reset_index(drop=True)
    theirs = ref.iloc[[pos[i] for i in keep]].drop(columns=["size", "variant"]).add_suffix("_base")
    return pd.concat([mine, theirs.reset_index(drop=True)], axis=1)


def _verdicts(joined: pd.DataFrame, itself: bool) -> dict[str, list[str]]:
    """Each point's verdict against its baseline, end-to-end and compute, by median column."""
    columns = ("total_median_s", "compute_median_s")
    if itself:
        return {c: ["same"] * len(joined) for c in columns}
    # Each point's verdict is kept from one update to the next (verdicts.compare_frames_by).
    found = verdicts.compare_frames_by(joined, joined, columns, base_suffix="_base")
    # A file from before intervals were kept: nothing is known of its noise, so nothing is ringed.
    return {c: ["no interval" if v.why == NO_INTERVAL else v.verdict for v in vs] for c, vs in found.items()}


def within_noise(joined: pd.DataFrame, figure: str):
    """Where the ``figure`` ("total" or "compute") of a speedup series cannot be told from its
    baseline's: a boolean array, in the rows' order."""
    return joined[f"verdict_{figure}"].isin(RINGED).to_numpy()
