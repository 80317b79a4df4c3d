"""Reading a file a user named: only a regular file of a bounded size is ever read.

A FIFO blocks its reader until a writer comes, a device (``/dev/zero``, ``/dev/urandom``) or a file
that grows without end never reaches its end: each is refused in one line (:class:`Refused`), and
nothing is read from it. Results, sessions and journals (``workbench.results.files``) and users'
workload files (``workbench.catalog.workloads``, ``workbench.measure.plugins``) are read here.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


class Refused(OSError):
    """Not a regular file, or too large: ``str()`` is one line naming the file and the reason.
    An OSError, so that whoever reads a file and gives up on an OSError gives up on this too."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = str(path), reason


def kind(mode: int) -> str:
    """What a file of this mode is, as a message says it ('' for a regular file)."""
    if stat.S_ISREG(mode):
        return ""
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file")


def check(path: str | Path, st: os.stat_result, limit: int, what: str) -> None:
    """Refuse what ``st`` says is not a regular file of at most ``limit`` bytes; ``what`` names the
    file a caller wanted ("a results file")."""
    found = kind(st.st_mode)
    if found == "a directory":
        raise Refused(path, f"is a directory, not {what}")
    if found:
        raise Refused(path, f"is {found}, not {what} (only regular files are read)")
    if st.st_size > limit:
        raise Refused(path, f"too large for {what} ({st.st_size / 2 ** 30:.1f} GiB; at most {limit // 2 ** 20} MiB)")


def checked(path: str | Path, limit: int, what: str, follow_links: bool = True) -> None:
    """Look at ``path`` (never open it) and refuse it as :func:`check` does; OSError if it is not there."""
    check(path, (os.stat if follow_links else os.lstat)(path), limit, what)


def read_bytes(path: str | Path, limit: int, what: str, follow_links: bool = True) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else raises :class:`Refused`
    before a byte is read (another OSError where the file cannot be opened at all).
    ``follow_links=False``: a symbolic link is refused too."""
    checked(path, limit, what, follow_links)
    nofollow = 0 if follow_links else getattr(os, "O_NOFOLLOW", 0)
    # O_NONBLOCK: a FIFO swapped in between the stat and the open cannot block the open.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | nofollow)
    try:
        check(path, os.fstat(fd), limit, what)      # what was opened, not what was looked at
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(raw) > limit:          # it grew after the check
        raise Refused(path, f"too large for {what} (at most {limit // 2 ** 20} MiB)")
    return raw

