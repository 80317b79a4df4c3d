"""Result files: what is written (schema 5), and everything that may be handed back to be read.

Written: ``NAME.csv`` (one header line, one row per point, so that any spreadsheet opens it; a text
cell a spreadsheet would run as a formula carries a ``'`` in front, taken off again on reading) with
``NAME.meta.json`` beside it (format, schema, time, host, environment, settings, the CSV's name and
the columns' types and units), or ``NAME.json``: the same header with the rows, whose JSON columns
(samples, rounds, stages, kernels) are nested values, not text.

Read by :func:`open_results`: those, a CSV without its sidecar, and every older schema (1: no
format marker; 2: no types and units; 3: JSON columns as text; 4: a GPU row's energy is its whole
call's). Anything else raises
:class:`ResultsFileError`, one line naming the file and the reason.
"""
from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from workbench.core import atomic, regular_file
from workbench.core.lazy import lazy_module
from workbench.results import cells, older
from workbench.results.pieces import PackedSets
from workbench.results import rows as row_schema
from workbench.results.cells import MAX_SECONDS, MIN_SECONDS  # noqa: F401 - read from here by tests
from workbench.results.rows import (COLUMNS, JSON_COLUMNS, JSON_ONLY, TEXT_COLUMNS,
                                    to_frame)

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

FORMAT = "gpu-workbench-results"
#: 5: a GPU row's ``energy_j`` is its compute's, its whole call's beside it (``energy_e2e_j``);
#: 4: a JSON file's JSON columns are nested values; 3: they are text, and the header names each
#: column's type and unit; 2: without those; 1: no format marker. Every one of them is read.
SCHEMA = 5
SIDECAR_SUFFIX = ".meta.json"
#: Each cell is checked by its column's kind and bounds (``workbench.results.cells``).
#: Without these a table is not a result table; any other column may be missing (a file
#: from before that column existed) and is filled with NaN, "", 0 or False.
REQUIRED_COLUMNS = ("workload", "backend", "size", "dtype", "status")
#: The largest file any reader here opens (results, sidecars, sessions): far beyond any sweep's
#: (a 1000-point sweep with its samples is a few MiB), far below what would exhaust memory.
MAX_FILE_BYTES = 512 * 2 ** 20


class ResultsFileError(ValueError):
    """A results file that cannot be read; ``str()`` is one line naming the file and why."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path, self.reason = str(path), reason
        super().__init__(f"cannot open {path}: {reason}")

    def __reduce__(self):
        return type(self), (self.path, self.reason)     # raised in a child process, said in this one


@dataclass(eq=False)
class ResultSet:
    """One result table and what it was measured on: a file read back, or a live sweep."""

    frame: pd.DataFrame
    environment: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    written: str = ""     # ISO 8601, UTC; "" where the file does not say (schema 1)
    host: str = ""        # host name; "" where the file does not say
    source: str = ""      # the file it was read from; "" for a live sweep
    schema: int = SCHEMA


def live(frame: pd.DataFrame, environment: Mapping[str, Any], settings: Mapping[str, Any] | None = None) -> ResultSet:
    """A result set for rows measured here and now (the window's, or the command line's sweep)."""
    return ResultSet(frame, dict(environment), dict(settings or {}), utc_now(), socket.gethostname())


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# Writing ---------------------------------------------------------------------------------------

def sidecar_path(csv_path: str | Path) -> Path:
    """``results.csv`` -> ``results.meta.json``: beside the CSV, never the name of a JSON result file."""
    csv_path = Path(csv_path)
    return csv_path.with_name(csv_path.stem + SIDECAR_SUFFIX)


def save(frame: pd.DataFrame, path: str | Path, environment: Mapping[str, Any],
         settings: Mapping[str, Any] | None = None) -> Path:
    """Write ``frame``, measured here and now, as CSV (with its sidecar) or JSON, by the file name's suffix."""
    return write(live(frame, environment, settings), path)


def write(rs: ResultSet, path: str | Path) -> Path:
    """Write a result set as CSV (with its sidecar) or JSON, chosen by the file name's suffix.

    The set's own time and host are kept: a file opened here and written again still says
    where it was measured.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise ValueError(f"cannot write {path.name}: the file name must end in .csv or .json")
    if suffix == ".json":
        atomic.write_text(path, json.dumps(document(rs), indent=1, allow_nan=False))
    else:
        # The sidecar first: a reader that finds the CSV finds its environment too.
        atomic.write_text(sidecar_path(path), json.dumps({**head(rs), "data": path.name}, indent=1, allow_nan=False))
        atomic.write_text(path, csv_text(rs.frame))
    return path


def csv_text(frame: pd.DataFrame, header: bool = True) -> str:
    """The CSV lines of a result table, each ending in "\\n" (the header line too, unless left out):
    a whole file's, or the rows a sweep appends to one (``workbench.results.out``), written alike."""
    frame = frame.drop(columns=[c for c in JSON_ONLY if c in frame.columns])
    frame = _formulas_neutralised(frame)
    # Python's csv quotes a field holding "\n" but not one holding a lone "\r", which then ends the
    # row for every reader: such rows quote each text field.
    cr = any(isinstance(v, str) and "\r" in v for c in TEXT_COLUMNS & set(frame.columns) for v in frame[c])
    return frame.to_csv(index=False, header=header, lineterminator="\n",
                        quoting=csv.QUOTE_NONNUMERIC if cr else csv.QUOTE_MINIMAL)


#: A text cell a spreadsheet would run as a formula (OWASP's CSV injection rule): it starts with one
#: of these, perhaps after quotes. Written to CSV with one more single quote in front (the
#: spreadsheet's own "this is text" mark), and read back without it: the original name returns, and
#: a name that begins with a quote itself ("'=x") is told apart by its second quote.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def _formulas_neutralised(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each text cell that could run as a formula quoted; numbers (-1.5) never are."""
    out = frame.copy()
    for column in TEXT_COLUMNS & set(out.columns):
        out[column] = [("'" + v) if isinstance(v, str) and _FORMULA.match(v) else v for v in out[column]]
    return out


def _formula_restored(text: str) -> str:
    return text[1:] if text.startswith("'") and _FORMULA.match(text, 1) else text


def document(rs: ResultSet) -> dict[str, Any]:
    """The set as the JSON format holds it, strict JSON (a saved session holds these too)."""
    rows = [{k: _nested(v) if k in JSON_COLUMNS else strict_json(v) for k, v in r.items()}
            for r in rs.frame.to_dict("records")]
    return {**head(rs), "rows": rows}


def _refuse_constant(token: str) -> Any:
    raise ValueError(token)


def _nested(cell: Any) -> Any:
    """A JSON cell as the value it encodes, for a JSON file; null for an empty one. A cell that
    would not come back as the same text (NaN in it, spaces, not JSON) stays text: the reader
    takes either, so every cell round-trips exactly."""
    if not isinstance(cell, str) or not cell:
        return None if cell == "" else strict_json(cell)
    try:
        value = json.loads(cell, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return cell
    return value if isinstance(value, (dict, list)) and cells.compact(value) == cell else cell


def head(rs: ResultSet) -> dict[str, Any]:
    """What a file says besides its rows (the JSON file's keys but ``rows``; the sidecar's but ``data``)."""
    columns = list(rs.frame.columns)
    return {"format": FORMAT, "schema": SCHEMA, "written": rs.written or utc_now(), "host": rs.host,
            "environment": strict_json(dict(rs.environment)), "settings": strict_json(dict(rs.settings)),
            "columns": columns,
            "types": {c: row_schema.INFO[c].type_name for c in columns if c in row_schema.INFO},
            "units": {c: row_schema.INFO[c].unit for c in columns if c in row_schema.INFO and row_schema.INFO[c].unit}}


def strict_json(value: Any) -> Any:
    """Strict JSON: NaN becomes null and an infinity the string "inf", which the reader parses back.

    ``max_rel_error`` is infinite when a result holds NaN: that must survive a round trip.
    """
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):   # NumPy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


# Reading ---------------------------------------------------------------------------------------

def load(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read any results file we wrote: the table and its environment record.
    Raises :class:`ResultsFileError` (one line) for a file that cannot be read."""
    opened = open_results(path)
    return opened.frame, opened.environment


def _open_packed(path: Path, cut_row: bool) -> PackedSets:
    """In a child: the set read, packed to go back 500 rows a pickle: whole, a 5,000-row table was
    unpickled in one call of the reading thread that held the GIL, and the GUI thread, throughout."""
    return PackedSets.of(open_results(path, cut_row))


def open_results(path: str | Path, cut_row: bool = False, *, via: Any = None) -> ResultSet:
    """Read any results file we wrote, now or in schema 1; :class:`ResultsFileError` otherwise.

    ``cut_row``: a CSV whose last row was cut short (a sweep killed while it appended that row)
    opens without it, rather than being refused: what ``--resume`` needs to go on with it.
    ``via``: a ``workbench.measure.offload.Offload`` whose child process reads it, where this
    process has a GUI thread to keep: the read's long calls into pandas hold the GIL 20 to 33 ms
    at a time at 5,000 rows, and the set read comes back in pieces (``pieces.PackedSets``)."""
    if via is not None:      # the child's folder may differ: the path absolute
        return via.run(f"{__name__}:_open_packed", Path(path).absolute(), cut_row).unpacked()
    path = Path(path)
    text = _read_text(path)
    if text.lstrip().startswith("{"):
        data = _parse_json(path, text)
        schema, header = _header(path, data)
        if "data" in data and "rows" not in data:      # a sidecar: open the CSV it describes
            if not isinstance(data["data"], str) or not data["data"]:
                raise ResultsFileError(path, "the sidecar does not name its CSV file")
            return _from_csv(path.with_name(Path(data["data"]).name), (schema, header), cut_row)
        return _from_rows(path, data, (schema, header))
    sidecar = sidecar_path(path)
    return _from_csv(path, _header(sidecar, _parse_json(sidecar, _read_text(sidecar))) if sidecar.is_file() else None,
                     cut_row)


def read_json(path: str | Path) -> dict:
    """A JSON object from a file, or :class:`ResultsFileError` saying in one line why not
    (missing, a folder, empty, binary, truncated, not JSON, not an object)."""
    path = Path(path)
    return _parse_json(path, _read_text(path))


def from_document(path: str | Path, data: Any) -> ResultSet:
    """A set from the JSON form of :func:`document` (``path`` names where it was read, for errors)."""
    path = Path(path)
    if not isinstance(data, dict):
        raise ResultsFileError(path, "not a GPU Workbench results file (a JSON object was expected)")
    return _from_rows(path, data, _header(path, data))


def checked_rows(path: str | Path, rows: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows read one by one (a journal's lines), each checked as a results file's rows are: those
    that pass, typed, in order; and why each other one was left out (one reason per row)."""
    path = Path(path)
    numbered = list(enumerate(rows, start=1))
    bad = [f"row {n}: not a row (a JSON object was expected)" for n, r in numbered if not isinstance(r, dict)]
    good = _good_rows(path, [(n, r) for n, r in numbered if isinstance(r, dict)], bad)
    return good, bad


def _good_rows(path: Path, numbered: list[tuple[int, dict]], bad: list[str]) -> list[dict[str, Any]]:
    """All at once where all are good (the usual case), else halved until each bad row is alone:
    a few bad rows among thousands cost a few dozen checks, not thousands."""
    if not numbered:
        return []
    try:
        frame = _table(path, pd.DataFrame.from_records([r for _, r in numbered]), first_row=numbered[0][0])
        return frame.to_dict("records")
    except ResultsFileError as exc:
        if len(numbered) == 1:
            bad.append(exc.reason if exc.reason.startswith(("column", "row")) else f"row {numbered[0][0]}: {exc.reason}")
            return []
    half = len(numbered) // 2
    return _good_rows(path, numbered[:half], bad) + _good_rows(path, numbered[half:], bad)


def _from_rows(path: Path, data: dict, meta: tuple[int, dict[str, Any]]) -> ResultSet:
    schema, header = meta
    rows = data.get("rows" if schema >= 2 else "results")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ResultsFileError(path, "not a GPU Workbench results file (no list of rows)")
    frame = _table(path, pd.DataFrame.from_records(rows) if rows else pd.DataFrame())
    return ResultSet(older.read_as_today(frame, schema), source=str(path), schema=schema, **header)


def read_bytes(path: str | Path, follow_links: bool = True) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES: a FIFO, a device (/dev/zero), a
    socket or a huge file is refused in one line (ResultsFileError), never read (it would hang, or
    end in MemoryError). ``follow_links=False``: a symbolic link is refused too (a journal)."""
    try:
        return regular_file.read_bytes(path, MAX_FILE_BYTES, "a results file", follow_links)
    except regular_file.Refused as exc:
        raise ResultsFileError(path, exc.reason) from None
    except OSError as exc:
        raise _os_error(Path(path), exc) from None


def _read_text(path: Path) -> str:
    """The file's text (see :func:`read_bytes`); an empty or binary file is refused in one line."""
    raw = read_bytes(path)
    if not raw.strip():
        raise ResultsFileError(path, "the file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise ResultsFileError(path, "not a GPU Workbench results file (binary data, not text)")
    return text


def _os_error(path: Path, exc: OSError) -> ResultsFileError:
    if isinstance(exc, FileNotFoundError):
        return ResultsFileError(path, "no such file")
    if isinstance(exc, IsADirectoryError):
        return ResultsFileError(path, "is a directory, not a results file")
    return ResultsFileError(path, exc.strerror or str(exc))


#: What JSON (and the NaN this reader reads as text) writes without quotes: a file cut inside one
#: ends in a prefix of it ("nu"), which the parser reports as a value it did not expect.
_WORDS = ("null", "true", "false", "NaN", "Infinity", "-Infinity")


def _cut_in_a_word(text: str, pos: int) -> bool:
    tail = text[pos:].rstrip()
    return bool(tail) and len(tail) < 10 and any(word.startswith(tail) for word in _WORDS)


def _parse_json(path: Path, text: str) -> dict:
    try:
        # NaN and Infinity are not JSON (this writer never writes them): kept as text, so that a
        # value's check can refuse them by row and column, where an empty cell (null) is "not measured".
        data = json.loads(text, parse_constant=str)
    except json.JSONDecodeError as exc:
        # The end came inside a string, or before the last bracket: the file was cut short.
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string") or _cut_in_a_word(text, exc.pos):
            raise ResultsFileError(path, "the JSON is truncated (it ends before its last bracket)") from None
        raise ResultsFileError(path, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ResultsFileError(path, "not a GPU Workbench results file (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ResultsFileError(path, "not a GPU Workbench results file (a JSON object was expected)")
    return data


def _header(path: Path, data: dict) -> tuple[int, dict[str, Any]]:
    """The schema and the ResultSet fields a JSON file (results or sidecar) carries besides the rows."""
    if data.get("format") == FORMAT:
        schema = check_schema(path, data.get("schema"), "results", 2, SCHEMA)
    elif "environment" in data and "results" in data:
        schema = 1
    elif isinstance(data.get("format"), str) and data["format"].startswith("gpu-workbench-"):
        raise ResultsFileError(path, f"a {data['format'][len('gpu-workbench-'):]} file of GPU Workbench, "
                                     "not a results file")
    else:
        raise ResultsFileError(path, "not a GPU Workbench results file (no format marker)")
    header = {"environment": data.get("environment", {}), "settings": data.get("settings", {}),
              "written": data.get("written", ""), "host": data.get("host", "")}
    for key, kind in (("environment", dict), ("settings", dict), ("written", str), ("host", str)):
        if not isinstance(header[key], kind):
            raise ResultsFileError(path, f"its {key} is a {type(header[key]).__name__}, not a {kind.__name__}")
    return schema, header


def check_schema(path: Path, schema: Any, what: str, oldest: int, newest: int) -> int:
    """``schema`` as a number this version reads; ResultsFileError for an odd one or a newer one."""
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < oldest:
        raise ResultsFileError(path, f"the {what} schema is unreadable ({schema!r})")
    if schema > newest:
        raise ResultsFileError(path, f"written by a newer GPU Workbench ({what} schema {schema}; "
                                     f"this version reads up to {newest}): update to open it")
    return schema


def _from_csv(path: Path, meta: tuple[int, dict[str, Any]] | None, cut_row: bool = False) -> ResultSet:
    """A CSV of ours: plain (with ``meta`` from its sidecar), or of schema 1 with ``#`` lines on top."""
    text = _read_text(path)
    comments, body = _split_comments(text)
    if meta is not None:
        schema, header = meta
    else:
        schema, header = (1 if comments else SCHEMA), {"environment": _legacy_environment(comments)}
    records: list[list[str]] = []
    try:
        for record in csv.reader(io.StringIO(body), strict=True):
            records.append(record)
    except csv.Error as exc:
        # Every row a sweep appends ends its line: a file that does not end so was cut in its last row.
        if not (cut_row and not body.endswith("\n") and "unexpected end" in str(exc)):
            reason = "the CSV is truncated (inside a quoted field)" if "unexpected end" in str(exc) \
                else f"not a GPU Workbench results file (bad CSV: {exc})"
            raise ResultsFileError(path, reason) from None
    else:
        if cut_row and records and not body.endswith("\n") and len(records) > 1:
            records.pop()                  # the row being appended when the sweep was killed
    if not records:
        raise ResultsFileError(path, "not a GPU Workbench results file (no header line)")
    names, rows = records[0], [r for r in records[1:] if r]
    if len(set(names)) != len(names):
        raise ResultsFileError(path, "not a GPU Workbench results file (a column name appears twice)")
    for number, row in enumerate(rows, start=2):
        if len(row) != len(names):
            where = "its last row" if number == len(rows) + 1 else f"row {number}"
            what = "is truncated" if number == len(rows) + 1 and len(row) < len(names) else "is malformed"
            raise ResultsFileError(path, f"the CSV {what}: {where} has {len(row)} fields, the header {len(names)}")
    if meta is None and schema == SCHEMA and "energy_j" in names and "energy_e2e_j" not in names:
        # Without its sidecar a CSV's columns tell its schema: every file since the compute's
        # energy was read apart has the whole call's beside it.
        schema = older.COMPUTE_ENERGY_SCHEMA - 1
    frame = pd.DataFrame(rows, columns=names, dtype=object) if rows else pd.DataFrame(columns=names)
    for column in TEXT_COLUMNS & set(frame.columns):       # the quote write() put before a formula
        frame[column] = [_formula_restored(v) for v in frame[column]]
    return ResultSet(older.read_as_today(_table(path, frame), schema), source=str(path), schema=schema, **header)


def _split_comments(text: str) -> tuple[list[str], str]:
    lines = text.splitlines(keepends=True)
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    return [line.rstrip("\r\n") for line in lines[:n]], "".join(lines[n:])


def _legacy_environment(comments: list[str]) -> dict[str, Any]:
    """Schema 1 CSVs carried the environment as ``# key: json`` lines."""
    env: dict[str, Any] = {}
    for line in comments:
        key, sep, value = line.lstrip("#").strip().partition(": ")
        if not sep:
            continue
        try:
            env[key] = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            env[key] = value
    return env


def _table(path: Path, frame: pd.DataFrame, first_row: int = 1) -> pd.DataFrame:
    """The rows as a result table: every column of ``COLUMNS``, typed, each value checked
    (``first_row``: the number of the frame's first row, as errors name it)."""
    if frame.empty and not len(frame.columns):
        # A file of ours with no row (a sweep stopped before its first point was written) opens,
        # empty, so that --resume can finish it.
        return to_frame([])
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ResultsFileError(path, f"not a GPU Workbench results file (no column {', '.join(missing)})")
    extra = [c for c in frame.columns if c not in COLUMNS]
    if extra:
        log.info("%s: ignoring columns this version does not know: %s", path, ", ".join(map(str, extra)))
    columns = {}
    for name in COLUMNS:
        values = frame[name].tolist() if name in frame.columns else [None] * len(frame)
        # A column at once where it is plain, else cell by cell, which names the wrong cell.
        checked = cells.column(name, values)
        columns[name] = checked if checked is not None else \
            [_value(path, name, v, row) for row, v in enumerate(values, start=first_row)]
    for row, status in enumerate(columns["status"], start=first_row):
        if not status:
            raise ResultsFileError(path, f"row {row} has no status")
    return row_schema.frame_of(columns)


def _value(path: Path, column: str, value: Any, row: int) -> Any:
    """One cell, of the column's kind (``cells.value``); a wrong one names the file, column and row."""
    def wrong(expected: str) -> ResultsFileError:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        return ResultsFileError(path, f"column {column}, row {row}: {shown} is not {expected}")
    return cells.value(column, value, wrong)
