"""Copies both ways at once: what a call that overlaps its copy in with its copy out can reach.

A link moves each direction at full speed alone, and both at once slower: on the H100 host of
docs/PERFORMANCE.md 256 MiB took 4.87 ms in and 4.88 ms out alone (55 GB/s), 7.35 ms both at
once (36.5 GB/s each way). ``max(h2d, compute, d2h)`` is then no limit an overlapped call can
reach: the copies together take 0.75 of their sum there. Measured once per device with the
bandwidth ladder (``workbench.measure.limits``), from pinned memory on two streams, each figure
the best of a few, timed on the host around a wait for the device.
"""
from __future__ import annotations

import time
from typing import Callable

#: Bytes each way: long beside a launch (1.2 ms at 55 GB/s), small beside any device.
DUPLEX_BYTES = 64 * 2 ** 20
REPEATS = 5


def best(fn: Callable[[], object], synchronize: Callable[[], None], repeats: int = REPEATS) -> float:
    fn()
    synchronize()
    times = []
    for _ in range(repeats):
        synchronize()
        t = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - t)
    return min(times)


def seconds(up: Callable[[], object], down: Callable[[], object], synchronize: Callable[[], None]
            ) -> tuple[float, float, float]:
    """(copy in alone, copy out alone, both at once): ``up`` and ``down`` issue their copy on
    streams of their own and return without waiting."""
    def both() -> None:
        up()
        down()
    return best(up, synchronize), best(down, synchronize), best(both, synchronize)
