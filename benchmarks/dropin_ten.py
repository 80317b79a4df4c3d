"""The ten functions of tests/dropin/functions.py on every drop-in that runs here: each outcome and
its one-sentence answer, as a Markdown table (docs/PERFORMANCE.md keeps the run's).

    python benchmarks/dropin_ten.py [SIZES]      # SIZES as --sizes takes them; default 2^10,2^16
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "dropin"))

import workbench  # noqa: E402
from functions import FUNCTIONS  # noqa: E402


def main(sizes: str = "2^10,2^16") -> None:
    logging.basicConfig(level=logging.ERROR)
    print("| function | drop-in | outcome | answer |\n|---|---|---|---|")
    for name, (f, setup, _, _) in FUNCTIONS.items():
        df = workbench.try_on_gpu(f, setup=setup, sizes=sizes, dtype="float64", name=name, progress=False,
                                  budget=0.05)
        for backend, rows in df.groupby("backend", sort=False):
            if backend == "numpy":
                continue
            outcome = ",".join(sorted(set(rows["status"])))
            answer = str(rows["answer"].iloc[0]).replace("|", "/")
            print(f"| {name} | {backend} | {outcome} | {answer} |", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
