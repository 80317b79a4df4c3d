"""Synthetic workloads of known behaviour, for testing the engine itself."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from workbench.catalog.workloads import Phases, Workload


def synthetic(name: str = "synthetic", **overrides) -> Workload:
    fields = dict(
        name=name, title="Synthetic", kind="kernels", description="a test workload", lesson="none",
        size_unit="elements", default_sizes=(8,),
        make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
        reference=lambda inp: inp[0].astype(np.float64) * 2,
        flops=lambda n: float(n), bytes_moved=lambda n, isz: 2.0 * n * isz,
        footprint=lambda n, isz: n * isz * 4,
    )
    fields.update(overrides)
    return Workload(**fields)


# A GPU library in miniature, to test the engine's contract with sessions without a GPU ------------

class FakeStreams:
    """A library with a per-thread current stream, as CuPy has: work runs on whatever is current."""

    local = threading.local()

    @classmethod
    def current(cls) -> str:
        return getattr(cls.local, "stream", "null")

    @classmethod
    def set_current(cls, name: str) -> None:
        cls.local.stream = name


class FakeClock:
    """The synthetic time of the fake devices: it advances only by the work they are given."""

    t = 0.0

    @classmethod
    def now(cls) -> float:
        return cls.t


class FakeGpuSession:
    """A session of the fake library: its own stream, a synthetic clock, asynchronous downloads.

    ``timed`` waits for its own stream only (as a CUDA event does): work that ran on another
    stream is not waited for, and a download into "pinned" memory lands only when the device
    is synchronised. ``log`` records which stream each piece of work ran on.
    """

    device_kind = "gpu"
    device = "GPU: Fake"
    device_id = "fake-gpu @ 0000:00:00.0"
    instances: list = []  # every session opened, to look at afterwards
    SECONDS = 1e-3        # what every timed phase takes on the synthetic clock

    def __init__(self, backend=None) -> None:
        FakeGpuSession.instances.append(self)
        self.stream = f"stream-{len(FakeGpuSession.instances)}"
        self.backend = backend.name if backend is not None else ""
        self.pending: list = []          # downloads queued on the device, not yet landed
        self.log: list = []
        self.clock = 0.0                 # the device's synthetic clock: what its work took
        self.held = 0                    # device bytes handed out by empty_device since the last release
        self.peak = 0

    @contextmanager
    def activate(self):
        before = FakeStreams.current()
        FakeStreams.set_current(self.stream)
        try:
            yield
        finally:
            FakeStreams.set_current(before)

    def timed(self, fn):
        start = self.clock
        with self.activate():
            value = fn()
        return self.clock - start, value

    def run(self, what: str, seconds: float = SECONDS) -> None:
        """Work that takes ``seconds`` of device time, on the thread's current stream (as a
        library call runs)."""
        self.log.append((what, FakeStreams.current()))
        self.clock += seconds
        FakeClock.t += seconds

    def synchronize(self) -> None:
        for land in self.pending:
            land()
        self.pending.clear()

    @contextmanager
    def device_memory(self):
        self.peak = self.held
        yield lambda: float(self.peak) if self.peak else float("nan")

    def stream_seconds(self, nbytes, pattern="copy", thorough=False):
        return nbytes / 1e12          # a device that moves 1 TB/s in every pattern

    def empty_device(self, shape, dtype) -> np.ndarray:
        """Device memory of the fake library: host arrays, counted and refused past the cap as the
        Numba CUDA session refuses them."""
        from workbench.measure.gpu import cap
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        cap.check(self.held, nbytes, "fake device")
        self.held += nbytes
        self.peak = max(self.peak, self.held)
        return np.empty(shape, dtype)

    def release(self) -> None:
        self.synchronize()
        self.held = 0

    def close(self) -> None:
        self.release()


class FakeCpuSession(FakeGpuSession):
    """The fake device's host: a CPU session on the synthetic clock."""

    device_kind = "cpu"
    device = "CPU: Fake"
    device_id = "fake-cpu"


def fake_gpu_workload(name: str = "fake_gpu") -> Workload:
    """y = 2 x on the fake device; the download into the host result lands asynchronously."""
    w = synthetic(name, bytes_moved=lambda n, isz: 2.0 * n * isz)

    def factory(inputs, ctx):
        (x,) = inputs
        s = ctx.session
        s.run("prepare")
        host_out = np.zeros_like(x)

        def d2h():
            s.run("download")
            s.pending.append(lambda: np.multiply(x, 2, out=host_out))
            return host_out
        return Phases(h2d=lambda: s.run("upload"), compute=lambda: s.run("compute"), d2h=d2h)

    for backend in ("fake-a", "fake-b"):
        w.implement(backend)(factory)
    return w


def fake_memory_workload(name: str = "fake_memory", arrays: int = 3) -> Workload:
    """y = 2 x holding ``arrays`` device buffers of N elements (source_terms holds three): a
    memory wall of known place, N * itemsize * arrays bytes."""
    w = synthetic(name, device_footprint=lambda n, isz: float(arrays * n * isz))

    def factory(inputs, ctx):
        (x,) = inputs
        s = ctx.session
        held = [s.empty_device(x.shape, x.dtype) for _ in range(arrays)]

        def compute():
            s.run("compute")
            return x * 2 if held else None
        return compute

    for backend in ("fake-a", "fake-b", "fake-cpu"):
        w.implement(backend)(factory)
    return w


def use_fake_device(monkeypatch) -> None:
    """The fake backends registered, on the synthetic clock (budgets and first calls read it too)."""
    from workbench.catalog import backends
    from workbench.measure import sampling
    for name, backend in fake_backends().items():
        monkeypatch.setitem(backends.BACKENDS, name, backend)
    monkeypatch.setattr(FakeGpuSession, "instances", [])
    # From zero: after earlier tests' work the clock's large value rounds a budget's last sample
    # (0.05 s in steps of 1-5 ms) to one more or one fewer.
    monkeypatch.setattr(FakeClock, "t", 0.0)
    monkeypatch.setattr(sampling, "clock", FakeClock.now)


def fake_backends() -> dict:
    from workbench.catalog.backends import Backend
    out = {name: Backend(name, name, "gpu", "numpy", ("numpy",), "helpers:FakeGpuSession", "a fake GPU")
           for name in ("fake-a", "fake-b")}
    out["fake-cpu"] = Backend("fake-cpu", "fake-cpu", "cpu", "numpy", ("numpy",), "helpers:FakeCpuSession",
                              "a fake CPU")
    return out


def result_set(dtype: str = "float32", scale: float = 1.0, libraries: dict | None = None, source: str = "",
               gpu: str = "Test GPU"):
    """A result set of known points: numpy and numba on the CPU, cupy on a GPU, sizes 2^10..2^16,
    plus one failed and one implausible point that no chart may draw."""
    from workbench.results import rows as results
    from workbench.results.files import ResultSet
    rows = []
    for k, size in enumerate((2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16)):
        for backend, speed in (("numpy", 1.0), ("numba", 0.5), ("cupy", 0.1)):
            gpu_row = backend == "cupy"
            compute = scale * speed * size * 1e-9
            h2d = d2h = 2e-6 * (k + 1) if gpu_row else 0.0
            rows.append(measured(
                workload="source_terms", backend=backend, device=f"GPU: {gpu}" if gpu_row else "CPU: Test CPU",
                size=size, dtype=dtype, host_memory="pageable" if gpu_row else "", repeats=5,
                first_call_s=compute * 100, compute_median_s=compute, compute_min_s=compute * 0.9,
                compute_max_s=compute * 1.2, compute_q1_s=compute * 0.95, compute_q3_s=compute * 1.1,
                h2d_s=h2d, d2h_s=d2h, total_median_s=compute + h2d + d2h, total_q1_s=compute + h2d + d2h,
                total_q3_s=compute + h2d + d2h, peak_host_bytes=8.0 * size,
                peak_device_bytes=16.0 * size if gpu_row else float("nan"), gflops=1.0, gbps=1.0,
                max_rel_error=0.0, verified=True, status="ok"))
    rows.append(results.empty_row(workload="source_terms", backend="numba", device="CPU: Test CPU", size=2 ** 18,
                                  dtype=dtype, status="error", message="MemoryError"))
    rows.append(results.empty_row(workload="source_terms", backend="cupy", device=f"GPU: {gpu}", size=2 ** 18,
                                  dtype=dtype, host_memory="pageable", status="implausible", message="too fast",
                                  compute_median_s=1e-12, total_median_s=1e-12))
    env = {"cpu": "Test CPU", "libraries": libraries or {"numpy": "2.0.0", "numba": "0.60.0",
                                                         "cupy-cuda12x": "13.3.0", "pandas": "2.2.0"}}
    return ResultSet(results.to_frame(rows), env, {"dtype": dtype}, "2026-01-02T03:04:05+00:00", "testhost",
                     source)


# An engine process of a backend's own, as cudf-pandas needs, without cuDF ---------------------------

ENGINE_MARK = "GPU_WORKBENCH_TEST_ENGINE"


def mark_engine() -> None:
    """A dedicated engine's preparation for the tests: it says it ran, and whether it ran before
    pandas was imported (cudf.pandas.install() must)."""
    import os
    import sys
    os.environ[ENGINE_MARK] = f"prepared, pandas imported before: {'pandas' in sys.modules}"


def fail_to_prepare() -> None:
    raise RuntimeError("no accelerator on this machine")


class ProcessNamingSession:
    """A CPU session whose device names the process it runs in and what prepared that process."""

    def __new__(cls, backend=None):
        import os
        from workbench.measure.cpu import CpuSession
        session = CpuSession(backend)
        session.device = f"CPU: pid {os.getpid()}, {os.environ.get(ENGINE_MARK, 'shared')}"
        return session


def measured(**values):
    """A result row as a quiet measurement gives it: each median with a 95 % interval of +-1 % and 50
    samples, unless given (verdicts are decided from the intervals, never from two medians)."""
    import math
    from workbench.results import rows as results
    row = results.empty_row(**values)
    for med, lo, hi in (("total_median_s", "total_ci_lo_s", "total_ci_hi_s"),
                        ("compute_median_s", "compute_ci_lo_s", "compute_ci_hi_s")):
        t = row[med]
        if lo not in values and isinstance(t, (int, float)) and math.isfinite(t):
            row[lo], row[hi] = 0.99 * t, 1.01 * t
    if "repeats" not in values:
        row["repeats"] = 50
    return row
