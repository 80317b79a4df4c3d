"""What a notebook does with the workbench, run as a script: sweep two NumPy expressions given as
plain callables, then a built-in workload on two backends; plot, compare, save a PNG.

    python examples/notebook.py [OUT_FOLDER]
"""
import sys
from pathlib import Path

import numpy as np

import workbench


def setup(n):
    return np.random.default_rng(0).random(n)


if __name__ == "__main__":      # the engine is a spawned process, which imports this file again
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    mine = workbench.sweep("squares", setup=setup, sizes="2^10:2^16:x4", budget=0.05,
                           kernels={"numpy": lambda x: x * x, "numpy-power": lambda x: np.power(x, 2)})
    print(mine[["backend", "size", "status", "compute_median_s"]].to_string(index=False))
    # numpy-power against numpy: the second kernel's rows under the first one's name, point by point
    power = mine[mine.backend == "numpy-power"].assign(backend="numpy")
    print(workbench.compare(mine[mine.backend == "numpy"], power)[["size", "ratio", "verdict"]].to_string(index=False))

    built_in = workbench.sweep("source_terms", backends=["numpy", "numba"], sizes="2^10:2^16:x4", budget=0.05)
    again = workbench.sweep("source_terms", backends=["numpy", "numba"], sizes="2^10:2^16:x4", budget=0.05)
    print(workbench.compare(built_in, again)[["backend", "size", "ratio", "verdict"]].to_string(index=False))
    workbench.plot(built_in, "runtime").savefig(out / "source_terms_runtime.png")
    workbench.plot(mine, "runtime").savefig(out / "squares_runtime.png")
    print(f"wrote {out / 'source_terms_runtime.png'}")
