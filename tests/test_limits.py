"""Every point's work on its own session, results read after the device is done, and the
sanity check against the hardware's limits. No GPU needed: a fake device with a synthetic clock."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

import helpers
from helpers import FakeGpuSession, FakeStreams, fake_backends, fake_gpu_workload, synthetic
from workbench.catalog import backends
from workbench.measure import caches
from workbench.measure import limits
from workbench.results import rows as results
from workbench.results import files as result_files
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.measure import protocol
from workbench.measure.limits import DeviceLimits


def rows_of(spec):
    return protocol.rows(run_sweep(spec))


@pytest.fixture
def fake_gpu(registry, monkeypatch):
    """Two backends of one fake GPU library, a workload for them, and the fake device's limits."""
    for name, backend in fake_backends().items():
        monkeypatch.setitem(backends.BACKENDS, name, backend)
    monkeypatch.setattr(FakeGpuSession, "instances", [])
    registry.add(fake_gpu_workload())
    yield FakeGpuSession
    limits.forget()


@pytest.mark.parametrize("order", [("fake-a", "fake-b"), ("fake-b", "fake-a")])
def test_each_backend_works_on_its_own_stream_in_a_mixed_sweep(fake_gpu, order):
    for _ in range(2):                                   # and in a second sweep after the first
        rows = rows_of(SweepSpec("fake_gpu", order, (8, 16, 32), "float64", min_repeats=2, budget_s=0))
        assert [r["status"] for r in rows] == ["ok"] * 6
    assert len(fake_gpu.instances) == 4
    for session in fake_gpu.instances:
        streams = {stream for _, stream in session.log}
        assert streams == {session.stream}, (session.backend, session.log)
        assert {what for what, _ in session.log} == {"prepare", "upload", "compute", "download"}
    assert FakeStreams.current() == "null"                # nothing left current after the sweeps


def test_the_verified_result_is_read_after_the_device_has_finished(fake_gpu, monkeypatch):
    (row,) = rows_of(SweepSpec("fake_gpu", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0))
    assert row["status"] == "ok" and row["verified"]
    # Without the synchronisation the download has not landed yet: the check sees zeros.
    monkeypatch.setattr(FakeGpuSession, "synchronize", lambda self: None)
    (row,) = rows_of(SweepSpec("fake_gpu", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0))
    assert row["status"] == "wrong"


def test_a_point_faster_than_the_memory_is_implausible(fake_gpu, registry):
    w = registry.get("fake_gpu")
    w.bytes_moved = lambda n, isz: 1e13               # 10 TB in one synthetic millisecond
    (row,) = rows_of(SweepSpec("fake_gpu", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0))
    assert row["status"] == "implausible"
    assert row["gbps"] == pytest.approx(1e13 / FakeGpuSession.SECONDS / 1e9)
    assert row["gbps_limit"] == pytest.approx(1000.0)   # the fake device copies at 1 TB/s
    assert "10,000,000 GB/s" in row["message"] and "1,000 GB/s" in row["message"]
    assert row["verified"]                            # the result itself is right: the timing is not


def test_a_point_just_within_the_margin_is_kept(fake_gpu, registry):
    w = registry.get("fake_gpu")
    w.bytes_moved = lambda n, isz: 1.05e12 * FakeGpuSession.SECONDS   # 1.05 TB/s against 1 TB/s
    (row,) = rows_of(SweepSpec("fake_gpu", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0))
    assert row["status"] == "ok", row["message"]


def test_a_point_beyond_the_peak_arithmetic_rate_is_implausible(registry):
    w = registry.add(synthetic(flops=lambda n: 1e18))     # an exaflop in a few microseconds
    w.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
    (row,) = rows_of(SweepSpec("synthetic", ("numpy",), (16,), "float64", min_repeats=3, budget_s=0))
    assert row["status"] == "implausible"
    assert "GFLOP/s" in row["message"] and "float64 peak" in row["message"]
    assert 0 < row["gflops_limit"] < row["gflops"] / limits.MARGIN
    assert any(lim["device"] == row["device"] for lim in limits.recorded())


def test_the_ceiling_for_a_size_comes_from_rungs_of_at_least_half_its_bytes():
    lim = DeviceLimits("GPU: x", "x", "gpu", bandwidth={2 ** 14: 10e9, 2 ** 20: 50e9, 2 ** 26: 20e9})
    assert lim.bandwidth_limit(2 ** 26) == 20e9          # past the caches: the memory's own figure
    assert lim.bandwidth_limit(2 ** 21) == 50e9          # the rung just below counts (caches)
    assert lim.bandwidth_limit(2 ** 30) == 20e9          # beyond the ladder: its largest rung
    assert lim.bandwidth_limit(100) == 50e9
    assert lim.copy_bytes_per_s == 20e9
    assert DeviceLimits("c", "c", "cpu").bandwidth_limit(1) == math.inf   # nothing measured: no check


class _SlowFirstOpinion(FakeGpuSession):
    """A device that copies at 1 TB/s when measured quickly and at 2 TB/s when measured thoroughly."""

    device_id = "second-opinion"

    def stream_seconds(self, nbytes, pattern="copy", thorough=False):
        return nbytes / (2e12 if thorough else 1e12)


def test_a_second_opinion_is_measured_before_a_point_is_condemned():
    limits.forget()
    try:
        session = _SlowFirstOpinion()
        nbytes = 2 ** 24
        plausible = limits.check(session, nbytes, 0.0, nbytes / 1.5e12, "float32")   # 1.5 TB/s
        assert plausible.problem == "" and plausible.gbps_limit == pytest.approx(2000.0)
        absurd = limits.check(session, nbytes, 0.0, nbytes / 3e12, "float32")        # 3 TB/s
        assert "3,000 GB/s" in absurd.problem
    finally:
        limits.forget()


class _BusyOnce(FakeGpuSession):
    """Copies at 1 TB/s, except that its first thorough measurement met a busy moment (0.5 TB/s)."""

    device_id = "busy-once"

    def __init__(self) -> None:
        super().__init__()
        self.thorough_calls = 0
        self.thorough_sizes: set[int] = set()

    def stream_seconds(self, nbytes, pattern="copy", thorough=False):
        if thorough:
            self.thorough_calls += 1
            self.thorough_sizes.add(nbytes)
            return nbytes / (0.5e12 if self.thorough_calls <= len(limits.PATTERNS) else 1.4e12)
        return nbytes / 1e12


def test_one_busy_second_opinion_does_not_condemn_an_honest_point():
    limits.forget()
    try:
        session = _BusyOnce()
        nbytes = 2 ** 24
        verdict = limits.check(session, nbytes, 0.0, nbytes / 1.3e12, "float32")       # 1.3 TB/s: true
        assert verdict.problem == "" and session.thorough_calls > len(limits.PATTERNS)
        before = session.thorough_calls
        absurd = limits.check(session, nbytes, 0.0, nbytes / 20e12, "float32")         # 20 TB/s: never
        assert "20,000 GB/s" in absurd.problem
        ladder = limits.limits_for(session).bandwidth
        per_round = len(limits.PATTERNS) * sum(1 for b in ladder if nbytes / 2 <= b <= 4 * nbytes)
        assert session.thorough_calls - before == limits.SECOND_OPINIONS * per_round   # then it gives up
        # Only the rungs that can bound the point: the ladder's top (1 GiB here) is not the point's
        # ceiling, and measuring it inside a 16 MiB point took seconds and a peak 64 times the point's.
        assert max(ladder) > 4 * nbytes and max(ladder) not in session.thorough_sizes
    finally:
        limits.forget()


class _CallCostAndCacheCliff(FakeGpuSession):
    """Each call pays 8 us (a parallel loop's wake-up on a many-core CPU) and moves bytes at 800 GB/s
    while they fit a 14 MB cache, at 150 GB/s past it: the rung below a 12.6 MB point reads low for
    the call's cost, the rung above for the cache it left."""

    device_id = "cost-and-cliff"

    def stream_seconds(self, nbytes, pattern="copy", thorough=False):
        return 8e-6 + nbytes / (800e9 if nbytes <= 14e6 else 150e9)


def test_the_second_opinion_measures_at_the_points_own_size_between_two_rungs():
    limits.forget()
    try:
        session = _CallCostAndCacheCliff()
        nbytes = 12_582_912                                # 3 x 2^20 x 4 bytes: between 2^23 and 2^24
        honest = nbytes / session.stream_seconds(nbytes)   # what the same kind of call moves at this size
        rungs = limits.limits_for(session).bandwidth
        assert honest > limits.MARGIN * max(bw for b, bw in rungs.items() if b >= nbytes / 2)   # flagged before
        verdict = limits.check(session, nbytes, 0.0, nbytes / honest, "float32")
        assert verdict.problem == "" and nbytes in limits.limits_for(session).bandwidth
        absurd = limits.check(session, nbytes, 0.0, nbytes / (2 * honest), "float32")
        assert "GB/s is 2.0x the" in absurd.problem
    finally:
        limits.forget()


def test_limits_go_into_the_environment_record_and_the_exports(fake_gpu, tmp_path):
    from workbench.measure.environment import record
    rows = rows_of(SweepSpec("fake_gpu", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0))
    env = record()
    (fake,) = [lim for lim in env["limits"] if lim["device_id"] == FakeGpuSession.device_id]
    assert fake["copy_gbps"] == pytest.approx(1000.0)
    for name in ("r.csv", "r.json"):
        frame, env_back = result_files.load(result_files.save(results.to_frame(rows), tmp_path / name, env))
        assert frame["gbps_limit"].iloc[0] == pytest.approx(rows[0]["gbps_limit"])
        assert any(lim["device_id"] == FakeGpuSession.device_id for lim in env_back["limits"])


def test_the_cpu_ladder_is_measured_once_per_device(registry, monkeypatch):
    limits.forget()
    calls = []
    real = helpers.FakeGpuSession.stream_seconds
    monkeypatch.setattr(FakeGpuSession, "stream_seconds",
                        lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
    s1, s2 = FakeGpuSession(), FakeGpuSession()
    assert limits.limits_for(s1) is limits.limits_for(s2)    # the same device: measured once
    # every pattern per rung, once a walk over the ladder (the margin's spread)
    rungs = limits.ladder("gpu", limits.limits_for(s1).caches)
    assert len(calls) == limits.LADDER_PASSES * len(limits.PATTERNS) * len(rungs) and limits.LADDER_PASSES >= 2
    limits.forget()


def test_a_session_that_cannot_even_release_still_gives_the_point_its_row(fake_gpu, registry, monkeypatch):
    """After an illegal address every CUDA call fails, the stream synchronisation of release() too:
    the point's error row must still come out (on an H200 it did not, and the sweep ended)."""
    w = registry.get("fake_gpu")
    real = w.implementations["fake-a"].factory

    def poisoned(inputs, ctx):
        if ctx.size == 16:
            def release():
                raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS")
            monkeypatch.setattr(ctx.session, "release", release)
            raise RuntimeError("[700] Call to cuEventSynchronize results in CUDA_ERROR_ILLEGAL_ADDRESS")
        return real(inputs, ctx)
    w.implement("fake-a")(poisoned)
    rows = rows_of(SweepSpec("fake_gpu", ("fake-a",), (8, 16), "float64", min_repeats=1, budget_s=0))
    assert [r["status"] for r in rows] == ["ok", "error"]
    assert "ILLEGAL_ADDRESS" in rows[1]["message"]


def test_a_working_set_inside_a_cache_is_held_to_the_cache_not_to_memory():
    """A stencil counts every read of a grid that stays in cache: its ceiling comes from the rungs
    near what it holds, not from the bytes it counts (issue 17: 1.1x 'beyond the hardware')."""
    lim = DeviceLimits("CPU: x", "x", "cpu", bandwidth={2 ** 22: 150e9, 2 ** 24: 60e9, 2 ** 26: 40e9})
    assert lim.bandwidth_limit(2 ** 26) == 40e9                            # counted bytes alone: memory
    assert lim.bandwidth_limit(2 ** 26, working_set=2 ** 23) == 150e9      # it holds 8 MiB: the cache
    assert lim.bandwidth_limit(2 ** 26, working_set=2 ** 30) == 40e9       # holding more changes nothing


def test_the_margin_grows_with_the_spread_of_the_limits_own_measurements():
    lim = DeviceLimits("CPU: x", "x", "cpu", bandwidth={2 ** 24: 160e9}, spread={2 ** 24: 1.7})
    assert lim.margin(2 ** 24) == pytest.approx(limits.MARGIN * 1.7)
    quiet = DeviceLimits("CPU: y", "y", "cpu", bandwidth={2 ** 24: 160e9}, spread={2 ** 24: 1.01})
    assert quiet.margin(2 ** 24) == pytest.approx(limits.MARGIN * 1.01)
    wild = DeviceLimits("CPU: z", "z", "cpu", bandwidth={2 ** 24: 160e9}, spread={2 ** 24: 9.0})
    assert wild.margin(2 ** 24) == pytest.approx(limits.MARGIN * limits.MAX_SPREAD)   # bounded


class _Wobbly(FakeGpuSession):
    """Its quick measurements of one rung alternate between 1 and 1.6 TB/s."""

    device_id = "wobbly"
    calls = 0

    def stream_seconds(self, nbytes, pattern="copy", thorough=False):
        if pattern == limits.PATTERNS[0]:        # one measurement of a rung: all its patterns alike
            _Wobbly.calls += 1
        return nbytes / (1e12 if _Wobbly.calls % 2 else 1.6e12)


def test_a_wobbly_ceiling_spares_an_honest_point_and_still_catches_a_timer_that_bracketed_nothing():
    limits.forget()
    try:
        session, nbytes = _Wobbly(), 2 ** 24
        assert limits.check(session, nbytes, 0.0, nbytes / 2.5e12, "float32").problem == ""   # 1.6 x 1.1 x 1.6
        absurd = limits.check(session, nbytes, 0.0, nbytes / 1e15, "float32")                 # 1 PB/s
        assert "beyond the hardware" in absurd.problem
    finally:
        limits.forget()


# Cache levels: the ceiling of the memory that holds the working set --------------------------------

def _fake_sys(root, cpu, index, level, kind, size, shared):
    d = root / f"cpu{cpu}" / "cache" / f"index{index}"
    d.mkdir(parents=True)
    for name, text in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
        (d / name).write_text(text + "\n")


def test_cache_sizes_from_sys_count_every_instance_once(tmp_path):
    """Two cores, each with its own L1d and L2, sharing one L3 (this project's VM)."""
    for cpu in (0, 1):
        _fake_sys(tmp_path, cpu, 0, "1", "Data", "32K", str(cpu))
        _fake_sys(tmp_path, cpu, 1, "1", "Instruction", "32K", str(cpu))
        _fake_sys(tmp_path, cpu, 2, "2", "Unified", "1024K", str(cpu))
        _fake_sys(tmp_path, cpu, 3, "3", "Unified", "32768K", "0-1")
    assert caches.cpu_from_sys(tmp_path) == {"L1d": 2 * 2 ** 15, "L2": 2 * 2 ** 20, "L3": 2 ** 25}
    assert caches.cpu_from_sys(tmp_path / "absent") == {}


def test_without_sys_the_cache_sizes_come_from_getconf(tmp_path, monkeypatch):
    monkeypatch.setattr(caches, "SYS_CPU", tmp_path)          # no cpu*/cache here
    monkeypatch.setattr(caches.os, "cpu_count", lambda: 4)
    answers = {"LEVEL1_DCACHE_SIZE": "49152\n", "LEVEL2_CACHE_SIZE": "2097152\n", "LEVEL3_CACHE_SIZE": "\n"}
    monkeypatch.setattr(caches.subprocess, "run",
                        lambda args, **kw: SimpleNamespace(stdout=answers[args[1]]))
    assert caches.levels("cpu") == {"L1d": 4 * 49152, "L2": 4 * 2 ** 21}     # one a thread; no L3 said

    def no_getconf(args, **kw):
        raise FileNotFoundError("getconf")
    monkeypatch.setattr(caches.subprocess, "run", no_getconf)
    assert caches.levels("cpu") == {}                        # then the ceilings go rung by rung


def test_a_working_set_inside_a_cache_gets_that_caches_ceiling():
    """A point counting 1 GB over a grid it holds in L3 is held to L3's best rung, not memory's; not
    to a rung of its own size either (the rung-by-rung rule gave 120 GB/s here)."""
    lim = DeviceLimits("CPU: x", "x", "cpu", caches={"L2": 2 ** 21, "L3": 2 ** 25},
                       bandwidth={2 ** 20: 200e9, 2 ** 22: 150e9, 2 ** 24: 120e9, 2 ** 26: 40e9})
    moved = 1e9
    assert lim.bandwidth_limit(moved, working_set=12 * 2 ** 20) == 150e9    # in L3
    assert lim.bandwidth_limit(moved, working_set=2 ** 20) == 200e9         # in L2
    assert lim.bandwidth_limit(moved, working_set=48 * 2 ** 20) == 150e9    # within SLACK of L3
    assert lim.bandwidth_limit(moved, working_set=200 * 2 ** 20) == 40e9    # past every cache: memory
    assert lim.bandwidth_limit(moved) == 40e9                               # no working set: what it moves
    assert [lim.level(b) for b in (2 ** 20, 12 * 2 ** 20, 2 ** 26)] == ["L2", "L3", limits.MEMORY]
    record = lim.record()
    assert [lv["level"] for lv in record["levels"]] == ["L2", "L3", "memory"]
    assert [lv["best_gbps"] for lv in record["levels"]] == [200.0, 150.0, 40.0]
    assert record["caches"] == {"L2": 2 ** 21, "L3": 2 ** 25}


def test_the_ladder_reaches_past_the_largest_cache():
    assert limits.ladder("cpu", {}) == limits.LADDER["cpu"]
    assert max(limits.ladder("cpu", {"L3": 256 * 2 ** 20})) == 29               # 512 MiB: twice the L3
    assert max(limits.ladder("cpu", {"L3": 2 ** 40})) == limits.LADDER_TOP       # but no further than this


class _SlowSpell(FakeGpuSession):
    """Copies at 1 TB/s for its first walk over the ladder's rungs, at 1.5 TB/s after it: measured
    back to back, most rungs would lie inside one spell and show no disagreement."""

    device_id = "slow-spell"

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[int] = set()
        self.walked = False

    def stream_seconds(self, nbytes, pattern="copy", thorough=False):
        if pattern == limits.PATTERNS[0]:
            self.walked |= nbytes in self.seen
            self.seen.add(nbytes)
        return nbytes / (1.5e12 if self.walked or thorough else 1e12)


def test_a_ladder_whose_walks_disagree_widens_the_margin_and_still_catches_an_absurd_point():
    limits.forget()
    try:
        session, nbytes = _SlowSpell(), 2 ** 24
        lim = limits.limits_for(session)
        assert list(lim.spread.values()) == pytest.approx([1.5] * len(lim.spread))   # every rung, not one
        assert lim.margin(nbytes) == pytest.approx(limits.MARGIN * 1.5)
        assert limits.check(session, nbytes, 0.0, nbytes / 2.4e12, "float32").problem == ""  # 1.6x: kept
        assert "beyond the hardware" in limits.check(session, nbytes, 0.0, nbytes / 4e12, "float32").problem
        quiet = DeviceLimits("q", "q", "gpu", bandwidth={nbytes: 1.5e12}, spread={nbytes: 1.0})
        assert quiet.margin(nbytes) == pytest.approx(limits.MARGIN)            # agreement: the plain margin
    finally:
        limits.forget()


def test_a_time_of_nothing_is_implausible_even_from_the_fastest_cache():
    """A kernel timed on the wrong stream: its events bracket nothing. Held to the L1's ceiling with
    the widest margin, a 4 MiB point in a nanosecond or in no time at all still cannot be true."""
    limits.forget()
    try:
        session = FakeGpuSession()
        limits.remember(DeviceLimits(session.device, session.device_id, "gpu", caches={"L1": 2 ** 30},
                                     bandwidth={2 ** 20: 20e12, 2 ** 24: 20e12},
                                     spread={2 ** 20: 5.0, 2 ** 24: 5.0}))
        nbytes = 4 * 2 ** 20
        assert "beyond the hardware" in limits.check(session, nbytes, 0.0, 1e-9, "float32").problem
        zero = limits.check(session, nbytes, 0.0, 0.0, "float32")
        assert "took 0 s" in zero.problem and zero.gbps_limit == pytest.approx(20e3)
        assert limits.check(session, 0.0, 0.0, 0.0, "float32").problem == ""             # no work, no claim
        assert limits.check(session, nbytes, 0.0, math.nan, "float32").problem == ""      # no time: no check
        assert limits.check(session, nbytes, 0.0, nbytes / 30e12, "float32").problem == ""  # within 2.2x
    finally:
        limits.forget()


def test_the_engine_places_a_point_by_the_working_set_its_workload_declares(fake_gpu, registry, monkeypatch):
    """A point counting 3 TB/s over a grid it holds in a 1 MiB cache that copies at 5 TB/s: kept when
    the workload says what it holds, condemned when only the bytes it counts are known."""
    limits.forget()
    monkeypatch.setattr(limits.cache_levels, "levels", lambda kind: {"L2": 2 ** 20})
    monkeypatch.setattr(FakeGpuSession, "stream_seconds",
                        lambda self, nbytes, pattern="copy", thorough=False: nbytes / (5e12 if nbytes <= 2 ** 20 else 1e12))
    w = registry.get("fake_gpu")
    w.bytes_moved = lambda n, isz: 3e12 * FakeGpuSession.SECONDS
    w.working_set = lambda n, isz: 2.0 * n * isz
    assert w.working_set_bytes(64, 8) == 1024.0
    spec = SweepSpec("fake_gpu", ("fake-a",), (64,), "float64", min_repeats=2, budget_s=0)
    (row,) = rows_of(spec)
    assert row["status"] == "ok" and row["gbps_limit"] == pytest.approx(5000.0), row["message"]
    limits.forget()
    w.working_set = None                     # then the device footprint, else the bytes it moves
    assert w.working_set_bytes(64, 8) == w.bytes_moved(64, 8)
    (row,) = rows_of(spec)
    assert row["status"] == "implausible" and "from memory" in row["message"]


def test_on_a_busy_machine_a_figure_is_implausible_only_far_past_the_ceiling(registry):
    """Other processes' load slows the ladder and the point alike: at 1.2x a ceiling (the margin
    alone would condemn it) a busy point stands; at 10x (a timer that bracketed nothing, skipped
    work) it is still implausible, busy or not."""
    try:
        s = FakeGpuSession()
        lim = limits.limits_for(s)
        lim.spread.clear()                               # the plain MARGIN: nothing widened by spread
        nbytes = 2 ** 26
        ceiling = lim.bandwidth_limit(nbytes)
        honest, absurd = nbytes / (1.2 * ceiling), nbytes / (10 * ceiling)
        assert limits.check(s, nbytes, 0.0, honest, "float32").problem         # quiet: 1.2x is too fast
        assert not limits.check(s, nbytes, 0.0, honest, "float32", busy=True).problem
        assert "beyond the hardware" in limits.check(s, nbytes, 0.0, absurd, "float32", busy=True).problem
        lim.busy = True                                  # the ladder itself ran on a busy machine
        assert not limits.check(s, nbytes, 0.0, honest, "float32").problem
        assert limits.recorded()[0]["measured_busy"] is True
    finally:
        limits.forget()


@pytest.mark.parametrize("vendor, family, flags, f32, basis", [
    ("AuthenticAMD", 25, "fma avx2 avx512f", 32.0, "AMD Zen 4"),     # AVX-512 on 256-bit pipes
    ("AuthenticAMD", 26, "fma avx2 avx512f", 64.0, "AVX-512, 2"),    # Zen 5: full 512-bit units
    ("GenuineIntel", 6, "fma avx2 avx512f", 64.0, "AVX-512, 2"),
    ("AuthenticAMD", 25, "fma avx2", 32.0, "AVX2"),                  # Zen 3
])
def test_the_cpu_peak_counts_the_vector_units_the_core_has(tmp_path, vendor, family, flags, f32, basis):
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nflags\t\t: fpu {flags}\n"
                    f"processor\t: 1\nvendor_id\t: {vendor}\ncpu family\t: {family}\nflags\t\t: fpu {flags}\n")
    got32, got64, text = limits._cpu_rates(str(info))
    assert (got32, got64) == (f32, f32 / 2) and basis in text
