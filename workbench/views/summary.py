"""What a sweep shows, in a few sentences that are true for every size they name.

A statement such as "numba beats numpy" holds over ranges of sizes, not "from" one size
on: a backend can win in the middle and lose at the largest size (caches, threads,
transfers). So every comparison is made size by size and reported as the runs of
consecutive sizes where it holds. Qt-free: the window, the report and the command line
use the same sentences (the window's with a little emphasis).
"""
from __future__ import annotations

import html
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from workbench.core import bounds, stats
from workbench.core import verdicts
from workbench.catalog.dropin import NAMES
from workbench.core.sizes import fmt_size
from workbench.views.table_text import human_seconds

if TYPE_CHECKING:        # annotations only: importing this module needs no pandas
    import pandas as pd

log = logging.getLogger(__name__)


def ranges(sizes: list[int], wins: list[bool]) -> list[tuple[int, int]]:
    """Runs of consecutive measured sizes where ``wins`` holds, as (first, last) pairs."""
    out: list[tuple[int, int]] = []
    start = None
    for i, (size, win) in enumerate(zip(sizes, wins)):
        if win and start is None:
            start = size
        if start is not None and (not win or i == len(sizes) - 1):
            out.append((start, size if win else sizes[i - 1]))
            start = None
    return out


@dataclass(frozen=True)
class Comparison:
    """``backend`` against ``baseline`` (same variant), size by size, each size decided with its noise
    (``workbench.core.stats``): ``faster``, ``slower``, ``same`` (within the minimum effect) or
    ``undecided`` (the noise, or a busy machine, leaves it open)."""

    backend: str
    variant: str
    baseline: str
    sizes: tuple[int, ...]               # the sizes both measured, ascending
    verdicts: tuple[str, ...] = ()       # one per size
    ratios: tuple[float, ...] = ()       # backend's time over the baseline's, one per size
    intervals: tuple[tuple[float, float], ...] = ()   # each ratio's 95 % interval
    last: tuple[dict, dict] = ({}, {})   # the backend's and the baseline's rows at the largest size
    whys: tuple[str, ...] = ()           # why each verdict is as it is ("" or stats.NO_INTERVAL, ...)

    def runs(self, verdict: str) -> tuple[tuple[int, int], ...]:
        return tuple(ranges(list(self.sizes), [v == verdict for v in self.verdicts]))

    @property
    def wins(self) -> tuple[tuple[int, int], ...]:
        """Runs (first, last) of consecutive sizes where it is faster, beyond the noise."""
        return self.runs("faster")

    @property
    def label(self) -> str:
        return f"{self.backend} ({self.variant})" if self.variant else self.backend

    def sentence(self, what: str = "end-to-end") -> str:
        span = f"{fmt_size(self.sizes[0])} to {fmt_size(self.sizes[-1])}"
        every = set(self.verdicts)
        if every == {"faster"}:
            return f"{self.label} beats {self.baseline} {what} at every size ({span})."
        if every == {"slower"}:
            return f"{self.baseline} stays faster than {self.label} {what} at every size ({span})."
        if every == {"same"}:
            return f"{self.label} and {self.baseline} take the same time {what} at every size ({span}), within the noise."
        if every == {"undecided"}:
            return f"{self.label} against {self.baseline} {what}: undecided at every size ({span}): the noise is larger than the difference."
        if every == {"faster", "slower"}:
            return (f"{self.label} beats {self.baseline} {what} only at {_where(self.wins)}; "
                    f"{self.baseline} is faster elsewhere.")
        parts = []
        if self.wins:
            parts.append(f"{self.label} beats {self.baseline} {what} at {_where(self.wins)}")
        if self.runs("slower"):
            parts.append(f"{self.baseline} is faster at {_where(self.runs('slower'))}")
        if self.runs("same"):
            parts.append(f"the same within the noise at {_where(self.runs('same'))}")
        if self.runs("undecided"):
            parts.append(f"undecided at {_where(self.runs('undecided'))}")
        if not self.wins:
            parts.insert(0, f"{self.label} never beats {self.baseline} {what}")
        return "; ".join(parts) + "."


    def headline(self, what: str = "end to end") -> str:
        """One sentence: where it wins (or not) against the baseline, by how much with its interval,
        each CPU side with its threads, and why, from the bound of its largest point.
        Ranges of undecided sizes are left to the hover and the report."""
        me, base = named(self.label, self.last[0]), named(self.baseline, self.last[1])
        largest = fmt_size(self.sizes[-1])
        ratio, (lo, hi) = self.ratios[-1], self.intervals[-1]
        tail = 0                                     # the sizes it wins at, counted back from the largest
        while tail < len(self.verdicts) and self.verdicts[-1 - tail] == "faster":
            tail += 1
        if tail:
            by = f"{_x(1 / ratio)} ({_n(1 / hi)}-{_x(1 / lo)})"
            where = (f"at every size ({fmt_size(self.sizes[0])} to {largest})" if tail == len(self.sizes)
                     else f"from {fmt_size(self.sizes[-tail])}")
            said = f"{me} is faster than {base} {what} {where}: {by} at {largest}"
        elif self.verdicts[-1] == "slower":
            wins = f"; it wins only at {_where(self.wins)}" if self.wins else ""
            said = f"{base} is faster than {me} {what} at {largest}: {_x(ratio)} ({_n(lo)}-{_x(hi)}){wins}"
        elif self.whys and self.whys[-1] == stats.NO_INTERVAL:
            # Not "not told apart": nothing was measured that could tell them apart or not.
            wins = f"; it wins at {_where(self.wins)}" if self.wins else ""
            said = f"{me} against {base} {what} at {largest}: {stats.NO_INTERVAL}{wins}"
        else:
            wins = f"; it wins at {_where(self.wins)}" if self.wins else ""
            said = (f"{me} and {base} take the same time {what} at {largest}{wins}" if self.verdicts[-1] == "same"
                    else f"{me} and {base} are not told apart {what} at {largest}{wins}")
        why = _why(self.last[0])
        return said + (f"; {why}" if why else "") + "."


def _x(value: float) -> str:
    return f"{_n(value)}x"


def _n(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"


def named(label: str, row: dict) -> str:
    """A CPU side with its threads ('numpy x1', 'numba x16'): a speedup over a CPU means nothing without them."""
    try:
        n = int(row.get("threads") or 0)
    except (TypeError, ValueError):
        n = 0
    if n <= 0 or label.endswith(f" x{n}"):       # a series at set threads is named so already
        return label
    return f"{label} x{n}"


def _why(row: dict) -> str:
    """The reason its largest point gives (``workbench.core.bounds``); '' where it has none."""
    bound, share = row.get("bound"), row.get("of_bound")
    if not isinstance(bound, str) or not bound or not _is_finite(share):
        return ""
    pct = f"{100 * float(share):.0f} %"
    kernel = "its kernel" if row.get("host_memory") else "it"
    moved = bounds.transfer_share(row)
    copies = (f"; transfers take {100 * moved:.0f} % of its end-to-end time"
              if _is_finite(moved) and moved >= bounds.TRANSFER_SHARE else "")
    if bound == "launch":
        return f"bound by its launch: device work is {pct} of a call" + copies
    if bound == "transfer":
        return f"bound by transfers: {pct} of end to end"
    if bound.startswith("memory"):
        level = bound[len("memory"):].strip(" ()") or "memory"
        return f"{kernel} runs at {pct} of the {level} bandwidth" + copies
    if bound == "compute":
        return f"{kernel} runs at {pct} of the arithmetic peak" + copies
    return copies.lstrip("; ")


def _where(runs: tuple[tuple[int, int], ...]) -> str:
    named = [fmt_size(a) if a == b else f"{fmt_size(a)} to {fmt_size(b)}" for a, b in runs]
    return ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]


def comparisons(frame: pd.DataFrame, baseline: str, column: str = "total_median_s",
                min_effect: float = stats.DEFAULT_MIN_EFFECT) -> list[Comparison]:
    """Each backend against ``baseline`` on the sizes both measured (ok points only), decided with
    the intervals (``workbench.core.verdicts``), never by comparing two medians."""
    ok = frame[frame["status"] == "ok"]
    reads = [c for c in verdicts.READS if c in ok.columns]
    # Plain lists, not a join per backend: a live window asks this after every few points, and a
    # pandas merge of a few columns cost more than deciding every point anew once verdicts are kept.
    said = [c for c in _SAID if c in ok.columns and c not in reads]      # what a headline says beside
    cols = {c: ok[c].tolist() for c in ("backend", "variant", "size", *reads, *said)}
    records = [dict(zip(cols, values)) for values in zip(*cols.values())]
    base = {(r["variant"], int(r["size"])): r for r in records if r["backend"] == baseline}
    groups: dict[tuple[str, str], dict[int, dict]] = {}
    for r in records:
        if r["backend"] != baseline:
            groups.setdefault((r["backend"], r["variant"]), {})[int(r["size"])] = r
    out = []
    for (backend, variant), rows in groups.items():
        pairs = [(size, rows[size], base[(variant, size)]) for size in sorted(rows) if (variant, size) in base]
        pairs = [(size, r, b) for size, r, b in pairs if _is_finite(r[column]) and _is_finite(b[column])]
        if not pairs:
            continue
        found = verdicts.compare_records([r for _, r, _ in pairs], [b for _, _, b in pairs], column, min_effect)
        out.append(Comparison(backend, variant, baseline, tuple(size for size, _, _ in pairs),
                              tuple(v.verdict for v in found), tuple(v.ratio for v in found),
                              tuple((v.lo, v.hi) for v in found), (pairs[-1][1], pairs[-1][2]),
                              tuple(v.why for v in found)))
    return out


#: What a headline reads beside the verdict: the threads of a CPU side, the bound of a point, its copies.
_SAID = ("threads", "bound", "of_bound", "host_memory", "h2d_s", "d2h_s")


def _is_finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _plain(text: str) -> str:
    return text


#: The columns the sentences read (``verdicts.READS``: what a verdict between two rows reads).
_READ = ("workload", "backend", "variant", "size", "dtype", "status", "message", "host_memory", "h2d_s", "d2h_s",
         "first_call_s", "threads", "bound", "of_bound", *verdicts.READS)


def sentences(frame: pd.DataFrame, baseline: str, strong: Callable[[str], str] = _plain,
              ranges: bool = False) -> list[str]:
    """The summary of one result set against ``baseline``: one sentence per backend (its
    ``headline``), and with ``ranges`` (the report) each backend's verdicts size by size after it;
    ``strong`` marks the figures to stress."""
    if frame.empty:
        return []
    status = frame["status"]
    bad = status[status != "ok"]
    lines = [f"{strong(str(len(frame)))} points, {strong(str(len(bad)))} not ok"
             + (" (" + ", ".join(f"{n} {s}" for s, n in bad.value_counts().items()) + ")."
                if len(bad) else ".")]
    # Only the columns read below: a live window asks for these sentences after every few points,
    # and each filter of the whole table copies its fifty columns (the samples' text among them).
    ok = frame.loc[status == "ok", [c for c in _READ if c in frame.columns]]
    if ok.empty:
        return lines
    largest = ok["size"].max()
    at = ok[ok["size"] == largest].sort_values("total_median_s")
    best = at.iloc[0]
    fastest = f"Fastest end-to-end at {fmt_size(largest)}: {strong(best['backend'])} ({human_seconds(best['total_median_s'])})"
    blind = _without_intervals(at, largest)
    if len(at) > 1:
        # The runner-up is named where the noise cannot tell the two apart: a fastest by a hair is no verdict.
        second = at.iloc[1]
        v = verdicts.compare_rows(best, second)
        if v.why == stats.NO_INTERVAL:
            fastest = ""                             # no verdict at all: the medians alone, below
        elif v.verdict != "faster":
            fastest += (f", {'the same as' if v.verdict == 'same' else 'not told apart from'} "
                        f"{second['backend']} ({human_seconds(second['total_median_s'])}"
                        + (f"; {v.why}" if v.why else "") + ")")
    lines += [fastest + "."] if fastest else []
    lines += [blind] if blind else []
    answered = answers(frame, baseline)
    for c in comparisons(ok, baseline):
        if set(c.whys) == {stats.NO_INTERVAL}:
            continue                                 # said once, in the sentence of the medians
        if c.backend not in answered:                # a drop-in's headline is in its answer, below
            lines.append(c.headline())
        if ranges:
            lines.append("Size by size: " + c.sentence())
    lines += accelerator_sentences(ok)
    lines += overlap_sentences(frame)
    lines += answered.values()
    dev = ok[ok["host_memory"] != ""]
    if not dev.empty:
        share = _finite((dev["h2d_s"] + dev["d2h_s"]) / dev["total_median_s"])
        if not share.empty:
            worst = dev.loc[share.idxmax()]
            lines.append(f"Transfers take up to {strong(f'{share.max() * 100:.0f} %')} of end-to-end time "
                         f"({worst['backend']}, {fmt_size(worst['size'])}).")
    fc = _finite(ok["first_call_s"] / ok["total_median_s"])
    if not fc.empty:
        w = ok.loc[fc.idxmax()]
        lines.append(f"Worst first call (compilation, setup): {w['backend']} at {fmt_size(w['size'])}, "
                     f"{human_seconds(w['first_call_s'])}, {fc.max():,.0f}x a steady call.")
    return lines


def _without_intervals(at: pd.DataFrame, largest: int) -> str:
    """Where points at the largest size have no interval of their median (a file written before
    intervals were kept), one sentence that says so and gives the medians alone, fastest first: two
    medians decide nothing, and "not told apart" would claim a measurement that could not separate
    them (numpy's 100 ms against numba's 6 ms, issue 38). '' where every point has its interval."""
    if len(at) < 2:
        return ""
    blind = [str(r["backend"]) for r in at.to_dict("records") if not verdicts.estimate_of(r).usable]
    if not blind:
        return ""
    medians = ", ".join(f"{b} {human_seconds(t)}" for b, t in zip(at["backend"], at["total_median_s"]))
    size = fmt_size(largest)
    if len(blind) == len(at):
        return (f"These results have no intervals of their medians: no backend is called faster than another; "
                f"the medians alone, end to end at {size}: {medians}.")
    return (f"{', '.join(blind)} {'has' if len(blind) == 1 else 'have'} no interval of {'its' if len(blind) == 1 else 'their'} "
            f"median at {size}: {'it is' if len(blind) == 1 else 'they are'} called neither faster nor slower than another there; "
            f"the medians alone, end to end: {medians}.")


def overlap_sentences(frame: pd.DataFrame) -> list[str]:
    """Each overlapped variant against the sequential one of its host memory (``workbench.views.overlap``);
    nothing for a set without a sequential variant (only the ``overlap`` workload has one)."""
    variants = frame["variant"].astype(str)
    if not variants.str.endswith("sequential").any():
        return []
    from workbench.views import overlap
    said = overlap.comparisons(frame[frame["status"] == "ok"].to_dict("records"))
    return [line + "." for line in said]      # a backend name keeps its case: "cupy", never "Cupy"


def fell_back(rows: pd.DataFrame) -> pd.DataFrame:
    """The cudf-pandas rows whose message counts pandas calls that fell back to the CPU
    (``gpu.cudf_pandas.fallback_note``: "N fell back to the CPU"; "none fell back" is not one)."""
    return rows[(rows["backend"] == "cudf-pandas")
                & rows["message"].astype(str).str.contains(r"\b[1-9][0-9]* fell back to the CPU")]


def accelerator_sentences(ok: pd.DataFrame) -> list[str]:
    """cudf.pandas against plain pandas and plain cuDF, at the largest size all three measured: its
    speed over pandas end to end, and its proxies' cost over cuDF's own compute (both on frames
    already on the device), and whether any call fell back to the CPU. Nothing where one is missing."""
    if not {"cudf-pandas", "pandas", "cudf"} <= set(ok["backend"]):
        return []

    def at(backend: str) -> pd.DataFrame:
        return ok[ok["backend"] == backend].groupby("size").first()
    accel, pandas_, cudf_ = at("cudf-pandas"), at("pandas"), at("cudf")
    common = sorted(set(accel.index) & set(pandas_.index) & set(cudf_.index))
    if not common:
        return []
    size = common[-1]
    a, p, c = accel.loc[size], pandas_.loc[size], cudf_.loc[size]
    speed = p["total_median_s"] / a["total_median_s"]
    if not (math.isfinite(speed) and speed > 0 and c["compute_median_s"] > 0):
        return []
    v = verdicts.compare_rows(a, p)
    faster = (f"{speed:.3g}x faster than pandas (95 % interval {1 / v.hi:.3g}-{1 / v.lo:.3g}x)" if v.verdict == "faster" else
              f"{1 / speed:.3g}x slower than pandas (95 % interval {v.lo:.3g}-{v.hi:.3g}x)" if v.verdict == "slower" else
              f"as fast as pandas ({stats.describe(v)})" if v.verdict == "same" else
              f"{speed:.3g}x pandas' speed, undecided ({v.why})")
    over = a["compute_median_s"] / c["compute_median_s"]
    lines = [f"cudf.pandas at {fmt_size(size)}: the same pandas code runs {faster} end to end; it takes "
             f"{over:.3g}x cuDF's own compute time ({human_seconds(a['compute_median_s'])} against "
             f"{human_seconds(c['compute_median_s'])}, both on frames already on the GPU)."]
    fell = fell_back(ok)
    if not fell.empty:
        where = ", ".join(fmt_size(s) for s in fell["size"])
        lines.append(f"cudf.pandas fell back to the CPU for some calls at {where} (the points' messages say which).")
    return lines


_OPEN, _CLOSE = "\x00", "\x01"      # stand-ins for <b> and </b> while the text is escaped


def summarize(frame: pd.DataFrame, baseline: str) -> str:
    """The sentences as rich text for a projector; names are escaped (a backend called ``numba<!--``
    must not hide the rest), only the stressed figures are markup."""
    lines = sentences(frame, baseline, strong=lambda s: f"{_OPEN}{s}{_CLOSE}")
    return "<br>".join(html.escape(line).replace(_OPEN, "<b>").replace(_CLOSE, "</b>") for line in lines)


def _finite(values: pd.Series) -> pd.Series:
    """A ratio over a zero time is no statement: drop it with the NaNs."""
    return values[np.isfinite(values.to_numpy(float))]


# The drop-ins' answers (issue 36): whether the user's function ran unchanged on each, from which
# size it wins end to end and by how much, and why; or why it did not run.

#: What an error row's message starts with before the drop-in's own words.
_RAISED = "DropInError: "


def answers(frame: "pd.DataFrame", baseline: str | None = None) -> dict[str, str]:
    """{drop-in series: its sentence} for each drop-in in ``frame`` (a ``numba.njit parallel
    (drop-in) x4`` series too), set against ``baseline``: by default the function as written, its
    NumPy (or pandas, or only other) series."""
    if frame.empty:
        return {}
    from workbench.catalog.backends import base_name
    series = [b for b in dict.fromkeys(frame["backend"]) if base_name(str(b)) in NAMES]
    written = [b for b in dict.fromkeys(frame["backend"]) if b not in series]
    if baseline is None:
        baseline = next((b for b in ("numpy", "pandas") if b in written), written[0] if written else "")
    if baseline not in written:
        return {}
    said: dict[str, str] = {}
    against = {c.backend: c for c in comparisons(frame[frame["backend"].isin([baseline, *series])], baseline)}
    for name in series:
        rows = frame[frame["backend"] == name]
        f = str(rows["workload"].iloc[0])
        status = rows["status"]
        ok, wrong, failed = rows[status == "ok"], rows[status == "wrong"], rows[status == "error"]
        if not wrong.empty:
            said[name] = (f"{f} runs as {name} but gives wrong results: {_reason(wrong)}; "
                          "no figure of it counts.")
        elif not failed.empty and ok.empty:
            said[name] = f"{f} does not run unchanged as {name}: {_reason(failed)}."
        elif name in against:
            said[name] = f"{f} runs unchanged as {name}: {_unnamed(against[name])}"
        elif ok.empty and (status == "implausible").any():
            # It ran, and its timings cannot be true: no answer rests on them.
            said[name] = (f"{f} runs as {name}, but its timings are not believed: "
                          f"{_reason(rows[status == 'implausible'])}.")
        elif ok.empty:
            said[name] = f"{f} as {name}: not answered, no point of it was measured ({_reason(rows)})."
        else:
            said[name] = f"{f} runs unchanged as {name}, at no size {baseline} also measured."
    return said


def _unnamed(c: Comparison) -> str:
    """The headline without the drop-in's name in front, which the sentence has said already."""
    headline, me = c.headline(), named(c.label, c.last[0])
    if headline.startswith(me + " is "):
        return headline[len(me) + 4:]
    return "it" + headline[len(me):] if headline.startswith(me + " and ") else headline


def _reason(rows: "pd.DataFrame") -> str:
    message = next((str(m) for m in rows["message"] if str(m)), "no message")
    return message.split(_RAISED, 1)[-1].split("; ")[0].rstrip(".")
