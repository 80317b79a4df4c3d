"""The results file a sweep on the command line writes (``--out``): one writer, nothing lost, and
each point added to what is on disk rather than the whole file written again.

An existing file is refused (one line) unless the caller says ``force`` (replace it) or ``resume``
(keep its points measured ok, measure the rest); a file that is not a results file needs
``force``. A lock on ``.NAME.lock`` keeps a second writer out. After each point
(:meth:`ResultsOut.add`) the point is on disk, synced: a CSV gets its row appended (its first
write whole, ``workbench.core.atomic``); a JSON file, one document, gets a journal beside it
(``.NAME.rows.jsonl``) that :meth:`ResultsOut.finish` writes out as the document, and that a
killed sweep leaves for ``--resume``. A failed save never stops the sweep: it returns the failure
in one line, and the next save tries again, whole where the file is no longer the one appended to.
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any, Iterable, Mapping

from workbench.core import atomic
from workbench.results import files as result_files
from workbench.results.journal import lines_of, skipped
from workbench.results.rows import to_frame

log = logging.getLogger(__name__)


class Refused(Exception):
    """An output file this sweep must not write; ``str()`` is one line."""


def key(row: Mapping[str, Any]) -> tuple:
    """What makes two rows the same point (a resumed sweep skips the points its file measured ok)."""
    return (str(row["workload"]), str(row["backend"]), int(row["size"]), str(row["dtype"]), str(row["variant"] or ""))


def journal_path(path: str | Path) -> Path:
    """Where the points of a JSON file wait until it is written whole: ``.NAME.rows.jsonl`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.rows.jsonl")


class ResultsOut:
    """``--out PATH``, checked at once; :meth:`lock` before the sweep, :meth:`begin` as it starts,
    :meth:`add` after each point, :meth:`finish` at the end (or :meth:`save`: a whole table at once)."""

    def __init__(self, path: str | Path, *, force: bool = False, resume: bool = False) -> None:
        self.path = Path(path)
        self.json = self.path.suffix.lower() == ".json"
        self.previous: list[dict] = []       # the rows of the file resumed
        self.failed = ""                     # the last save's failure; "" once one succeeds
        self._lock_fd: int | None = None
        self._planned: set[tuple] = set()
        self._rows: list[Mapping[str, Any]] = []    # what the file holds once every save is done
        self._on_disk = 0                    # how many of _rows the file (a JSON file's journal) holds
        self._target: _Appended | None = None
        self._written_whole = False          # a JSON file: the document itself is written
        self.notes: list[str] = []           # what was found and not read, one line each (also logged)
        # The journal's name may be unlinked at the end only where what it names is ours: written by
        # this sweep, read into its rows, or replaced at the user's word (--force).
        self._journal_ours = force
        self._journal_usable = True          # False: its name holds something not ours (a FIFO, a link)
        self._resumed(force, resume)
        for line in self.notes:              # the command line says them (one line each); a log keeps them
            log.info("--out %s: %s", self.path, line)

    def _resumed(self, force: bool, resume: bool) -> None:
        """What the file (and a JSON file's journal) already holds, into ``previous``; Refused where
        it must not be written."""
        leftover = journal_path(self.path) if self.json and os.path.lexists(journal_path(self.path)) else None
        journal_rows: list[dict] = []
        if leftover is not None and (not (force and not resume) or not stat.S_ISREG(os.lstat(leftover).st_mode)):
            try:
                journal_rows, said = _journal_rows(leftover)
            except result_files.ResultsFileError as exc:     # a FIFO, a device, a link: never opened
                self.notes.append(f"{exc}; left as it is, and {self.path.name} written whole after each point")
                self._journal_usable, leftover = False, None
            else:
                self._journal_ours = True
                if said:
                    self.notes.append(said)
        others = [result_files.sidecar_path(self.path)] if not self.json else []
        there = [p for p in (self.path, *others, *([leftover] if leftover else [])) if os.path.lexists(p)]
        if not there or (force and not resume):
            return
        rows: list[dict] = []
        if os.path.lexists(self.path) or others and os.path.lexists(others[0]):
            try:
                rows = result_files.open_results(self.path, cut_row=resume).frame.to_dict("records")
            except result_files.ResultsFileError:
                if force:                    # replaced; the points of a journal read go into it
                    self.previous = journal_rows
                    return
                raise Refused(f"--out {there[0]}: the file exists and is not a GPU Workbench results file: "
                              "--force replaces it") from None
        if leftover is not None:
            rows = _merged(rows, journal_rows)
        if not resume:
            held = "holds results" if leftover is None else \
                f"holds results (an interrupted sweep left them in {leftover.name})"
            raise Refused(f"--out {self.path}: the file exists and {held}: --resume adds to them, "
                          "--force replaces them")
        self.previous = rows

    def done(self) -> set[tuple]:
        """The points the resumed file measured ok."""
        return {key(r) for r in self.previous if r["status"] == "ok"}

    def rows(self, new: Iterable[Mapping[str, Any]], planned: set[tuple]) -> list[dict]:
        """What the file holds: the resumed file's rows (less those this sweep measures again, its
        failures), then the new ones."""
        return self._kept(planned) + [dict(r) for r in new]

    def _kept(self, planned: set[tuple]) -> list[dict]:
        ok = self.done()
        return [r for r in self.previous if key(r) in ok or key(r) not in planned]

    def lock(self) -> None:
        """Hold ``.NAME.lock`` beside the file while the sweep writes it; Refused if another does."""
        path = self.path.with_name(f".{self.path.name}.lock")
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise Refused(f"--out {self.path}: cannot make its lock file: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise Refused(f"--out {self.path}: another sweep is writing it; wait until it ends, "
                              "or write to another file") from None
            # The last holder unlinks the lock file as it lets go: we may hold a file that is no
            # longer there, and another sweep a new one. Hold the file that the name names.
            try:
                named = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                named = None
            mine = os.fstat(fd)
            if named is not None and (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino):
                self._lock_fd, self._lock_path = fd, path
                return
            os.close(fd)

    def unlock(self) -> None:
        self._close_target()
        if self._lock_fd is not None:
            try:
                os.unlink(self._lock_path)       # while held: see lock()
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    # --- a sweep's points, one at a time ---------------------------------------------------------

    def begin(self, planned: set[tuple]) -> None:
        """The sweep's points are ``planned``: the resumed file's rows it keeps are known. Nothing
        is written before the first point (an existing file stays as it was until then)."""
        self._planned = set(planned)
        self._rows = list(self._kept(self._planned))
        self._on_disk = 0
        self._close_target()

    def add(self, row: Mapping[str, Any], environment: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        """One more point, on disk and synced before this returns: "" when it is, else the
        failure in one line (the point is kept, and the next save writes it)."""
        self._rows.append(row)
        return self._flush(environment, settings)

    def finish(self, environment: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        """The sweep is over: every point is on disk, with the environment the sweep ended with
        (the engine's record, which came during it); a JSON file is written whole now. "" or the
        failure in one line."""
        problem = self._flush(environment, settings)
        if not problem:
            problem = self._finish_whole(environment, settings)
        self.failed = problem
        self._close_target()
        return problem

    def all_rows(self) -> list[Mapping[str, Any]]:
        """Every row the file holds once written: the kept ones, then this sweep's."""
        return list(self._rows)

    def save(self, frame, environment: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        """Write ``frame`` whole; "" when written, else the failure in one line (the sweep goes on)."""
        try:
            result_files.save(frame, self.path, environment, settings)
        except OSError as exc:
            self.failed = atomic.why(exc)
            return self.failed
        self.failed = ""
        return ""

    # --- how -------------------------------------------------------------------------------------

    def _flush(self, environment: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        """Put the rows not yet on disk there: appended to the file this sweep wrote, or, where that
        file is gone or no longer ours, every row written whole again."""
        try:
            if self._target is not None and self._target.still_ours():
                if self._on_disk < len(self._rows):
                    self._target.append(self._lines(self._rows[self._on_disk:]))
                    self._on_disk = len(self._rows)
            elif self._rows or not self.json:
                self._write_whole(environment, settings)
        except OSError as exc:
            self._close_target()
            self.failed = atomic.why(_naming(exc, self._where()))
            return self.failed
        self.failed = ""
        return ""

    def _where(self) -> Path:
        return journal_path(self.path) if self.json and self._journal_usable else self.path

    def _lines(self, rows: list[Mapping[str, Any]]) -> bytes:
        if self.json:
            return "".join(json.dumps(result_files.strict_json(dict(r)), allow_nan=False) + "\n"
                           for r in rows).encode("utf-8")
        return result_files.csv_text(to_frame(rows), header=False).encode("utf-8")

    def _write_whole(self, environment: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        """Every row at once, atomically (a CSV with its sidecar; a JSON file's journal), then
        held open to append the next ones to."""
        self._close_target()
        if self.json and not self._journal_usable:     # no journal: the document, whole, each time
            result_files.save(to_frame(self._rows), self.path, environment, settings)
            self._on_disk = len(self._rows)
            return
        if self.json:
            atomic.write_bytes(self._where(), self._lines(self._rows))
            self._journal_ours = True
        else:
            result_files.save(to_frame(self._rows), self.path, environment, settings)
        self._on_disk = len(self._rows)
        self._target = _Appended.open(self._where())

    def _finish_whole(self, environment: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        try:
            if self.json:
                result_files.save(to_frame(self._rows), self.path, environment, settings)
                self._close_target()
                if self._journal_ours and self._journal_usable:
                    journal_path(self.path).unlink(missing_ok=True)
            elif self._rows or os.path.lexists(self.path):
                # The sidecar again: the environment the sweep ended with (the engine's record).
                rs = result_files.live(to_frame([]), environment, settings)
                atomic.write_text(result_files.sidecar_path(self.path),
                                  json.dumps({**result_files.head(rs), "data": self.path.name}, indent=1,
                                             allow_nan=False))
        except OSError as exc:
            return atomic.why(exc)
        return ""

    def _close_target(self) -> None:
        if self._target is not None:
            self._target.close()
            self._target = None


class _Appended:
    """The file a sweep appends to, held open: rows go at its end, synced; it is ours as long as
    its name still names this very file (the folder not deleted, no file or link put in its place)
    and it has the length our own writes gave it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd
        st = os.fstat(fd)
        self.identity, self.size = (st.st_dev, st.st_ino), st.st_size

    @classmethod
    def open(cls, path: Path) -> "_Appended":
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise _naming(exc, path) from None
        return cls(path, fd)

    def still_ours(self) -> bool:
        try:
            named = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return False
        mine = os.fstat(self.fd)
        return ((named.st_dev, named.st_ino) == self.identity == (mine.st_dev, mine.st_ino)
                and mine.st_size == self.size)

    def append(self, data: bytes) -> None:
        """``data`` at the end, synced; on a failure the file is cut back to its last whole row."""
        try:
            view = memoryview(data)
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
            os.fsync(self.fd)
        except OSError as exc:
            try:
                os.ftruncate(self.fd, self.size)
            except OSError:
                pass
            raise _naming(exc, self.path) from None
        self.size += len(data)

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def _naming(exc: OSError, path: Path) -> OSError:
    """The error naming the file the user asked for (or its journal), not a temporary one."""
    if exc.filename and str(exc.filename) == str(path):
        return exc
    return OSError(exc.errno or errno.EIO, exc.strerror or str(exc), str(path))


def _journal_rows(path: Path) -> tuple[list[dict], str]:
    """The rows a JSON file's journal holds, each checked as a results file's rows are, and what
    could not be read in one line ("" where every line was). A line cut short by a kill, a damaged
    line, a row whose values are not a result's: that line is left out, never the journal."""
    lines, bad = lines_of(path)
    required = ("workload", "backend", "size", "dtype", "variant", "status")
    rows = [line for line in lines if isinstance(line, dict) and all(k in line for k in required)]
    bad += ["a line that is not a row"] * (len(lines) - len(rows))
    good, refused = result_files.checked_rows(path, rows)
    bad += refused
    return good, skipped(path, len(bad), len(good), bad[0] if bad else "")


def _merged(older: list[dict], newer: list[dict]) -> list[dict]:
    """The rows of a file and of the journal a later sweep left beside it: for a point both hold,
    the journal's (measured later), in the file's order, then the journal's other points."""
    later = {key(r): r for r in newer}
    out = [later.pop(key(r), r) for r in older]
    seen = {key(r) for r in out}
    return out + [r for r in newer if key(r) not in seen and not seen.add(key(r))]
