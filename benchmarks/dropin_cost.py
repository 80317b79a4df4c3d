"""What the drop-in machinery adds to a point: the same function measured as a backend written by
hand (numba.njit at module level) and as its drop-in (numba.njit of the user's function, called
through the drop-in's wrapper), interleaved in one sweep. The table goes to docs/PERFORMANCE.md.

    python benchmarks/dropin_cost.py [SIZES]        (default 2^10:2^22:x16)
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

PLUGIN = '''
import numba
import numpy as np
from workbench.api import Workload, backend, register

W = register(Workload("cost", make_inputs=lambda n, dt, v, rng: (rng.random(n).astype(dt),)))
backend("numba-by-hand", like="numba")


def smooth(inputs):
    (x,) = inputs
    return 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]


W.kernel("numpy")(smooth)
W.kernel("numba-by-hand")(numba.njit(smooth))
'''


def main(sizes: str = "2^10:2^22:x16") -> None:
    import subprocess
    from workbench.results.files import open_results
    with tempfile.TemporaryDirectory() as folder:
        plugin, out = Path(folder) / "cost.py", Path(folder) / "cost.csv"
        plugin.write_text(PLUGIN)
        subprocess.run([sys.executable, "-m", "workbench", "--plugin", str(plugin), "run", "-w", "cost", "--drop-in",
                        "-b", "numba-by-hand,numba.njit (drop-in)", "-s", sizes, "-d", "float64", "-q",
                        "--out", str(out)], check=True, cwd=Path(__file__).parents[1])
        frame = open_results(out).frame
    print("| size | by hand | drop-in | drop-in / by hand | verdict with the noise |")
    print("| --- | --- | --- | --- | --- |")
    from workbench.core import verdicts
    for size, rows in frame.groupby("size"):
        r = rows.set_index("backend")
        hand, drop = r.loc["numba-by-hand"], r.loc["numba.njit (drop-in)"]
        v = verdicts.compare_rows(drop, hand)
        print(f"| 2^{int(size).bit_length() - 1} | {hand['compute_median_s'] * 1e6:.2f} µs | "
              f"{drop['compute_median_s'] * 1e6:.2f} µs | {drop['compute_median_s'] / hand['compute_median_s']:.3f} | "
              f"{v.verdict} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
