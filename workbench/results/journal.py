"""The journal: every finished point on disk before anyone is shown it, so no point is lost.

One JSON line per event, flushed and synced as it is written: a window killed
with SIGKILL, a machine that loses power, leave every point measured before
it. A session that ends normally marks the journal closed; one that finds it
open at start offers to restore what it holds.

Each window writes a journal of its own (:class:`Journals`), locked while the window lives, so
that two windows never write one file and a window never offers another live window's points. A
journal left unlocked and unclosed is an orphan: offered at every start, however many times the
window that offered it was killed in turn, until the user restores or discards it.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:       # Windows: a journal's writer is told alive by its process id instead
    fcntl = None

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
        self.path.unlink(missing_ok=True)
        # Created afresh, never through a link planted at its name; locked while this session lives.
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self._write({"kind": "session", "settings": settings or {}})

    @property
    def previous(self) -> Path:
        return self.path.with_name(self.path.stem + ".previous" + self.path.suffix)

    def sweep(self, settings: dict[str, Any]) -> None:
        """A new sweep begins: what the window shows is this sweep's rows from here on.

        Handed to the system, not synced: this is written in the GUI thread as Run is clicked, and
        its fsync held that thread 10-12 ms on this project's VM (issue 19). A killed process loses
        nothing the system holds, and the sweep's first row, synced, takes this entry with it."""
        self._write({"kind": "sweep", "settings": settings}, sync=False)

    def append(self, row: dict[str, Any]) -> None:
        self._write({"kind": "row", "row": row})

    def close(self) -> None:
        """The session ended normally: nothing to restore next time."""
        self._write({"kind": "closed"})
        self.end()

    def end(self) -> None:
        with self._lock:
            if self._file is not None:
                try:
                    self._file.close()
                except OSError:       # what a failed append left in the buffer cannot be written either
                    pass
                self._file = None

    def _write(self, entry: dict[str, Any], sync: bool = True) -> None:
        with self._lock:
            if self._file is None:
                return
            try:
                self._file.write(json.dumps(entry, default=str) + "\n")
                self._file.flush()
                if sync:
                    os.fsync(self._file.fileno())
            except OSError as exc:     # a full disk must not stop the sweep: its rows are still shown
                log.warning("the journal %s: %s", self.path, exc.strerror or exc)


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


# One journal per window --------------------------------------------------------------------------

@dataclass(frozen=True)
class Orphan:
    """A journal whose session ended without closing, and what it holds."""

    path: Path
    settings: dict[str, Any]
    rows: list[dict[str, Any]]


class Journals:
    """The journals of every window, in one folder: one file each, named by start time and process.

    ``legacy`` names journals of older versions (one shared file), read as orphans too."""

    def __init__(self, folder: str | Path, legacy: tuple[str | Path, ...] = ()) -> None:
        self.folder = Path(folder)
        self.legacy = tuple(Path(p) for p in legacy)

    def new(self, settings: dict[str, Any] | None = None) -> Journal:
        """A journal for a new session, begun and locked."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        j = Journal(self.folder / f"session-{stamp}-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl")
        j.begin(settings)
        return j

    def orphans(self) -> list[Orphan]:
        """Journals no live session holds that ended without closing and measured something,
        newest first. Those that ended normally, or hold no point, are deleted on the way."""
        found = []
        candidates = sorted(self.folder.glob("session-*.jsonl"), reverse=True) if self.folder.is_dir() else []
        for path in [*candidates, *self.legacy]:
            if not path.is_file() or path.is_symlink() or _held(path):
                continue
            got = interrupted(path)
            if got is None:
                if path.parent == self.folder:
                    path.unlink(missing_ok=True)     # closed normally, or empty: nothing to offer
                continue
            found.append(Orphan(path, *got))
        return found

    @staticmethod
    def settle(orphan: Orphan) -> None:
        """The user restored or discarded it: never offered again."""
        orphan.path.unlink(missing_ok=True)
        if orphan.path.stem.endswith(".previous"):
            return
        orphan.path.with_name(orphan.path.stem + ".previous" + orphan.path.suffix).unlink(missing_ok=True)


def _held(path: Path) -> bool:
    """Whether a live session writes ``path``: its lock is held (or, without flock, the process
    named in its file name runs)."""
    if fcntl is None:
        try:
            pid = int(path.stem.split("-")[2])
        except (IndexError, ValueError):
            return False
        import psutil
        return psutil.pid_exists(pid) and pid != os.getpid()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return True               # cannot even look: leave it alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)              # closing drops the lock just taken
    return False
