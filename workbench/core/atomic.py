"""Every file the workbench writes is written here: whole, or not at all, and never through a link.

A file goes to a temporary file of a unique name created exclusively in the target's folder
(``tempfile.mkstemp``), is synced, and is renamed over the target once complete: a reader never
sees half a file, a failed write leaves the old target and no temporary file, a planted symlink
cannot redirect the write, and two writers never share a temporary file. A target that is a
symlink is replaced, never written through; one that is not a regular file (a folder, a device
such as ``/dev/full``, a pipe) is refused. Failures are ``OSError`` with ``filename`` set to the
target; :func:`why` puts one in one line.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

# The mode a plain open() would give a new file. Read once: os.umask can only be read by setting it.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file object whose bytes replace ``path`` when the block ends without an exception.

    For writers that want a file (matplotlib's ``savefig``, ``PdfPages``). On any exception,
    ``KeyboardInterrupt`` included, the temporary file is removed and ``path`` is untouched."""
    path = Path(path)
    mode = _mode_for(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:200]}.", suffix=".tmp")
    except OSError as exc:
        raise _about(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _about(exc, path) from None
        raise
    _sync_folder(path.parent)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Replace ``path`` with ``data``, whole (see the module's doc); the path written."""
    with replacing(path) as f:
        f.write(data)
    return Path(path)


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Replace ``path`` with ``text`` in UTF-8, line ends as given (no newline translation)."""
    return write_bytes(path, text.encode("utf-8"))


def why(exc: BaseException) -> str:
    """An OSError from here as one line: "cannot write PATH: reason"."""
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        return f"cannot write {exc.filename}: {reason}" if exc.filename else f"cannot write: {reason}"
    return f"cannot write: {exc}"


def _mode_for(path: Path) -> int:
    """The new file's permission bits: the old target's, else those of a new file; an existing
    target that is not a regular file (nor a link, which is replaced) is refused."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return 0o666 & ~_UMASK
    except OSError as exc:
        raise _about(exc, path) from None
    if stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return 0o666 & ~_UMASK
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
    raise OSError(errno.EINVAL, "not a regular file (a device, a pipe or a socket): not replaced", str(path))


def _about(exc: OSError, path: Path) -> OSError:
    """The same error, naming the target (not the temporary file the user never asked for)."""
    return OSError(exc.errno, exc.strerror or str(exc), str(path)) if exc.errno else exc


def _sync_folder(folder: Path) -> None:
    """The rename itself on disk (a crash right after leaves the new file, not the old)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
