"""transfer: moving N bytes from host to device and back."""
from __future__ import annotations

import numpy as np

from workbench.catalog.workloads import Phases, Workload, register
from workloads._common import uniform


def _inputs(nbytes, dt, variant, rng):
    return (uniform(rng, max(1, nbytes // dt.itemsize), dt),)


W = register(Workload(
    name="transfer",
    order=90,
    title="Host-device transfer",
    kind="data movement",
    description="Copy N bytes to the device and back (on the CPU: a plain memory copy, the baseline). "
                "Pageable or pinned host memory is the sweep's choice.",
    lesson="PCIe is an order of magnitude slower than the GPU's own memory: a transfer can eat a whole "
           "speedup. Pinned (page-locked) host memory moves several times faster than pageable memory, "
           "and small copies are dominated by latency, not bandwidth.",
    size_unit="bytes N",
    default_sizes=tuple(2 ** k for k in range(10, 29, 2)),
    make_inputs=_inputs,
    reference=lambda inp: inp[0].astype(np.float64),
    flops=lambda n: 0.0,
    bytes_moved=lambda n, isz: 2.0 * n,          # N bytes up + N bytes down (CPU: N read + N written)
    device_footprint=lambda n, isz: 1.0 * n,     # one device buffer of N bytes
    # N bytes in and out (two more pinned on a GPU), and in float64 per element: the random draw,
    # the reference and the verification's two temporaries (measured: 8.0 N in float32).
    footprint=lambda n, isz: n * (2 + 4 * 8 / isz) * 1.15,
    tolerance={"float32": 0.0, "float64": 0.0},  # a copy is exact
    throughput_on="total",
))


@W.implement("numpy", note="np.copyto: host memory bandwidth")
def _numpy(inputs, ctx):
    (x,) = inputs
    out = np.empty_like(x)

    def copy():
        np.copyto(out, x)
        return out
    return copy


def _gpu(inputs, ctx):
    s = ctx.session
    pinned = ctx.host_memory == "pinned"
    host = s.host_buffer(inputs[0], pinned)
    dev = s.empty_device(host.shape, host.dtype)
    back = s.empty_host(host.shape, host.dtype, pinned)
    return Phases(h2d=lambda: s.upload(host, dev), compute=lambda: None,
                  d2h=lambda: s.download(dev, back))


W.implement("cupy", note="ndarray.set / get on the session's stream")(_gpu)
W.implement("numba-cuda", note="copy_to_device / copy_to_host on the session's stream")(_gpu)
