"""The results file a sweep on the command line writes (``--out``): one writer, nothing lost.

- An existing file is never replaced silently: :class:`ResultsOut` refuses it (one line)
  unless the caller says ``force`` (replace it) or ``resume`` (keep its points measured ok,
  measure the rest, write all of them). A file that is not a results file is refused without
  ``force``, even with ``resume``.
- One sweep writes a file at a time: a lock (``fcntl.flock``, non-blocking) on ``.NAME.lock``
  beside it; a second writer is refused at once.
- A save that fails (a full disk, the folder deleted mid-sweep) never stops the sweep:
  :meth:`ResultsOut.save` returns the failure as one line, and the next save tries again.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from workbench.core import atomic
from workbench.results import files as result_files


class Refused(Exception):
    """An output file this sweep must not write; ``str()`` is one line."""


def key(row: Mapping[str, Any]) -> tuple:
    """What makes two rows the same point (a resumed sweep skips the points its file measured ok)."""
    return (str(row["workload"]), str(row["backend"]), int(row["size"]), str(row["dtype"]), str(row["variant"] or ""))


class ResultsOut:
    """``--out PATH``, checked at once; :meth:`lock` before the sweep, :meth:`save` after each point."""

    def __init__(self, path: str | Path, *, force: bool = False, resume: bool = False) -> None:
        self.path = Path(path)
        self.previous: list[dict] = []       # the rows of the file resumed
        self.failed = ""                     # the last save's failure; "" once one succeeds
        self._lock_fd: int | None = None
        others = [result_files.sidecar_path(self.path)] if self.path.suffix.lower() == ".csv" else []
        there = [p for p in (self.path, *others) if os.path.lexists(p)]
        if not there or (force and not resume):
            return
        try:
            rs = result_files.open_results(self.path)
        except result_files.ResultsFileError:
            if force:
                return
            raise Refused(f"--out {there[0]}: the file exists and is not a GPU Workbench results file: "
                          "--force replaces it") from None
        if not resume:
            raise Refused(f"--out {self.path}: the file exists and holds results: --resume adds to them, "
                          "--force replaces them")
        self.previous = rs.frame.to_dict("records")

    def done(self) -> set[tuple]:
        """The points the resumed file measured ok."""
        return {key(r) for r in self.previous if r["status"] == "ok"}

    def rows(self, new: Iterable[Mapping[str, Any]], planned: set[tuple]) -> list[dict]:
        """What the file holds: the resumed file's rows (less those this sweep measures again, its
        failures), then the new ones."""
        ok = self.done()
        kept = [r for r in self.previous if key(r) in ok or key(r) not in planned]
        return kept + [dict(r) for r in new]

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
        if self._lock_fd is not None:
            try:
                os.unlink(self._lock_path)       # while held: see lock()
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    def save(self, frame, environment: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        """Write ``frame``; "" when written, else the failure in one line (the sweep goes on)."""
        try:
            result_files.save(frame, self.path, environment, settings)
        except OSError as exc:
            self.failed = atomic.why(exc)
            return self.failed
        self.failed = ""
        return ""
