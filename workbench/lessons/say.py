"""Saying what a lesson's numbers show: :class:`Say` collects a lesson's sentences, its checked
claims and its marks; :class:`Statement` is what comes out, plain data that the command line, the
window and every export read alike. The wording helpers say ratios and sizes as people do.

The formatters here (times, faster, percent, approx_size, gib) are the lessons' own wording; units
shared with the table and the charts live in ``workbench.core.units``: add new ones there.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import NamedTuple

from workbench.core import stats, units

log = logging.getLogger(__name__)


class Mark(NamedTuple):
    """A labelled vertical line at a size (a break-even, a memory wall). A plain pair, so a
    renderer or a file reads it as ``(size, label)``."""

    size: float
    label: str


class Say:
    """What a lesson's ``explain`` finds: sentences, each claim checked, and marks for the charts."""

    def __init__(self) -> None:
        self.sentences: list[str] = []
        self.checks: list[bool] = []
        self.marks: list[Mark] = []
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
        """A line at ``size`` on the charts whose x axis is the size; the first break-even marked is
        the statement's ``break_even``."""
        self.marks.append(Mark(float(size), label))
        if break_even and self.break_even is None:
            self.break_even = float(size)


@dataclass(frozen=True)
class Statement:
    """A lesson, said with the numbers just measured."""

    lesson: str
    title: str
    sentences: tuple[str, ...]
    holds: bool | None               # as the lesson says (True), contradicted here (False), not measured (None)
    marks: tuple[Mark, ...] = ()     # vertical lines on the size axis
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
        """What a result file keeps of it (its settings' ``lesson``): charts and reports read it back
        (``workbench.views`` reads these keys; it cannot import this layer)."""
        return {"name": self.lesson, "title": self.title, "statement": self.text, "verdict": self.verdict,
                "holds": self.holds, "break_even": self.break_even,
                "marks": [[size, label] for size, label in self.marks]}


# Wording ------------------------------------------------------------------------------------------

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


def gib(n: float) -> str:
    """A memory cap as people write it: 1.25 GiB, 512 MiB (``workbench.core.units``, as every view)."""
    return units.nbytes(n)
