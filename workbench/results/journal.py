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
from typing import Any, Iterable

from workbench.results import files as result_files
from workbench.results.files import ResultsFileError

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
        if os.path.lexists(self.path):
            try:
                found = read(self.path)
            except ResultsFileError as exc:        # a FIFO, a link: not ours to keep, but said
                log.warning("%s: replaced by a new journal", exc)
            else:
                if not found.closed and (found.rows or found.unreadable):
                    os.replace(self.path, self.previous)      # kept until this session decides
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

        Handed to the system, not synced: this is written in the GUI thread as Run is clicked, where
        an fsync stalls the window (docs/PERFORMANCE.md). A killed process loses nothing the system
        holds, and the sweep's first row, synced, takes this entry with it."""
        self._write({"kind": "sweep", "settings": settings}, sync=False)

    def append(self, row: dict[str, Any]) -> None:
        self._write({"kind": "row", "row": row})

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        """Rows appended as one write, synced once: a restored session's 5,000 rows, synced one at a
        time, were 1.15 s of fsync in the GUI thread (issue 38)."""
        self._write_all([{"kind": "row", "row": row} for row in rows])

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
        self._write_all([entry], sync)

    def _write_all(self, entries: list[dict[str, Any]], sync: bool = True) -> None:
        with self._lock:
            if self._file is None:
                return
            try:
                self._file.write("".join(json.dumps(entry, default=str) + "\n" for entry in entries))
                self._file.flush()
                if sync:
                    os.fsync(self._file.fileno())
            except OSError as exc:     # a full disk must not stop the sweep: its rows are still shown
                log.warning("the journal %s: %s", self.path, exc.strerror or exc)


@dataclass(frozen=True)
class Reading:
    """What a journal holds: the last sweep's settings and rows (each checked as a results file's
    rows are), whether its session ended normally, and how many lines could not be read, with why."""

    settings: dict[str, Any]
    rows: list[dict[str, Any]]
    closed: bool = False
    unreadable: int = 0
    why: str = ""

    def said(self, path: str | Path) -> str:
        """The lines skipped, in one line ("" where none was)."""
        return skipped(path, self.unreadable, len(self.rows), self.why)


def skipped(path: str | Path, unreadable: int, kept: int, why: str = "") -> str:
    """"1 line of NAME could not be read; 2 points kept (why)", or "" where every line was read."""
    if not unreadable:
        return ""
    lines, points = ("line" if unreadable == 1 else "lines"), ("point" if kept == 1 else "points")
    return f"{unreadable} {lines} of {Path(path).name} could not be read; {kept} {points} kept" + \
        (f" ({why})" if why else "")


def lines_of(path: str | Path) -> tuple[list[Any], list[str]]:
    """A journal's lines parsed, and why each line that did not parse was skipped (a line cut
    short by a kill, or damaged, costs that line only). Only a regular file is opened, never through
    a link: ResultsFileError (one line) for anything else."""
    parsed, bad = [], []
    for number, raw in enumerate(result_files.read_bytes(path, follow_links=False).split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            parsed.append(json.loads(raw.decode("utf-8")))
        except UnicodeDecodeError:
            bad.append(f"line {number}: not UTF-8 text")
        except (ValueError, RecursionError):
            bad.append(f"line {number}: not a JSON line")
    return parsed, bad


def read(path: str | Path) -> Reading:
    """What the journal at ``path`` holds; ResultsFileError where it is not a regular file."""
    entries, bad = lines_of(path)
    settings: dict[str, Any] = {}
    rows: list[Any] = []
    for entry in entries:
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind == "closed":
            return Reading(settings, [], closed=True)
        if kind == "sweep":
            settings, rows = entry.get("settings") if isinstance(entry.get("settings"), dict) else {}, []
        elif kind == "row":
            rows.append(entry.get("row"))
        elif kind != "session":
            bad.append("a line that is not a journal entry")
    good, refused = result_files.checked_rows(path, rows)
    bad += refused
    return Reading(settings, good, False, len(bad), bad[0] if bad else "")


def interrupted(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(the last sweep's settings, its rows) if the session journalled at ``path`` did not end
    normally and measured something; None otherwise (or where it cannot be read at all)."""
    try:
        found = read(path)
    except ResultsFileError:
        return None
    return (found.settings, found.rows) if found.rows and not found.closed else None


# One journal per window --------------------------------------------------------------------------

@dataclass(frozen=True)
class Orphan:
    """A journal whose session ended without closing, and what it holds."""

    path: Path
    settings: dict[str, Any]
    rows: list[dict[str, Any]]
    said: str = ""          # the lines that could not be read, in one line ("" where none)


class Journals:
    """The journals of every window, in one folder: one file each, named by start time and process.

    ``legacy`` names journals of older versions (one shared file), read as orphans too."""

    def __init__(self, folder: str | Path, legacy: tuple[str | Path, ...] = ()) -> None:
        self.folder = Path(folder)
        self.legacy = tuple(Path(p) for p in legacy)
        self.notes: list[str] = []      # what the last orphans() could not read, one line each

    def new(self, settings: dict[str, Any] | None = None) -> Journal:
        """A journal for a new session, begun and locked."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        j = Journal(self.folder / f"session-{stamp}-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl")
        j.begin(settings)
        return j

    def orphans(self) -> list[Orphan]:
        """Journals no live session holds that ended without closing and measured something,
        newest first. Those that ended normally, or hold nothing at all, are deleted on the way; one
        that cannot be read, or holds only lines that cannot, is left where it is and said in
        :attr:`notes` (never deleted before its points are kept, or the user discarded them)."""
        found = []
        self.notes: list[str] = []
        candidates = sorted(self.folder.glob("session-*.jsonl"), reverse=True) if self.folder.is_dir() else []
        for path in [*candidates, *self.legacy]:
            if not os.path.lexists(path) or (path.is_file() and not path.is_symlink() and _held(path)):
                continue
            try:
                got = read(path)
            except ResultsFileError as exc:
                self.notes.append(f"{exc} (left as it is)")
                continue
            if got.rows and not got.closed:
                found.append(Orphan(path, got.settings, got.rows, got.said(path)))
            elif got.closed or not got.unreadable:
                if path.parent == self.folder:
                    path.unlink(missing_ok=True)     # closed normally, or empty: nothing to offer
            else:
                self.notes.append(f"{got.said(path)}; the journal is left as it is")
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
