"""The command line: ``gpu-workbench [list | info | run | plot | report ...]``; no arguments opens the window.

Exit status: 0 when every point is ok, 1 when some point failed or a file could not be written
(what was measured is still printed), 2 for bad usage (an ``--out`` that exists, or that another
sweep is writing, included), 128 + the signal's number when a signal stopped it (130 for Ctrl-C,
143 for SIGTERM), 141 when the reader of its output went away (a closed pipe), 1 when its output
could not be written (a full device). A stdout the shell closed (``>&-``) changes no status: one line
says the output was dropped. Each command lives in its own module (``run_command``, ``lesson_command``...).
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Sequence

from workbench.cli.lesson_command import cmd_lesson
from workbench.cli.list_command import cmd_info, cmd_list
from workbench.cli.output import Output, open_stream
from workbench.cli.parser import build_parser
from workbench.cli.result_commands import cmd_compare, cmd_plot, cmd_report
from workbench.cli.run_command import cmd_run
from workbench.workspace.signals import StopOnSignals
from workbench.cli.usage import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageError
from workbench.cli.window_command import open_window     # looked up here on each call: a test replaces it

# Beyond the standard library, each command imports what it needs inside itself, for two reasons:
# `--help` and a mistyped option answer at once, without NumPy or pandas (but for `plot --help` and
# a mistyped `--kind`, which list the chart kinds, declared in the chart modules); and every engine
# process imports this module again (multiprocessing's spawn re-runs
# the parent's main script, gpu-workbench's), where cudf.pandas must be installed before pandas.


def main(argv: Sequence[str] | None = None) -> int:
    """The command; its exit status. Output is written to stdout through :class:`Output`: a reader
    that went away (``| head -1``) or a full device ends the command quietly, once every file it was
    asked to write is written, with the status a shell expects (one line on stderr for a full device)."""
    out = sys.stdout = Output(*open_stream(1, "stdout"))
    if sys.stderr is None:          # closed too (`2>&-`): what it would say goes nowhere, quietly
        sys.stderr = open_stream(2, "stderr")[0]
    try:
        code = _command(argv)
    except SystemExit as exc:           # argparse's --help
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        code = exc.code or EXIT_OK
    finally:
        # Called from Python (a test): its handlers back. As the program, once a sweep ran: a signal
        # while it exits must not end it another way than the first signal said (the interpreter
        # puts the default handlers back while it shuts down).
        StopOnSignals.restore(ignore=argv is None)
        out.flush()
        sys.stdout = out.stream
    return out.status(code)


def _command(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        from workbench.measure import plugins
        from workbench.catalog.workloads import PluginError
        # Resolved here: the plug-in is vetted and run in processes whose working folder is not ours.
        args.plugin = [str(Path(plugin).expanduser().resolve()) for plugin in args.plugin]
        for plugin in args.plugin:
            try:
                plugins.load(plugin)
            except PluginError as exc:
                raise UsageError(f"--plugin: {exc}") from None
        if args.command == "list":
            return cmd_list()
        if args.command == "info":
            return cmd_info()
        if args.command == "run":
            return cmd_run(args)
        if args.command == "lesson":
            return cmd_lesson(args)
        if args.command == "plot":
            return cmd_plot(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "compare":
            return cmd_compare(args)
        return open_window(plugins=tuple(args.plugin))
    except UsageError as exc:
        print(f"gpu-workbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:      # before a sweep began: nothing measured, nothing to write
        print("gpu-workbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
