"""The statistics every figure and every verdict is derived from: medians with their intervals.

A point keeps its samples and all that is said about it is derived here, as pytest-benchmark's
``Stats`` does: the median and its distribution-free 95 % interval (two order statistics from the
binomial, sound for the skewed, heavy-tailed times benchmarks give); the relative noise (the
interquartile range over the median, as a normal's standard deviation: nvbench's noise without the
outliers' pull); and the verdict of a comparison, a difference both significant and beyond a
minimum effect (asv's ``compare``). Plain NumPy and the standard library, no SciPy: the engine,
the command line, the window and the exporters all use it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

CONFIDENCE = 0.95
#: A difference smaller than this (a ratio within 1/1.05 .. 1.05) is no difference: asv's --factor.
DEFAULT_MIN_EFFECT = 0.05
#: The interquartile range of a normal distribution in standard deviations (2 x 0.6745).
_IQR_PER_SIGMA = 1.3489795

VERDICTS = ("faster", "slower", "same", "undecided")
#: What a busy machine may do to a point, at least: time-sharing its core with one other process
#: doubles its time, and a vCPU in its slow state comes close (docs/PERFORMANCE.md). A point
#: measured so keeps no 'same' and no verdict within that factor; one beyond it stands.
BUSY_SLACK = 2.0
#: The one reason whose effect is bounded: the machine's own speed state. Time-sharing is not (a
#: parallel loop waits out whole time slices at its barrier), so a point whose noise is other
#: processes keeps no verdict at all.
BOUNDED = "the machine changed speed"


def slack_of(noisy: str) -> float:
    """How far a point's noise may have moved it: 1 when quiet, ``BUSY_SLACK`` for the machine's
    speed state alone, unbounded (no verdict) for anything else."""
    if not noisy:
        return 1.0
    parts = [p for p in noisy.split("; ") if p]
    return BUSY_SLACK if all(p.startswith(BOUNDED) for p in parts) else math.inf


@dataclass(frozen=True)
class Estimate:
    """A median time with its interval: what a verdict is decided from."""

    median: float
    lo: float
    hi: float
    n: int = 0
    noisy: str = ""          # why the machine's state makes this point untrustworthy ('' when quiet)
    #: How many times slower (or faster) the machine's state may have made this point: its interval
    #: is widened by it before a verdict (1 when quiet; see :data:`BUSY_SLACK`).
    slack: float = 1.0

    @property
    def usable(self) -> bool:
        return all(math.isfinite(v) and v > 0 for v in (self.median, self.lo, self.hi)) and self.lo <= self.hi

    @property
    def rel_halfwidth(self) -> float:
        """Half the interval's width over the median: the precision of the median."""
        return (self.hi - self.lo) / 2 / self.median if self.usable else math.inf


def _binom_cdf_half(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2), exact (log-space terms, so n in the millions is fine)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_half_n = n * math.log(0.5)
    total = 0.0
    for i in range(k + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n)
    return min(1.0, total)


def _lower_rank(n: int, confidence: float) -> int:
    """The 0-based rank j of the interval [x_(j), x_(n-1-j)] that covers the median with at least
    ``confidence``: it covers unless at most j samples fall on one side, so its coverage is
    1 - 2 P(B <= j), B ~ Binomial(n, 1/2); the largest j with P(B <= j) <= (1 - confidence) / 2.
    -1 when even [min, max] covers it less often (fewer than 6 samples at 95 %)."""
    alpha = (1 - confidence) / 2
    if n < 1 or 0.5 ** n > alpha:
        return -1
    # Far into a large sample, start a little below the normal approximation's rank.
    j = max(0, int(n / 2 - 2.0 * math.sqrt(n) / 2) - 3) if n > 200 else 0
    cdf = _binom_cdf_half(j, n)          # P(B <= j) <= alpha holds here
    while True:
        nxt = cdf + math.exp(math.lgamma(n + 1) - math.lgamma(j + 2) - math.lgamma(n - j) + n * math.log(0.5))
        if nxt > alpha:      # P(B <= j + 1) is too much: j + 1 would not cover
            return j
        cdf, j = nxt, j + 1


def median_ci(samples: Sequence[float] | np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` interval of the median of ``samples`` (order statistics, distribution-free).

    With too few samples for the confidence asked ([min, max] covers the median with probability
    1 - 2^(1-n): 94 % for 5 samples) the interval is infinite: nothing can be decided from it.
    """
    a = np.sort(np.asarray(samples, dtype=np.float64))
    a = a[np.isfinite(a)]
    j = _lower_rank(a.size, confidence)
    if j < 0:
        return -math.inf, math.inf
    return float(a[j]), float(a[a.size - 1 - j])


#: Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom (beyond: 1.96).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t975(df: int) -> float:
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.96


def rounds_ci(samples: Sequence[float] | np.ndarray, round_medians: Sequence[float]) -> tuple[float, float]:
    """The 95 % interval of a point's median measured in rounds, each with its implementation made
    anew: the pooled samples' interval, widened to the rounds' own disagreement where that is larger.

    Between rounds the buffers land elsewhere in memory and a rerun's median moves; a verdict must
    survive a rerun, so the rounds are the units: on a log scale, their mean's t-interval (R - 1
    degrees of freedom), whichever of the two intervals is wider on each side. Centred on the
    rounds' mean (a geometric mean of their medians), not the pooled median, which jumps between
    the modes of a bimodal kernel (docs/PERFORMANCE.md, "The interval centred on the rounds' mean").
    """
    lo, hi = median_ci(samples)
    logs = np.log([m for m in round_medians if math.isfinite(m) and m > 0])
    if logs.size < 2:
        return lo, hi
    a = np.asarray(samples, dtype=np.float64)
    a = a[np.isfinite(a)]
    center = math.exp(float(logs.mean()))
    half = t975(logs.size - 1) * float(np.std(logs, ddof=1)) / math.sqrt(logs.size)
    # Within what was observed: one preempted round stretches a log-symmetric t-interval below any
    # time hardware runs; no median of these samples lies outside their range, nor does its interval.
    floor, ceiling = float(a.min()), float(a.max())
    return (max(floor, min(lo, center * math.exp(-half))), min(ceiling, max(hi, center * math.exp(half))))


def rel_noise(samples: Sequence[float] | np.ndarray) -> float:
    """The samples' robust relative spread: IQR / median, in standard deviations of a normal."""
    a = np.asarray(samples, dtype=np.float64)
    a = a[np.isfinite(a)]
    if a.size < 2:
        return math.nan
    q1, med, q3 = np.percentile(a, (25, 50, 75))
    return float((q3 - q1) / _IQR_PER_SIGMA / med) if med > 0 else math.nan


def estimate(samples: Sequence[float] | np.ndarray, noisy: str = "") -> Estimate:
    a = np.asarray(samples, dtype=np.float64)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, noisy)
    lo, hi = median_ci(a)
    return Estimate(float(np.median(a)), lo, hi, int(a.size), noisy, slack_of(noisy))


def converged(samples: Sequence[float] | np.ndarray, target: float) -> bool:
    """The interval of the median is within ``target`` of it on either side (a relative half-width)."""
    return estimate(samples).rel_halfwidth <= target


# Verdicts -----------------------------------------------------------------------------------------

#: Why a point without an interval (a file from before intervals were kept) gets no verdict.
NO_INTERVAL = "no interval to decide from"

@dataclass(frozen=True)
class Verdict:
    """``new`` against ``base``: ratio of their median times (new / base) with its interval.

    ``faster`` means ``new`` takes less time. The interval multiplies out the two medians'
    intervals ([lo_new / hi_base, hi_new / lo_base]): if each covers its median with 95 %, both do
    with at least 90 %, and then so does this one; for two independent estimates of similar
    precision it is about 1.4 times as wide as needed, so in practice it covers well above 95 %.
    """

    verdict: str
    ratio: float
    lo: float
    hi: float
    why: str = ""

    @property
    def speedup(self) -> float:
        """How many times faster ``new`` is than ``base`` (base / new)."""
        return 1 / self.ratio if self.ratio > 0 else math.nan

    @property
    def decided(self) -> bool:
        return self.verdict in ("faster", "slower")


def compare(new: Estimate, base: Estimate, min_effect: float = DEFAULT_MIN_EFFECT) -> Verdict:
    """``faster``, ``slower``, ``same`` or ``undecided``, as asv's ``compare`` decides.

    - ``same``: the whole interval of the ratio lies within the minimum effect (1/(1+f) .. 1+f);
    - ``faster`` / ``slower``: the interval excludes 1 and the ratio itself is beyond the effect;
    - ``undecided``: anything else, and every comparison where a point was measured on a busy
      machine (the load, not the code, may be what differs) or has no interval.
    """
    if not (new.usable and base.usable):
        ratio = new.median / base.median if base.median and math.isfinite(base.median) else math.nan
        return Verdict("undecided", ratio, math.nan, math.nan, NO_INTERVAL)
    return decide(new.median / base.median, new.lo / base.hi, new.hi / base.lo, min_effect,
                  "; ".join(n for n in (new.noisy, base.noisy) if n),
                  (new.slack if new.noisy else 1.0) * (base.slack if base.noisy else 1.0))


def paired(ratios: Sequence[float], min_effect: float = DEFAULT_MIN_EFFECT, noisy: str = "") -> Verdict | None:
    """A verdict from round-by-round ratios of two points measured in interleaved rounds: the
    t-interval of the mean log ratio. The machine's drift between rounds cancels in each ratio, so
    this decides where the two points' own intervals, each wide with that drift, could not.
    None with fewer than 3 pairs."""
    logs = np.log([r for r in ratios if math.isfinite(r) and r > 0])
    if logs.size < 3:
        return None
    mean = float(logs.mean())
    half = t975(logs.size - 1) * float(logs.std(ddof=1)) / math.sqrt(logs.size)
    return decide(math.exp(mean), math.exp(mean - half), math.exp(mean + half), min_effect, noisy,
                  slack_of(noisy))


def decide(ratio: float, lo: float, hi: float, min_effect: float = DEFAULT_MIN_EFFECT, noisy: str = "",
           slack: float = 1.0) -> Verdict:
    """The verdict of a ratio (new / base) and its 95 % interval; see :func:`compare`."""
    top, bottom = 1 + min_effect, 1 / (1 + min_effect)
    if bottom <= lo and hi <= top:
        decided = "same"
    elif hi < 1 and ratio < bottom:
        decided = "faster"
    elif lo > 1 and ratio > top:
        decided = "slower"
    else:
        return Verdict("undecided", ratio, lo, hi, "the interval straddles the minimum effect")
    if noisy:
        # 'same' too: a load that slowed one point's rounds may have hidden a difference as well
        # as made one, and the tables would call the load's coincidence a tie of the code. A
        # difference beyond all the load could have done (``slack`` on the interval) still stands.
        k = max(slack, 1.0)
        if (decided == "faster" and hi * k < 1 and ratio * k < bottom) or \
                (decided == "slower" and lo / k > 1 and ratio / k > top):
            return Verdict(decided, ratio, lo, hi, f"beyond what a busy machine explains ({noisy})")
        return Verdict("undecided", ratio, lo, hi, f"measured on a busy machine ({noisy})")
    return Verdict(decided, ratio, lo, hi)


def describe(v: Verdict) -> str:
    """``1.32x faster (1.28-1.36)``, ``same (0.98-1.02)``, ``undecided: why``: one phrase for tables."""
    if v.verdict in ("faster", "slower"):
        times = v.speedup if v.verdict == "faster" else v.ratio
        lo, hi = (1 / v.hi, 1 / v.lo) if v.verdict == "faster" else (v.lo, v.hi)
        return f"{times:.3g}x {v.verdict} ({lo:.3g}-{hi:.3g})"
    if v.verdict == "same":
        return f"same ({v.lo:.3g}-{v.hi:.3g})"
    return f"undecided: {v.why}" if v.why else "undecided"
