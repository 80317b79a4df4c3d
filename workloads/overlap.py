"""overlap: copies hidden behind compute on several CUDA streams, against the same work in turn (issue 37).

The step is elementwise: a recurrence of ``STEPS`` fused multiply-adds per element
(v <- 0.999 v + 0.001), long enough that its compute is of the order of its copies, and with a
closed form, so that the float64 reference costs one pass. Each variant names its host memory
and how the call runs:

- ``sequential``: copy in, compute, copy out, one after another on the session's stream;
- ``k stream(s)``: the array cut into ``CHUNKS_PER_STREAM * k`` chunks, dealt round-robin to k
  streams, each chunk copied in, computed and copied out on its stream (the CUDA C++ Best
  Practices Guide's staged concurrent copy and execute). The streams fork from the session's
  stream and join it again, so the session's events bracket all of it.

Every variant also times its three phases alone over the whole array: with the copies in and out
at once (the device's measured rate for that, ``workbench.measure.gpu.duplex``) they give the
limit an overlapped call approaches (``workbench.views.overlap``). From pageable memory
the driver stages each copy through a pinned buffer of its own and the call waits for it:
nothing overlaps, which is the lesson's point.
"""
from __future__ import annotations

import functools

import numpy as np

from workbench.catalog.workloads import Phases, Workload, register
from workloads._common import BLOCK, grid, kernel_builder, uniform

cuda = None         # numba.cuda, bound by the kernel builder on first use (see workloads._common)

STEPS = 1000
A, B = 0.999, 0.001
#: Chunks per stream: k chunks would leave each stream one chunk, and the first copy in and the
#: last copy out would each be a k-th of the call with nothing beside them.
CHUNKS_PER_STREAM = 4
STREAMS = (1, 2, 4, 8)
MEMORIES = ("pinned", "pageable")


def variant_name(memory: str, streams: int) -> str:
    """'pinned sequential', 'pinned 1 stream', 'pageable 4 streams'."""
    return f"{memory} sequential" if streams == 0 else f"{memory} {streams} stream{'s' if streams > 1 else ''}"


VARIANTS = tuple(variant_name(m, k) for m in MEMORIES for k in (0,) + STREAMS)


def parse_variant(variant: str) -> tuple[str, int]:
    """(memory, streams) of a variant name; 0 streams for sequential. ValueError for another name."""
    memory, _, how = (variant or VARIANTS[0]).partition(" ")
    if memory not in MEMORIES:
        raise ValueError(f"overlap variant {variant!r}: the host memory is pinned or pageable")
    if how == "sequential":
        return memory, 0
    count = how.split(" ")[0]
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"overlap variant {variant!r}: say 'sequential' or 'K streams'")
    return memory, int(count)


def chunks(n: int, streams: int) -> list[tuple[int, int]]:
    """[(start, stop), ...]: the array cut into ``CHUNKS_PER_STREAM * streams`` near-equal pieces
    (fewer where it has fewer elements), none empty."""
    pieces = max(1, min(n, CHUNKS_PER_STREAM * streams))
    edges = np.linspace(0, n, pieces + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def reference(inputs):
    (x,) = inputs
    power = A ** STEPS
    return power * np.asarray(x, np.float64) + B * (1 - power) / (1 - A)


W = register(Workload(
    name="overlap",
    order=95,
    title="Copies overlapped with compute",
    kind="data movement",
    description=f"A {STEPS}-step elementwise recurrence over N elements, copied in and out: in turn, or in "
                f"chunks over 1, 2, 4 or 8 CUDA streams, from pinned or pageable host memory.",
    lesson="Copies in both directions and the compute can run at once on different streams, from pinned "
           "memory: the call then approaches its limit, the longest phase or the copies in and out at once "
           "(a link moves both ways slower than one), instead of their sum. From pageable memory nothing "
           "overlaps.",
    size_unit="elements N",
    default_sizes=tuple(2 ** k for k in range(20, 27, 2)),
    make_inputs=lambda n, dt, v, rng: (uniform(rng, n, dt),),
    reference=reference,
    flops=lambda n: 2.0 * STEPS * n,
    bytes_moved=lambda n, isz: 2.0 * n * isz,
    device_footprint=lambda n, isz: 2.0 * n * isz,
    # the input and the result, a pinned copy of each, the float64 reference and its temporaries
    footprint=lambda n, isz: n * (4 * isz + 3 * 8) * 1.2,
    # 1000 roundings, each shrunk by 0.999 from then on: about 1e-5 apart in float32 at worst
    tolerance={"float32": 1e-4, "float64": 1e-12},
    variants=VARIANTS,
    host_memory_of=lambda variant: parse_variant(variant)[0],
    # What it measures is copies between host and device beside the compute: a CPU run of its ten
    # variants would be ten runs of one loop (and the CPU's 1000-step recurrence at the footprint
    # probe's 256 MiB took minutes on the 2-core VM).
    needs_gpu=True,
))


@functools.cache
def _cupy_kernel(dtype: str):
    import cupy as cp
    body = (f"T v = x; for (int i = 0; i < {STEPS}; ++i) {{ v = v * (T){A!r} + (T){B!r}; }} y = v;")
    return cp.ElementwiseKernel("T x", "T y", body, f"overlap_recurrence_{dtype}")


@kernel_builder
def _numba_kernel():

    # STEPS as a global (Numba freezes it as a constant, as CuPy's source holds it). This kernel runs
    # 8x CuPy's ElementwiseKernel of the same recurrence (4.34 ms against 0.53 ms at 2^24 float32,
    # H100 and H200 alike), with the count as an argument or as this constant: not explained yet;
    # the overlap it shows is real either way (compute-bound, 1.04x its limit at 2^26).
    @cuda.jit
    def recurrence(x, y, a, b):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            for _ in range(STEPS):
                v = v * a + b
            y[i] = v
    return recurrence


def _buffers(inputs, ctx):
    memory, streams = parse_variant(ctx.variant)
    s = ctx.session
    host_in = s.host_buffer(np.ascontiguousarray(inputs[0]), memory == "pinned")
    host_out = s.empty_host(host_in.shape, host_in.dtype, memory == "pinned")
    return s, streams, host_in, host_out, s.empty_device(host_in.shape, host_in.dtype), \
        s.empty_device(host_in.shape, host_in.dtype)


@W.implement("cupy", note="ndarray.set / get and the kernel on each chunk's stream")
def _cupy(inputs, ctx):
    s, k, host_in, host_out, dx, dy = _buffers(inputs, ctx)
    cp = s.cp
    kernel = _cupy_kernel(ctx.dtype.name)
    phases = Phases(h2d=lambda: s.upload(host_in, dx), compute=lambda: kernel(dx, dy),
                    d2h=lambda: s.download(dy, host_out))
    if not k:
        return phases
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(k)]
    forked = cp.cuda.Event(disable_timing=True)
    joined = [cp.cuda.Event(disable_timing=True) for _ in streams]
    pieces = chunks(host_in.size, k)

    def whole():
        forked.record(s.stream)
        for st in streams:
            st.wait_event(forked)
        for j, (a, b) in enumerate(pieces):
            st = streams[j % k]
            dx[a:b].set(host_in[a:b], stream=st)
            with st:
                kernel(dx[a:b], dy[a:b])
            # blocking=False: CuPy's get() waits for its copy by default (since v13), which queues
            # each chunk behind the last one's return: on the H200 4 streams ran 1.04x slower than
            # in turn (12.3 ms against 11.8 ms at 2^26), the surprise of CuPy issues #1695 and #7579.
            dy[a:b].get(stream=st, out=host_out[a:b], blocking=False)
        for st, done in zip(streams, joined):
            done.record(st)
            s.stream.wait_event(done)
        return host_out
    phases.whole = whole
    return phases


@W.implement("numba-cuda", note="copy_to_device / copy_to_host and the kernel on each chunk's stream")
def _numba_cuda(inputs, ctx):
    s, k, host_in, host_out, dx, dy = _buffers(inputs, ctx)
    kernel = _numba_kernel()
    a_, b_ = ctx.dtype.type(A), ctx.dtype.type(B)
    n = host_in.size
    phases = Phases(h2d=lambda: s.upload(host_in, dx),
                    compute=lambda: kernel[grid(n), BLOCK, s.stream](dx, dy, a_, b_),
                    d2h=lambda: s.download(dy, host_out))
    if not k:
        return phases
    cuda_ = s.cuda
    streams = [cuda_.stream() for _ in range(k)]
    forked = cuda_.event(timing=False)
    joined = [cuda_.event(timing=False) for _ in streams]
    pieces = chunks(n, k)

    def whole():
        forked.record(s.stream)
        for st in streams:
            forked.wait(st)
        for j, (a, b) in enumerate(pieces):
            st = streams[j % k]
            dx[a:b].copy_to_device(host_in[a:b], stream=st)
            kernel[grid(b - a), BLOCK, st](dx[a:b], dy[a:b], a_, b_)
            dy[a:b].copy_to_host(host_out[a:b], stream=st)
        for st, done in zip(streams, joined):
            done.record(st)
            done.wait(s.stream)
        return host_out
    phases.whole = whole
    return phases
