"""A GPU's STREAM rungs (copy, read, triad), timed the way its points are, whichever library asks.

Two faults made the H100's L2 ceiling too low (a CuPy raw kernel at 12 MiB read 1.2x "the
3,028 GB/s that H100 copies from L2" and was called implausible, 2026-12-07):

- A rung was one call between two events, launch gap and all, while a point is a burst of
  back-to-back calls behind the blocking kernel (``workbench.measure.sampling``). A cache-resident
  rung lasts a few microseconds, about as long as the gap, so its ceiling was held down by a cost
  the points do not pay. Rungs are bursts behind the blocking kernel too now.
- The limits of a device are measured once per process, by the first session that asks. A Numba
  or cuDF session measured copies only, a CuPy session sums and triads as well, so the ceiling
  depended on which backend ran first. Every session measures through CuPy now, where it is
  installed (it always is beside cuDF; ``cupy_session.ladder_seconds``); a Numba-only install
  measures its own copies.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from workbench.measure.sampling import BURST_S, MAX_BURST

#: Bursts timed per rung and pattern; the best counts (a STREAM ceiling is a best case).
REPEATS = 7


def best_seconds(session: Any, work: Callable[[], Any], repeats: int = REPEATS) -> float:
    """The best time of one ``work`` call on ``session``'s stream, from bursts of back-to-back calls
    of at least BURST_S (at most MAX_BURST calls), behind the blocking kernel where it holds."""
    work()                                     # first touch, and any lazy set-up of the call
    one = session.timed(work)[0]
    n = int(min(MAX_BURST, max(1, math.ceil(round(BURST_S / one, 6))))) if one > 0 else MAX_BURST

    def burst() -> None:
        for _ in range(n):
            work()

    blocked = getattr(session, "timed_blocked", None)
    best = math.inf
    for _ in range(repeats):
        seconds = blocked(burst) if blocked is not None else None
        if seconds is None:                    # no blocking kernel, or it timed out: events around the burst
            blocked = None
            seconds = session.timed(burst)[0]
        best = min(best, seconds)
    return best / n
