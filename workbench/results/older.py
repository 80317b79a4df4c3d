"""What the columns of a file of an older schema meant, read as today's (``workbench.results.files``
calls :func:`read_as_today` on every table it opens)."""
from __future__ import annotations

import math

from workbench.core.lazy import lazy_module

pd = lazy_module("pandas")

#: Before this schema a GPU row's energy columns held its whole call's, copies and all.
COMPUTE_ENERGY_SCHEMA = 5


def read_as_today(frame: "pd.DataFrame", schema: int) -> "pd.DataFrame":
    """``frame``, read from a file of ``schema``, with today's meaning in each column."""
    return whole_call_energy(frame, schema)


def whole_call_energy(frame: "pd.DataFrame", schema: int) -> "pd.DataFrame":
    """A file from before COMPUTE_ENERGY_SCHEMA: what its GPU rows (those with a host memory) call
    their energy is their whole call's. It is read as that, and no compute figure is made up."""
    if schema >= COMPUTE_ENERGY_SCHEMA or frame.empty or "energy_j" not in frame:
        return frame
    measured = frame["energy_j"].notna()
    old = (frame["host_memory"] != "") & measured
    cpu = (frame["host_memory"] == "") & measured       # a CPU call, all compute: its whole call is that
    if not measured.any():
        return frame
    frame = frame.copy()
    for compute, whole in (("energy_j", "energy_e2e_j"), ("energy_lo_j", "energy_e2e_lo_j"),
                           ("energy_hi_j", "energy_e2e_hi_j"), ("power_w", "power_e2e_w")):
        frame.loc[old | cpu, whole] = frame.loc[old | cpu, compute]
        frame.loc[old, compute] = math.nan
    frame.loc[old, "gflop_per_j"] = math.nan
    frame.loc[old, "energy_source"] = frame.loc[old, "energy_source"] + (
        f"; a file of schema {schema}: the whole call's energy only, the compute's was not read apart")
    return frame
