"""How a command ends: its exit statuses, the one-line usage error, and the output-path check."""
from __future__ import annotations

import sys
from pathlib import Path


EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130          # stopped by Ctrl-C, SIGTERM or SIGHUP: what was measured is written
EXIT_BROKEN_PIPE = 141          # 128 + SIGPIPE: what a shell expects of a writer whose reader went away


class UsageError(Exception):
    """Bad input: reported as one line, exit status 2."""


def say(line: str) -> None:
    """One line on stderr, or nothing where that cannot be written either."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def check_writable(path: Path, what: str) -> None:
    """Refuse an output path before any work is done (``workbench.core.writable`` says why)."""
    from workbench.core.writable import problem
    why = problem(path)
    if why:      # the path cut short: an over-long name is not echoed whole
        raise UsageError(f"{what} {str(path)[:80]}: {why}")
