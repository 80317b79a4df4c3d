"""Lessons, one click each: a preset sweep per claim of LESSONS.md, and what its numbers say.

A lesson is declared as data (:class:`Lesson`: workload, backends, sizes, dtypes or host
memories as runs, variants, repeats) by decorating the function that reads its results, and
registered by name, as workloads are. :func:`plan` turns it into the sweeps this machine can
run (backends it cannot run are skipped, each with its reason); :func:`explain` turns the rows
just measured into a :class:`Statement`: the lesson with the numbers measured, the break-even
size where there is one, and, where the measurement contradicts the lesson on this machine,
that, instead of the lesson. Where no GPU backend could run, it says what the GPU part would
show. Qt-free: the command line (``gpu-workbench lesson``), the window's Lessons menu and the
exports use the same words.

A lesson of several runs (pageable then pinned, float32 then float64) labels each row's
variant with its run (:func:`tag`), so that every view draws the runs as separate series.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from workbench.results.rows import decode_stages, human_bytes, human_seconds
from workbench.core.sizes import fmt_size
import numpy as np

from workbench.core import stats
from workbench.core import verdicts
from workbench.views.summary import Comparison, comparisons, fell_back

log = logging.getLogger(__name__)

#: What a point that ran out of device memory says in its message (CuPy, Numba, RMM, the engine).
OUT_OF_MEMORY = re.compile(r"out of (?:device )?memory|outofmemory|memoryerror|memory limit|cudaErrorMemoryAllocation|"
                           r"CUDA_ERROR_OUT_OF_MEMORY|bad_alloc|exceeds? the (?:device )?memory", re.IGNORECASE)
#: Samples and seconds per point a lesson takes unless it says otherwise: at least 7 samples (fewer
#: give no 95 % interval of the median, and every claim would be undecided), and at most half a
#: second, stopping earlier once the median is known to the noise target.
MIN_REPEATS = 7
BUDGET_S = 0.5


# Declarations ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One sweep of a lesson. A lesson that compares conditions runs one per condition."""

    label: str = ""
    dtype: str = "float32"
    host_memory: str = "pageable"


@dataclass(frozen=True)
class Lesson:
    """A preset sweep and the claim it puts to the test; ``verdict`` reads its results."""

    name: str
    title: str
    claim: str                       # the lesson in a sentence, as LESSONS.md puts it
    workload: str
    backends: tuple[str, ...]
    sizes: tuple[int, ...]
    on_gpu: str                      # what the GPU part shows, said where no GPU backend could run
    runs: tuple[Run, ...] = (Run(),)
    variants: tuple[str, ...] = ()   # empty: every variant of the workload
    min_repeats: int = MIN_REPEATS
    budget_s: float = BUDGET_S
    baseline: str = "numpy"          # what speedups are measured against
    chart: str = "speedup"           # the chart that shows the lesson best
    #: A cap on the device memory the GPU backends may use, in bytes (0: none). Data: it is handed to
    #: the sweep where the workbench has the option (``--device-memory-limit``), and said otherwise.
    device_memory_limit: int = 0
    fresh_engine: bool = False       # nothing compiled yet: the first call pays for it
    needs_gpu: bool = False          # its CPU backends alone show nothing of it: without a GPU, run none
    #: Failed points that are the lesson's subject (the memory wall's out-of-memory rows).
    expected_failures: re.Pattern | None = None
    verdict: Callable[["Measured", "Lesson", "Say"], None] = field(default=lambda m, ls, say: None, repr=False)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.dtype for r in self.runs))


LESSONS: dict[str, Lesson] = {}


def lesson(**fields: Any) -> Callable:
    """Decorator: declare a lesson whose results ``verdict(measured, lesson, say)`` reads."""
    def deco(verdict: Callable) -> Callable:
        declared = Lesson(**fields, verdict=verdict)
        if declared.name in LESSONS:
            raise ValueError(f"a lesson named {declared.name!r} is declared twice")
        LESSONS[declared.name] = declared
        return verdict
    return deco


def get(name: str) -> Lesson:
    try:
        return LESSONS[name]
    except KeyError:
        raise KeyError(f"unknown lesson {name!r}; the lessons are: {', '.join(LESSONS)}") from None


def problems(ls: Lesson) -> list[str]:
    """What is wrong with a declaration, against the workloads and backends registered now.

    A backend the workbench does not have yet, or that the workload does not implement yet, is
    not a problem: :func:`plan` skips it with the reason.
    """
    from workbench.catalog.registry import REGISTRY
    try:
        w = REGISTRY.get(ls.workload)
    except KeyError as exc:
        return [exc.args[0]]
    out = []
    for r in ls.runs:
        if r.dtype not in w.dtypes:
            out.append(f"{ls.name}: {ls.workload} has no dtype {r.dtype}")
        if r.host_memory not in ("pageable", "pinned"):
            out.append(f"{ls.name}: host memory {r.host_memory!r}")
    out += [f"{ls.name}: {ls.workload} has no variant {v!r}" for v in ls.variants if v not in w.variants]
    if len(ls.runs) > 1 and (w.variants != ("",) or len({r.label for r in ls.runs}) < len(ls.runs)):
        out.append(f"{ls.name}: several runs need distinct labels and a workload without variants")
    if not ls.sizes or any(s <= 0 for s in ls.sizes):
        out.append(f"{ls.name}: sizes must be positive")
    return out


# Plans --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """What of a lesson runs here: a sweep per run, and what was left out and why."""

    lesson: Lesson
    specs: tuple[Any, ...]           # engine.SweepSpec, one per run that has a backend to run
    labels: tuple[str, ...]          # the run label of each spec
    skipped: tuple[tuple[str, str], ...] = ()   # (backend, why)
    notes: tuple[str, ...] = ()

    def run_label(self, index: int) -> str:
        return self.labels[index] if len(self.lesson.runs) > 1 else ""


def _reason(ls: Lesson, backend: str, availability: Mapping[str, Any]) -> str:
    """Why ``backend`` cannot run this lesson here; '' when it can."""
    from workbench.catalog.backends import BACKENDS
    from workbench.catalog.registry import REGISTRY
    if backend not in BACKENDS:
        return "not a backend of this workbench yet"
    if backend not in REGISTRY.get(ls.workload).implementations:
        return f"{ls.workload} has no {backend} implementation yet"
    a = availability.get(backend)
    if a is None:
        return "not checked yet"
    return "" if a.usable else a.reason


def plan(ls: Lesson, availability: Mapping[str, Any], *, sizes: Sequence[int] | None = None,
         min_repeats: int | None = None, budget_s: float | None = None, noise: float | None = None,
         min_time_s: float | None = None) -> Plan:
    """The lesson's sweeps for this machine. ``sizes``, ``min_repeats``, ``budget_s``, ``noise`` and
    ``min_time_s`` replace the
    lesson's own (a quick try, a test); sizes whose host footprint would not fit are left out."""
    from workbench.measure import engine
    from workbench.catalog.registry import REGISTRY
    w = REGISTRY.get(ls.workload)
    skipped = [(b, why) for b in ls.backends if (why := _reason(ls, b, availability))]
    backends = tuple(b for b in ls.backends if b not in dict(skipped))
    notes = []
    if ls.needs_gpu and not any(_gpu(b) for b in backends):
        if backends:    # none left at all is said already ("Nothing of this lesson can run here")
            notes.append(f"{', '.join(backends)} alone would show nothing of this lesson: not run.")
        backends = ()
    chosen = tuple(sizes) if sizes else ls.sizes
    fits = []
    for s in chosen:
        try:
            for dtype in ls.dtypes:
                engine.check_memory(w, s, dtype)
            fits.append(s)
        except engine.PlanError as exc:
            notes.append(f"Size {fmt_size(s)} left out: {exc}.")
    if ls.device_memory_limit:
        if "device_memory_limit" in {f.name for f in dataclasses.fields(engine.SweepSpec)}:
            notes.append(f"GPU backends may use {gib(ls.device_memory_limit)} of device memory.")
        else:
            notes.append(f"This workbench cannot cap device memory yet (--device-memory-limit): the lesson's "
                         f"cap of {gib(ls.device_memory_limit)} is not applied, and the GPU's whole "
                         "memory is there to fill.")
    specs, labels = [], []
    runs = ls.runs
    if not any(_gpu(b) for b in backends):
        # Host memory only matters to a GPU's transfers: without one, a pinned run repeats the pageable.
        runs = tuple(r for i, r in enumerate(runs)
                     if not any(q.dtype == r.dtype for q in runs[:i]))
    for r in runs:
        if not backends or not fits:
            break
        spec = engine.SweepSpec(
            workload=ls.workload, backends=backends, sizes=tuple(fits), dtype=r.dtype, variants=ls.variants,
            host_memory=r.host_memory,
            min_repeats=min_repeats if min_repeats is not None else ls.min_repeats,
            budget_s=budget_s if budget_s is not None else ls.budget_s,
            noise=noise if noise is not None else engine.DEFAULT_NOISE,
            min_time_s=min_time_s if min_time_s is not None else engine.DEFAULT_MIN_TIME_S)
        spec = dataclasses.replace(spec, max_repeats=max(spec.max_repeats, spec.min_repeats))
        specs.append(_with_device_limit(spec, ls.device_memory_limit))
        labels.append(r.label)
    if backends and not fits:
        notes.append("No size of this lesson fits in the memory available here.")
    return Plan(ls, tuple(specs), tuple(labels), tuple(skipped), tuple(notes))


def _with_device_limit(spec: Any, limit: int) -> Any:
    """The spec with the lesson's device-memory cap, where the sweep has such a field (given as the
    field's own kind: bytes, or text such as '1.2 GiB')."""
    if not limit:
        return spec
    fields = {f.name: f for f in dataclasses.fields(spec)}
    f = fields.get("device_memory_limit")
    if f is None:
        return spec
    text_field = "str" in str(f.type) and "int" not in str(f.type)
    return dataclasses.replace(spec, device_memory_limit=limit_text(limit) if text_field else int(limit))


def gib(n: float) -> str:
    """A memory cap as people write it: 1.25 GiB, 512 MiB."""
    return f"{n / 2 ** 30:.3g} GiB" if n >= 2 ** 30 else f"{n / 2 ** 20:.3g} MiB"


def limit_text(limit: int) -> str:
    """Bytes as the command line's option reads them: 8GiB, 1280MiB, or plain bytes."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if limit % scale == 0:
            return f"{limit // scale}{unit}"
    return str(int(limit))


def tag(row: Mapping[str, Any], p: Plan, run: int) -> dict:
    """The row with its run's label in its variant, for a lesson of several runs: the runs are
    separate series in every view (and the label says which sweep a row came from)."""
    out = dict(row)
    label = p.run_label(run)
    if label:
        out["variant"] = f"{out['variant']}, {label}" if out.get("variant") else label
    return out


def unexpected_failures(p: Plan, frame: pd.DataFrame) -> pd.DataFrame:
    """Rows that failed for a reason that is not the lesson's subject."""
    bad = frame[frame["status"] != "ok"]
    pattern = p.lesson.expected_failures
    if pattern is None or bad.empty:
        return bad
    return bad[~bad["message"].astype(str).str.contains(pattern)]


# Reading results ---------------------------------------------------------------------------------

class Measured:
    """The ok rows of a lesson's sweeps, looked up by backend, size and variant (run label)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.ok = frame[frame["status"] == "ok"]

    def rows(self, backend: str, variant: str | None = None) -> pd.DataFrame:
        r = self.ok[self.ok["backend"] == backend]
        if variant is not None:
            r = r[r["variant"] == variant]
        return r.drop_duplicates("size").sort_values("size")

    def has(self, backend: str, variant: str | None = None) -> bool:
        return not self.rows(backend, variant).empty

    def value(self, backend: str, size: int, column: str, variant: str | None = None) -> float:
        r = self.rows(backend, variant)
        r = r[r["size"] == size]
        return float(r[column].iloc[0]) if len(r) else float("nan")

    def row(self, backend: str, size: int, variant: str | None = None) -> pd.Series | None:
        r = self.rows(backend, variant)
        r = r[r["size"] == size]
        return r.iloc[0] if len(r) else None

    def common(self, backends: Iterable[str], variant: str | None = None) -> list[int]:
        """Sizes every one of ``backends`` measured (ok), ascending."""
        sets = [set(self.rows(b, variant)["size"]) for b in backends]
        return sorted(set.intersection(*sets)) if sets else []

    def largest(self, backends: Iterable[str], variant: str | None = None) -> int | None:
        common = self.common(list(backends), variant)
        return common[-1] if common else None

    def across(self, backend: str, variants: Iterable[str]) -> int | None:
        """The largest size ``backend`` measured (ok) in every one of ``variants`` (runs)."""
        sets = [set(self.rows(backend, v)["size"]) for v in variants]
        both = set.intersection(*sets) if sets else set()
        return max(both) if both else None

    def backends(self, among: Iterable[str], variant: str | None = None) -> list[str]:
        return [b for b in among if self.has(b, variant)]

    def verdict(self, new: str, base: str, size: int, column: str = "total_median_s",
                new_variant: str | None = None, base_variant: str | None = None) -> stats.Verdict:
        """``new``'s time against ``base``'s at ``size``, decided with both intervals (``workbench.core.stats``)."""
        a, b = self.row(new, size, new_variant), self.row(base, size, base_variant)
        if a is None or b is None:
            return stats.Verdict("undecided", math.nan, math.nan, math.nan, "not measured")
        return verdicts.compare_rows(a, b, column)

    def takes_at_least(self, factor: float, new: str, base: str, size: int, column: str = "compute_median_s",
                       new_variant: str | None = None, base_variant: str | None = None
                       ) -> tuple[bool | None, stats.Verdict]:
        """Does ``new`` take at least ``factor`` times ``base``'s time? True or False where the ratio's
        interval lies on one side of ``factor``, None where it straddles it or a point was measured on
        a busy machine (the load, not the code, may be what the ratio shows)."""
        v = self.verdict(new, base, size, column, new_variant, base_variant)
        if not math.isfinite(v.lo) or not math.isfinite(v.hi):
            return None, v
        if v.lo >= factor:
            busy = [r["noisy"] for r in (self.row(new, size, new_variant), self.row(base, size, base_variant))
                    if r is not None and r["noisy"]]
            return (None if busy else True), v
        if v.hi < factor:
            return False, v
        return None, v


def _gpu(name: str) -> bool:
    from workbench.catalog.backends import BACKENDS, is_gpu
    return name in BACKENDS and is_gpu(name)       # a lesson may name a backend this build lacks


@dataclass(frozen=True)
class Crossing:
    """Where ``challenger`` overtakes ``opponent``, size by size, on one time column, each size
    decided with its noise: a break-even only where it is slower at every size up to one, faster
    at every size from a later one on, and neither (the same, or undecided) in between."""

    comparison: Comparison
    size: float | None           # the break-even, between the last size lost and the first won
    last_loss: int | None
    first_win: int | None

    @property
    def always(self) -> bool:
        return set(self.comparison.verdicts) == {"faster"}

    @property
    def never(self) -> bool:
        return not self.comparison.wins

    @property
    def holds(self) -> bool:
        """Loses up to a size and wins at every size from a later one on, to the largest."""
        return self.size is not None

    @property
    def near(self) -> str:
        """The break-even as text, written as the sweep's sizes are."""
        pow2 = all(s & (s - 1) == 0 for s in self.comparison.sizes)
        return approx_size(self.size, pow2) if self.size is not None else ""


def crossing(m: Measured, challenger: str, opponent: str, column: str = "total_median_s",
             variant: str | None = None) -> Crossing | None:
    """The break-even of ``challenger`` against ``opponent``: from which size on it is faster at
    every larger size measured, beyond the noise (``workbench.views.summary.comparisons``), estimated where
    the ratio of their medians crosses 1 between the last size lost and the first won."""
    rows = m.ok[m.ok["backend"].isin([challenger, opponent])]
    if variant is not None:
        rows = rows[rows["variant"] == variant]
    rows = rows[(rows[column] > 0) & np.isfinite(rows[column].to_numpy(float))]
    found = [c for c in comparisons(rows.assign(variant=""), opponent, column) if c.backend == challenger]
    if not found:
        return None
    c = dataclasses.replace(found[0], variant=variant or "")
    v, sizes = c.verdicts, c.sizes
    wins = c.wins
    last_win_run = wins[-1] if wins and wins[-1][1] == sizes[-1] else None
    first_win = last_win_run[0] if last_win_run else None
    if first_win is None or first_win == sizes[0]:
        return Crossing(c, None, None, first_win)
    k = sizes.index(first_win)
    losses = [i for i in range(k) if v[i] == "slower"]
    # One break-even only where every size below the last winning run is lost or undecided, and it
    # lost at least once: a backend that changes sides more than once has none.
    if not losses or any(v[i] == "faster" for i in range(k)):
        return Crossing(c, None, None, first_win)
    j = losses[-1]
    # Between the last loss and the first win the two may be the same within the noise: the estimate
    # lies where the ratio of the medians crosses 1, between the two sizes around that crossing.
    i = next((i for i in range(k - 1, j - 1, -1) if c.ratios[i] >= 1), j)
    r0, r1 = math.log(c.ratios[i]), math.log(c.ratios[i + 1])      # >= 0 before, < 0 after
    s0, s1 = sizes[i], sizes[i + 1]
    t = r0 / (r0 - r1) if r0 != r1 else 0.5
    t = min(1.0, max(0.0, t))
    size = math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    return Crossing(c, size, sizes[j], sizes[k])


# Saying it ------------------------------------------------------------------------------------------

def times(r: float) -> str:
    """A ratio as people say it: 208x, 17x, 1.7x, 0.42x."""
    if not math.isfinite(r):
        return "-"
    if r >= 99.5:
        return f"{r:,.0f}x"
    if r >= 9.95:
        return f"{r:.0f}x"
    return f"{r:.1f}x" if r >= 0.995 else f"{r:.2f}x"


def faster(t_new: float, t_old: float) -> str:
    """'3.2x faster' or '4.0x slower': the new time against the old."""
    r = t_old / t_new
    return f"{times(r)} faster" if r >= 1 else f"{times(1 / r)} slower"


def percent(share: float) -> str:
    return f"{100 * share:.0f} %"


def approx_size(size: float, pow2: bool = True) -> str:
    """An estimated size, as its sweep's sizes are written: 2^k where they are powers of two (and it is
    near one), else two significant digits (110,000)."""
    k = round(math.log2(size))
    if pow2 and abs(math.log2(size) - k) < 0.25 and k >= 10:
        return f"2^{k}"
    if size >= 100:
        return f"{round(size, 1 - math.floor(math.log10(size))):,.0f}"
    return f"{size:,.0f}"


class Say:
    """What a verdict finds: sentences, each claim checked, and marks for the plot."""

    def __init__(self) -> None:
        self.sentences: list[str] = []
        self.checks: list[bool] = []
        self.marks: list[tuple[float, str]] = []
        self.break_even: float | None = None

    def claim(self, holds: bool, yes: str, no: str) -> None:
        """A part of the lesson checked here: the sentence for what was found."""
        self.checks.append(bool(holds))
        self.sentences.append(yes if holds else no)

    def note(self, text: str) -> None:
        """Something measured that the lesson makes no claim about (the CPU's side, a detail)."""
        self.sentences.append(text)

    def decide(self, holds: bool | None, yes: str, no: str, v: stats.Verdict) -> None:
        """A claim decided with the noise: where it could not be (``holds`` None), what was measured is
        said as undecided and checks nothing, for the noise or the machine's load is not the code."""
        if holds is None:
            why = v.why or "the interval of the ratio straddles the threshold"
            shown = f"{v.ratio:.3g}x, 95 % interval {v.lo:.3g}-{v.hi:.3g}" if math.isfinite(v.lo) else f"{v.ratio:.3g}x"
            self.note(f"Undecided ({shown}; {why}): " + (yes or no))
        else:
            self.claim(holds, yes, no)

    def mark(self, size: float, label: str, break_even: bool = False) -> None:
        self.marks.append((float(size), label))
        if break_even and self.break_even is None:
            self.break_even = float(size)


@dataclass(frozen=True)
class Statement:
    """A lesson, said with the numbers just measured."""

    lesson: str
    title: str
    sentences: tuple[str, ...]
    holds: bool | None               # as the lesson says (True), contradicted here (False), not measured (None)
    marks: tuple[tuple[float, str], ...] = ()    # (size, label): vertical lines on the size axis
    break_even: float | None = None

    @property
    def verdict(self) -> str:
        return {True: "Measured here: as the lesson says.",
                False: "Measured here: not as the lesson says.",
                None: "Nothing the lesson claims could be measured here."}[self.holds]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def caption(self) -> str:
        """One paragraph for a chart or a report: the title, the verdict, the sentences."""
        return f"Lesson: {self.title}. {self.verdict} {self.text}"

    def as_settings(self) -> dict:
        """What a result file keeps of it (its settings' ``lesson``): charts and reports read it back."""
        return {"name": self.lesson, "title": self.title, "statement": self.text, "verdict": self.verdict,
                "holds": self.holds, "break_even": self.break_even,
                "marks": [[size, label] for size, label in self.marks]}


def explain(p: Plan, frame: pd.DataFrame, *, stopped: bool = False) -> Statement:
    """The lesson's statement from the rows of its sweeps (tagged with :func:`tag`)."""
    ls = p.lesson
    say = Say()
    m = Measured(frame if len(frame) else _empty())
    if m.ok.empty:
        say.note("Nothing was measured." if p.specs else "Nothing of this lesson can run here.")
    else:
        try:
            ls.verdict(m, ls, say)
        except Exception as exc:  # noqa: BLE001 - a verdict that cannot read odd rows says so; the rows stand
            log.exception("lesson %s: reading the results failed", ls.name)
            say.note(f"(These results could not be read as the lesson: {type(exc).__name__}: {exc}.)")
    gpu_declared = [b for b in ls.backends if _gpu(b) or b not in _known_backends()]
    if gpu_declared and not any(_gpu(b) for b in m.ok["backend"].unique()):
        say.note(f"No GPU backend could run here. On a GPU: {ls.on_gpu}")
    failed = unexpected_failures(p, frame) if len(frame) else frame
    if len(failed):
        say.note(f"{len(failed)} point(s) failed and are left out: " + "; ".join(
            f"{r.backend} at {fmt_size(r.size)}: {r.status}" for r in failed.head(3).itertuples())
            + ("; ..." if len(failed) > 3 else "") + ".")
    if stopped:
        say.note("The lesson was stopped before its end: this covers only what was measured.")
    by_reason: dict[str, list[str]] = {}
    for backend, why in p.skipped:
        by_reason.setdefault(why, []).append(backend)
    for why, names in by_reason.items():
        say.note(f"Not run: {', '.join(names)}: {why}.")
    say.sentences += list(p.notes)
    holds = all(say.checks) if say.checks else None
    return Statement(ls.name, ls.title, tuple(say.sentences), holds, tuple(say.marks), say.break_even)


def _known_backends() -> set[str]:
    from workbench.catalog.backends import BACKENDS
    return set(BACKENDS)


def _empty() -> pd.DataFrame:
    from workbench.results.rows import to_frame
    return to_frame([])


def run_of(variant: str) -> str:
    """The run label a tagged variant carries (its last part)."""
    return variant.rsplit(", ", 1)[-1]


# The lessons -----------------------------------------------------------------------------------------

POW2 = lambda lo, hi, step=2: tuple(2 ** k for k in range(lo, hi + 1, step))  # noqa: E731
TENS = (10_000, 100_000, 1_000_000, 10_000_000)


@lesson(
    name="small-problems", title="Small problems lose; the break-even size",
    claim="The GPU does not always help: on small problems launch and transfer costs erase the gain. "
          "There is a size below which the CPU wins and above which the GPU does.",
    workload="source_terms", backends=("numpy", "numba", "cupy", "numba-cuda"), sizes=POW2(10, 26),
    chart="speedup",
    on_gpu="cupy and numba-cuda lose to numpy on small arrays, where a launch and a transfer cost tens of "
           "microseconds, and win end-to-end only on large ones: on the H200 of docs/PERFORMANCE.md "
           "(source_terms, float32) from about 2^23 cells.")
def _small_problems(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    found = []
    for b in m.backends(g for g in ls.backends if _gpu(g)):
        c = crossing(m, b, base)
        if c is not None:
            found.append((b, c))
    if found:
        # The lesson's example: the GPU backend that breaks even first (or wins most at the largest size).
        b, c = min(found, key=lambda bc: (bc[1].size is None, bc[1].size or 0))
        _break_even_claim(m, say, b, base, c, "end-to-end (transfers included)")
        for other, oc in found:
            if other != b:
                say.note(f"{other}: " + (f"break-even near {oc.near}." if oc.holds
                                         else oc.comparison.sentence() if not oc.never else
                                         f"never faster than {base} at these sizes."))
    cpu = crossing(m, "numba", base) if m.has("numba") and m.has(base) else None
    if cpu is not None:
        # Threads have their start-up cost too: without a GPU this is the lesson's measured part.
        lo = cpu.comparison.sizes[0]
        yes = (f"On the CPU the same holds for threads: numba's parallel loop loses to {base} up to "
               f"{fmt_size(cpu.last_loss)} (at {fmt_size(lo)} {human_seconds(m.value('numba', lo, 'total_median_s'))} "
               f"against {human_seconds(m.value(base, lo, 'total_median_s'))}: the cost of waking its threads) and "
               f"wins from {fmt_size(cpu.first_win)} on{_band(cpu)}, break-even near {cpu.near}.") if cpu.holds else ""
        no = "On the CPU: " + cpu.comparison.sentence()
        if found:
            say.note(yes or no)
        else:
            say.claim(cpu.holds, yes, no)
            if cpu.holds:
                say.mark(cpu.size, f"break-even numba vs {base}", break_even=True)


def _band(c: Crossing) -> str:
    """' (2^14: the two within the noise)' for the sizes between the last loss and the first win."""
    between = [x for x in c.comparison.sizes if c.last_loss < x < c.first_win]
    return f" ({', '.join(fmt_size(x) for x in between)}: the two within the noise)" if between else ""


def _break_even_claim(m: Measured, say: Say, b: str, base: str, c: Crossing, what: str,
                      variant: str | None = None, label: str = "") -> None:
    sizes = c.comparison.sizes
    lo, hi = sizes[0], sizes[-1]
    t = lambda backend, s: m.value(backend, s, "total_median_s", variant)  # noqa: E731
    at_lo = f"at {fmt_size(lo)} it is {faster(t(b, lo), t(base, lo))} ({human_seconds(t(b, lo))} against " \
            f"{human_seconds(t(base, lo))})"
    at_hi = f"at {fmt_size(hi)} {faster(t(b, hi), t(base, hi))}"
    if c.holds:
        say.claim(True, f"{b} loses to {base} {what} up to {fmt_size(c.last_loss)} and wins from "
                        f"{fmt_size(c.first_win)} on{_band(c)}: break-even near {c.near}; {at_lo}, {at_hi}.", "")
        say.mark(c.size, label or f"break-even {b} vs {base}", break_even=True)
    elif c.always:
        say.claim(False, "", f"{b} beat {base} {what} at every size measured, even the smallest: {at_lo}. "
                             f"Here no problem was too small; the loss lies below {fmt_size(lo)}.")
    elif c.never:
        say.claim(False, "", f"{b} never beat {base} {what} at these sizes ({fmt_size(lo)} to {fmt_size(hi)}): "
                             f"no break-even here; {at_hi}.")
    else:
        say.claim(False, "", f"No single break-even: {c.comparison.sentence(what)}")


@lesson(
    name="transfers", title="Transfers eat the speedup",
    claim="Moving data over PCIe is far slower than work on the GPU: a kernel's speedup shrinks, end to end, "
          "by the transfers around it. Pinned (page-locked) host memory moves them faster than pageable.",
    workload="source_terms", backends=("numpy", "cupy"), sizes=POW2(16, 26),
    runs=(Run("pageable", host_memory="pageable"), Run("pinned", host_memory="pinned")), chart="speedup",
    needs_gpu=True,
    on_gpu="the kernel alone is far faster than NumPy and the transfers eat most of it: on the H200 of "
           "docs/PERFORMANCE.md (docs/lessons/transfers), cupy's kernel is 160x numpy at 2^26 cells but "
           "end-to-end only 1.4x, the pageable transfers taking 99 % of the GPU's time; pinned host memory "
           "moved the same data 4.9x faster, for 6.3x numpy end to end.")
def _transfers(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    page, pin = ls.runs[0].label, ls.runs[1].label
    gpus = m.backends((b for b in ls.backends if _gpu(b)), page) or m.backends((b for b in ls.backends if _gpu(b)), pin)
    if not gpus:
        return
    b = gpus[0]
    s = m.largest([b, base], page)
    if s is not None:
        kernel = m.value(base, s, "compute_median_s", page) / m.value(b, s, "compute_median_s", page)
        end = m.value(base, s, "total_median_s", page) / m.value(b, s, "total_median_s", page)
        share = _transfer_share(m.row(b, s, page))
        say.claim(share >= 0.5 and end < kernel / 2,
                  f"At {fmt_size(s)}, {b}'s kernel alone is {times(kernel)} {base}; end-to-end only {times(end)}: "
                  f"transfers take {percent(share)} of the GPU's time (pageable host memory).",
                  f"At {fmt_size(s)}, transfers took only {percent(share)} of {b}'s end-to-end time (pageable "
                  f"host memory): kernel-only {times(kernel)} {base}, end-to-end {times(end)}; here they did "
                  "not eat the speedup.")
        c = crossing(m, b, base, "total_median_s", page)
        k = crossing(m, b, base, "compute_median_s", page)
        if c is not None and c.holds:
            say.note(f"End-to-end, {b} breaks even with {base} near {c.near}"
                     + (f"; on the kernel alone already near {k.near}." if k is not None and k.holds
                        else f"; on the kernel alone it wins at every size from {fmt_size(k.comparison.sizes[0])}."
                        if k is not None and k.always else "."))
            say.mark(c.size, "break-even end-to-end (pageable)", break_even=True)
        elif c is not None and c.never:
            say.note(f"End-to-end, {b} never beat {base} at these sizes.")
    s2 = m.across(b, (page, pin))
    if s2 is not None and m.has(base, pin):
        rp, rq = m.row(b, s2, page), m.row(b, s2, pin)
        tp, tq = rp["h2d_s"] + rp["d2h_s"], rq["h2d_s"] + rq["d2h_s"]
        end_pin = m.value(base, s2, "total_median_s", pin) / rq["total_median_s"]
        say.claim(tq < tp / 1.2,
                  f"Pinned host memory moved the same data {times(tp / tq)} faster ({human_seconds(tp)} down to "
                  f"{human_seconds(tq)} at {fmt_size(s2)}): end-to-end {times(end_pin)} {base}, transfers "
                  f"{percent(_transfer_share(rq))} of the GPU's time.",
                  f"Pinned host memory was not faster here: its transfers took {human_seconds(tq)} at "
                  f"{fmt_size(s2)} against {human_seconds(tp)} pageable.")


def _transfer_share(row: pd.Series | None) -> float:
    if row is None or not row["total_median_s"] > 0:
        return float("nan")
    return float((row["h2d_s"] + row["d2h_s"]) / row["total_median_s"])


JIT_BACKENDS = ("numba", "numba-cuda", "numba-cuda-x4")


@lesson(
    name="first-call", title="The first call pays for compilation",
    claim="A JIT compiler (Numba on the CPU, Numba CUDA) compiles at the first call: it costs far more than "
          "a steady call, and pays back only over many calls.",
    workload="source_terms", backends=("numpy", "numba", "cupy", "cupy-fused", "numba-cuda"),
    sizes=(2 ** 12, 2 ** 16, 2 ** 20), chart="first-call", fresh_engine=True,
    on_gpu="numba-cuda's first call compiles its kernel (324 ms on the H200 machine of docs/PERFORMANCE.md "
           "at 2^12 cells, 1,115x a steady call), CuPy's loads its kernels from its cache (24 ms).")
def _first_call(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    for b in m.backends(ls.backends):
        r = m.rows(b).iloc[0]                 # the first size: the one that compiled
        first, steady = float(r["first_call_s"]), float(r["total_median_s"])
        if not (first > 0 and steady > 0):
            continue
        ratio = first / steady
        said = f"{b}'s first call took {human_seconds(first)}, {times(ratio)} a steady call " \
               f"({human_seconds(steady)}) at {fmt_size(int(r['size']))}"
        if b in JIT_BACKENDS:
            say.claim(ratio >= 10 and first - steady >= 1e-3, f"{said}: compilation.",
                      f"{said}: it compiled nothing here (a kernel compiled earlier in the same process, or "
                      "a cache).")
            _pays_back(m, say, b, base, first - steady)
        else:
            say.note(f"{said}" + (": no compiler, only first-touch costs." if b == "numpy" else "."))


def _pays_back(m: Measured, say: Say, b: str, base: str, overhead: float) -> None:
    s = m.largest([b, base])
    if s is None or b == base:
        return
    gain = m.value(base, s, "total_median_s") - m.value(b, s, "total_median_s")
    v = m.verdict(b, base, s)
    if v.verdict in ("same", "undecided") and gain > 0:
        say.note(f"At {fmt_size(s)} {b} and {base} could not be told apart ({stats.describe(v)}): whether its "
                 "compilation pays back is not decided by these points.")
    elif v.verdict == "faster":
        say.note(f"At {fmt_size(s)} {b} saves {human_seconds(gain)} a call over {base}: its compilation pays "
                 f"back after about {math.ceil(overhead / gain):,} calls.")
    else:
        say.note(f"At {fmt_size(s)} {b} is no faster than {base}: its compilation never pays back at this size.")


@lesson(
    name="float32-float64", title="float32 against float64: speed and memory",
    claim="float64 takes twice the memory of float32, and work bound by memory bandwidth twice the time; "
          "use float32 where its precision is enough, and check that the results still hold.",
    workload="source_terms", backends=("numpy", "cupy", "numba-cuda"), sizes=POW2(20, 26),
    runs=(Run("float32", dtype="float32"), Run("float64", dtype="float64")), chart="runtime",
    on_gpu="float64 takes twice the device memory of float32; its time depends on how well the float32 "
           "kernel used the bandwidth: on the H200 of docs/PERFORMANCE.md (source_terms at 2^26) float64 "
           "took 1.1x the time for plain cupy, whose float32 kernel reached only 28 % of the bandwidth, "
           "and 1.6x for numba-cuda.")
def _precision(m: Measured, ls: Lesson, say: Say) -> None:
    f32, f64 = ls.runs[0].label, ls.runs[1].label
    for b in ls.backends:
        s = m.across(b, (f32, f64))
        if s is None:
            continue
        t32, t64 = m.value(b, s, "compute_median_s", f32), m.value(b, s, "compute_median_s", f64)
        col = "peak_device_bytes" if _gpu(b) else "peak_host_bytes"
        where = "device" if _gpu(b) else "host"
        m32, m64 = m.value(b, s, col, f32), m.value(b, s, col, f64)
        rt = t64 / t32
        memory = ""
        if m32 > 0 and m64 > 0:
            memory = f" and {times(m64 / m32)} the {where} memory ({human_bytes(m64)} against {human_bytes(m32)})"
        longer, v = m.takes_at_least(1.4, b, b, s, "compute_median_s", f64, f32)
        say.decide(longer, f"{b}: float64 took {times(rt)} the time of float32 at {fmt_size(s)}{memory}.",
                   f"{b}: float64 took only {times(rt)} the time of float32 at {fmt_size(s)}{memory}: here its "
                   "time is not set by the bytes it moves.", v)
        if m32 > 0 and m64 > 0 and m64 / m32 < 1.5:
            say.claim(False, "", f"{b}'s peak {where} memory did not double ({human_bytes(m32)} to "
                                 f"{human_bytes(m64)}): part of it does not scale with the element size.")
    errors = m.ok[m.ok["variant"] == f32]["max_rel_error"]
    wrong = m.frame[(m.frame["variant"] == f32) & (m.frame["status"] == "wrong")]
    if len(wrong):
        say.claim(False, "", f"float32 was not accurate enough for {', '.join(wrong['backend'].unique())}: "
                             f"{wrong['message'].iloc[0]}")
    elif errors.notna().any():
        say.note(f"float32 results stayed within a relative error of {errors.max():.1e} of the float64 reference.")


@lesson(
    name="divergence", title="Branch divergence",
    claim="GPU threads run in warps that step together: when their branches or loop counts differ, the warp "
          "runs as long as its slowest thread. The same work on sorted input, where neighbours agree, runs "
          "faster; the CPU hardly cares.",
    workload="divergence", backends=("numba", "cupy-fused", "numba-cuda"), sizes=POW2(16, 22),
    variants=("random", "sorted"), chart="runtime", baseline="numba",
    on_gpu="cupy-fused and numba-cuda, one element per thread with a data-dependent loop, take longer on "
           "random input than on sorted input, where every warp's threads loop about as often: 1.8x and "
           "1.9x at 2^22 on the H200 of docs/PERFORMANCE.md. numba on the CPU has no warps; there its "
           "parallel loop was slower on sorted input, whose long loops all fall into the last threads' blocks.")
def _divergence(m: Measured, ls: Lesson, say: Say) -> None:
    for b in ls.backends:
        s = m.across(b, ("random", "sorted"))
        if s is None:
            continue
        r = m.value(b, s, "compute_median_s", "random") / m.value(b, s, "compute_median_s", "sorted")
        said = f"{b}: random order took {times(r)} the time of sorted at {fmt_size(s)}"
        slower, v = m.takes_at_least(1.3, b, b, s, "compute_median_s", "random", "sorted")
        faster_sorted, _ = m.takes_at_least(1.3, b, b, s, "compute_median_s", "sorted", "random")
        if _gpu(b):
            say.decide(slower, f"{said}: each warp waits for its slowest thread.",
                       f"{said}: divergence cost little here.", v)
        elif faster_sorted is None and r <= 1 / 1.3:
            say.decide(None, "", f"{said}: on the CPU sorted input looked slower.", v)
        elif faster_sorted:
            # Not divergence: prange gives each thread an equal block of elements, and sorted input
            # puts every long loop into the last blocks, so one thread works far longer than the rest.
            say.claim(False, "", f"{said}: on the CPU sorted input was the slower one, for another reason: "
                                 "numba's parallel loop gives each thread an equal block of elements, and "
                                 "sorted input puts the longest loops all into the last blocks (load imbalance).")
        else:
            say.decide(None if slower is None else not slower, f"{said}: a CPU core follows its own branch.",
                       f"{said}: the order mattered on the CPU too (branch prediction, vector lanes).", v)


@lesson(
    name="kernel-style", title="How the kernel is written",
    claim="A plain array expression runs one kernel per operation and makes temporaries; a fused kernel "
          "makes one pass over memory; several elements per thread with wide loads keep more bytes in "
          "flight and come closest to the memory's bandwidth.",
    workload="source_terms",
    backends=("numpy", "numba", "cupy", "cupy-fused", "cupy-raw", "numba-cuda", "numba-cuda-x4"),
    sizes=POW2(20, 26), chart="runtime",
    on_gpu="on the H200 of docs/PERFORMANCE.md (source_terms, float32, 2^26), plain cupy reached 28 % of "
           "the copy bandwidth, cupy-fused 57 %, cupy-raw (wide loads, several elements per thread) 98 %; "
           "numba-cuda 73 % with one element per thread, 93 % with four.")
def _kernel_style(m: Measured, ls: Lesson, say: Say) -> None:
    measured = m.backends(ls.backends)
    s = max((m.rows(b)["size"].max() for b in measured), default=None)
    if s is None:
        return

    def bw(b: str) -> float:
        return m.value(b, s, "gbps")

    def said(b: str) -> str:
        limit = m.value(b, s, "gbps_limit")
        return f"{bw(b):,.0f} GB/s" + (f" ({percent(bw(b) / limit)})" if limit > 0 else "")

    described = {"cupy": "one kernel per operation, with a temporary", "cupy-fused": "fused into one kernel",
                 "cupy-raw": "several elements per thread, wide loads", "numba-cuda": "one element per thread",
                 "numba-cuda-x4": "four elements per thread"}
    gpu = [b for b in measured if _gpu(b) and math.isfinite(bw(b))]
    if gpu:
        shares = any(m.value(b, s, "gbps_limit") > 0 for b in gpu)
        say.note(f"At {fmt_size(s)}" + (", in GB/s and as a share of the device's copy bandwidth" if shares else "")
                 + ": " + "; ".join(f"{b} ({described.get(b, b)}) {said(b)}" for b in gpu) + ".")
    for better, worse, what in (("cupy-fused", "cupy", "Fusing the expression into one kernel"),
                                ("cupy-raw", "cupy-fused", "Several elements per thread"),
                                ("numba-cuda-x4", "numba-cuda", "Four elements per thread")):
        if better in gpu and worse in gpu:
            # The same bytes: 10 % more bandwidth is 10 % less time, decided with the intervals.
            helped, v = m.takes_at_least(1.1, worse, better, s, "compute_median_s")
            say.decide(helped,
                       f"{what} took {worse}'s {bw(worse):,.0f} GB/s to {bw(better):,.0f} GB/s.",
                       f"{what} did not help here: {better} {bw(better):,.0f} GB/s against {worse}'s "
                       f"{bw(worse):,.0f} GB/s.", v)
    if "numpy" in measured and "numba" in measured and math.isfinite(bw("numpy")) and math.isfinite(bw("numba")):
        # One pass against temporaries holds on the CPU too: without a GPU, this is the measured part.
        yes = (f"On the CPU the same holds: numba's single loop moved {bw('numba'):,.1f} GB/s, numpy's "
               f"expression with its temporaries {bw('numpy'):,.1f} GB/s.")
        no = (f"On the CPU numba's single loop ({bw('numba'):,.1f} GB/s) was no faster than numpy's expression "
              f"with its temporaries ({bw('numpy'):,.1f} GB/s).")
        helped, v = m.takes_at_least(1.1, "numpy", "numba", s, "compute_median_s")
        if gpu:
            say.note(yes if helped else no if helped is False else f"Undecided ({stats.describe(v)}): {yes}")
        else:
            say.decide(helped, yes, no, v)


@lesson(
    name="memory-wall", title="The memory wall",
    claim="A GPU's memory runs out: a point too large for it fails. float32 needs half the bytes of float64, "
          "so the wall moves twice as far.",
    workload="source_terms", backends=("cupy", "numba-cuda"), sizes=POW2(22, 27, 1),
    runs=(Run("float32", dtype="float32"), Run("float64", dtype="float64")), chart="memory",
    device_memory_limit=1280 * 2 ** 20, min_repeats=2, expected_failures=OUT_OF_MEMORY, needs_gpu=True,
    on_gpu="under a device-memory cap each GPU backend ends in an out-of-memory error row at the first size "
           "whose arrays no longer fit, float64 one doubling before float32.")
def _memory_wall(m: Measured, ls: Lesson, say: Say) -> None:
    f32, f64 = ls.runs[0].label, ls.runs[1].label
    limit = ls.device_memory_limit
    frame = m.frame
    for b in (g for g in ls.backends if _gpu(g)):
        walls = {}
        for run in (f32, f64):
            rows = frame[(frame["backend"] == b) & (frame["variant"] == run)].sort_values("size")
            oom = rows[(rows["status"] != "ok") & rows["message"].astype(str).str.contains(OUT_OF_MEMORY)]
            walls[run] = int(oom["size"].iloc[0]) if len(oom) else None
        if not m.has(b, f32) and not m.has(b, f64) and walls[f32] is None and walls[f64] is None:
            continue
        if walls[f64] is not None and walls[f32] is not None:
            say.claim(walls[f32] >= 2 * walls[f64],
                      f"{b} ran out of device memory at {fmt_size(walls[f64])} in float64 and at "
                      f"{fmt_size(walls[f32])} in float32: float32 moved the wall {times(walls[f32] / walls[f64])} "
                      "further.",
                      f"{b} ran out of device memory at {fmt_size(walls[f64])} in float64 and at "
                      f"{fmt_size(walls[f32])} in float32: float32 did not move the wall twice as far.")
            say.mark(walls[f64], f"float64 wall ({b})")
            say.mark(walls[f32], f"float32 wall ({b})")
            continue
        if walls[f64] is not None:
            say.note(f"{b} ran out of device memory at {fmt_size(walls[f64])} in float64; float32 fit at every "
                     "size measured.")
            say.mark(walls[f64], f"float64 wall ({b})")
        # No wall (or only one) reached: project it from what each element took.
        per = {}
        for run in (f32, f64):
            r = m.rows(b, run)
            r = r[r["peak_device_bytes"] > 0]
            if len(r):
                last = r.iloc[-1]
                per[run] = (float(last["peak_device_bytes"]) / float(last["size"]), int(last["size"]),
                            float(last["peak_device_bytes"]))
        if f32 in per and f64 in per:
            ratio = per[f64][0] / per[f32][0]
            cap = limit or None
            projected = ""
            if cap:
                fit32 = _fits(cap, per[f32][0])
                fit64 = _fits(cap, per[f64][0])
                projected = f"; under a {gib(cap)} cap float32 would fit up to {fmt_size(fit32)}, " \
                            f"float64 up to {fmt_size(fit64)}"
            say.claim(ratio >= 1.6,
                      f"{b} needed {per[f32][0]:.3g} bytes of device memory per element in float32 and "
                      f"{per[f64][0]:.3g} in float64 ({times(ratio)}){projected}.",
                      f"{b}'s device memory per element grew only {times(ratio)} from float32 to float64 "
                      f"({per[f32][0]:.3g} to {per[f64][0]:.3g} bytes){projected}.")
            if walls[f64] is None and walls[f32] is None:
                big = max(per[f32][2], per[f64][2])
                say.note(f"No point of {b} ran out of device memory: the largest used {human_bytes(big)}.")


def _fits(cap: float, per_element: float) -> int:
    """The largest power of two whose elements fit under ``cap``."""
    return 2 ** max(0, math.floor(math.log2(cap / per_element)))


@lesson(
    name="pipeline", title="Combining the three: keep the data on the GPU",
    claim="cuDF, CuPy and Numba CUDA combine well when the data stays on the GPU between them (zero-copy "
          "views); a host round trip at every hand-off pays PCIe copies each time and eats the gain.",
    workload="pipeline", backends=("cpu-stack", "gpu-zero-copy", "gpu-round-trips"), sizes=TENS,
    baseline="cpu-stack", chart="runtime",
    on_gpu="the zero-copy GPU pipeline hands data from cuDF to CuPy to Numba CUDA and back as views of the "
           "same device memory, microseconds per hand-off; the round-trip pipeline pays a copy through host "
           "memory at each one.")
def _pipeline(m: Measured, ls: Lesson, say: Say) -> None:
    cpu, zc, rt = ls.backends
    s = m.largest([b for b in (cpu, zc, rt) if m.has(b)])
    if s is None:
        return
    t = {b: m.value(b, s, "total_median_s") for b in (cpu, zc, rt) if m.has(b)}
    if zc in t and cpu in t:
        v = m.verdict(zc, cpu, s)
        say.decide(None if v.verdict == "undecided" else v.verdict == "faster",
                  f"At {fmt_size(s)} rows the zero-copy GPU pipeline took {human_seconds(t[zc])}, "
                  f"{faster(t[zc], t[cpu])} than the CPU stack ({human_seconds(t[cpu])}).",
                  f"At {fmt_size(s)} rows the zero-copy GPU pipeline ({human_seconds(t[zc])}) was "
                  f"{faster(t[zc], t[cpu])} than the CPU stack ({human_seconds(t[cpu])}): the GPU did not pay off "
                  "at this size.", v)
        c = crossing(m, zc, cpu)
        if c is not None and c.holds:
            say.note(f"The zero-copy pipeline breaks even with the CPU stack near {c.near} rows.")
            say.mark(c.size, "break-even zero-copy vs CPU", break_even=True)
    if zc in t and rt in t:
        h_zc, h_rt = _handoffs(m.row(zc, s)), _handoffs(m.row(rt, s))
        share = f" ({percent(h_rt / t[rt])} of its time)" if math.isfinite(h_rt) else ""
        handed = f"; its hand-offs took {human_seconds(h_rt)}{share} against {human_seconds(h_zc)} zero-copy" \
            if math.isfinite(h_rt) and math.isfinite(h_zc) else ""
        costs, v = m.takes_at_least(1.05, rt, zc, s, "total_median_s")
        say.decide(costs,
                  f"With a host round trip at every hand-off the same GPU stages took {human_seconds(t[rt])}, "
                  f"{times(t[rt] / t[zc])} the zero-copy time{handed}.",
                  f"Host round trips cost little here: {human_seconds(t[rt])} against {human_seconds(t[zc])} "
                  f"zero-copy{handed}.", v)
    if cpu in t:
        stages = decode_stages(m.row(cpu, s)["stages"])
        total = sum(v for k, v in stages.items() if "->" not in k)
        if total > 0:
            say.note(f"On the CPU stack at {fmt_size(s)} rows: " + ", ".join(
                f"{k} {percent(v / total)}" for k, v in stages.items() if "->" not in k) + " of the stages' time.")


def _handoffs(row: pd.Series | None) -> float:
    if row is None:
        return float("nan")
    stages = decode_stages(row["stages"])
    hand = [v for k, v in stages.items() if "->" in k]
    return float(sum(hand)) if hand else float("nan")


@lesson(
    name="dataframes", title="cuDF against pandas against cudf.pandas",
    claim="cuDF is far ahead of pandas on large tables (joins, group-bys); on small tables pandas is as fast "
          "or faster. cudf.pandas runs unchanged pandas code on the GPU, at some overhead over cuDF itself.",
    workload="groupby", backends=("pandas", "cudf", "cudf-pandas"), sizes=TENS, baseline="pandas",
    chart="speedup",
    on_gpu="cuDF's group-by is far faster than pandas on millions of rows, less so once the conversion from "
           "and back to pandas is counted: on the H200 of docs/PERFORMANCE.md, 27x on the group-by alone "
           "at 10 million rows, 3.7x end-to-end; cudf.pandas 3.6x end to end, its call 1.5x cuDF's own.")
def _dataframes(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    if m.has("cudf"):
        s = m.largest(["cudf", base])
        if s is not None:
            alone = m.value(base, s, "compute_median_s") / m.value("cudf", s, "compute_median_s")
            end = m.value(base, s, "total_median_s") / m.value("cudf", s, "total_median_s")
            v = m.verdict("cudf", base, s)
            say.decide(None if v.verdict == "undecided" else v.verdict == "faster",
                      f"At {fmt_size(s)} rows cuDF's group-by alone is {times(alone)} pandas; with the conversion "
                      f"from and back to pandas {times(end)}.",
                      f"At {fmt_size(s)} rows cuDF was not faster than pandas end-to-end ({times(end)}; the "
                      f"group-by alone {times(alone)}).", v)
        c = crossing(m, "cudf", base)
        if c is not None:
            _break_even_claim(m, say, "cudf", base, c, "end-to-end (conversions included)")
    if m.has("cudf-pandas"):
        s = m.largest(["cudf-pandas", base])
        if s is not None:
            # Like with like: end to end, both pandas in and pandas out (cudf.pandas moves its frames
            # to the GPU and the result back, as cuDF's conversions do); the calls alone, both on
            # frames already where they run.
            tp, tc = m.value(base, s, "total_median_s"), m.value("cudf-pandas", s, "total_median_s")
            cp, cc = m.value(base, s, "compute_median_s"), m.value("cudf-pandas", s, "compute_median_s")
            over = ""
            if m.has("cudf") and m.row("cudf", s) is not None:
                over = f"; {times(cc / m.value('cudf', s, 'compute_median_s'))} cuDF's own time for the same " \
                       "call (the cost of its proxies)"
            calls = f"the pandas call alone {times(cp / cc)} pandas's{over}"
            said = f"at {fmt_size(s)} rows, end to end (the frame to the GPU and the result back included)"
            why = "moving the frame ate the gain" if cp > cc else "the call itself was not faster"
            v = m.verdict("cudf-pandas", base, s)
            say.decide(None if v.verdict == "undecided" else v.verdict == "faster",
                       f"cudf.pandas ran the unchanged pandas code {faster(tc, tp)} than pandas {said}; {calls}.",
                       f"cudf.pandas was {faster(tc, tp)} than plain pandas {said}"
                       + (" (the same within the noise)" if v.verdict == "same" else "") + f": {why}; {calls}.", v)
            fell = fell_back(m.rows("cudf-pandas"))
            if not fell.empty:
                say.note("Some pandas calls fell back to the CPU under cudf.pandas at "
                         + ", ".join(fmt_size(int(x)) for x in fell["size"]) + " rows (the points' messages say which).")
    if not m.has("cudf") and m.has(base):
        s = int(m.rows(base)["size"].max())
        say.note(f"pandas took {human_seconds(m.value(base, s, 'total_median_s'))} at {fmt_size(s)} rows.")
