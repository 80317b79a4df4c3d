"""The command line: ``gpu-workbench [list | info | run ...]``; no arguments opens the window.

Exit status: 0 when every point is ok, 1 when some point failed, 2 for bad usage.
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from typing import Sequence

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


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
    run.add_argument("--repeats", "-r", type=int, default=None, help="minimum repeats per point")
    run.add_argument("--budget", type=float, default=None, help="seconds of repeats per point, at least")
    run.add_argument("--out", "-o", help="write the results to FILE.csv or FILE.json")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    sub.add_parser("gui", help="open the workbench window (the default)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        from workbench.registry import REGISTRY
        for plugin in args.plugin:
            try:
                REGISTRY.load_file(plugin)
            except (OSError, SyntaxError, ImportError, ValueError) as exc:
                raise UsageError(f"cannot load workloads from {plugin}: {exc}") from None
        if args.command == "list":
            return cmd_list()
        if args.command == "info":
            return cmd_info()
        if args.command == "run":
            return cmd_run(args)
        from workbench.app import main as gui_main
        return gui_main([])
    except UsageError as exc:
        print(f"gpu-workbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("gpu-workbench: interrupted", file=sys.stderr)
        return EXIT_FAILED


def cmd_list() -> int:
    from workbench.backends import BACKENDS, probe_all
    from workbench.registry import REGISTRY
    avail = probe_all()
    print("Backends:")
    for name, b in BACKENDS.items():
        a = avail[name]
        state = f"usable ({a.version})" if a.usable else f"not usable: {a.reason}"
        print(f"  {name:<16} {b.device:<4} {state}")
    print("\nWorkloads:")
    for w in REGISTRY.all():
        print(f"  {w.name:<13} {w.title} [{w.kind}; size = {w.size_unit}]")
        print(f"  {'':<13} backends: {', '.join(w.backends)}"
              + (f"; variants: {', '.join(w.variants)}" if w.variants != ("",) else ""))
    if REGISTRY.load_errors:
        print("\nPlug-ins that failed to load:\n  " + "\n  ".join(REGISTRY.load_errors))
    return EXIT_OK


def cmd_info() -> int:
    from workbench.environment import format_record, record
    print(format_record(record()))
    return EXIT_OK


def _plan(args: argparse.Namespace):
    """Turn the arguments into a validated SweepSpec, or raise UsageError."""
    from workbench import engine
    from workbench.backends import probe
    from workbench.registry import REGISTRY
    from workbench.sizes import parse_sizes
    try:
        workload = REGISTRY.get(args.workload)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    try:
        sizes = tuple(parse_sizes(args.sizes)) if args.sizes else workload.default_sizes
    except ValueError as exc:
        raise UsageError(f"--sizes: {exc}") from None
    if args.backends:
        names = tuple(b.strip() for b in args.backends.split(",") if b.strip())
    else:
        names = tuple(b for b in workload.backends if probe(b).usable)
    variants = tuple(v.strip() for v in args.variants.split(",")) if args.variants else ()
    spec = engine.SweepSpec(
        workload=workload.name, backends=names, sizes=sizes, dtype=args.dtype, variants=variants,
        host_memory="pinned" if args.pinned else "pageable",
        min_repeats=args.repeats if args.repeats is not None else engine.DEFAULT_MIN_REPEATS,
        budget_s=args.budget if args.budget is not None else engine.DEFAULT_BUDGET_S)
    spec = dataclasses.replace(spec, max_repeats=max(spec.max_repeats, spec.min_repeats))
    try:
        engine.validate(spec)
    except engine.PlanError as exc:
        raise UsageError(str(exc)) from None
    if args.out and not args.out.lower().endswith((".csv", ".json")):
        raise UsageError(f"--out {args.out}: the file name must end in .csv or .json")
    for name in names:
        a = probe(name)
        if not a.usable:
            raise UsageError(f"backend {name} is not usable here: {a.reason}")
    return spec


def cmd_run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from workbench import engine, results
    from workbench.environment import record

    spec = _plan(args)
    rows: list[dict] = []
    bar = None
    cancelled = False
    for event in engine.run_sweep(spec):
        if isinstance(event, engine.SweepStarted):
            bar = tqdm(total=event.total, unit="pt", disable=args.quiet, file=sys.stderr, leave=False)
        elif isinstance(event, engine.PointStarted) and bar is not None:
            bar.set_description(f"{event.backend} {event.size}" + (f" {event.variant}" if event.variant else ""))
        elif isinstance(event, engine.PointFinished):
            rows.append(event.row)
            if bar is not None:
                bar.update(1)
        elif isinstance(event, engine.SweepError):
            raise UsageError(event.message)
        elif isinstance(event, engine.SweepFinished):
            cancelled = event.cancelled
    if bar is not None:
        bar.close()
    frame = results.to_frame(rows)
    print(f"{spec.workload}, {spec.dtype}" + (", pinned host memory" if spec.host_memory == "pinned" else ""))
    print(results.summary_table(frame))
    if args.out:
        path = results.save(frame, args.out, record())
        print(f"\nwrote {path}")
    failed = cancelled or bool((frame["status"] != "ok").any())
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
