"""Hide the transfers: copies overlapped with compute on several streams, from pinned memory (issue 37)."""
from __future__ import annotations

import math

from workbench.core.sizes import fmt_size
from workbench.lessons.core import Lesson, gpu, pow2
from workbench.lessons.measured import Measured
from workbench.lessons.say import Say, percent, times
from workbench.results.rows import human_seconds
from workbench.views import overlap

PINNED, PINNED_K = "pinned sequential", "pinned 4 streams"
PAGEABLE, PAGEABLE_K = "pageable sequential", "pageable 4 streams"

LESSON = Lesson(
    order=25,
    name="hide-transfers", title="Hide the transfers",
    claim="Copies to and from the GPU can run while it computes: cut the work into chunks on several "
          "streams, from pinned memory, and a call approaches its limit, the longest of its phases (or its "
          "copies in and out at once, where the link slows when it moves both ways), instead of their sum. "
          "From pageable memory nothing overlaps.",
    workload="overlap", backends=("cupy", "numba-cuda"), sizes=pow2(20, 26),
    variants=(PINNED, PINNED_K, PAGEABLE, PAGEABLE_K), baseline="cupy", chart="runtime", needs_gpu=True,
    on_gpu="4 streams from pinned memory against the same copies and compute in turn; on a card with two "
           "copy engines the call comes within a few tens of percent of its longest phase "
           "(docs/PERFORMANCE.md, 'Copies overlapped with compute').")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    for b in (b for b in ls.backends if gpu(b) and m.has(b)):
        s = m.across(b, (PINNED, PINNED_K))
        if s is None:
            continue
        seq, over = m.row(b, s, PINNED), m.row(b, s, PINNED_K)
        limit = overlap.limit_s(over)
        faster, v = m.takes_at_least(1.1, b, b, s, "total_median_s", PINNED, PINNED_K)
        ratio = seq["total_median_s"] / over["total_median_s"]
        what = {"copies at once": "the copies in and out at once"}.get(overlap.limiting(over), overlap.limiting(over))
        said = (f"{b} at {fmt_size(s)}: 4 streams from pinned memory took {human_seconds(over['total_median_s'])} "
                f"end to end against {human_seconds(seq['total_median_s'])} in turn, {times(ratio)} faster, "
                f"at {over['total_median_s'] / limit:.2f}x its limit, {human_seconds(limit)} ({what}).")
        say.decide(faster, said, f"{b} at {fmt_size(s)}: 4 streams from pinned memory were not faster than "
                                 f"the copies and compute in turn ({times(ratio)}).", v)
        copies = over["h2d_s"] + over["d2h_s"]
        together = over.get("copies_together_s", math.nan)
        known = isinstance(together, float) and math.isfinite(together) and together > 0
        if known and overlap.limiting(over) == "copies at once":
            say.note(f"This card's link moves both directions at once in {percent(together / copies)} of the "
                     f"two copies' time alone ({human_seconds(together)} against {human_seconds(copies)}): "
                     "the copies together, not the longer one, are what an overlapped call cannot beat.")
        if over["total_median_s"] >= 0.9 * copies and over["compute_median_s"] < 0.5 * copies:
            if known and together >= 0.9 * copies:
                say.note(f"{b}: the copies in and out did not run at once, and on this card they cannot (both "
                         f"together took {percent(together / copies)} of the two alone): one copy engine, or a "
                         "link that moves one direction at a time; there the limit is h2d + d2h.")
            else:
                # Two causes look alike here; the point's timeline tells them apart (on the H200,
                # with three engines, it was CuPy's get() waiting for each chunk's copy).
                say.note(f"{b}: the copies in and out did not run at once ({human_seconds(over['total_median_s'])} "
                         f"against {human_seconds(copies)} for both): "
                         + ("this card runs them together, so the code waits for each copy before it issues "
                            "the next" if known else "a card with one copy engine moves one direction at a "
                            "time, or the code waits for each copy before it issues the next")
                         + " (CuPy's get() does unless given blocking=False); the timeline of this point shows it.")
        share = over["compute_median_s"] / max(over["h2d_s"], over["d2h_s"])
        if share < 0.1:
            say.note(f"{b}: the compute is {percent(share)} of the longest copy: there is little to hide the "
                     "copies behind, and overlap can only run the copies in and out at once.")
        p = m.across(b, (PAGEABLE, PAGEABLE_K))
        if p is not None:
            pseq, pover = m.row(b, p, PAGEABLE), m.row(b, p, PAGEABLE_K)
            gained, pv = m.takes_at_least(1.1, b, b, p, "total_median_s", PAGEABLE, PAGEABLE_K)
            # The claim holds where 4 streams gained nothing (their ratio's interval below 1.1x).
            say.decide(None if gained is None else not gained,
                       f"{b} from pageable memory at {fmt_size(p)}: 4 streams took "
                       f"{human_seconds(pover['total_median_s'])} against {human_seconds(pseq['total_median_s'])} "
                       "in turn, no faster: the driver copies pageable memory through a pinned buffer of its "
                       "own and the host waits for each copy, so nothing overlaps.",
                       f"{b} from pageable memory at {fmt_size(p)}: 4 streams took "
                       f"{human_seconds(pover['total_median_s'])} against {human_seconds(pseq['total_median_s'])} "
                       "in turn: faster, which pageable copies should not allow here.", pv)
