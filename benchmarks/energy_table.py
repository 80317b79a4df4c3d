"""The energy table of docs/PERFORMANCE.md from a results file of a sweep run with --energy: each
figure beside (power - idle) x the time of what was measured, compute and whole call apart.

    python benchmarks/energy_table.py RESULTS.json
"""
from __future__ import annotations

import sys

from workbench.results.files import open_results


def main(path: str) -> None:
    frame = open_results(path).frame
    print("| backend | size | compute | energy_j | power_w | idle_w | (P-idle) x compute | whole call | "
          "energy_e2e_j | power_e2e_w | (P-idle) x whole call |")
    print("|" + " --- |" * 11)
    for r in frame[frame["status"] == "ok"].to_dict("records"):
        idle = r["idle_w"]
        print(f"| {r['backend']} | 2^{int(r['size']).bit_length() - 1} | {r['compute_median_s'] * 1e6:.1f} µs | "
              f"{r['energy_j'] * 1e3:.3g} mJ | {r['power_w']:.0f} | {idle:.0f} | "
              f"{(r['power_w'] - idle) * r['compute_median_s'] * 1e3:.3g} mJ | {r['total_median_s'] * 1e3:.3g} ms | "
              f"{r['energy_e2e_j'] * 1e3:.3g} mJ | {r['power_e2e_w']:.0f} | "
              f"{(r['power_e2e_w'] - idle) * r['total_median_s'] * 1e3:.3g} mJ |")
    print(frame["energy_source"].iloc[0])


if __name__ == "__main__":
    main(sys.argv[1])
