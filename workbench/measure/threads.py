"""How many threads a CPU point ran on, and the series that set them (``--threads 1,4,all``): a
speedup over a CPU baseline means nothing without its threads (issue 29).

Numba's parallel loops use ``numba.get_num_threads()``; a BLAS call the pool that threadpoolctl
reports; plain NumPy, pandas and SciPy code one thread, whatever is asked.
"""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

log = logging.getLogger(__name__)


def blas_threads() -> int:
    """The largest BLAS pool in this process (threadpoolctl), 1 where none is loaded."""
    try:
        from threadpoolctl import threadpool_info
        pools = [p.get("num_threads", 1) for p in threadpool_info() if p.get("user_api") == "blas"]
    except Exception as exc:  # noqa: BLE001 - an odd BLAS must not cost the point
        log.info("threadpoolctl could not read the BLAS pools: %s", exc)
        return 0
    return int(max(pools, default=1))


def numba_threads() -> int:
    numba = sys.modules.get("numba")
    try:
        return int(numba.get_num_threads()) if numba is not None else 0
    except Exception:  # noqa: BLE001 - a Numba without threading layer
        return 0


def _whose(implementation: Any) -> str:
    """'numba', 'blas' or 'one': which pool an implementation's threads come from."""
    return implementation.threads or ("numba" if implementation.backend == "numba" else "one")


def settable(implementation: Any) -> bool:
    """Whether a series of it at a set number of threads means anything (a one-thread code does not)."""
    return _whose(implementation) in ("numba", "blas")


def fixed_text(implementation: Any) -> str:
    return "one thread" if _whose(implementation) == "one" else "its own threads"


def used(implementation: Any) -> int:
    """The threads of a CPU ``implementation`` (a catalogue Implementation); 0 where unknown."""
    whose = _whose(implementation)
    if whose == "numba":
        return numba_threads()
    if whose == "blas":
        return blas_threads()
    return 1


def available() -> int:
    """The cores this process may run on (its affinity, which a container or ``taskset`` narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def numba_most() -> int:
    """The most threads Numba's pool was started with (NUMBA_NUM_THREADS): set_num_threads refuses more."""
    try:
        from numba import config
        return int(config.NUMBA_NUM_THREADS)
    except Exception:  # noqa: BLE001
        return available()


def counts(text: str) -> tuple[int, ...]:
    """'1,4,all' as (1, 4, N), N the cores available, in the order given and without repeats;
    ValueError with one line for anything else."""
    found: list[int] = []
    for part in (p.strip().lower() for p in str(text).split(",")):
        if not part:
            continue
        if part == "all":
            n = available()
        else:
            try:
                n = int(part)
            except ValueError:
                raise ValueError(f"{part!r} is not a thread count (a whole number, or 'all')") from None
            if n < 1:
                raise ValueError(f"{n} threads: a count is 1 or more")
            if n > available():
                raise ValueError(f"{n} threads: this machine lets this process run on {available()}")
        if n not in found:
            found.append(n)
    if not found:
        raise ValueError("no thread count given (e.g. 1,4,all)")
    return tuple(found)


def series(backends: Sequence[str], thread_counts: Sequence[int], implementations: Any) -> tuple[str, ...]:
    """Each backend whose threads can be set, once per count ('numba x1', 'numba x4'); every other
    backend once, as it is: NumPy's elementwise code runs one thread whatever is asked."""
    from workbench.catalog.backends import THREADS_SEP
    out: list[str] = []
    for b in backends:
        impl = implementations.get(b)
        if impl is not None and thread_counts and settable(impl):
            out += [f"{b}{THREADS_SEP}{n}" for n in thread_counts]
        else:
            out.append(b)
    return tuple(out)


@contextmanager
def limited(implementation: Any, n: int) -> Iterator[None]:
    """Inside: ``implementation`` runs on ``n`` threads (Numba's pool, or the BLAS pool through
    threadpoolctl); ``n`` 0 leaves it as it is. What was set before comes back on exit."""
    whose = _whose(implementation)
    if n <= 0 or whose == "one":
        yield
        return
    if whose == "numba":
        import numba
        before = numba.get_num_threads()
        numba.set_num_threads(min(n, numba_most()))
        try:
            yield
        finally:
            numba.set_num_threads(before)
        return
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=n, user_api="blas"):
        yield
