"""How a result row reads as text: each cell by its column's declared hint, a median's interval,
a point's caution and the terminal table of a sweep. The table widget, the report and the command
line write rows through these; ``workbench.results.rows`` only declares what each column holds."""
from __future__ import annotations

import logging
import math
from typing import Any, Mapping

from workbench.core.lazy import lazy_module

from workbench.core import bounds, units
from workbench.core.units import nbytes as human_bytes, seconds as human_seconds
from workbench.results.rows import INFO, decode_stages

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

__all__ = ["caution", "cell_text", "human_bytes", "human_seconds", "interval_text", "readable_table",
           "summary_table"]


def cell_text(name: str, value: Any) -> str:
    """A cell as the table shows it, by its column's declared hint: times and byte counts with
    their units (``workbench.core.units``), rates to 4 digits, errors in scientific notation."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    info = INFO.get(name)
    hint = info.hint if info is not None else ("duration" if name.endswith("_s") else "")
    if hint == "duration":
        return human_seconds(value)
    if hint == "bytes":
        return human_bytes(value)
    if hint == "rate":
        return f"{value:.4g}"
    if hint == "ratio":
        return f"{value:.2e}"
    if hint == "energy":
        return f"{value:.4g} J"
    return str(value)


def interval_text(lo: Any, hi: Any) -> str:
    """'1.2 ms-1.3 ms': a median's 95 % interval as every view writes it; '-' where there is none
    (a file from before the intervals were kept, a point with too few samples)."""
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        return "-"
    return f"{human_seconds(lo)}-{human_seconds(hi)}" if math.isfinite(lo) and math.isfinite(hi) else "-"


def readable_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The result columns a person reads, as text with units (the terminal table, the HTML report)."""
    show = pd.DataFrame({
        "backend": frame["backend"],
        "size": frame["size"],
        "threads": frame["threads"].map(lambda n: str(n) if n else "-"),
        "variant": frame["variant"],
        "compute": frame["compute_median_s"].map(human_seconds),
        # The median's 95 % interval and the count of samples it rests on (workbench.core.stats).
        "95 % CI": [interval_text(a, b) for a, b in zip(frame["compute_ci_lo_s"], frame["compute_ci_hi_s"])],
        "n": frame["repeats"],
        "noise": frame["noise"].map(lambda v: "-" if pd.isna(v) else f"{100 * v:.1f} %"),
        # CPU backends have no transfer phases (host_memory is empty for them): show "-", not "0 ns".
        "h2d": [human_seconds(v) if hm else "-" for v, hm in zip(frame["h2d_s"], frame["host_memory"])],
        "d2h": [human_seconds(v) if hm else "-" for v, hm in zip(frame["d2h_s"], frame["host_memory"])],
        "end-to-end": frame["total_median_s"].map(human_seconds),
        # End to end over max(h2d, compute, d2h), what copies overlapped with compute approach
        # (workbench.views.overlap): 1x is every copy hidden, 2-3x is each phase waiting for the last.
        "e2e/limit": [_over_limit(r) if _overlapped(r) else "-" for r in
                      frame[[c for c in ("h2d_s", "compute_median_s", "d2h_s", "total_median_s",
                                         "copies_together_s", "overlapped") if c in frame.columns]
                            ].to_dict("records")],
        "first call": frame["first_call_s"].map(human_seconds),
        "1st-call host": frame["first_call_host_bytes"].map(human_bytes),
        # GPU rows: the warm figure above is GPU time (launch gaps hidden); beside it, after an L2
        # flush, and a Python call with its wait, as a user's line of code pays it.
        "GPU cold": [human_seconds(v) if hm else "-" for v, hm in zip(frame["cold_median_s"], frame["host_memory"])],
        "call": [human_seconds(v) if hm else "-" for v, hm in zip(frame["call_median_s"], frame["host_memory"])],
        "GFLOP/s": frame["gflops"].map(lambda v: "-" if pd.isna(v) or v == 0 else f"{v:.3g}"),
        "GB/s": frame["gbps"].map(lambda v: "-" if pd.isna(v) else f"{v:.3g}"),
        # What limits each point and how close it comes (workbench.core.bounds).
        "bound": [bounds.text(b, s) or "-" for b, s in zip(frame["bound"], frame["of_bound"])],
        "host mem": frame["peak_host_bytes"].map(human_bytes),
        "dev mem": frame["peak_device_bytes"].map(human_bytes),
        "kernels": frame["kernel_count"].map(lambda n: str(n) if n else "-"),
        # The compute's energy a call; a GPU row's whole call, copies and all, beside it.
        "energy/call": frame["energy_j"].map(lambda v: "-" if pd.isna(v) else units.significant(v) + " J"),
        "e2e energy": [units.significant(v) + " J" if hm and not pd.isna(v) else "-"
                       for v, hm in zip(frame["energy_e2e_j"], frame["host_memory"])],
        "rel err": frame["max_rel_error"].map(lambda v: "-" if pd.isna(v) else f"{v:.1e}"),
        "status": frame["status"],
    })
    if (show["e2e/limit"] == "-").all():             # no overlapped call: no limit it aims at
        show = show.drop(columns="e2e/limit")
    if not (frame["kernel_count"] > 0).any():        # no CUPTI here, or a CPU-only sweep
        show = show.drop(columns="kernels")
    if not frame["energy_j"].notna().any():           # energy not asked for, or not measurable here
        show = show.drop(columns="energy/call")
    if (show["e2e energy"] == "-").all():              # no GPU row's whole call read
        show = show.drop(columns="e2e energy")
    if not (frame["variant"] != "").any():
        show = show.drop(columns="variant")
    where = frame["place"].fillna("").astype(str)
    if (where != "").any():        # measured on a Dask cluster: the device of each row
        show.insert(1, "place", where)
    if not (frame["host_memory"] != "").any():      # a CPU-only sweep: no transfer or GPU-only columns
        show = show.drop(columns=[c for c in ("h2d", "d2h", "e2e/limit", "GPU cold", "call", "dev mem")
                                  if c in show.columns])
    else:       # say what the compute figure is on a GPU row: its warm GPU time, launch gaps hidden
        show = show.rename(columns={"compute": "compute (GPU: warm)"})
    return show


def _overlapped(row: Mapping[str, Any]) -> bool:
    from workbench.views.overlap import is_overlapped
    return is_overlapped(row)


def _over_limit(row: Mapping[str, Any]) -> str:
    from workbench.views.overlap import limit_s
    limit, total = limit_s(row), row.get("total_median_s")
    return f"{total / limit:.2f}x" if limit > 0 and isinstance(total, float) and math.isfinite(total) else "-"


def caution(row: Mapping[str, Any]) -> str:
    """Why a point's figures are to be read with care ('' when they need none): the machine's load or
    throttling (``noisy``), or a median whose interval did not reach the noise target in time."""
    said = []
    if row.get("noisy"):
        said.append(f"noisy: {row['noisy']}")
    if not row.get("converged", True):
        lo, hi, med = row.get("compute_ci_lo_s"), row.get("compute_ci_hi_s"), row.get("compute_median_s")
        width = (f" (95 % interval +-{50 * (hi - lo) / med:.1f} % after {row.get('repeats', 0)} samples)"
                 if all(isinstance(v, float) and math.isfinite(v) for v in (lo, hi, med)) and med > 0 else "")
        said.append(f"did not reach the noise target within the time cap{width}")
    return "; ".join(said)


def summary_table(frame: pd.DataFrame) -> str:
    """The readable table the command line prints at the end of a sweep."""
    if frame.empty:
        return "(no points)"
    text = readable_table(frame).to_string(index=False)
    staged = frame[frame["stages"] != ""]
    if not staged.empty:
        text += "\n\nWhere a typical repeat's compute went, stage by stage:\n" + "\n".join(
            f"{r.backend} size {r.size}: "
            + ", ".join(f"{k} {human_seconds(v)}" for k, v in decode_stages(r.stages).items())
            for r in staged.itertuples())
    noted = frame[(frame["status"] == "ok") & (frame["message"].astype(str) != "")]
    if not noted.empty:        # what a session saw beside the figures (cudf.pandas: calls that fell back)
        text += "\n\n" + "\n".join(f"{r.backend} size {r.size}: {r.message}" for r in noted.itertuples())
    flagged = frame[(frame["status"] == "ok") & ((frame["noisy"].astype(str) != "") | ~frame["converged"].astype(bool))]
    if not flagged.empty:      # figures to read with care: a busy machine, or noise the cap left unresolved
        text += "\n\n" + "\n".join(f"{r.backend} size {r.size}: {caution(r._asdict())}" for r in flagged.itertuples())
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        text += "\n\n" + "\n".join(f"{r.backend} size {r.size}: {r.status}: {r.message}" for r in failed.itertuples())
    return text
