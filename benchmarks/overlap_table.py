"""The overlap table of docs/PERFORMANCE.md from a results file of the overlap workload: per backend,
host memory, streams and size, the end to end, its limit max(h2d, compute, d2h) and how far above
it the call ran, and the speedup over the sequential variant of the same memory with its verdict.

    python benchmarks/overlap_table.py RESULTS.json
"""
from __future__ import annotations

import sys

from workbench.core import stats, verdicts
from workbench.core.sizes import fmt_size
from workbench.results.files import open_results
from workbench.results.rows import human_seconds
from workbench.views import overlap


def main(path: str) -> None:
    rs = open_results(path)
    ok = rs.frame[rs.frame["status"] == "ok"].to_dict("records")
    index = {(r["backend"], r["variant"], int(r["size"])): r for r in ok}
    print("| backend | variant | size | h2d | compute | d2h | limit | end to end | e2e / limit | "
          "against sequential |")
    print("|" + " --- |" * 10)
    for r in sorted(ok, key=lambda r: (r["backend"], r["variant"].split(" ")[0], int(r["size"]),
                                       r["variant"])):
        limit = overlap.limit_s(r)
        seq = index.get((r["backend"], overlap.sequential_of(r["variant"]), int(r["size"])))
        against = "-"
        if seq is not None and seq is not r:
            v = verdicts.compare_rows(r, seq)
            # an undecided verdict's reason, to its first clause: the table's cell stays one line
            against = stats.describe(v) if v.decided or v.verdict == "same" else \
                "undecided (" + v.why.split(" (")[0].split(":")[0] + ")"
        print(f"| {r['backend']} | {r['variant']} | {fmt_size(int(r['size']))} | {human_seconds(r['h2d_s'])} | "
              f"{human_seconds(r['compute_median_s'])} | {human_seconds(r['d2h_s'])} | {human_seconds(limit)} | "
              f"{human_seconds(r['total_median_s'])} | {r['total_median_s'] / limit:.2f}x | {against} |")
    bad = rs.frame[rs.frame["status"] != "ok"]
    for r in bad.to_dict("records"):
        print(f"not ok: {r['backend']} {r['variant']} {r['size']}: {r['status']}: {r['message']}")


if __name__ == "__main__":
    main(sys.argv[1])
