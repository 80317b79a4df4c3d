"""The commands over result files: ``plot``, ``report`` and ``compare``."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from workbench.cli.charts import chart_plan, check_baseline, open_sets, write_charts
from workbench.cli.usage import EXIT_FAILED, EXIT_OK, UsageError, check_writable


def cmd_plot(args: argparse.Namespace) -> int:
    preset = chart_plan(args)
    return EXIT_OK if write_charts(args, preset, open_sets(args.results)) else EXIT_FAILED


def cmd_report(args: argparse.Namespace) -> int:
    from workbench.views import report
    out = Path(args.out)
    if out.suffix.lower() not in report.REPORT_FORMATS:
        raise UsageError(f"--out {out}: the report must end in .html or .pdf")
    check_writable(out, "--out")
    sets = open_sets(args.results)
    check_baseline(sets, args.baseline)
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
    base, new = open_sets([args.base, args.new])
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
