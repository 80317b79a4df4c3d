"""fft: the 1-D complex FFT of N points."""
from __future__ import annotations

import numpy as np

from workbench.catalog.workloads import Workload, register
from workloads._common import device_phases, uniform


def _inputs(n, dt, variant, rng):
    x = np.empty(n, dtype=np.result_type(dt, np.complex64))
    x.real = uniform(rng, n, dt, -1, 1)
    x.imag = uniform(rng, n, dt, -1, 1)
    return (x,)


W = register(Workload(
    name="fft",
    order=20,
    title="FFT (1-D complex)",
    kind="array math",
    description="The discrete Fourier transform of N complex points (complex64 for float32, complex128 for float64).",
    lesson="An FFT does N log N work with irregular, strided memory access: cuFFT wins clearly at large N, "
           "the first call pays for building a plan, and small transforms never recover the transfer.",
    size_unit="points N",
    default_sizes=tuple(2 ** k for k in range(10, 23, 2)),
    make_inputs=_inputs,
    reference=lambda inp: np.fft.fft(inp[0].astype(np.complex128)),
    flops=lambda n: 5.0 * n * np.log2(max(n, 2)),
    bytes_moved=lambda n, isz: 2.0 * n * 2 * isz,
    device_footprint=lambda n, isz: n * (isz + 3 * 2 * isz),   # input, complex output, plan work area
    # The input, its complex128 copy and two results, plus pocketfft's scratch: a length with a large
    # prime factor goes through Bluestein's algorithm, which pads to a power of two at least 2N in
    # complex128 (measured: 184 bytes per point in float32 at N = 3,495,253).
    footprint=lambda n, isz: n * (2 * 2 * isz + 3 * 16 + 128) * 1.25,
    tolerance={"float32": 1e-4, "float64": 1e-11},
))


@W.implement("numpy", note="pocketfft")
def _numpy(inputs, ctx):
    (x,) = inputs
    return lambda: np.fft.fft(x)


@W.implement("cupy", note="cuFFT")
def _cupy(inputs, ctx):
    cp = ctx.session.cp
    return device_phases(ctx, inputs, inputs[0].shape, inputs[0].dtype, lambda x, out: cp.fft.fft(x))
