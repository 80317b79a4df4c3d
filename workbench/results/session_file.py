"""A saved window session: the experiment's settings and every result set on screen, in one file.

JSON, so that it opens anywhere and diffs as text::

    {"format": "gpu-workbench-session", "schema": 1, "written": ..., "host": ...,
     "experiment": {"workload": ..., "backends": [...], "size_from": ..., ...},
     "view": {"baseline": "numpy@2"},
     "sets": [{"source": "...", "results": {the JSON results format of workbench.results.files}}, ...]}

The first set is the one the window measured or opened; the others are compared with it.
Each set keeps its own environment, time and host (the results format, unchanged), so a
reopened session labels and stamps its charts as they were. :func:`load` refuses a newer
schema, a truncated file or a file that is not a session with one line
(:class:`~workbench.results.files.ResultsFileError`).
"""
from __future__ import annotations

import json
import logging
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from workbench.core import atomic
from workbench.results import files as result_files
from workbench.results.files import ResultSet, ResultsFileError
from workbench.results.pieces import PackedSets

log = logging.getLogger(__name__)

FORMAT = "gpu-workbench-session"
SCHEMA = 1
#: The experiment panel's settings and their kinds; a key missing from a file is left as it is.
EXPERIMENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "workload": str, "backends": list, "size_from": str, "size_to": str, "size_steps": int, "dtype": str,
    "repeats": int, "budget_s": (int, float), "noise_percent": (int, float), "host_memory": str,
    "device_memory_limit": str, "threads": str, "energy": bool}


@dataclass(frozen=True)
class SavedSession:
    experiment: dict[str, Any]
    sets: tuple[ResultSet, ...]
    view: dict[str, Any] = field(default_factory=dict)
    written: str = ""
    host: str = ""


def save(path: str | Path, experiment: Mapping[str, Any], sets: Sequence[ResultSet],
         view: Mapping[str, Any] | None = None) -> Path:
    """Write the session to ``path`` (``.json``), all at once: a failed write leaves the old file."""
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise ValueError(f"cannot write {path.name}: a session file must end in .json")
    doc = {"format": FORMAT, "schema": SCHEMA, "written": result_files.utc_now(), "host": socket.gethostname(),
           "experiment": result_files.strict_json(dict(experiment)), "view": result_files.strict_json(dict(view or {})),
           "sets": [{"source": rs.source, "results": result_files.document(rs)} for rs in sets]}
    atomic.write_text(path, json.dumps(doc, indent=1, allow_nan=False))
    return path


def _load_packed(path: Path) -> SavedSession:
    """In a child: the session read, its sets packed to go back 500 rows a pickle."""
    saved = load(path)
    return replace(saved, sets=PackedSets.of(list(saved.sets)))


def load(path: str | Path, *, via: Any = None) -> SavedSession:
    """Read a session written by :func:`save`; ResultsFileError (one line) otherwise. ``via``: a
    child process reads it (``workbench.results.files.open_results``'s, for the same reason)."""
    if via is not None:      # the child's folder may differ: the path absolute; the sets in pieces
        saved = via.run(f"{__name__}:_load_packed", Path(path).absolute())
        return replace(saved, sets=tuple(saved.sets.unpacked()))
    path = Path(path)
    data = result_files.read_json(path)
    kind = data.get("format")
    if kind == result_files.FORMAT or ("environment" in data and "results" in data):
        raise ResultsFileError(path, "a results file, not a session: open it with File > Open results")
    if kind != FORMAT:
        raise ResultsFileError(path, "not a GPU Workbench session (no session format marker)")
    result_files.check_schema(path, data.get("schema"), "session", 1, SCHEMA)
    experiment, view, entries = data.get("experiment", {}), data.get("view", {}), data.get("sets", [])
    for name, value, kind_ in (("experiment", experiment, dict), ("view", view, dict), ("sets", entries, list)):
        if not isinstance(value, kind_):
            raise ResultsFileError(path, f"its {name} is a {type(value).__name__}, not a {kind_.__name__}")
    _check_experiment(path, experiment)
    sets = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("source", ""), str):
            raise ResultsFileError(path, f"result set {number} is not a set of results")
        try:
            rs = result_files.from_document(path, entry.get("results"))
        except ResultsFileError as exc:
            raise ResultsFileError(path, f"result set {number}: {exc.reason}") from None
        sets.append(replace(rs, source=entry.get("source", "")))
    written, host = data.get("written", ""), data.get("host", "")
    return SavedSession(dict(experiment), tuple(sets), dict(view), written if isinstance(written, str) else "",
                        host if isinstance(host, str) else "")


def _check_experiment(path: Path, experiment: dict) -> None:
    for key, kind in EXPERIMENT_FIELDS.items():
        if key not in experiment:
            continue
        value = experiment[key]
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
            raise ResultsFileError(path, f"its experiment's {key} is {value!r}, of the wrong kind")
        if key == "backends" and not all(isinstance(b, str) for b in value):
            raise ResultsFileError(path, "its experiment's backends are not all names")
