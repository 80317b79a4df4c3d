"""pipeline: a table of sensor readings through a dataframe, an array, a kernel and a dataframe stage.

The same four stages run on three stacks, each a backend of its own:

- ``cpu-stack``: pandas, then NumPy, then a Numba kernel, then pandas;
- ``gpu-zero-copy``: cuDF, then CuPy, then a Numba CUDA kernel, then cuDF, each hand-off a view of
  the same device memory (``Series.to_cupy``, ``cuda.as_cuda_array``, ``cudf.Series`` over the
  kernel's output, all through ``__cuda_array_interface__``);
- ``gpu-round-trips``: the same GPU stages with every hand-off through host memory, the mistake
  to avoid.

Each stage and each hand-off is timed on its own with the session's clock (host clock with device
synchronisation on the GPU, so the nesting inside the engine's timing holds) and reported in the
row's ``stages`` column; a hand-off is named ``a->b``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from workbench.catalog.workloads import Phases, Workload, max_relative_error, register
from workloads._common import BLOCK, grid, kernel_builder, uniform
from workloads._frames import cudf_phases

SENSORS = 256
ROWS_PER_CELL = 4        # readings per (sensor, time bin), on average, before the filter
MIN_BINS = 16
BIN_NS = 1_000_000       # one time bin is 1 ms of the int64 nanosecond timestamps
Q_MIN = 0.0625           # readings of lower quality are dropped; exact in float32, so both dtypes keep the same rows
KEEP = 8                 # the low-pass keeps the lowest 1/KEEP of each sensor's frequencies
MAX_ITER = 64            # Newton's cap; it converges in a handful of steps
STAGES = ("frame", "frame->array", "array", "array->kernel", "kernel", "kernel->frame", "gather")

# numba.cuda and the device function, bound by the kernel builder on first use: module globals, as
# Numba (and its simulator) expect kernels to see them, without importing Numba when workloads are listed.
cuda = None
_newton_gpu = None


def bins(n: int) -> int:
    """Time bins per sensor: a power of two (for the FFT), about ROWS_PER_CELL readings per cell."""
    want = -(-n // (SENSORS * ROWS_PER_CELL))
    return max(MIN_BINS, 1 << (want - 1).bit_length())


def _inputs(n, dt, variant, rng):
    """N readings (sensor, t_ns, value, quality) of SENSORS sensors and their calibration table."""
    import pandas as pd
    t = bins(n)
    sensor = rng.integers(0, SENSORS, n, dtype=np.int64)
    t_ns = rng.integers(0, t * BIN_NS, n, dtype=np.int64)
    cycles = rng.integers(1, 5, SENSORS)                # each sensor's slow oscillation over the span
    amplitude = rng.uniform(0.5, 2.0, SENSORS)
    phase = 2 * np.pi * cycles[sensor] * (t_ns / (t * BIN_NS))
    value = amplitude[sensor] * np.sin(phase) + rng.uniform(-0.25, 0.25, n)
    readings = pd.DataFrame({"sensor": sensor, "t_ns": t_ns, "value": value.astype(dt),
                             "quality": uniform(rng, n, dt)})
    table = pd.DataFrame({"sensor": np.arange(SENSORS, dtype=np.int64),
                          "gain": uniform(rng, SENSORS, dt, 0.5, 2.0),
                          "offset": uniform(rng, SENSORS, dt, -0.25, 0.25),
                          "curve": uniform(rng, SENSORS, dt, 0.1, 2.0)})
    return readings, table


# The stages, written once for pandas/cuDF (``fl``) and NumPy/CuPy (``xp``) -----------------------

def frame_stage(readings, sensors, t: int):
    """Drop poor readings, join each with its sensor's calibration, average per (sensor, time bin)."""
    ok = readings[readings["quality"] >= Q_MIN]
    j = ok.merge(sensors, on="sensor", how="inner")
    j["level"] = (j["value"] - j["offset"]) * j["gain"]
    j["cell"] = j["sensor"] * t + j["t_ns"] // BIN_NS
    # a mean's dtype differs between libraries (float64, or the input's): cast, so every stack hands on one
    mean = j.groupby("cell", sort=True)["level"].mean().astype(readings["value"].dtype)
    return mean.reset_index()                           # columns cell, level; one row per cell seen


def array_stage(xp, cell, level, sensors: int, t: int):
    """Scatter the cell means into a sensors x bins grid (0 where no reading), low-pass each sensor by FFT."""
    g = xp.zeros(sensors * t, dtype=level.dtype)
    g[cell] = level
    spectrum = xp.fft.rfft(g.reshape(sensors, t), axis=1)
    spectrum[:, t // KEEP:] = 0
    return xp.fft.irfft(spectrum, n=t, axis=1).astype(level.dtype, copy=False)


def _newton(r, a, one, three, tol):
    """Undo the sensor's cubic response: solve v + a v^3 = r by Newton from v = r.

    For a >= 0 the iterates approach the root from one side; the number of steps depends on r and
    a (a data-dependent loop, divergent across a warp). Constants come in as arguments of the
    dtype: an int literal would turn float32 arithmetic into float64.
    """
    v = r
    for _ in range(MAX_ITER):
        step = (v + a * v * v * v - r) / (one + three * a * v * v)
        v -= step
        if abs(step) <= tol * abs(v):
            break
    return v


def gather_stage(fl, agg, linear, t: int):
    """Back into a frame: each averaged cell's linearised value, then per sensor its mean and peak."""
    cell = agg["cell"]
    frame = fl.DataFrame({"sensor": cell // t, "linear": linear.take(cell).reset_index(drop=True)})
    per_sensor = frame.groupby("sensor", sort=True)["linear"]
    return fl.DataFrame({"mean": per_sensor.mean(), "peak": per_sensor.max()})


@dataclass(frozen=True)
class Stack:
    """The libraries of one backend and how it hands data from one stage to the next."""

    fl: Any                                   # the dataframe library: pandas or cudf
    xp: Any                                   # the array library: numpy or cupy
    to_array: Callable[[Any], Any]            # a frame column -> an array
    to_kernel: Callable[[Any], Any]           # an array -> what the kernel takes
    kernel: Callable[[Any, Any, int], Any]    # (grid, curve per sensor, bins) -> linearised grid
    to_frame: Callable[[Any], Any]            # the kernel's output -> a Series of the frame library


def _run(stack: Stack, stage: Callable, readings, sensors):
    """The pipeline; ``stage(name, fn, *args)`` runs (and may time) each step."""
    t = bins(len(readings))
    agg = stage("frame", frame_stage, readings, sensors, t)
    cell, level, curve = stage("frame->array", lambda: (
        stack.to_array(agg["cell"]), stack.to_array(agg["level"]), stack.to_array(sensors["curve"])))
    smooth = stage("array", array_stage, stack.xp, cell, level, len(sensors), t)
    r, c = stage("array->kernel", lambda: (stack.to_kernel(smooth.reshape(-1)), stack.to_kernel(curve)))
    out = stage("kernel", stack.kernel, r, c, t)
    linear = stage("kernel->frame", stack.to_frame, out)
    return stage("gather", gather_stage, stack.fl, agg, linear, t)


class StageClock:
    """Runs the stages of one pipeline call, timing each with the session's clock."""

    def __init__(self, timed: Callable) -> None:
        self._timed = timed
        self.seconds: dict[str, float] = {}

    def run(self, stack: Stack, readings, sensors):
        self.seconds = {}
        return _run(stack, self._stage, readings, sensors)

    def _stage(self, name: str, fn: Callable, *args):
        self.seconds[name], out = self._timed(lambda: fn(*args))
        return out

    def last(self) -> dict[str, float]:
        return dict(self.seconds)


def _constants(dtype: np.dtype) -> tuple:
    # Newton stops when a step is below 32 ulps of the value: tight, yet above the rounding noise of
    # v + a v^3 - r, so float32 stops converged rather than running into the cap.
    return dtype.type(1), dtype.type(3), dtype.type(32 * np.finfo(dtype).eps)


# The CPU stack -------------------------------------------------------------------------------------

@functools.cache
def _cpu_kernel():
    import numba
    newton = numba.njit(_newton)

    @numba.njit(parallel=True)
    def linearize(r, curve, out, t, one, three, tol):
        for s in numba.prange(curve.size):
            a = curve[s]
            for k in range(s * t, (s + 1) * t):
                out[k] = newton(r[k], a, one, three, tol)
        return out
    return linearize


def _cpu_stack(dtype: np.dtype) -> Stack:
    import pandas as pd
    kernel = _cpu_kernel()
    consts = _constants(dtype)
    return Stack(fl=pd, xp=np,
                 to_array=lambda s: s.to_numpy(),                 # a view where pandas can give one
                 to_kernel=lambda a: a,                            # Numba takes NumPy arrays as they are
                 kernel=lambda r, c, t: kernel(r, c, np.empty_like(r), t, *consts),
                 to_frame=lambda a: pd.Series(a, copy=False))


def _reference(inputs):
    readings, sensors = inputs
    wide = {c: np.float64 for c in ("value", "quality")}
    table = sensors.astype({c: np.float64 for c in ("gain", "offset", "curve")})
    return _run(_cpu_stack(np.dtype(np.float64)), lambda name, fn, *args: fn(*args),
                readings.astype(wide), table)


def _compare(res, ref) -> float:
    if not np.array_equal(np.asarray(res.index), np.asarray(ref.index)):
        return float("inf")                 # a sensor missing or extra: not a rounding difference
    return max_relative_error(res[["mean", "peak"]].to_numpy(np.float64), ref[["mean", "peak"]].to_numpy())


def _counts(n: int, isz: int) -> tuple[float, float]:
    """Estimates, lower bounds: flops of calibration and averaging per row and of the FFT pair over
    the grid (Newton's steps vary with the data and are left out); bytes of the table read once and
    of the grid written and read by the array, kernel and gather stages."""
    cells = SENSORS * bins(n)
    flops = 4.0 * n + 2 * 2.5 * cells * math.log2(bins(n))
    moved = n * (16 + 2 * isz) + 6.0 * cells * isz
    return flops, moved


W = register(Workload(
    name="pipeline",
    order=140,
    title="Pipeline: dataframe, array, kernel, dataframe",
    kind="data movement",
    description=f"N sensor readings (int64 sensor, int64 ns timestamp, float value and quality) of {SENSORS} "
                "sensors: (1) filter, join with a calibration table, average per sensor and time bin; "
                "(2) scatter into a sensors x bins grid and low-pass it by FFT; (3) a Numba kernel undoes "
                "each sensor's cubic response by Newton's method (a data-dependent loop); (4) back into a "
                "frame, per-sensor mean and peak. Stages and hand-offs are timed one by one.",
    lesson="The three libraries combine well when the data stays on the GPU: cuDF to CuPy to Numba CUDA "
           "and back are views of the same device memory and cost microseconds. A host round trip at each "
           "hand-off pays PCIe copies and conversions every time, and can eat the GPU's gain.",
    size_unit="rows (readings)",
    default_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    make_inputs=_inputs,
    reference=_reference,
    flops=lambda n: _counts(n, 8)[0],
    bytes_moved=lambda n, isz: _counts(n, isz)[1],
    # the table, its filtered and joined copies, group-by and gather frames, the float64 reference's own
    footprint=lambda n, isz: n * (16 + 2 * isz) * 12 + SENSORS * bins(n) * (8 * isz + 64),
    tolerance={"float32": 1e-4, "float64": 1e-10},
    compare=_compare,
    library_dtypes=("mean",),       # a groupby mean: float64 on cuDF, on pandas float64 or float32 by the data
))


@W.implement("cpu-stack", note="pandas, NumPy, Numba")
def _cpu(inputs, ctx):
    readings, sensors = inputs
    stack = _cpu_stack(ctx.dtype)
    clock = StageClock(ctx.session.timed)
    return Phases(compute=lambda: clock.run(stack, readings, sensors), stages=clock.last)


# The GPU stacks ------------------------------------------------------------------------------------

@kernel_builder
def _gpu_kernel():
    global _newton_gpu      # the kernel calls it by its global name, as it does cuda
    _newton_gpu = cuda.jit(device=True)(_newton)

    @cuda.jit
    def linearize(r, curve, out, t, one, three, tol):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = _newton_gpu(r[i], curve[i // t], one, three, tol)
    return linearize


def _gpu_stack(dtype: np.dtype, zero_copy: bool) -> Stack:
    import cudf
    import cupy as cp
    kernel = _gpu_kernel()
    consts = _constants(dtype)

    def run_kernel(r, c, t):
        out = cuda.device_array(r.shape, r.dtype)
        # The default stream: the one cuDF and CuPy use here (CudfSession sets no stream of its own);
        # the stage clock synchronises the device around every stage anyway.
        kernel[grid(r.size), BLOCK, cuda.default_stream()](r, c, out, t, *consts)
        return out

    if zero_copy:
        return Stack(fl=cudf, xp=cp, kernel=run_kernel,
                     to_array=lambda s: s.to_cupy(copy=False),               # a view of the column
                     to_kernel=lambda a: cuda.as_cuda_array(a),              # a view of the CuPy array
                     to_frame=lambda a: cudf.Series(a, nan_as_null=False))   # a column over the kernel's output
    return Stack(fl=cudf, xp=cp, kernel=run_kernel,
                 to_array=lambda s: cp.asarray(s.to_numpy()),                # device -> host -> device
                 to_kernel=lambda a: cuda.to_device(cp.asnumpy(a)),
                 to_frame=lambda a: cudf.Series(a.copy_to_host(), nan_as_null=False))


def _gpu(inputs, ctx, zero_copy: bool) -> Phases:
    stack = _gpu_stack(ctx.dtype, zero_copy)
    clock = StageClock(ctx.session.timed)
    phases = cudf_phases(inputs, lambda readings, sensors: clock.run(stack, readings, sensors), ctx)
    return dataclasses.replace(phases, stages=clock.last)


@W.implement("gpu-zero-copy", note="cuDF -> CuPy -> Numba CUDA -> cuDF, views of the same device memory")
def _gpu_zero_copy(inputs, ctx):
    return _gpu(inputs, ctx, zero_copy=True)


@W.implement("gpu-round-trips", note="the same GPU stages, each hand-off through host memory")
def _gpu_round_trips(inputs, ctx):
    return _gpu(inputs, ctx, zero_copy=False)
