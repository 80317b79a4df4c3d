"""How many threads a CPU point ran on: a speedup over a CPU baseline means nothing without it
(issue 29). Numba's parallel loops use ``numba.get_num_threads()``; a BLAS call the pool that
threadpoolctl reports; plain NumPy, pandas and SciPy code one thread."""
from __future__ import annotations

import logging
import sys
from typing import Any

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


def used(implementation: Any) -> int:
    """The threads of a CPU ``implementation`` (a catalogue Implementation); 0 where unknown."""
    whose = implementation.threads or ("numba" if implementation.backend == "numba" else "one")
    if whose == "numba":
        return numba_threads()
    if whose == "blas":
        return blas_threads()
    return 1
