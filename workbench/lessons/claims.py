"""Claims that several lessons make in the same words: a break-even between two backends, said
with the times measured on both sides of it, and marked on the charts."""
from __future__ import annotations

import logging

from workbench.core.sizes import fmt_size
from workbench.lessons.measured import Crossing, Measured
from workbench.lessons.say import Say, faster
from workbench.results.rows import human_seconds

log = logging.getLogger(__name__)


def band(c: Crossing) -> str:
    """' (2^14: the two within the noise)' for the sizes between the last loss and the first win."""
    between = [x for x in c.comparison.sizes if c.last_loss < x < c.first_win]
    return f" ({', '.join(fmt_size(x) for x in between)}: the two within the noise)" if between else ""


def break_even(m: Measured, say: Say, b: str, base: str, c: Crossing, what: str,
               variant: str | None = None, label: str = "") -> None:
    """The claim that ``b`` loses to ``base`` on small sizes and wins on large ones, checked: the
    break-even where there is one (and its mark), else what was measured instead."""
    sizes = c.comparison.sizes
    lo, hi = sizes[0], sizes[-1]
    t = lambda backend, s: m.value(backend, s, "total_median_s", variant)  # noqa: E731
    at_lo = f"at {fmt_size(lo)} it is {faster(t(b, lo), t(base, lo))} ({human_seconds(t(b, lo))} against " \
            f"{human_seconds(t(base, lo))})"
    at_hi = f"at {fmt_size(hi)} {faster(t(b, hi), t(base, hi))}"
    if c.holds:
        say.claim(True, f"{b} loses to {base} {what} up to {fmt_size(c.last_loss)} and wins from "
                        f"{fmt_size(c.first_win)} on{band(c)}: break-even near {c.near}; {at_lo}, {at_hi}.", "")
        say.mark(c.size, label or f"break-even {b} vs {base}", break_even=True)
    elif c.always:
        say.claim(False, "", f"{b} beat {base} {what} at every size measured, even the smallest: {at_lo}. "
                             f"Here no problem was too small; the loss lies below {fmt_size(lo)}.")
    elif c.never:
        say.claim(False, "", f"{b} never beat {base} {what} at these sizes ({fmt_size(lo)} to {fmt_size(hi)}): "
                             f"no break-even here; {at_hi}.")
    else:
        say.claim(False, "", f"No single break-even: {c.comparison.sentence(what)}")
