"""The result table: one row per measured point; its files are written and read in ``workbench.results.files``.

Every view (the terminal table, the plots, the table widget, the exports)
reads the same pandas DataFrame whose columns are named here; the names are
the file format.
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping

import pandas as pd

from workbench.core import units

#: The columns of a result row, in file order.
COLUMNS = (
    "workload", "backend", "device", "size", "dtype", "variant", "host_memory", "repeats",
    "first_call_s", "compute_median_s", "compute_min_s", "compute_max_s", "compute_q1_s",
    "compute_q3_s", "host_issue_s", "h2d_s", "d2h_s", "total_median_s", "total_q1_s", "total_q3_s",
    # The noise (workbench.core.stats): the 95 % intervals of both medians, the compute samples' relative
    # spread, and whether the stopping rule's target was met before the point's time cap.
    "compute_ci_lo_s", "compute_ci_hi_s", "total_ci_lo_s", "total_ci_hi_s", "noise", "converged",
    # GPU figures beside the warm one (compute_*): after an L2 flush, and a Python call with its wait.
    "cold_median_s", "call_median_s",
    # The machine's state while the point ran (workbench.measure.load, workbench.measure.gpu.clocks); ``noisy`` says
    # why a point cannot be trusted for a verdict ('' when the machine was quiet).
    "others_cores", "canary_s", "sm_clock_mhz", "mem_clock_mhz", "throttle", "dropped", "noisy",
    "peak_host_bytes", "peak_device_bytes", "gflops", "gbps", "gbps_limit", "gflops_limit",
    "max_rel_error", "verified", "status", "message",
    "stages",
    # Where a point ran on a Dask cluster (workbench.cluster): the device, 'node2:GPU1' or 'node2:CPU',
    # and the worker's address ('' for a point measured by this machine's own engine).
    "place", "worker",
    "samples",      # the raw samples as compact JSON {figure: [seconds, ...]}: in JSON files, not in CSV
    # Each round's median, by round ({"group": id, "compute": [...], "total": [...]}): the points of
    # one size ran their rounds interleaved (workbench.measure.point), so two of them pair round by round.
    "rounds",
)
#: Columns a CSV file leaves out (they belong to the JSON format only).
JSON_ONLY = ("samples",)
#: ``implausible``: a figure beyond what the device can do (workbench.measure.limits): the timing is wrong.
STATUSES = ("ok", "wrong", "implausible", "error", "cancelled")


def empty_row(**values: Any) -> dict[str, Any]:
    """A row with every column present (NaN where nothing was measured)."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS, float("nan"))
    row.update(variant="", host_memory="", repeats=0, verified=False, status="error", message="", stages="",
               converged=True, throttle="", dropped=0, noisy="", samples="", rounds="", place="", worker="")
    unknown = set(values) - set(COLUMNS)
    if unknown:
        raise KeyError(f"not result columns: {sorted(unknown)}")
    row.update(values)
    return row


#: How a row that ran out of device memory begins its message (the device memory cap raises it).
OUT_OF_DEVICE_MEMORY = "out of device memory"


def to_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
    return frame.astype({"size": "int64", "repeats": "int64", "dropped": "int64", "verified": "bool",
                         "converged": "bool"})


def memory_walls(frame: pd.DataFrame) -> dict[tuple[str, str], int]:
    """The memory wall of each series: {(backend, variant): the smallest size whose point ran out
    of device memory} (those rows' messages begin with :data:`OUT_OF_DEVICE_MEMORY`)."""
    if frame.empty:
        return {}
    hit = frame[(frame["status"] == "error") & frame["message"].astype(str).str.startswith(OUT_OF_DEVICE_MEMORY)]
    return {(str(b), str(v)): int(g["size"].min()) for (b, v), g in hit.groupby(["backend", "variant"], sort=False)}


def encode_stages(stages: Mapping[str, float]) -> str:
    """The ``stages`` column: {stage: seconds} in the order the stages ran, as compact JSON ('' if none).

    A name ``a->b`` is the hand-off from stage ``a`` to stage ``b``.
    """
    return json.dumps({str(k): float(v) for k, v in stages.items()}, separators=(",", ":")) if stages else ""


def encode_samples(samples: Mapping[str, Iterable[float]]) -> str:
    """The ``samples`` column: {figure: [seconds, ...]} as compact JSON, 4 significant digits
    (a sample's own noise is larger), '' if none."""
    if not samples:
        return ""
    return json.dumps({k: [float(f"{v:.4g}") for v in vs] for k, vs in samples.items()}, separators=(",", ":"))


def decode_samples(text: Any) -> dict[str, list[float]]:
    if not isinstance(text, str) or not text:
        return {}
    return {str(k): [float(v) for v in vs] for k, vs in json.loads(text).items()}


def decode_stages(text: Any) -> dict[str, float]:
    """{stage: seconds} from a ``stages`` cell, in the order the stages ran; {} for an empty cell."""
    if not isinstance(text, str) or not text:
        return {}
    return {str(k): float(v) for k, v in json.loads(text).items()}


def human_bytes(n: float) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def human_seconds(s: float) -> str:
    """A time as every view writes it (``workbench.core.units``)."""
    return units.seconds(s)


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
        "first call": frame["first_call_s"].map(human_seconds),
        # GPU rows: the warm figure above is GPU time (launch gaps hidden); beside it, after an L2
        # flush, and a Python call with its wait, as a user's line of code pays it.
        "GPU cold": [human_seconds(v) if hm else "-" for v, hm in zip(frame["cold_median_s"], frame["host_memory"])],
        "call": [human_seconds(v) if hm else "-" for v, hm in zip(frame["call_median_s"], frame["host_memory"])],
        "GFLOP/s": frame["gflops"].map(lambda v: "-" if pd.isna(v) or v == 0 else f"{v:.3g}"),
        "GB/s": frame["gbps"].map(lambda v: "-" if pd.isna(v) else f"{v:.3g}"),
        "host mem": frame["peak_host_bytes"].map(human_bytes),
        "dev mem": frame["peak_device_bytes"].map(human_bytes),
        "rel err": frame["max_rel_error"].map(lambda v: "-" if pd.isna(v) else f"{v:.1e}"),
        "status": frame["status"],
    })
    if not (frame["variant"] != "").any():
        show = show.drop(columns="variant")
    where = frame["place"].fillna("").astype(str)
    if (where != "").any():        # measured on a Dask cluster: the device of each row
        show.insert(1, "place", where)
    if not (frame["host_memory"] != "").any():      # a CPU-only sweep: no transfer or GPU-only columns
        show = show.drop(columns=["h2d", "d2h", "GPU cold", "call", "dev mem"])
    else:       # say what the compute figure is on a GPU row: its warm GPU time, launch gaps hidden
        show = show.rename(columns={"compute": "compute (GPU: warm)"})
    return show


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
