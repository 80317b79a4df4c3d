"""``run``: a sweep through the supervised engine, its table, and the files it was asked for."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.charts import chart_plan, write_charts
from workbench.cli.progress import Progress
from workbench.workspace.signals import StopOnSignals
from workbench.cli.sweep import check_out, cluster_target, make_runner, point_timeout, refuse, results_out
from workbench.cli.usage import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError


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
    on_cluster = cluster_target(args) is not None
    if on_cluster and args.backends is None:
        raise UsageError("with --cluster, name the backends (--backends): what the workers can run is asked of "
                         "them when the sweep starts, not of this machine")
    # On a cluster, each worker is asked what it can run instead of this machine.
    checked = check(_experiment(args), (lambda name: Availability(True)) if on_cluster else probe)
    refuse(checked)
    point_timeout(args)
    spec = checked.spec
    check_out(args)
    if args.baseline and backend_of(args.baseline).partition("@")[0].strip() not in spec.backends:
        raise UsageError(f"--baseline {args.baseline}: not among the backends of this sweep "
                         f"({', '.join(spec.backends)})")
    return spec


def cmd_run(args: argparse.Namespace) -> int:
    if not getattr(args, "drop_in", False):
        return _cmd_run(args)
    import tempfile
    with tempfile.TemporaryDirectory(prefix="workbench-dropin-") as folder:
        _drop_ins(args, Path(folder))
        return _cmd_run(args)


def _drop_ins(args: argparse.Namespace, folder: Path) -> None:
    """``--drop-in``: the workload's drop-ins added here, and a file that adds them in the engine
    after the workload's own file; with no --backends, the drop-ins that cannot run here are said."""
    from workbench.catalog import dropin
    from workbench.catalog.backends import probe
    from workbench.catalog.workloads import REGISTRY
    if cluster_target(args) is not None:
        raise UsageError("--drop-in runs on this machine's engine, not on a cluster")
    try:
        dropin.land(args.workload)
        workload = REGISTRY.get(args.workload)
    except (KeyError, ValueError) as exc:
        raise UsageError(f"--drop-in: {exc.args[0] if exc.args else exc}") from None
    plugin = folder / "drop_ins.py"
    plugin.write_text(f"from workbench.catalog.dropin import land\nland({args.workload!r})\n", encoding="utf-8")
    args.plugin = [*args.plugin, str(plugin)]
    named = [b.strip() for b in args.backends.split(",")] if args.backends else None
    if named is not None and set(named) & set(dropin.NAMES):
        return                  # a drop-in named among --backends: those, as named
    # With no --backends, every backend; with some, those and every drop-in.
    found = {name: probe(name) for name in workload.backends if named is None or name in dropin.NAMES}
    for name, a in found.items():
        if not a.usable and name in dropin.NAMES:
            print(f"gpu-workbench: note: {name} not measured: {a.reason}", file=sys.stderr)
    args.backends = ",".join([*(named or ()), *(name for name, a in found.items() if a.usable)])


def _cmd_run(args: argparse.Namespace) -> int:
    from workbench.workspace.experiment import memory_notes
    spec = _plan(args)
    chart = chart_plan(args) if args.chart else None
    for note in memory_notes(spec):       # announced, never refused: the wall may be the point
        print(f"gpu-workbench: note: {note}", file=sys.stderr)
    out = results_out(args)
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
    from workbench.views import table_text
    from workbench.measure.environment import record
    from workbench.workspace import Workspace
    from workbench.workspace.session import points_of
    runner = make_runner(args)
    ws = Workspace(out=out, environment=record() if args.out or chart else {})
    points = points_of(spec)
    done = out.done() if out is not None else set()
    skip = [i for i, point in enumerate(points) if point in done]
    with StopOnSignals(runner) as signals:
        Progress(ws, args.quiet, already=len(skip))
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
    print(table_text.summary_table(frame))
    headlines = _headlines(frame, spec.backends)
    if headlines:        # one sentence per backend against the first: where it wins, by how much, why
        print("\n" + "\n".join(headlines))
    full = results.to_frame(out.all_rows()) if out is not None else frame   # with a resumed file's
    if out is not None and not out.failed:
        print(f"\nwrote {args.out}")
    unsaved = out is not None and bool(out.failed)
    if chart and len(ws.rows):
        from workbench.results.files import live
        unsaved = not write_charts(args, chart, [live(full, ws.environment, ws.settings)]) or unsaved
    if signals.received:
        print(f"gpu-workbench: interrupted by {signals.received}: {len(ws.rows)} point(s) measured"
              + (f", written to {args.out}" if out is not None and not out.failed else ""), file=sys.stderr)
        return signals.status
    failed = ws.cancelled or bool((frame["status"] != "ok").any()) or unsaved
    if getattr(runner, "lost", ""):       # the scheduler went away (said in one line): what was measured is kept
        return EXIT_USAGE
    return EXIT_FAILED if failed else EXIT_OK


def _headlines(frame, backends) -> list[str]:
    """Each other backend's one sentence against the first backend of the sweep (the baseline)."""
    from workbench.views import summary
    ok = frame[frame["status"] == "ok"]
    if ok.empty or len(backends) < 2:
        return []
    return [c.headline() for c in summary.comparisons(ok, backends[0])]
