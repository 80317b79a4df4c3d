"""The charts ``--chart`` writes, and the result files ``plot`` and ``report`` open."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from workbench.cli.usage import UsageError, check_writable


def chart_plan(args: argparse.Namespace):
    """The preset and the files ``--chart`` will write, each checked; UsageError otherwise."""
    from workbench.views import presets
    try:
        preset = presets.preset(args.preset, presets.parse_size(args.size) if args.size else None)
        paths = presets.output_paths(args.chart, args.kind)
    except ValueError as exc:
        raise UsageError(f"--chart: {exc}") from None
    for path in paths:
        check_writable(path, "--chart")
    point_of(getattr(args, "point", None))       # refused before a sweep runs, not after
    return preset


def open_sets(paths: Sequence[str]):
    from workbench.results.files import ResultsFileError, open_results
    from workbench.views.palette import MOST_SETS
    if len(paths) > MOST_SETS:
        raise UsageError(f"{len(paths)} result files: one chart tells at most {MOST_SETS} sets apart "
                         f"(each set's marker); compare fewer at a time")
    try:
        return [open_results(p) for p in paths]
    except ResultsFileError as exc:
        raise UsageError(str(exc)) from None


def point_of(text: str | None) -> tuple | None:
    """``--point``: 'cupy@2^26' or 'cupy@2^26:pinned 4 streams' as (backend, size, variant);
    UsageError where it does not read."""
    if not text:
        return None
    from workbench.core.sizes import parse_sizes
    backend, at, rest = text.partition("@")
    size_text, _, variant = rest.partition(":")
    try:
        sizes = parse_sizes(size_text) if at else []
    except ValueError as exc:
        raise UsageError(f"--point: {exc}") from None
    if not backend.strip() or len(sizes) != 1:
        raise UsageError(f"--point {text!r}: write BACKEND@SIZE or BACKEND@SIZE:VARIANT, e.g. cupy@2^26")
    return backend.strip(), sizes[0], variant or None


def check_baseline(sets, name: str | None) -> None:
    """A baseline that is not in the results is refused before anything is drawn."""
    from workbench.views import matplotlib_charts as charts
    try:
        charts.baseline(sets, name)
    except ValueError as exc:
        raise UsageError(f"--baseline: {exc}") from None


def write_charts(args: argparse.Namespace, preset, sets) -> bool:
    """The charts of ``--chart``; False, and one line on stderr, where one could not be written."""
    from workbench.core import atomic
    from workbench.views import matplotlib_charts as charts
    check_baseline(sets, args.baseline)
    try:
        paths = charts.export(sets, args.chart, args.kind, preset, stamp=not args.no_stamp,
                              baseline_name=args.baseline, point=point_of(getattr(args, "point", None)))
    except ValueError as exc:    # a trace of no point: none fits --point, or the one that does has no call
        print(f"gpu-workbench: error: {exc}", file=sys.stderr)
        return False
    except OSError as exc:       # a full disk, a file-size limit: the old chart is left as it was
        print(f"gpu-workbench: error: {atomic.why(exc)}", file=sys.stderr)
        return False
    for path in paths:
        print(f"wrote {path}")
    return True
