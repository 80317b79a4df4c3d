"""One measured point: :class:`Row`, a frozen dataclass whose fields declare the result columns.

Each field says its name, its type and its unit once (nvbench's ``hint``: a duration, a byte
count, a rate...); every other description of a row is derived from it: :data:`COLUMNS` (the
order of the columns in every file and table), :data:`JSON_ONLY` (what a CSV leaves out), the
kinds the file reader checks each cell against (``workbench.results.files``), the units a results
file carries, and how each cell is written for a person (``workbench.views.table_text``).

Every view (the terminal table, the plots, the table widget, the exports) reads the same pandas
DataFrame (:func:`to_frame`) whose columns are named here; the names are the file format.
"""
from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Iterable, Iterator

from workbench.core.lazy import lazy_module

from workbench.core import units

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

NAN = float("nan")


def _column(default: Any, kind: type, hint: str, unit: str = "", csv: bool = True) -> Any:
    """A field of :class:`Row`: its default, and what a column of it holds (``kind``: str, int,
    bool or float; ``hint``: how it is written for a person; ``unit``; whether CSV files hold it)."""
    return field(default=default, metadata={"kind": kind, "hint": hint, "unit": unit, "csv": csv})


def _text(default: str = "") -> Any:
    return _column(default, str, "text")


def _seconds() -> Any:
    return _column(NAN, float, "duration", "s")


def _number(hint: str, unit: str = "") -> Any:
    return _column(NAN, float, hint, unit)


@dataclass(frozen=True)
class Row(Mapping):
    """One measured point, as the engine reports it and every file and view keeps it.

    A mapping too (``row["status"]``, ``row.get("noisy")``, ``dict(row)``), so that code reading a
    row needs not know whether it holds a Row or a dict from an older file or the engine's pipe.
    Frozen: a row shown in the table, drawn in a chart and appended to a file is one value, which
    none of them can change under the others."""

    workload: str = _text()
    backend: str = _text()
    device: str = _text()
    size: int = _column(0, int, "count", "size")        # in the workload's own unit (its size_unit)
    dtype: str = _text()
    variant: str = _text()
    host_memory: str = _text()                          # "pageable" or "pinned" on a GPU row, "" on a CPU one
    repeats: int = _column(0, int, "count", "samples")
    first_call_s: float = _seconds()
    compute_median_s: float = _seconds()
    compute_min_s: float = _seconds()
    compute_max_s: float = _seconds()
    compute_q1_s: float = _seconds()
    compute_q3_s: float = _seconds()
    host_issue_s: float = _seconds()
    h2d_s: float = _seconds()
    d2h_s: float = _seconds()
    total_median_s: float = _seconds()
    total_q1_s: float = _seconds()
    total_q3_s: float = _seconds()
    # The noise (workbench.core.stats): the 95 % intervals of both medians, the compute samples' relative
    # spread, and whether the stopping rule's target was met before the point's time cap.
    compute_ci_lo_s: float = _seconds()
    compute_ci_hi_s: float = _seconds()
    total_ci_lo_s: float = _seconds()
    total_ci_hi_s: float = _seconds()
    noise: float = _number("fraction")
    converged: bool = _column(True, bool, "flag")
    # GPU figures beside the warm one (compute_*): after an L2 flush, and a Python call with its wait.
    cold_median_s: float = _seconds()
    call_median_s: float = _seconds()
    # The machine's state while the point ran (workbench.measure.load, workbench.measure.gpu.clocks); ``noisy``
    # says why a point cannot be trusted for a verdict ('' when the machine was quiet).
    others_cores: float = _number("number", "cores")
    canary_s: float = _seconds()
    sm_clock_mhz: float = _number("number", "MHz")
    mem_clock_mhz: float = _number("number", "MHz")
    throttle: str = _text()
    dropped: int = _column(0, int, "count", "samples")
    noisy: str = _text()
    # What one steady call allocates, its implementation's buffers with it, above what the process
    # held before (workbench.measure.host_memory, workbench.measure.gpu.memory); the first call's
    # (compilation, setup) apart.
    peak_host_bytes: float = _number("bytes", "B")
    peak_device_bytes: float = _number("bytes", "B")
    first_call_host_bytes: float = _number("bytes", "B")
    first_call_device_bytes: float = _number("bytes", "B")
    gflops: float = _number("rate", "GFLOP/s")
    gbps: float = _number("rate", "GB/s")
    gbps_limit: float = _number("rate", "GB/s")
    gflops_limit: float = _number("rate", "GFLOP/s")
    # A GPU row's copies in and out run both at once, at the rate the device measured for that
    # (workbench.measure.gpu.duplex): what an overlapped call's copies cannot beat. NaN where not
    # measured (a CPU row, an older file, a session that cannot say).
    copies_together_s: float = _seconds()
    # Its end to end is one call with the copies overlapped with the compute (Phases.whole): the
    # rows its limit (max(h2d, compute, d2h), the copies at once) is a target for; False elsewhere.
    overlapped: bool = _column(False, bool, "flag")
    # What limits the point (workbench.core.bounds): launch, transfer, memory (its level), compute
    # or unknown, and how close it comes (a fraction); '' in files from before it was kept.
    bound: str = _text()
    of_bound: float = _number("fraction")
    # The threads a CPU point ran on (workbench.measure.threads); 0 on a GPU row and in older files.
    threads: int = _column(0, int, "count", "threads")
    # What one GPU call launches (workbench.measure.gpu.kernels, CUPTI): the count of its kernels,
    # and each kernel, copy and memset with its GPU time as JSON [[kind, name, seconds], ...].
    kernel_count: int = _column(0, int, "count", "kernels")
    kernels: str = _column("", str, "json", csv=False)
    # Energy of one call above the idle draw, the draw while the calls ran, the time of a call while
    # they did, and the idle draw taken off (workbench.measure.energy, with --energy): of the compute
    # alone (on a GPU, back to back as its timing runs it; a CPU call is all compute), and of the
    # whole call with its copies (_e2e). ``energy_source`` says which counter, or why none.
    energy_j: float = _number("energy", "J")            # the median of WINDOWS readings, lowest and highest beside
    energy_lo_j: float = _number("energy", "J")
    energy_hi_j: float = _number("energy", "J")
    power_w: float = _number("rate", "W")
    energy_call_s: float = _seconds()
    energy_e2e_j: float = _number("energy", "J")
    energy_e2e_lo_j: float = _number("energy", "J")
    energy_e2e_hi_j: float = _number("energy", "J")
    power_e2e_w: float = _number("rate", "W")
    energy_e2e_call_s: float = _seconds()
    idle_w: float = _number("rate", "W")
    gflop_per_j: float = _number("rate", "GFLOP/J")     # of the compute
    energy_source: str = _text()
    max_rel_error: float = _number("ratio")
    verified: bool = _column(False, bool, "flag")
    status: str = _text("error")                        # one of STATUSES
    message: str = _text()
    stages: str = _column("", str, "json")              # {stage: seconds} in the order they ran (encode_stages)
    # Where a point ran on a Dask cluster (workbench.cluster): the device, 'node2:GPU1' or 'node2:CPU',
    # and the worker's address ('' for a point measured by this machine's own engine).
    place: str = _text()
    worker: str = _text()
    # The raw samples as compact JSON {figure: [seconds, ...]}: in JSON files, not in CSV.
    samples: str = _column("", str, "json", csv=False)
    # Each round's median, by round ({"group": id, "compute": [...], "total": [...]}): the points of
    # one size ran their rounds interleaved (workbench.measure.point), so two of them pair round by round.
    rounds: str = _column("", str, "json")

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> "Row":
        """A row from a mapping of its columns (the engine's dict, a journal's line, a row of a
        frame): columns it lacks take their defaults, names that are no column are left out (a
        journal written by a later version), NaN, None and missing mean 'not measured'."""
        if isinstance(values, Row):
            return values
        known = {k: v for k, v in values.items() if k in _FIELD_SET}
        for name in ("size", "repeats", "dropped", "threads", "kernel_count"):       # a frame's int64, a journal's float
            if name in known and known[name] is not None and not isinstance(known[name], bool):
                try:
                    known[name] = int(known[name])
                except (TypeError, ValueError, OverflowError):
                    pass
        for name, value in list(known.items()):
            if value is None:
                del known[name]
        return cls(**known)

    def replace(self, **values: Any) -> "Row":
        from dataclasses import replace
        return replace(self, **values)

    # The mapping: read-only, by column name.
    def __getitem__(self, name: str) -> Any:
        if name not in _FIELD_SET:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(_FIELDS)

    def __len__(self) -> int:
        return len(_FIELDS)

    def __contains__(self, name: object) -> bool:
        return name in _FIELD_SET

    def __eq__(self, other: object) -> bool:
        """Field by field, a figure not measured (NaN) equal to another not measured."""
        if other.__class__ is not Row:
            return NotImplemented
        return all(_same(getattr(self, n), getattr(other, n)) for n in _FIELDS)

    # Unhashable, as a dict is: NaN hashes by identity, so two equal rows could hash apart.
    __hash__ = None  # type: ignore[assignment]


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Row))
_FIELD_SET = frozenset(_FIELDS)
_ALL_FIELDS = operator.attrgetter(*_FIELDS)


@dataclass(frozen=True)
class ColumnInfo:
    """What :class:`Row` declares of one column."""

    name: str
    kind: type               # str, int, bool or float
    hint: str                # text, json, count, duration, bytes, rate, ratio, fraction, number, flag
    unit: str                # "s", "B", "GB/s", ... ("" where a column has none)
    csv: bool                # whether CSV files hold it (the raw samples are JSON's)
    default: Any

    @property
    def type_name(self) -> str:
        return {str: "text", int: "integer", bool: "bool", float: "float"}[self.kind]


#: Every column, as :class:`Row` declares it, in file order.
DECLARED: tuple[ColumnInfo, ...] = tuple(
    ColumnInfo(f.name, f.metadata["kind"], f.metadata["hint"], f.metadata["unit"], f.metadata["csv"],
               f.default if f.default is not MISSING else None) for f in fields(Row))
INFO = {c.name: c for c in DECLARED}
#: The columns of a result row, in file order.
COLUMNS = tuple(c.name for c in DECLARED)
#: Columns a CSV file leaves out (they belong to the JSON format only).
JSON_ONLY = tuple(c.name for c in DECLARED if not c.csv)
TEXT_COLUMNS = frozenset(c.name for c in DECLARED if c.kind is str)
INTEGER_COLUMNS = frozenset(c.name for c in DECLARED if c.kind is int)
BOOL_COLUMNS = frozenset(c.name for c in DECLARED if c.kind is bool)
#: Columns holding JSON (samples, rounds, stages, kernels): compact text in a frame and a CSV, the
#: nested value itself in a JSON file (``workbench.results.files``, schema 4).
JSON_COLUMNS = frozenset(c.name for c in DECLARED if c.hint == "json")
#: ``implausible``: a figure beyond what the device can do (workbench.measure.limits): the timing is wrong.
STATUSES = ("ok", "wrong", "implausible", "error", "cancelled")


def empty_row(**values: Any) -> dict[str, Any]:
    """A row with every column present, as a dict (the engine's form on its pipe): the
    defaults of :class:`Row` (NaN where nothing was measured) and ``values``."""
    unknown = set(values) - set(COLUMNS)
    if unknown:
        raise KeyError(f"not result columns: {sorted(unknown)}")
    row = {c.name: c.default for c in DECLARED}
    row.update(values)
    return row


#: How a row that ran out of device memory begins its message (the device memory cap raises it).
OUT_OF_DEVICE_MEMORY = "out of device memory"


def to_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The result table of ``rows`` (Rows or dicts): one row each, every column of COLUMNS."""
    rows = list(rows)
    if all(r.__class__ is Row for r in rows):
        # A Row's fields in one call each, transposed: through Mapping.get, column by column, it
        # was 0.2 s at 5,000 rows, the GUI thread's when an export or a hover asked (issue 38).
        values = list(zip(*map(_ALL_FIELDS, rows))) if rows else [()] * len(COLUMNS)
        columns = dict(zip(_FIELDS, values))
        return frame_of({c: list(columns[c]) for c in COLUMNS})
    return frame_of({c: [r.get(c, NAN) for r in rows] for c in COLUMNS})


def frame_of(columns: Mapping[str, list]) -> pd.DataFrame:
    """The result table of ``columns`` (every one of COLUMNS, each a list of its cells)."""
    frame = pd.DataFrame({c: columns[c] for c in COLUMNS}, columns=list(COLUMNS))
    frame = frame.astype({"size": "int64", "repeats": "int64", "dropped": "int64", "threads": "int64",
                          "kernel_count": "int64", "verified": "bool", "converged": "bool"})
    # One block per dtype, not per column: every filter, join and copy a view makes of the table
    # then works on a few arrays instead of fifty.
    return frame.copy()


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


# A unit's text is ``workbench.core.units``'; these two names stay for the modules that import them here.
human_bytes = units.nbytes
human_seconds = units.seconds
