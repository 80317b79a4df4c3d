"""Starting a spawned child from a program that has no file of its own (``python - <<EOF``).

multiprocessing's spawn and forkserver children run the parent's ``__main__`` again, from the file
``__main__.__file__`` names (unless it ran as a module, ``-m``). A program read from standard input
names "<stdin>", which no child can open: each exits with status 1 before its target runs, so that
a sweep from a heredoc failed every point. Such a program starts its children as ``python -c``
programs do, with no file to run again: what a child needs of it travels pickled, by value.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from multiprocessing import process
from typing import Iterator

_lock = threading.Lock()        # the name is hidden for one start at a time, and put back after it


@contextlib.contextmanager
def main_without_a_file() -> Iterator[None]:
    """Around ``Process.start()``: where ``__main__`` names a file that is not there ("<stdin>"),
    it names none while the child is told how to start."""
    with _lock:
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None)
        if (path is None or getattr(main, "__spec__", None) is not None
                or os.path.isfile(os.path.join(process.ORIGINAL_DIR or "", path))):   # as multiprocessing reads it
            yield
            return
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = path
