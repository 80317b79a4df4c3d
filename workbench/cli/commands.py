"""The command line: ``gpu-workbench [list | info | run | plot | report ...]``; no arguments opens the window.

Exit status: 0 when every point is ok, 1 when some point failed or a file could not be written
(what was measured is still printed), 2 for bad usage (an ``--out`` that exists, or that another
sweep is writing, included), 128 + the signal's number when a signal stopped it (130 for Ctrl-C,
143 for SIGTERM), 141 when the reader of its output went away (a closed pipe), 1 when its output
could not be written (a full device). A stdout the shell closed (``>&-``) changes no status: one line
says the output was dropped.
"""
from __future__ import annotations

import argparse
import errno
import math
import logging
import os
import sys
import textwrap
from functools import partial
from pathlib import Path
from typing import Sequence

# Beyond the standard library, each command imports what it needs inside itself, for two reasons:
# `--help` and a mistyped option answer at once, without NumPy or pandas (over a second to import on
# a 2-core VM); and every engine process imports this module again (multiprocessing's spawn re-runs
# the parent's main script, gpu-workbench's), where cudf.pandas must be installed before pandas.

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130          # stopped by Ctrl-C, SIGTERM or SIGHUP: what was measured is written
EXIT_BROKEN_PIPE = 141          # 128 + SIGPIPE: what a shell expects of a writer whose reader went away


class UsageError(Exception):
    """Bad input: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:   # one clear line, not a usage dump
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpu-workbench", description="See what a GPU does for your Python code.")
    p.add_argument("-v", "--verbose", action="store_true", help="log what the engine does")
    p.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                   help="load extra workloads from a Python file (repeatable)")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("list", help="workloads and backends, and whether each backend is usable here")
    sub.add_parser("info", help="the environment record: CPU, memory, OS, libraries, BLAS, GPUs")
    run = sub.add_parser("run", help="run a sweep and print its table")
    run.add_argument("--workload", "-w", required=True)
    run.add_argument("--backends", "-b", help="comma list (default: every usable backend of the workload)")
    run.add_argument("--sizes", "-s", help="e.g. 1024,2^20 or 2^10:2^20 or 2^10:2^20:x4 (default: the workload's)")
    run.add_argument("--dtype", "-d", default="float32")
    run.add_argument("--variants", help="comma list of the workload's variants (default: all)")
    run.add_argument("--pinned", action="store_true", help="GPU transfers from page-locked host memory")
    run.add_argument("--device-memory-limit", metavar="SIZE",
                     help="cap the device memory GPU backends may use, e.g. 8GiB or 512MiB: reach the memory "
                          "wall on a large GPU (a point past it is an error row; the sweep goes on)")
    _sweep_options(run, out_help="write the results to FILE.csv (and FILE.meta.json) or FILE.json; an existing "
                                 "file is refused without --force or --resume")
    run.add_argument("--threads", metavar="COUNTS",
                     help="run each CPU backend whose threads can be set (Numba's loops, BLAS) once per count, "
                          "as its own series: 1,4,all gives numba x1, numba x4 and numba xN (N: the cores here)")
    run.add_argument("--resume", action="store_true",
                     help="add to the --out file: its points measured ok are kept and not run again")
    run.add_argument("--in-process", action="store_true",
                     help="run the engine in this process, unsupervised (for debugging)")
    from workbench.cluster.options import add_options     # imports no Dask: only a sweep on a cluster does
    add_options(run)
    _chart_options(run, required=False)
    plot = sub.add_parser("plot", help="charts of result files (several: overlaid, to compare)")
    plot.add_argument("results", nargs="+", metavar="RESULTS", help="result files: .csv, .json or .meta.json")
    _chart_options(plot, required=True)
    report = sub.add_parser("report", help="a one-file report of result files: self-contained HTML, or PDF")
    report.add_argument("results", nargs="+", metavar="RESULTS", help="result files: .csv, .json or .meta.json")
    report.add_argument("--out", "-o", required=True, help="FILE.html or FILE.pdf")
    report.add_argument("--no-stamp", action="store_true", help="charts without where and when they were measured")
    report.add_argument("--baseline", help="speedup baseline: BACKEND, or BACKEND@N for the N-th result set")
    lesson = sub.add_parser("lesson", help="without a name: the lessons; with one: run it and say what it shows")
    lesson.add_argument("name", nargs="?", help="the lesson to run (see `gpu-workbench lesson`)")
    lesson.add_argument("--sizes", "-s", help="instead of the lesson's sizes (as for run): a quick try")
    _sweep_options(lesson, out_help="write the results and the lesson's statement to FILE.csv or FILE.json")
    _chart_options(lesson, required=False)
    compare = sub.add_parser("compare", help="per-point verdicts of NEW against BASE: faster, slower, same or "
                                             "undecided, decided with each point's noise")
    compare.add_argument("base", metavar="BASE", help="result file measured first (.csv, .json or .meta.json)")
    compare.add_argument("new", metavar="NEW", help="result file to compare with it")
    compare.add_argument("--json", action="store_true", help="a JSON list of objects, one per matched point")
    compare.add_argument("--figure", choices=("end-to-end", "compute"), default="end-to-end",
                         help="which time to compare (default: end-to-end)")
    compare.add_argument("--min-effect", type=_percent, default=None, metavar="PERCENT",
                         help="a difference smaller than this is 'same' (default 5 %%), as asv's --factor")
    sub.add_parser("gui", help="open the workbench window (the default)")
    return p


def _percent(text: str) -> float:
    """'1', '1%' or '0.5 %' as a fraction (0.01, 0.005); refused outside 0-100 %."""
    try:
        value = float(str(text).strip().rstrip("%").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (e.g. 1 or 0.5%)") from None
    if not 0 <= value < 100:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 100 %")
    return value / 100


def _sweep_options(p: argparse.ArgumentParser, out_help: str) -> None:
    """What ``run`` and ``lesson`` both take: repeats, budget, the output file, quiet, the point limit."""
    p.add_argument("--repeats", "-r", type=int, default=None, help="the fewest samples per point (default 7)")
    p.add_argument("--noise", type=_percent, default=None, metavar="PERCENT",
                   help="sample each point until the 95 %% interval of its median is within this of it "
                        "(default 1 %%; 0: always to the budget)")
    p.add_argument("--min-time", type=float, default=None, metavar="SECONDS",
                   help="the fewest seconds of samples per point (default 0.02)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="the most seconds of samples per point (default 1); a point that reaches it before "
                        "its noise target says so")
    p.add_argument("--energy", action="store_true",
                   help="energy per call above the idle draw, from the GPU's and CPU's counters, in a pass of "
                        "about a second per point after its samples")
    p.add_argument("--out", "-o", help=out_help)
    p.add_argument("--force", action="store_true", help="replace the --out file if it exists")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--point-timeout", type=float, default=None, metavar="SECONDS",
                   help="end a point that runs longer than this (default 300); it becomes an error row")


def _chart_options(p: argparse.ArgumentParser, required: bool) -> None:
    from workbench.views import presets     # loaded by every parser, but not by each engine process
    p.add_argument("--chart", required=required, metavar="FILE",
                   help="write charts to FILE.png, .svg or .pdf (every chart: one file each, or one PDF page each)")
    p.add_argument("--kind", choices=(*presets.KINDS, "all"), default="all", help="which chart (default: all)")
    p.add_argument("--preset", choices=presets.PRESETS, default="slide",
                   help="slide 1920x1080, 4k 3840x2160, or paper (3.5 in column, vector)")
    p.add_argument("--size", metavar="WxH", help="a slide of this many pixels, e.g. 1280x720")
    p.add_argument("--no-stamp", action="store_true", help="no line saying where and when it was measured")
    p.add_argument("--baseline", help="speedup baseline: BACKEND, or BACKEND@N for the N-th result set")


def main(argv: Sequence[str] | None = None) -> int:
    """The command; its exit status. Output is written to stdout through :class:`_Output`: a reader
    that went away (``| head -1``) or a full device ends the command quietly, once every file it was
    asked to write is written, with the status a shell expects (one line on stderr for a full device)."""
    out = sys.stdout = _Output(*_open_stream(1, "stdout"))
    if sys.stderr is None:          # closed too (`2>&-`): what it would say goes nowhere, quietly
        sys.stderr = _open_stream(2, "stderr")[0]
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
        _StopOnSignals.restore(ignore=argv is None)
        out.flush()
        sys.stdout = out.stream
    return out.status(code)


def _open_stream(fd: int, name: str):
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


class _Output:
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
                _say("gpu-workbench: stdout is closed: what the command printed is dropped")
            return code
        _say(f"gpu-workbench: error: could not write the output: {self.error.strerror or self.error}")
        return EXIT_FAILED

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def _say(line: str) -> None:
    """One line on stderr, or nothing where that cannot be written either."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _command(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
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


#: The window sits above the command line, so the command line finds it by declaration (the
#: entry point pyproject.toml names) rather than importing a layer above its own.
WINDOW_ENTRY_POINTS = "gpu_workbench.window"


def open_window(plugins: tuple[str, ...] = ()) -> int:
    """``gpu-workbench`` with no command: the window, through its declared launcher."""
    import importlib.metadata
    found = list(importlib.metadata.entry_points(group=WINDOW_ENTRY_POINTS, name="window"))
    if not found:
        print("gpu-workbench: the window is not installed here (no 'window' entry point in "
              f"{WINDOW_ENTRY_POINTS}); reinstall with `pip install -e .`", file=sys.stderr)
        return EXIT_USAGE
    return found[0].load()([], plugins=plugins)


def cmd_list() -> int:
    from workbench.catalog.backends import BACKENDS, probe_all
    from workbench.catalog.workloads import REGISTRY
    avail = probe_all()
    print("Backends:")
    for name, b in BACKENDS.items():
        a = avail[name]
        state = f"usable ({a.version})" if a.usable else f"not usable: {a.reason}"
        print(f"  {name:<16} {b.device:<4} {state}")
    if not any(a.usable for n, a in avail.items() if BACKENDS[n].device == "gpu"):
        cpu = [n for n, a in avail.items() if a.usable and BACKENDS[n].device == "cpu"]
        print(f"\nThis machine runs the CPU backends ({', '.join(cpu)}). The GPU backends need an NVIDIA GPU;"
              "\non a machine with one, the cuda12 or cuda13 extra adds them (README: Installing for a GPU "
              "workstation).")
    print("\nWorkloads:")
    for w in REGISTRY.all():
        print(f"  {w.name:<13} {w.title} [{w.kind}; size = {w.size_unit}]")
        print(f"  {'':<13} backends: {', '.join(w.backends)}"
              + (f"; variants: {', '.join(w.variants)}" if w.variants != ("",) else ""))
    if REGISTRY.load_errors:
        print("\nPlug-ins that failed to load:\n  " + "\n  ".join(REGISTRY.load_errors))
    return EXIT_OK


def cmd_info() -> int:
    from workbench.measure.environment import format_record, record
    print(format_record(record()))
    return EXIT_OK


#: The command line's name for each setting an experiment's check can name (``workbench.workspace``).
OPTION_OF = {"sizes": "--sizes", "device_memory_limit": "--device-memory-limit", "threads": "--threads"}


def _experiment(args: argparse.Namespace):
    """``run``'s options as the workspace's Experiment: plain values as typed."""
    from workbench.workspace import Experiment
    # Given but empty ("-b ''") is refused by the check, not taken as "all".
    backends = tuple(args.backends.split(",")) if args.backends is not None else None
    variants = tuple(v.strip() for v in args.variants.split(",")) if args.variants is not None else ()
    return Experiment(workload=args.workload, backends=backends, sizes=args.sizes, dtype=args.dtype,
                      variants=variants, host_memory="pinned" if args.pinned else "pageable",
                      repeats=args.repeats, budget_s=args.budget, noise=args.noise, min_time_s=args.min_time,
                      device_memory_limit=args.device_memory_limit, energy=args.energy,
                      threads=getattr(args, "threads", None) or "")


def _plan(args: argparse.Namespace):
    """Turn the arguments into a checked SweepSpec (the workspace's one check), or raise UsageError."""
    from workbench.catalog.backends import Availability, probe
    from workbench.cluster.places import backend_of
    from workbench.workspace import check
    on_cluster = _cluster_target(args) is not None
    if on_cluster and args.backends is None:
        raise UsageError("with --cluster, name the backends (--backends): what the workers can run is asked of "
                         "them when the sweep starts, not of this machine")
    # On a cluster, each worker is asked what it can run instead of this machine.
    checked = check(_experiment(args), (lambda name: Availability(True)) if on_cluster else probe)
    _refuse(checked)
    _point_timeout(args)
    spec = checked.spec
    _check_out(args)
    if args.baseline and backend_of(args.baseline).partition("@")[0].strip() not in spec.backends:
        raise UsageError(f"--baseline {args.baseline}: not among the backends of this sweep "
                         f"({', '.join(spec.backends)})")
    return spec


def _refuse(checked) -> None:
    """The first problem the workspace's check found, as a UsageError naming its option."""
    if checked.problems:
        problem = checked.problems[0]
        option = OPTION_OF.get(problem.setting)
        raise UsageError(f"{option}: {problem.text}" if option else problem.text)


def _check_lesson_options(args: argparse.Namespace, ls) -> None:
    """What ``run`` refuses, ``lesson`` refuses, with the same check and line, before any work:
    each of the lesson's sweeps with the options given (the lesson's smallest size without --sizes,
    whose larger ones it leaves out with a note where they do not fit)."""
    from workbench.catalog.backends import BACKENDS, Availability
    from workbench.workspace import Experiment, check
    sizes = args.sizes if args.sizes is not None else str(min(ls.sizes))
    for dtype in ls.dtypes:
        _refuse(check(Experiment(workload=ls.workload, backends=tuple(b for b in ls.backends if b in BACKENDS),
                                 sizes=sizes, dtype=dtype, repeats=args.repeats, budget_s=args.budget,
                                 noise=args.noise, min_time_s=args.min_time),
                      lambda name: Availability(True)))     # a backend not usable here is the lesson's note
    _point_timeout(args)


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.workspace.experiment import memory_notes
    spec = _plan(args)
    chart = _chart_plan(args) if args.chart else None
    for note in memory_notes(spec):       # announced, never refused: the wall may be the point
        print(f"gpu-workbench: note: {note}", file=sys.stderr)
    out = _results_out(args)
    try:
        return _run(args, spec, chart, out)
    finally:
        if out is not None:
            out.unlock()


def _run(args: argparse.Namespace, spec, chart, out) -> int:
    """``run``'s sweep, with ``--out`` checked and locked (``out``, a ResultsOut, or None), through
    the workspace, which collects the rows and appends each to the file; a file that could not be
    written makes the exit status 1, as a failed point does."""
    from workbench.results import rows as results
    from workbench.measure.environment import record
    from workbench.workspace import Workspace
    from workbench.workspace.session import points_of
    runner = _runner(args)
    ws = Workspace(out=out, environment=record() if args.out or chart else {})
    points = points_of(spec)
    done = out.done() if out is not None else set()
    skip = [i for i, point in enumerate(points) if point in done]
    with _StopOnSignals(runner) as signals:
        _Progress(ws, args.quiet, already=len(skip))
        try:
            ws.run(spec, skip=skip)
            ws.drive(runner)
        finally:
            runner.close()
    frame = ws.table.frame()
    if out is not None and out.previous:
        print(f"resumed {args.out}: {len(skip)} point(s) kept from it, {len(ws.rows)} measured now")
    capped = f", device memory capped at {results.human_bytes(spec.device_memory_limit)}"
    print(f"{spec.workload}, {spec.dtype}" + (", pinned host memory" if spec.host_memory == "pinned" else "")
          + (capped if spec.device_memory_limit else ""))
    print(results.summary_table(frame))
    headlines = _headlines(frame, spec.backends)
    if headlines:        # one sentence per backend against the first: where it wins, by how much, why
        print("\n" + "\n".join(headlines))
    full = results.to_frame(out.all_rows()) if out is not None else frame   # with a resumed file's
    if out is not None and not out.failed:
        print(f"\nwrote {args.out}")
    unsaved = out is not None and bool(out.failed)
    if chart and len(ws.rows):
        from workbench.results.files import live
        unsaved = not _write_charts(args, chart, [live(full, ws.environment, ws.settings)]) or unsaved
    if signals.received:
        print(f"gpu-workbench: interrupted by {signals.received}: {len(ws.rows)} point(s) measured"
              + (f", written to {args.out}" if out is not None and not out.failed else ""), file=sys.stderr)
        return signals.status
    failed = ws.cancelled or bool((frame["status"] != "ok").any()) or unsaved
    if getattr(runner, "lost", ""):       # the scheduler went away (said in one line): what was measured is kept
        return EXIT_USAGE
    return EXIT_FAILED if failed else EXIT_OK


def _runner(args: argparse.Namespace):
    """The supervised engine (or, with --in-process, the engine in this process)."""
    from workbench.measure.supervisor import InProcess, Supervisor
    timeout = _point_timeout(args)
    target = _cluster_target(args)
    if target is not None:
        from workbench.cluster.options import runner
        return runner(args, target, timeout)
    if getattr(args, "in_process", False):
        return InProcess()
    return Supervisor(plugins=tuple(args.plugin), point_timeout_s=timeout)


def _point_timeout(args: argparse.Namespace) -> float:
    """``--point-timeout`` in seconds, or the default; UsageError where it cannot work."""
    from workbench.measure.supervisor import DEFAULT_POINT_TIMEOUT_S
    timeout = args.point_timeout if args.point_timeout is not None else DEFAULT_POINT_TIMEOUT_S
    if not 0 < timeout < float("inf"):     # an endless limit would let a hung kernel hang the sweep
        raise UsageError(f"--point-timeout {args.point_timeout}: must be a positive, finite number of seconds")
    return timeout


def _cluster_target(args: argparse.Namespace):
    """The Dask cluster ``--cluster`` names (None: this machine), checked; UsageError otherwise."""
    from workbench.cluster.options import target_of
    try:
        return target_of(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


class _Progress:
    """What the terminal shows of a workspace's sweep: a progress bar on stderr, the engine's
    warnings, a save that failed; a sweep the engine refused is a UsageError."""

    def __init__(self, ws, quiet: bool, already: int = 0) -> None:
        from workbench.measure import protocol
        from workbench.workspace import events as ev
        self.quiet, self.already, self.bar = quiet, already, None
        self.handlers = {ev.SweepPlanned: self.planned, ev.PointBegan: self.point_began,
                         ev.PointAdded: self.point_added, ev.SweepEnded: self.ended, ev.SweepBegan: self.ended,
                         ev.Trouble: self.trouble, ev.SaveFailed: self.save_failed, protocol.LogLine: self.log_line}
        self.dispatch = protocol.dispatch
        ws.listen(self.on_event)

    def on_event(self, event) -> None:
        self.dispatch(self.handlers, event)

    def log_line(self, m) -> None:
        from tqdm import tqdm
        if m.level in ("WARNING", "ERROR", "CRITICAL"):
            tqdm.write(f"gpu-workbench: {m.text}", file=sys.stderr)

    def planned(self, e) -> None:
        from tqdm import tqdm
        self.bar = tqdm(total=e.total, initial=self.already, unit="pt", disable=self.quiet, file=sys.stderr,
                        leave=False)
        self.already = 0

    def point_began(self, e) -> None:
        if self.bar is not None:
            self.bar.set_description(f"{e.backend} {e.size}" + (f" {e.variant}" if e.variant else ""))

    def point_added(self, e) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def ended(self, e) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def trouble(self, e) -> None:
        from tqdm import tqdm
        if e.refused:
            raise UsageError(e.text)
        if e.what == "died":
            tqdm.write(f"gpu-workbench: {e.text}", file=sys.stderr)
        elif e.what == "lost":          # the Dask scheduler went away: what was measured is kept
            tqdm.write(f"gpu-workbench: error: {e.text}", file=sys.stderr)

    def save_failed(self, e) -> None:
        from tqdm import tqdm
        tqdm.write(f"gpu-workbench: {'error: ' if e.final else ''}{e.text}"
                   + (f" ({e.unsaved} point(s) measured are not saved)" if e.final
                      else " (the points are kept; the next point's save tries again)"), file=sys.stderr)


def cmd_lesson(args: argparse.Namespace) -> int:
    """``lesson``: the lessons; ``lesson NAME``: its sweeps through the supervised engine, then its statement."""
    from workbench import lessons
    from workbench.catalog.backends import BACKENDS, probe_all
    from workbench.core.sizes import parse_sizes

    if not args.name:
        print("Lessons (gpu-workbench lesson NAME runs one):")
        for ls in lessons.LESSONS.values():
            print(f"  {ls.name:<16} {ls.title}")
            print(textwrap.fill(ls.claim, 100, initial_indent=" " * 19, subsequent_indent=" " * 19))
        return EXIT_OK
    try:
        ls = lessons.get(args.name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    _check_lesson_options(args, ls)
    sizes = tuple(parse_sizes(args.sizes)) if args.sizes is not None else None
    _check_out(args)
    chart = _chart_plan(args) if args.chart else None
    p = lessons.plan(ls, probe_all([b for b in ls.backends if b in BACKENDS]), sizes=sizes,
                     min_repeats=args.repeats, budget_s=args.budget, noise=args.noise, min_time_s=args.min_time,
                     energy=args.energy)
    out = _results_out(args)
    try:
        return _lesson(args, ls, p, chart, out)
    finally:
        if out is not None:
            out.unlock()


def _lesson(args: argparse.Namespace, ls, p, chart, out) -> int:
    """A lesson's sweeps and statement, with ``--out`` checked and locked (``out``, or None), through
    the workspace (each point appended to the file; the statement in its settings)."""
    from workbench import lessons
    from workbench.measure import protocol
    from workbench.results import rows as results
    from workbench.workspace import Workspace
    from workbench.workspace import events as ev
    print(f"Lesson: {ls.title}\n" + textwrap.fill(ls.claim, 100, initial_indent="  ", subsequent_indent="  "))
    env: dict = {}
    if p.specs:
        from workbench.measure.environment import record
        env = record() if args.out or chart else {}
    ws = Workspace(out=out, environment=env)
    signals = None
    run = {"index": -1, "before": 0}

    def run_began(e: ev.SweepBegan) -> None:
        run_ended(e)
        run["index"] += 1
        index, spec = run["index"], e.spec
        label = p.run_label(index)
        print(("\n" + (f"Run {index + 1} of {len(p.specs)} ({label}): " if label else "")
               + f"{spec.workload}, {spec.dtype}"
               + (", pinned host memory" if spec.host_memory == "pinned" else "")), flush=True)
        run["before"] = len(ws.rows)

    def run_ended(e) -> None:          # the run before this one ended: its table
        if run["index"] >= 0 and (isinstance(e, ev.SweepEnded) or not e.first):
            print(results.summary_table(results.to_frame(ws.rows[run["before"]:])))

    if p.specs:
        runner = _runner(args)
        if ls.fresh_engine:
            runner.renew()          # nothing compiled yet: the first call pays for it
        with _StopOnSignals(runner) as signals:
            ws.listen(partial(protocol.dispatch, {ev.SweepBegan: run_began, ev.SweepEnded: run_ended}))
            _Progress(ws, args.quiet)
            try:
                ws.run_lesson(p)
                ws.drive(runner)
            finally:
                runner.close()
    else:
        ws.run_lesson(p)
    frame = ws.table.frame()
    statement = ws.statement
    print(f"\n{statement.verdict}")
    for sentence in statement.sentences:
        print(textwrap.fill(sentence, 100, initial_indent="- ", subsequent_indent="  "))
    if out is not None and len(ws.rows) and not out.failed:
        print(f"\nwrote {args.out}")
    unsaved = out is not None and bool(out.failed)
    if chart and len(ws.rows):
        from workbench.results.files import live
        measured = set(frame.loc[frame["status"] == "ok", "backend"])
        if not args.baseline and ls.baseline in measured:
            args.baseline = ls.baseline
        unsaved = not _write_charts(args, chart, [live(frame, ws.environment, ws.settings)]) or unsaved
    if signals is not None and signals.received:
        print(f"gpu-workbench: interrupted by {signals.received}: {len(ws.rows)} point(s) measured", file=sys.stderr)
        return signals.status
    stopped = ws.cancelled or len(ws.rows) < sum(_points(spec) for spec in p.specs)
    return EXIT_FAILED if stopped or unsaved or len(lessons.unexpected_failures(p, frame)) else EXIT_OK


def _points(spec) -> int:
    """How many points a sweep has (its sizes, variants and backends)."""
    from workbench.workspace.session import points_of
    return len(points_of(spec))


class _StopOnSignals:
    """Ctrl-C, SIGTERM and SIGHUP ask the sweep to stop (what was measured is kept and written);
    a second one ends the engine at once. The handler only sets flags (``Supervisor.stop`` and
    ``abort`` take no lock): it runs on the main thread, between any two of its bytecodes, perhaps
    while that thread holds the lock it would wait for. Once the sweep is over the handlers stay
    until :func:`main` returns, noting a signal without raising: what is left is writing the
    results, which no KeyboardInterrupt may cut in half."""

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
    _before: dict = {}          # the handlers in place before the first sweep, restored by main

    def __init__(self, runner) -> None:
        self.runner = runner
        self.received = ""
        self.status = EXIT_INTERRUPTED    # 128 + the first signal's number, as shells report it

    def _handle(self, signum, frame) -> None:
        import signal
        first = not self.received
        if first:
            self.received, self.status = signal.Signals(signum).name, 128 + signum
        runner = self.runner
        if runner is None:       # the sweep is over: the command is writing what it measured
            return
        if first:
            runner.stop()
        else:
            runner.abort()

    def __enter__(self) -> "_StopOnSignals":
        import signal
        self.runner.arm()        # a signal from now on stops the sweep about to start, not only one running
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                before = signal.signal(sig, self._handle)
                _StopOnSignals._before.setdefault(sig, before)
        return self

    def __exit__(self, *exc) -> None:
        self.runner = None

    @classmethod
    def restore(cls, ignore: bool = False) -> None:
        """Put back the handlers that were in place before the first sweep (when the command ends),
        or ignore those signals from now on (``ignore``: the program is about to exit)."""
        import signal
        for sig, handler in cls._before.items():
            signal.signal(sig, signal.SIG_IGN if ignore else handler)
        cls._before = {}


def _check_out(args: argparse.Namespace) -> None:
    """``--out`` is refused before any point runs: a name results.save would not take, a bad place."""
    if args.out is None:
        return
    if Path(args.out).suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"--out {args.out!r}: the file name must end in .csv or .json")
    check_writable(Path(args.out), "--out")


def _headlines(frame, backends) -> list[str]:
    """Each other backend's one sentence against the first backend of the sweep (the baseline)."""
    from workbench.views import summary
    ok = frame[frame["status"] == "ok"]
    if ok.empty or len(backends) < 2:
        return []
    return [c.headline() for c in summary.comparisons(ok, backends[0])]


def _results_out(args: argparse.Namespace):
    """``--out`` as a locked ResultsOut (None without one): an existing file is refused unless
    ``--force`` or ``--resume``, and so is a file another sweep is writing."""
    if args.out is None:
        return None
    from workbench.results.out import Refused, ResultsOut
    try:
        out = ResultsOut(args.out, force=args.force, resume=getattr(args, "resume", False))
        out.lock()
    except Refused as exc:
        raise UsageError(str(exc)) from None
    for line in out.notes:          # said once the file is taken: a refusal is the one line
        _say(f"gpu-workbench: --out {args.out}: {line}")
    return out


def check_writable(path: Path, what: str) -> None:
    """Refuse an output path before any work is done (``workbench.core.writable`` says why)."""
    from workbench.core.writable import problem
    why = problem(path)
    if why:      # the path cut short: an over-long name is not echoed whole
        raise UsageError(f"{what} {str(path)[:80]}: {why}")


def _chart_plan(args: argparse.Namespace):
    """The preset and the files ``--chart`` will write, each checked; UsageError otherwise."""
    from workbench.views import presets
    try:
        preset = presets.preset(args.preset, presets.parse_size(args.size) if args.size else None)
        paths = presets.output_paths(args.chart, args.kind)
    except ValueError as exc:
        raise UsageError(f"--chart: {exc}") from None
    for path in paths:
        check_writable(path, "--chart")
    return preset


def _open_sets(paths: Sequence[str]):
    from workbench.results.files import ResultsFileError, open_results
    try:
        return [open_results(p) for p in paths]
    except ResultsFileError as exc:
        raise UsageError(str(exc)) from None


def _check_baseline(sets, name: str | None) -> None:
    """A baseline that is not in the results is refused before anything is drawn."""
    from workbench.views import matplotlib_charts as charts
    try:
        charts.baseline(sets, name)
    except ValueError as exc:
        raise UsageError(f"--baseline: {exc}") from None


def _write_charts(args: argparse.Namespace, preset, sets) -> bool:
    """The charts of ``--chart``; False, and one line on stderr, where one could not be written."""
    from workbench.core import atomic
    from workbench.views import matplotlib_charts as charts
    _check_baseline(sets, args.baseline)
    try:
        paths = charts.export(sets, args.chart, args.kind, preset, stamp=not args.no_stamp,
                              baseline_name=args.baseline)
    except OSError as exc:       # a full disk, a file-size limit: the old chart is left as it was
        print(f"gpu-workbench: error: {atomic.why(exc)}", file=sys.stderr)
        return False
    for path in paths:
        print(f"wrote {path}")
    return True


def cmd_plot(args: argparse.Namespace) -> int:
    preset = _chart_plan(args)
    return EXIT_OK if _write_charts(args, preset, _open_sets(args.results)) else EXIT_FAILED


def cmd_report(args: argparse.Namespace) -> int:
    from workbench.views import report
    out = Path(args.out)
    if out.suffix.lower() not in report.REPORT_FORMATS:
        raise UsageError(f"--out {out}: the report must end in .html or .pdf")
    check_writable(out, "--out")
    sets = _open_sets(args.results)
    _check_baseline(sets, args.baseline)
    try:
        print(f"wrote {report.write(sets, out, stamp=not args.no_stamp, baseline_name=args.baseline)}")
    except OSError as exc:       # a full disk, a file-size limit: the old report is left as it was
        from workbench.core.atomic import why
        print(f"gpu-workbench: error: {why(exc)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    """``compare BASE NEW``: each point both files measured ok, decided with its noise."""
    import json

    import pandas as pd

    from workbench.core import stats
    from workbench.core import verdicts
    base, new = _open_sets([args.base, args.new])
    column = "total_median_s" if args.figure == "end-to-end" else "compute_median_s"
    effect = args.min_effect if args.min_effect is not None else stats.DEFAULT_MIN_EFFECT
    found = verdicts.compare_sets(base.frame, new.frame, column, effect)
    if args.json:
        from workbench.results.files import strict_json
        print(json.dumps([strict_json({k: v for k, v in r.items() if k != "described"}) for r in found], indent=1))
        return EXIT_OK
    if not found:
        print("no point was measured ok in both files (matched on workload, backend, size, dtype, variant)")
        return EXIT_OK
    from workbench.results.rows import human_seconds
    table = pd.DataFrame({
        "workload": [r["workload"] for r in found], "backend": [r["backend"] for r in found],
        "size": [r["size"] for r in found], "dtype": [r["dtype"] for r in found],
        "variant": [r["variant"] for r in found],
        "base": [human_seconds(r["base_s"]) for r in found], "new": [human_seconds(r["new_s"]) for r in found],
        "new/base": [f"{r['ratio']:.3g}" for r in found],
        "95 % interval": [f"{r['ratio_lo']:.3g}-{r['ratio_hi']:.3g}" if math.isfinite(r["ratio_lo"]) else "-"
                          for r in found],
        "verdict": [r["verdict"] + (f" ({r['why']})" if r["why"] else "") for r in found]})
    if not table["variant"].astype(bool).any():
        table = table.drop(columns="variant")
    print(f"{args.figure} time of NEW against BASE; 'same' within {effect * 100:g} %:")
    print(table.to_string(index=False))
    counts = pd.Series([r["verdict"] for r in found]).value_counts()
    print(", ".join(f"{counts.get(v, 0)} {v}" for v in stats.VERDICTS))
    moved = [r for r in found if r["bound_base"] and r["bound_new"] and r["bound_base"] != r["bound_new"]]
    for r in moved:        # what limits a point changed: the reason behind its verdict may have too
        print(f"{r['backend']} at {r['size']}: bound by {r['bound_base']} in BASE, by {r['bound_new']} in NEW")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
