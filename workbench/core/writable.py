"""Whether an output path can be written, checked before any work is done.

The command line refuses a bad ``--out`` or ``--chart`` with it before a sweep starts; the
window refuses a bad file name in its export dialog before an export starts. Both then say
the same thing.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def problem(path: str | Path) -> str:
    """Why ``path`` cannot be written ("" when it can): a folder, a missing folder, a place we
    cannot write. Tried by creating a file beside it, since ``os.access`` says yes to root on a
    read-only file system."""
    path = Path(path)
    folder = path.parent
    try:
        if path.is_dir():
            return "is a folder, not a file name"
        if not folder.is_dir():
            return f"the folder {str(folder)[:80]} does not exist"
        if path.exists() and not os.access(path, os.W_OK):
            return "the file is not writable"
        tempfile.TemporaryFile(dir=folder).close()
        if len(path.name.encode()) > os.pathconf(folder, "PC_NAME_MAX"):
            raise OSError(36, "File name too long")
    except OSError as exc:     # a name too long, a folder we may not enter or write in
        return f"cannot write in {str(folder)[:80]} ({exc.strerror or exc})"
    return ""
