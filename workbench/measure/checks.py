"""What a point's row is checked against: its result against the float64 reference and its
dtype, its interval against the noise target, and its session's own note (``workbench.measure.point``)."""
from __future__ import annotations

import logging
import math
from typing import Any

from workbench.catalog.workloads import Phases, Workload
from workbench.measure.sampling import Timings

log = logging.getLogger(__name__)


def diagnose(session: Any, phases: Phases, timings: Timings) -> str:
    """A session's note on the point it just measured (``Session.diagnose``), '' if it has none."""
    diagnose = getattr(session, "diagnose", None)
    if diagnose is None or timings.cancelled:
        return ""
    try:
        return str(diagnose(phases.compute))
    except Exception as exc:  # noqa: BLE001 - a note is never worth the point
        log.warning("diagnosing the point failed: %s", exc)
        return ""


def within(lo: float, hi: float, median: float, target: float) -> bool:
    """The interval meets the noise target (a target of 0 asks for none)."""
    return target <= 0 or (median > 0 and math.isfinite(lo) and math.isfinite(hi) and (hi - lo) / 2 / median <= target)


def verify(row: dict, workload: Workload, dtype: str, err: float, dtype_problem: str = "") -> None:
    """Status from every round's result against the float64 reference and the point's dtype, and
    from the limits check."""
    tol = workload.tolerance[dtype]
    row.update(max_rel_error=err, verified=bool(err <= tol and not dtype_problem))
    wrong = "; ".join(m for m in (dtype_problem, "" if err <= tol else (
        f"result differs from the float64 reference: max relative error {err:.3g} exceeds the {dtype} "
        f"tolerance {tol:.1g}")) if m)
    problem = row.pop("_problem", "")
    if problem:
        # A timing the hardware cannot produce is no result, whatever the verification says.
        row.update(status="implausible", message=problem + (f"; the {wrong}" if wrong else ""))
    elif wrong:
        row.update(status="wrong", message=wrong)
    else:
        row.update(status="ok")
