"""A/A plug-in: ``twin-a`` and ``twin-b`` run the very same NumPy code; ``twin-slow`` does 30 % more
of the same work. A verdict between the twins other than 'same' or 'undecided' is a false one;
``twin-slow`` against ``twin-a`` must come out 'slower' wherever the noise allows (docs/PERFORMANCE.md).

    gpu-workbench --plugin benchmarks/aa_plugin.py run -w twins -b twin-a,twin-b,twin-slow -s 2^14:2^23:x2
"""
import numpy as np

from workbench.api import Workload, backend, register

for _name in ("twin-a", "twin-b", "twin-slow"):
    backend(_name, like="numpy", description="identical NumPy code")

def _work(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    np.multiply(x, x, out=out)
    np.multiply(out, 0.5, out=out)
    np.add(out, x, out=out)
    return out


W = register(Workload(
    name="twins", title="Twins", kind="kernels", description="y = x^2 / 2 + x, the same code under three names",
    lesson="none", size_unit="elements", default_sizes=(2 ** 14, 2 ** 18, 2 ** 22),
    make_inputs=lambda n, dt, v, rng: (rng.random(n).astype(dt),),
    reference=lambda inp: inp[0].astype(np.float64) ** 2 / 2 + inp[0].astype(np.float64),
    flops=lambda n: 3.0 * n, bytes_moved=lambda n, i: 2.0 * n * i, footprint=lambda n, i: 4.0 * n * i))


def _twin(inputs, ctx):
    (x,) = inputs
    out = np.empty_like(x)
    return lambda: _work(x, out)


def _slow(inputs, ctx):
    (x,) = inputs
    out = np.empty_like(x)
    extra = x[: int(0.3 * x.size)]
    spare = np.empty_like(extra)
    return lambda: (_work(extra, spare), _work(x, out))[1]


W.implement("twin-a")(_twin)
W.implement("twin-b")(_twin)
W.implement("twin-slow")(_slow)
