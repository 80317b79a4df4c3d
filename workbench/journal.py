"""The journal: every finished point on disk before anyone is shown it, so no point is lost.

One JSON line per event, flushed and synced as it is written: a window killed
with SIGKILL, a machine that loses power, leave every point measured before
it. A session that ends normally marks the journal closed; one that finds it
open at start offers to restore what it holds.
"""
from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class Journal:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file = None
        self._lock = threading.Lock()      # the worker thread appends rows, the GUI thread the rest

    def begin(self, settings: dict[str, Any] | None = None) -> None:
        """Start a new session's journal; the last one's moves to ``previous`` (kept until this
        session decides about it: a second kill before that loses nothing)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.end()
        if interrupted(self.path) is not None:
            os.replace(self.path, self.previous)
        self._file = open(self.path, "w", encoding="utf-8")
        self._write({"kind": "session", "settings": settings or {}})

    @property
    def previous(self) -> Path:
        return self.path.with_name(self.path.stem + ".previous" + self.path.suffix)

    def sweep(self, settings: dict[str, Any]) -> None:
        """A new sweep begins: what the window shows is this sweep's rows from here on."""
        self._write({"kind": "sweep", "settings": settings})

    def append(self, row: dict[str, Any]) -> None:
        self._write({"kind": "row", "row": row})

    def close(self) -> None:
        """The session ended normally: nothing to restore next time."""
        self._write({"kind": "closed"})
        self.end()

    def end(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _write(self, entry: dict[str, Any]) -> None:
        with self._lock:
            if self._file is None:
                return
            self._file.write(json.dumps(entry, default=str) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())


def interrupted(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(the last sweep's settings, its rows) if the session journalled at ``path`` did not end
    normally and measured something; None otherwise. A torn last line (the kill came mid-write)
    is left out."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    settings: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind == "closed":
            return None
        if kind == "sweep":
            settings, rows = entry.get("settings") or {}, []
        elif kind == "row" and isinstance(entry.get("row"), dict):
            rows.append(entry["row"])
    return (settings, rows) if rows else None
