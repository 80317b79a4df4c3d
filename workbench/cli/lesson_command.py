"""``lesson``: the lessons, or one run through the supervised engine and what it shows."""
from __future__ import annotations

import argparse
import sys
import textwrap
from functools import partial

from workbench.cli.charts import chart_plan, write_charts
from workbench.cli.progress import Progress
from workbench.workspace.signals import StopOnSignals
from workbench.cli.sweep import check_out, make_runner, point_timeout, refuse, results_out
from workbench.cli.usage import EXIT_FAILED, EXIT_OK, UsageError


def _check_lesson_options(args: argparse.Namespace, ls) -> None:
    """What ``run`` refuses, ``lesson`` refuses, with the same check and line, before any work:
    each of the lesson's sweeps with the options given (the lesson's smallest size without --sizes,
    whose larger ones it leaves out with a note where they do not fit)."""
    from workbench.catalog.backends import BACKENDS, Availability
    from workbench.workspace import Experiment, check
    sizes = args.sizes if args.sizes is not None else str(min(ls.sizes))
    for dtype in ls.dtypes:
        refuse(check(Experiment(workload=ls.workload, backends=tuple(b for b in ls.backends if b in BACKENDS),
                                 sizes=sizes, dtype=dtype, repeats=args.repeats, budget_s=args.budget,
                                 noise=args.noise, min_time_s=args.min_time),
                      lambda name: Availability(True)))     # a backend not usable here is the lesson's note
    point_timeout(args)


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
    check_out(args)
    chart = chart_plan(args) if args.chart else None
    p = lessons.plan(ls, probe_all([b for b in ls.backends if b in BACKENDS]), sizes=sizes,
                     min_repeats=args.repeats, budget_s=args.budget, noise=args.noise, min_time_s=args.min_time,
                     energy=args.energy)
    out = results_out(args)
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
    from workbench.views import table_text
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
            print(table_text.summary_table(results.to_frame(ws.rows[run["before"]:])))

    if p.specs:
        runner = make_runner(args)
        if ls.fresh_engine:
            runner.renew()          # nothing compiled yet: the first call pays for it
        with StopOnSignals(runner) as signals:
            ws.listen(partial(protocol.dispatch, {ev.SweepBegan: run_began, ev.SweepEnded: run_ended}))
            Progress(ws, args.quiet)
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
        unsaved = not write_charts(args, chart, [live(frame, ws.environment, ws.settings)]) or unsaved
    if signals is not None and signals.received:
        print(f"gpu-workbench: interrupted by {signals.received}: {len(ws.rows)} point(s) measured", file=sys.stderr)
        return signals.status
    stopped = ws.cancelled or len(ws.rows) < sum(_points(spec) for spec in p.specs)
    return EXIT_FAILED if stopped or unsaved or len(lessons.unexpected_failures(p, frame)) else EXIT_OK


def _points(spec) -> int:
    """How many points a sweep has (its sizes, variants and backends)."""
    from workbench.workspace.session import points_of
    return len(points_of(spec))
