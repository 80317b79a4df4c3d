"""The memory wall on the CPU machine: a fake device with a small cap, and fake CuPy and RMM modules
standing in for the libraries' own caps (the real ones are in test_gpu_cudf.py)."""
from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from helpers import FakeGpuSession, fake_memory_workload
from workbench.measure import protocol
from workbench.results import rows as results
from workbench.measure.engine import SweepSpec, device_memory_notes, run_sweep
from workbench.measure.gpu import cap

KIB = 1024


def rows_of(spec):
    return protocol.rows(run_sweep(spec))


@pytest.fixture
def fake_device(registry, monkeypatch):
    from helpers import use_fake_device
    use_fake_device(monkeypatch)
    yield registry.add(fake_memory_workload())
    assert cap.limit() == 0            # no cap outlives its sweep


def spec(sizes, dtype="float64", limit=0, backends=("fake-a",)):
    return SweepSpec("fake_memory", backends, sizes, dtype, min_repeats=1, budget_s=0.0, device_memory_limit=limit)


def test_a_point_past_the_cap_is_an_error_row_saying_what_and_the_sweep_goes_on(fake_device, monkeypatch):
    from workbench.core import driver
    monkeypatch.setattr(driver, "free_memory", lambda ordinal=0: 80 * 2 ** 30)
    # float64, three buffers: 1024 -> 24 KiB, 4096 -> 96 KiB, 16384 -> 384 KiB; the cap 200 KiB.
    rows = rows_of(spec((1024, 4096, 16384, 1024), limit=200 * KIB))
    assert [(r["size"], r["status"]) for r in rows] == [(1024, "ok"), (4096, "ok"), (16384, "error"), (1024, "ok")]
    message = rows[2]["message"]
    assert message.startswith(cap.OUT_OF_DEVICE_MEMORY)
    assert "fake_memory on fake-a at size 16,384 (float64)" in message
    assert "about 384 KiB" in message and "the cap is 200 KiB" in message
    assert "80 GiB free on the device" in message and "DeviceMemoryExceeded" in message
    # What the point held was given back: the next point started from nothing.
    (session,) = FakeGpuSession.instances
    assert session.held == 0
    assert rows[3]["peak_device_bytes"] == 3 * 1024 * 8


def test_the_cap_holds_during_the_point_and_only_for_gpu_backends(fake_device):
    seen = {}
    for backend in ("fake-a", "fake-cpu"):
        inner = fake_device.implementations[backend].factory

        def factory(inputs, ctx, inner=inner, backend=backend):
            seen[backend] = cap.limit()
            return inner(inputs, ctx)
        fake_device.implement(backend)(factory)
    rows = rows_of(spec((16384,), limit=200 * KIB, backends=("fake-a", "fake-cpu")))
    assert seen == {"fake-a": 200 * KIB, "fake-cpu": 0}
    assert [r["status"] for r in rows] == ["error", "ok"]     # the CPU is not capped


def test_float64_hits_the_wall_at_half_the_size_of_float32(fake_device):
    sizes = tuple(2 ** k for k in range(10, 17))
    limit = 3 * 4 * 2 ** 13                     # three float32 buffers of 2^13 fit exactly
    walls = {dt: results.memory_walls(results.to_frame(rows_of(spec(sizes, dt, limit))))
             for dt in ("float32", "float64")}
    assert walls == {"float32": {("fake-a", ""): 2 ** 14}, "float64": {("fake-a", ""): 2 ** 13}}


def test_without_a_cap_nothing_is_refused(fake_device):
    rows = rows_of(spec((1024, 16384)))
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert results.memory_walls(results.to_frame(rows)) == {}


def test_a_negative_cap_is_refused_before_anything_runs(fake_device):
    messages = list(run_sweep(spec((1024,), limit=-1)))
    assert isinstance(messages[0], protocol.SweepError) and "device memory limit" in messages[0].message


# Announced before the sweep -----------------------------------------------------------------------

def test_sizes_past_the_cap_or_the_free_memory_are_announced(fake_device):
    sizes = (1024, 4096, 16384, 65536)          # float64: 24 KiB, 96 KiB, 384 KiB, 1.5 MiB
    notes = device_memory_notes(spec(sizes, limit=1 * 2 ** 20), free=200 * KIB)
    assert len(notes) == 2
    assert "2^16 (about 1.5 MiB)" in notes[0] and "the 1 MiB cap" in notes[0] and "2^14" not in notes[0]
    assert "2^14 (about 384 KiB)" in notes[1] and "200 KiB free on the device" in notes[1]
    assert all("memory wall" in n for n in notes)
    assert device_memory_notes(spec(sizes), free=None) == []                     # nothing known: silence
    assert device_memory_notes(spec(sizes, limit=2 ** 30), free=2 ** 30) == []
    assert device_memory_notes(spec(sizes, limit=KIB, backends=("fake-cpu",)), free=KIB) == []   # no GPU


# The libraries' own caps, with stand-ins for CuPy and RMM -----------------------------------------

class _Pool:
    def __init__(self) -> None:
        self.limits: list[int] = []

    def set_limit(self, size=None, fraction=None) -> None:
        self.limits.append(size)


def test_cupys_pool_limit_is_set_for_the_point_and_lifted_after(monkeypatch):
    pool = _Pool()
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(get_default_memory_pool=lambda: pool))
    with cap.capped(8 * 2 ** 30):
        assert pool.limits == [8 * 2 ** 30] and cap.limit() == 8 * 2 ** 30
    assert pool.limits == [8 * 2 ** 30, 0] and cap.limit() == 0      # 0: CuPy's "no limit"
    with cap.capped(0):
        pass
    assert pool.limits == [8 * 2 ** 30, 0]                            # no cap asked, nothing touched


def _fake_rmm(monkeypatch):
    class Resource:
        pass

    class Adaptor(Resource):
        def __init__(self, upstream, **kw) -> None:
            self.upstream, self.kw = upstream, kw

        def get_upstream(self):
            return self.upstream

    class StatisticsResourceAdaptor(Adaptor):
        pass

    class LimitingResourceAdaptor(Adaptor):
        pass

    mr = types.ModuleType("rmm.mr")
    mr.current = None
    mr.StatisticsResourceAdaptor, mr.LimitingResourceAdaptor, mr.CudaMemoryResource = (
        StatisticsResourceAdaptor, LimitingResourceAdaptor, Resource)
    mr.get_current_device_resource = lambda: mr.current
    mr.set_current_device_resource = lambda r: setattr(mr, "current", r)
    rmm = types.ModuleType("rmm")
    rmm.mr = mr
    monkeypatch.setitem(sys.modules, "rmm", rmm)
    monkeypatch.setitem(sys.modules, "rmm.mr", mr)
    return mr


@pytest.mark.parametrize("statistics", [False, True])
def test_rmm_gets_a_limiting_adaptor_under_its_statistics_and_loses_it_after(monkeypatch, statistics):
    mr = _fake_rmm(monkeypatch)
    base = mr.CudaMemoryResource()
    mr.current = mr.StatisticsResourceAdaptor(base) if statistics else base
    with cap.capped(2 ** 30):
        top = mr.current
        limiting = top.get_upstream() if statistics else top
        assert isinstance(top, mr.StatisticsResourceAdaptor) == statistics    # statistics stay on top
        assert isinstance(limiting, mr.LimitingResourceAdaptor)
        assert limiting.get_upstream() is base and limiting.kw == {"allocation_limit": 2 ** 30}
        # rmm.statistics wraps whatever is current when a point's reading begins: ours, then.
        if not statistics:
            mr.current = mr.StatisticsResourceAdaptor(mr.current)
    inner = mr.current.get_upstream() if isinstance(mr.current, mr.StatisticsResourceAdaptor) else mr.current
    assert inner is base                       # lifted, the statistics adaptor (if any) kept on top


@pytest.mark.parametrize("exc,oom", [
    (type("OutOfMemoryError", (MemoryError,), {"__module__": "cupy.cuda.memory"})(
        "Out of memory allocating 1,024 bytes (allocated so far: 0 bytes, limit set to: 512 bytes)."), True),
    (MemoryError("std::bad_alloc: out_of_memory: RMM failure at: limiting_resource_adaptor.hpp: Exceeded memory limit"),
     True),
    (type("CudaAPIError", (Exception,), {"__module__": "numba.cuda.cudadrv.driver"})(
        "[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"), True),
    (cap.DeviceMemoryExceeded("allocating 1 GiB"), True),
    (MemoryError("Unable to allocate 4.00 GiB for an array with shape (536870912,) and data type float64"), False),
    (ValueError("out of range"), False),
])
def test_out_of_device_memory_is_told_from_other_failures(exc, oom):
    assert cap.is_device_oom(exc) == oom


def test_an_oom_wrapped_in_another_error_is_still_the_wall():
    try:
        try:
            raise cap.DeviceMemoryExceeded("inner")
        except MemoryError as inner:
            raise RuntimeError("cuDF could not build the hash table") from inner
    except RuntimeError as outer:
        assert cap.is_device_oom(outer)


# The cap travels with the run request to the engine process ---------------------------------------

PLUGIN = str(Path(__file__).parent / "plugins" / "fake_device.py")


def test_the_cap_reaches_the_engine_process(registry):
    from workbench.catalog import backends
    from workbench.measure.supervisor import Supervisor
    saved = dict(backends.BACKENDS)
    registry.load_file(PLUGIN)          # the fake backends and workload, here and in the engine
    sup = Supervisor(plugins=(PLUGIN,), memory_limit=None)
    try:
        rows = protocol.rows(sup.run(spec((1024, 16384, 1024), limit=200 * KIB)))
    finally:
        sup.close()
        backends.BACKENDS.clear()
        backends.BACKENDS.update(saved)
    assert [r["status"] for r in rows] == ["ok", "error", "ok"]
    assert rows[1]["message"].startswith(cap.OUT_OF_DEVICE_MEMORY) and "200 KiB" in rows[1]["message"]
    assert sup.restarts == 0


@pytest.mark.parametrize("exc", [cap.DeviceMemoryExceeded("numba-cuda: allocating 512.0 MiB would pass the cap"),
                                 MemoryError("std::bad_alloc: out_of_memory: RMM failure")])
def test_the_memory_wall_lesson_expects_the_engines_out_of_memory_rows(exc):
    """The lesson counts these rows as its subject, not as failures: whatever library ran out."""
    from workbench import lessons
    message = cap.describe(exc, "source_terms on numba-cuda at size 2^27 (float32)", 1.5 * 2 ** 30, 1280 * 2 ** 20,
                           None)
    assert lessons.get("memory-wall").expected_failures.search(message)
    ls = lessons.get("memory-wall")
    from workbench.catalog.backends import BACKENDS, Availability
    p = lessons.plan(ls, {b: Availability(True, "", "test") for b in BACKENDS})
    assert all(spec.device_memory_limit == ls.device_memory_limit for spec in p.specs) and p.specs
