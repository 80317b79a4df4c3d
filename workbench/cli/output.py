"""stdout for the length of a command: a reader that went away or a full device ends it quietly,
with the status a shell expects."""
from __future__ import annotations

import errno
import os
import sys

from workbench.cli.usage import EXIT_BROKEN_PIPE, EXIT_FAILED, EXIT_OK, say


def open_stream(fd: int, name: str):
    """(sys.stdout or sys.stderr, False); where the shell closed that descriptor (`>&-`: Python then
    sets it to None), (/dev/null opened onto it, True): a file or socket opened later must not take
    the number and receive what is printed, nor the engine's processes, which inherit it."""
    stream = getattr(sys, name)
    if stream is not None:
        return stream, False
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull != fd:            # fd 0 closed as well: /dev/null took 0, not 1
        os.dup2(devnull, fd)
        os.close(devnull)
    return open(fd, "w", closefd=False), True


class Output:
    """stdout for the length of a command: a write that fails (EPIPE: the reader went away; ENOSPC:
    a full device) is remembered and what follows is dropped, so the command goes on to write its
    files. Python's recommended pattern: stdout is then pointed at /dev/null, so that the
    interpreter's last flush of what is left in its buffer cannot fail again at exit."""

    def __init__(self, stream, closed: bool = False) -> None:
        self.stream = stream
        self.error: OSError | None = OSError(errno.EBADF, "stdout is closed") if closed else None

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                return self.stream.write(text)
            except (OSError, ValueError) as exc:     # ValueError: the file object was closed
                self._failed(exc)
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self.stream.flush()
            except (OSError, ValueError) as exc:
                self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if not isinstance(exc, OSError) or exc.errno == errno.EBADF:
            exc = OSError(errno.EBADF, "stdout is closed")
        self.error = exc
        try:
            fd = self.stream.fileno()
        except (OSError, ValueError):        # not a file (a test's capture): nothing left to flush there
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)

    def status(self, code: int) -> int:
        """The exit status: the command's own, unless its output could not be written."""
        if self.error is None or code not in (EXIT_OK, EXIT_FAILED):
            return code
        if self.error.errno == errno.EPIPE:
            return EXIT_BROKEN_PIPE              # quietly: the reader had what it wanted
        if self.error.errno == errno.EBADF:      # `>&-`: the user chose not to see it; the files are written
            if code == EXIT_OK:                  # a failure has said its own one line
                say("gpu-workbench: stdout is closed: what the command printed is dropped")
            return code
        say(f"gpu-workbench: error: could not write the output: {self.error.strerror or self.error}")
        return EXIT_FAILED

    def __getattr__(self, name: str):
        return getattr(self.stream, name)
