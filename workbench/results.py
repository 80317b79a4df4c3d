"""The result table: one row per measured point, and its CSV and JSON files.

Every view (the terminal table, the plots, the table widget, the exports)
reads the same pandas DataFrame whose columns are named here; the names are
the file format.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

#: The columns of a result row, in file order.
COLUMNS = (
    "workload", "backend", "device", "size", "dtype", "variant", "host_memory", "repeats",
    "first_call_s", "compute_median_s", "compute_min_s", "compute_max_s", "compute_q1_s",
    "compute_q3_s", "h2d_s", "d2h_s", "total_median_s", "total_q1_s", "total_q3_s",
    "peak_host_bytes", "peak_device_bytes", "gflops", "gbps", "max_rel_error", "verified",
    "status", "message",
    "stages",
)
#: Columns of text; an empty string, never NaN, where there is nothing to say.
TEXT_COLUMNS = ("variant", "host_memory", "message", "stages")
STATUSES = ("ok", "wrong", "error", "skipped", "cancelled")


def empty_row(**values: Any) -> dict[str, Any]:
    """A row with every column present (NaN where nothing was measured)."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS, float("nan"))
    row.update(variant="", host_memory="", repeats=0, verified=False, status="error", message="", stages="")
    unknown = set(values) - set(COLUMNS)
    if unknown:
        raise KeyError(f"not result columns: {sorted(unknown)}")
    row.update(values)
    return row


def to_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
    # Files written before the stages column have none: read it as "no stages", not NaN.
    frame["stages"] = frame["stages"].astype(object).where(frame["stages"].notna(), "")
    return frame.astype({"size": "int64", "repeats": "int64", "verified": "bool"})


def encode_stages(stages: Mapping[str, float]) -> str:
    """The ``stages`` column: {stage: seconds} in the order the stages ran, as compact JSON ('' if none).

    A name ``a->b`` is the hand-off from stage ``a`` to stage ``b``.
    """
    return json.dumps({str(k): float(v) for k, v in stages.items()}, separators=(",", ":")) if stages else ""


def decode_stages(text: Any) -> dict[str, float]:
    """{stage: seconds} from a ``stages`` cell, in the order the stages ran; {} for an empty cell."""
    if not isinstance(text, str) or not text:
        return {}
    return {str(k): float(v) for k, v in json.loads(text).items()}


def save(frame: pd.DataFrame, path: str | Path, environment: Mapping[str, Any]) -> Path:
    """Write the results as CSV (environment as ``#`` comment lines) or JSON."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        records = json.loads(frame.to_json(orient="records", double_precision=15))
        path.write_text(json.dumps({"environment": dict(environment), "results": records}, indent=1))
    elif path.suffix.lower() == ".csv":
        with path.open("w", newline="") as f:
            for key, value in environment.items():
                f.write(f"# {key}: {json.dumps(value)}\n")
            frame.to_csv(f, index=False)
    else:
        raise ValueError(f"cannot write {path.name}: the file name must end in .csv or .json")
    return path


def load(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a file written by :func:`save`: the table and its environment record."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text())
        return to_frame(data["results"]), data["environment"]
    env: dict[str, Any] = {}
    with path.open() as f:
        for line in f:
            if not line.startswith("# "):
                break
            key, _, value = line[2:].partition(": ")
            env[key] = json.loads(value)
    frame = pd.read_csv(path, comment="#", keep_default_na=False,
                        na_values=["", "NaN", "nan"], dtype=dict.fromkeys(TEXT_COLUMNS, str))
    return to_frame(frame.fillna(dict.fromkeys(TEXT_COLUMNS, "")).to_dict("records")), env


def human_bytes(n: float) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def human_seconds(s: float) -> str:
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return str(s)


def summary_table(frame: pd.DataFrame) -> str:
    """The readable table the command line prints at the end of a sweep."""
    if frame.empty:
        return "(no points)"
    show = pd.DataFrame({
        "backend": frame["backend"],
        "size": frame["size"],
        "variant": frame["variant"],
        "compute": frame["compute_median_s"].map(human_seconds),
        "q1-q3": [f"{human_seconds(a)}-{human_seconds(b)}" for a, b in zip(frame["compute_q1_s"], frame["compute_q3_s"])],
        # CPU backends have no transfer phases (host_memory is empty for them): show "-", not "0 ns".
        "h2d": [human_seconds(v) if hm else "-" for v, hm in zip(frame["h2d_s"], frame["host_memory"])],
        "d2h": [human_seconds(v) if hm else "-" for v, hm in zip(frame["d2h_s"], frame["host_memory"])],
        "end-to-end": frame["total_median_s"].map(human_seconds),
        "first call": frame["first_call_s"].map(human_seconds),
        "GFLOP/s": frame["gflops"].map(lambda v: "-" if pd.isna(v) or v == 0 else f"{v:.3g}"),
        "GB/s": frame["gbps"].map(lambda v: "-" if pd.isna(v) else f"{v:.3g}"),
        "host mem": frame["peak_host_bytes"].map(human_bytes),
        "dev mem": frame["peak_device_bytes"].map(human_bytes),
        "rel err": frame["max_rel_error"].map(lambda v: "-" if pd.isna(v) else f"{v:.1e}"),
        "status": frame["status"],
    })
    if not (frame["variant"] != "").any():
        show = show.drop(columns="variant")
    text = show.to_string(index=False)
    staged = frame[frame["stages"] != ""]
    if not staged.empty:
        text += "\n\nWhere a typical repeat's compute went, stage by stage:\n" + "\n".join(
            f"{r.backend} size {r.size}: "
            + ", ".join(f"{k} {human_seconds(v)}" for k, v in decode_stages(r.stages).items())
            for r in staged.itertuples())
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        text += "\n\n" + "\n".join(f"{r.backend} size {r.size}: {r.status}: {r.message}" for r in failed.itertuples())
    return text
