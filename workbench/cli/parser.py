"""The command line's arguments: one argparse parser for every subcommand (standard library only, so
that ``--help`` and a mistyped option answer before NumPy or pandas is imported)."""
from __future__ import annotations

import argparse

from workbench.cli.usage import UsageError


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:   # one clear line, not a usage dump
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="gpu-workbench", description="See what a GPU does for your Python code.")
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
    sweep_options(run, out_help="write the results to FILE.csv (and FILE.meta.json) or FILE.json; an existing "
                                 "file is refused without --force or --resume")
    run.add_argument("--threads", metavar="COUNTS",
                     help="run each CPU backend whose threads can be set (Numba's loops, BLAS) once per count, "
                          "as its own series: 1,4,all gives numba x1, numba x4 and numba xN (N: the cores here)")
    run.add_argument("--drop-in", action="store_true",
                     help="your workload's NumPy kernel, unchanged, also as each drop-in that can run here "
                          "(numba.njit, njit parallel, CuPy through NumPy's dispatch); each that cannot is said")
    run.add_argument("--resume", action="store_true",
                     help="add to the --out file: its points measured ok are kept and not run again")
    run.add_argument("--in-process", action="store_true",
                     help="run the engine in this process, unsupervised (for debugging)")
    cluster_options(run)
    chart_options(run, required=False)
    plot = sub.add_parser("plot", help="charts of result files (several: overlaid, to compare)")
    plot.add_argument("results", nargs="+", metavar="RESULTS", help="result files: .csv, .json or .meta.json")
    chart_options(plot, required=True)
    report = sub.add_parser("report", help="a one-file report of result files: self-contained HTML, or PDF")
    report.add_argument("results", nargs="+", metavar="RESULTS", help="result files: .csv, .json or .meta.json")
    report.add_argument("--out", "-o", required=True, help="FILE.html or FILE.pdf")
    report.add_argument("--no-stamp", action="store_true", help="charts without where and when they were measured")
    report.add_argument("--baseline", help="speedup baseline: BACKEND, or BACKEND@N for the N-th result set")
    lesson = sub.add_parser("lesson", help="without a name: the lessons; with one: run it and say what it shows")
    lesson.add_argument("name", nargs="?", help="the lesson to run (see `gpu-workbench lesson`)")
    lesson.add_argument("--sizes", "-s", help="instead of the lesson's sizes (as for run): a quick try")
    sweep_options(lesson, out_help="write the results and the lesson's statement to FILE.csv or FILE.json")
    chart_options(lesson, required=False)
    compare = sub.add_parser("compare", help="per-point verdicts of NEW against BASE: faster, slower, same or "
                                             "undecided, decided with each point's noise")
    compare.add_argument("base", metavar="BASE", help="result file measured first (.csv, .json or .meta.json)")
    compare.add_argument("new", metavar="NEW", help="result file to compare with it")
    compare.add_argument("--json", action="store_true", help="a JSON list of objects, one per matched point")
    compare.add_argument("--figure", choices=("end-to-end", "compute"), default="end-to-end",
                         help="which time to compare (default: end-to-end)")
    compare.add_argument("--min-effect", type=percent, default=None, metavar="PERCENT",
                         help="a difference smaller than this is 'same' (default 5 %%), as asv's --factor")
    sub.add_parser("gui", help="open the workbench window (the default)")
    return p


def percent(text: str) -> float:
    """'1', '1%' or '0.5 %' as a fraction (0.01, 0.005); refused outside 0-100 %."""
    try:
        value = float(str(text).strip().rstrip("%").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (e.g. 1 or 0.5%)") from None
    if not 0 <= value < 100:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 100 %")
    return value / 100


def sweep_options(p: argparse.ArgumentParser, out_help: str) -> None:
    """What ``run`` and ``lesson`` both take: repeats, budget, the output file, quiet, the point limit."""
    p.add_argument("--repeats", "-r", type=int, default=None, help="the fewest samples per point (default 7)")
    p.add_argument("--noise", type=percent, default=None, metavar="PERCENT",
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


def cluster_options(p: argparse.ArgumentParser) -> None:
    """``run``'s options for a sweep on a Dask cluster (checked by ``workbench.cluster.options``)."""
    from workbench.cluster.connect import DEFAULT_TIMEOUT_S      # imports no Dask: only a sweep on a cluster does
    g = p.add_argument_group("on a Dask cluster (pip install 'gpu-workbench[cluster]'; docs/CLUSTER.md)")
    g.add_argument("--cluster", metavar="ADDRESS",
                   help="send the points to the Dask workers of the scheduler at ADDRESS (tcp://HOST:8786, "
                        "tls://HOST:8786), or 'local' for a cluster on this machine bound to 127.0.0.1 "
                        "(one worker per GPU where there are GPUs and dask-cuda)")
    g.add_argument("--devices", metavar="LIST",
                   help="with --cluster: measure every point on each device named (HOST:GPU1,HOST:CPU), or "
                        "on 'all' the cluster's devices, each its own series ('cupy @ HOST:GPU1'); without it "
                        "the points are spread over the workers")
    g.add_argument("--tls-ca-file", metavar="FILE", help="with a tls:// scheduler: the CA certificate")
    g.add_argument("--tls-cert", metavar="FILE", help="with a tls:// scheduler: this client's certificate")
    g.add_argument("--tls-key", metavar="FILE", help="with a tls:// scheduler: this client's private key")
    g.add_argument("--cluster-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"how long to try to reach the scheduler (default {DEFAULT_TIMEOUT_S:g})")


def chart_options(p: argparse.ArgumentParser, required: bool) -> None:
    from workbench.views import chart_kinds, presets     # loaded by every parser, but not by each engine process
    p.add_argument("--chart", required=required, metavar="FILE",
                   help="write charts to FILE.png, .svg or .pdf (every chart: one file each, or one PDF page each); "
                        "with --kind timeline also FILE.json, a Chrome trace for Perfetto or chrome://tracing")
    p.add_argument("--kind", choices=chart_kinds.Names(extra=("all",)), metavar="KIND", default="all",
                   help="which chart: %(choices)s (default: all)")
    p.add_argument("--preset", choices=presets.PRESETS, default="slide",
                   help="slide 1920x1080, 4k 3840x2160, or paper (3.5 in column, vector)")
    p.add_argument("--size", metavar="WxH", help="a slide of this many pixels, e.g. 1280x720")
    p.add_argument("--no-stamp", action="store_true", help="no line saying where and when it was measured")
    p.add_argument("--baseline", help="speedup baseline: BACKEND, or BACKEND@N for the N-th result set")
    p.add_argument("--point", metavar="BACKEND@SIZE[:VARIANT]",
                   help="the point --kind timeline lays out, e.g. cupy@2^26 (default: the largest size's "
                        "GPU point with the most records)")
