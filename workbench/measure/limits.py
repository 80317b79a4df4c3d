"""What the hardware can do, and the check that no measured point claims more.

A point's bandwidth (bytes over time) and FLOP rate are compared with the limits of the device it
ran on: a figure beyond a limit by more than the limit's own uncertainty is a bug in the measurement,
not a result, and the point's status becomes ``implausible`` (as does a time of zero or less). The
bandwidth ceiling is the best STREAM-like rung of the cache level that holds the point's working set
(not its counted bytes) or of a slower one, times ``MARGIN`` times how far that level's measurements
disagreed (up to ``MAX_SPREAD``); the FLOP/s ceiling is a generous peak from the device's properties.
See docs/ARCHITECTURE.md, "workbench/measure/limits.py".
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import psutil

from workbench.core import driver
from workbench.measure import caches as cache_levels
from workbench.measure import load as load_mod

log = logging.getLogger(__name__)

#: How far beyond a limit a figure may go before it is called implausible (times the level's spread).
MARGIN = 1.10
#: The most the spread of a level's measurements widens the margin: a timer that bracketed nothing
#: or a backend that skipped its work reads tens to thousands of times the ceiling, not 2.
MAX_SPREAD = 2.0
#: The least margin where the machine was busy (during the ladder or the point): see ``check``.
BUSY_MARGIN = 2.0
#: log2 of the bytes counted per ladder rung: from sizes where the cost of a call dominates to
#: 64 MiB on the CPU, 1 GiB on a GPU; extended (to LADDER_TOP) until it is twice the largest cache.
LADDER = {"cpu": range(14, 27), "gpu": range(16, 31)}
LADDER_TOP = 30
#: Walks over the ladder: the measurements of one rung lie a walk apart, where a busy spell of a
#: shared machine shows as disagreement (back to back, two measurements share the spell).
LADDER_PASSES = 2
#: A working set up to this many times a level's size still draws on that level: caches are not
#: strictly LRU (AMD's L3 is a victim cache, Intel's keeps part of a streaming set) and the
#: declared working set is an estimate.
SLACK = 2.0
MEMORY = "memory"        # the level past every cache
CPU_TURBO = 1.3          # clocks the OS reports are often base clocks: allow for turbo


def ladder(kind: str, caches: dict[str, int]) -> range:
    """log2 of the rungs: the kind's ladder, its top raised to twice the largest cache."""
    base = LADDER[kind]
    if not caches:
        return base
    top = math.ceil(math.log2(2 * max(caches.values())))
    return range(base.start, max(base.stop, min(top, LADDER_TOP) + 1))


@dataclass
class DeviceLimits:
    device: str                              # as the result rows name it
    device_id: str                           # the very device (model and bus id, or CPU and threads)
    kind: str                                # "cpu" or "gpu"
    bandwidth: dict[int, float] = field(default_factory=dict)   # bytes counted -> best bytes/s
    spread: dict[int, float] = field(default_factory=dict)      # bytes counted -> best / worst of the quick way
    peak_flops: dict[str, float] = field(default_factory=dict)  # dtype -> FLOP/s
    flops_basis: str = ""                    # how the peak was counted, for the record
    caches: dict[str, int] = field(default_factory=dict)        # "L1d", "L2", "L3" -> bytes, all instances
    busy: bool = False                       # other processes kept the machine busy during the ladder
    copy_engines: int = 0                    # a GPU's copy engines (0: not known, or a CPU)
    # pinned copies both ways at once over the two alone (gpu.duplex): 0.5 is a link that moves both
    # directions at full speed together, 1.0 one that moves one at a time; NaN: not measured
    duplex_share: float = math.nan
    _quick: dict[int, list] = field(default_factory=dict, repr=False)   # the quick way's measurements

    def level(self, nbytes: float) -> str:
        """The smallest level that holds ``nbytes``: a cache's name or MEMORY."""
        for name, size in sorted(self.caches.items(), key=lambda item: item[1]):
            if nbytes <= size:
                return name
        return MEMORY

    def _depth(self, nbytes: float) -> float:
        """How far from the core ``nbytes`` sit: their level's rank, or with no cache sizes known
        the bytes themselves (every rung its own level)."""
        if not self.caches:
            return nbytes
        return sum(1 for size in self.caches.values() if nbytes > size)

    def _rung(self, nbytes: float, working_set: float | None = None) -> int | None:
        """The rung whose bandwidth bounds a point moving ``nbytes`` and holding ``working_set``:
        the fastest rung of the level that holds the point (with SLACK) or of a slower one. A
        slower level's rung can read faster where a call's fixed cost weighs on the small rungs."""
        if not self.bandwidth:
            return None
        floor = self._depth(held_bytes(nbytes, working_set) / SLACK)
        rungs = [size for size in self.bandwidth if self._depth(size) >= floor]
        return max(rungs, key=self.bandwidth.__getitem__) if rungs else max(self.bandwidth)

    def bandwidth_limit(self, nbytes: float, working_set: float | None = None) -> float:
        """The ceiling in bytes/s for a point that moves ``nbytes`` and holds ``working_set``."""
        rung = self._rung(nbytes, working_set)
        return math.inf if rung is None else self.bandwidth[rung]

    def _level_spread(self, rung: int) -> float:
        """How far the quick measurements of the rungs in ``rung``'s level disagreed (best / worst)."""
        same = [size for size in self.spread if self._depth(size) == self._depth(rung)]
        return max([self.spread[size] for size in same], default=1.0)

    def margin(self, nbytes: float, working_set: float | None = None) -> float:
        """How far beyond the ceiling a figure may go: MARGIN, widened by its level's own spread;
        BUSY_MARGIN at least where the machine was busy (``busy``)."""
        rung = self._rung(nbytes, working_set)
        m = MARGIN if rung is None else MARGIN * min(MAX_SPREAD, max(1.0, self._level_spread(rung)))
        return max(m, BUSY_MARGIN) if self.busy else m

    def flops_limit(self, dtype: str) -> float:
        return self.peak_flops.get(dtype, math.inf)

    @property
    def copy_bytes_per_s(self) -> float:
        """The memory's own bandwidth: the largest rung, past every cache."""
        return self.bandwidth[max(self.bandwidth)] if self.bandwidth else math.nan

    def levels(self) -> list[dict[str, Any]]:
        """Each level's size, its best rung, spread and margin: what a point held there is held to."""
        out = []
        for name in [*sorted(self.caches, key=self.caches.__getitem__), MEMORY]:
            rungs = [size for size in self.bandwidth if self.level(size) == name]
            best = max(rungs, key=self.bandwidth.__getitem__, default=None)
            spread = self._level_spread(best) if best is not None else math.nan
            out.append({"level": name, "bytes": self.caches.get(name), "rungs": len(rungs),
                        "best_gbps": round(self.bandwidth[best] / 1e9, 1) if best is not None else None,
                        "spread": round(spread, 3) if best is not None else None,
                        "margin": round(MARGIN * min(MAX_SPREAD, max(1.0, spread)), 3) if best is not None else None})
        return out

    def record(self) -> dict[str, Any]:
        """Plain data for the environment record and the exports."""
        return {"device": self.device, "device_id": self.device_id,
                "copy_gbps": round(self.copy_bytes_per_s / 1e9, 1),
                "bandwidth_gbps_by_bytes": {str(k): round(v / 1e9, 1) for k, v in sorted(self.bandwidth.items())},
                "spread_by_bytes": {str(k): round(v, 3) for k, v in sorted(self.spread.items())},
                "peak_gflops": {k: round(v / 1e9, 1) for k, v in self.peak_flops.items()},
                "peak_basis": self.flops_basis, "margin": MARGIN, "max_spread": MAX_SPREAD, "slack": SLACK,
                "caches": dict(self.caches), "levels": self.levels(),
                "measured_busy": self.busy, "busy_margin": BUSY_MARGIN,
                **({"copy_engines": self.copy_engines} if self.copy_engines else {}),
                **({"duplex_share": round(self.duplex_share, 3)} if math.isfinite(self.duplex_share) else {})}


def held_bytes(nbytes: float, working_set: float | None) -> float:
    """What a point holds: its working set, or the bytes it moves where it has none or moves fewer."""
    return min(nbytes, working_set) if working_set else nbytes


_CACHE: dict[str, DeviceLimits] = {}
_LOCK = threading.Lock()


def limits_for(session: Any) -> DeviceLimits:
    """The limits of the session's device, measured on first use in this process."""
    with _LOCK:
        found = _CACHE.get(session.device_id)
        if found is None:
            found = _CACHE[session.device_id] = measure(session)
        return found


def known(device_id: str) -> bool:
    """Whether this process has the limits of ``device_id`` already (measured, or remembered)."""
    with _LOCK:
        return device_id in _CACHE


def remember(limits: DeviceLimits) -> None:
    """Put limits in the cache as if measured (tests use it for a device of known limits)."""
    with _LOCK:
        _CACHE[limits.device_id] = limits


def forget() -> None:
    with _LOCK:
        _CACHE.clear()


def recorded() -> list[dict[str, Any]]:
    """Every device's limits measured so far in this process."""
    with _LOCK:
        return [lim.record() for lim in _CACHE.values()]


def measure(session: Any) -> DeviceLimits:
    kind = session.device_kind
    limits = DeviceLimits(session.device, session.device_id, kind, caches=cache_levels.levels(kind))
    if kind == "gpu":
        p = driver.properties(0)
        limits.copy_engines = p.copy_engines if p is not None else 0
    rungs = [2 ** k for k in ladder(kind, limits.caches)]
    meter = load_mod.LoadMeter()
    for walk in range(LADDER_PASSES):
        for nbytes in rungs:
            if walk and nbytes not in limits.bandwidth:
                break               # where the first walk stopped
            try:
                _measure_rung(session, limits, nbytes, thorough=False)
            except Exception as exc:  # noqa: BLE001 - out of memory on a busy device: the ladder stops here
                log.info("bandwidth ladder stops at %d bytes: %s", nbytes, exc)
                break
    limits.busy = meter.read().noisy     # other processes slowed the ladder: its ceilings are low
    limits.duplex_share = _duplex_share(session)
    limits.peak_flops, limits.flops_basis = peak_flops(kind)
    log.info("limits of %s: copy %.0f GB/s, peak %s, levels %s", session.device, limits.copy_bytes_per_s / 1e9,
             {k: f"{v / 1e12:.1f} TFLOP/s" for k, v in limits.peak_flops.items()}, limits.levels())
    return limits


def _duplex_share(session: Any) -> float:
    """Both ways at once over the two alone, for a GPU session that can say (``gpu.duplex``); NaN
    where it cannot or the copies fail (a full device): the overlap limit then goes without it."""
    measure_ = getattr(session, "duplex_seconds", None)
    if measure_ is None:
        return math.nan
    from workbench.measure.gpu import duplex
    try:
        up, down, both = measure_(duplex.DUPLEX_BYTES)
    except Exception as exc:  # noqa: BLE001 - a figure lost, never the sweep
        log.info("copies both ways at once not measured: %s: %s", type(exc).__name__, exc)
        return math.nan
    # Between a link that moves both ways at full speed (0.5) and one way at a time (1.0): noise
    # past either end would promise a call less than its copies take, or more than in turn.
    share = min(1.0, max(0.5, both / (up + down))) if up > 0 and down > 0 else math.nan
    log.info("copies of %d MiB: in %.3g ms, out %.3g ms, both at once %.3g ms (%.2f of the two)",
             duplex.DUPLEX_BYTES >> 20, up * 1e3, down * 1e3, both * 1e3, share)
    return share


PATTERNS = ("copy", "read", "triad")
SECOND_OPINIONS = 3


def _measure_rung(session: Any, limits: DeviceLimits, nbytes: int, thorough: bool) -> None:
    """The best bandwidth of any STREAM pattern at this rung: a read-heavy kernel legitimately
    counts more bytes per second than a copy does."""
    times = [session.stream_seconds(nbytes, pattern, thorough) for pattern in PATTERNS]
    best = max(nbytes / t for t in times if t)
    limits.bandwidth[nbytes] = max(best, limits.bandwidth.get(nbytes, 0.0))
    if not thorough:    # the spread of one method's measurements; a thorough one is another method
        seen = limits._quick.setdefault(nbytes, [])
        seen.append(best)
        limits.spread[nbytes] = max(seen) / min(seen)


@dataclass(frozen=True)
class Verdict:
    gbps_limit: float
    gflops_limit: float
    problem: str = ""       # '' when the point is plausible
    level: str = ""         # the memory level whose ceiling gbps_limit is ("L2", "L3", "memory")


def check(session: Any, bytes_moved: float, flops: float, seconds: float, dtype: str,
          working_set: float | None = None, busy: bool = False) -> Verdict:
    """Compare a point's figures with its device's limits (a second opinion before condemning).
    ``working_set``: the bytes the point holds (what decides which cache it runs from); None: the
    bytes it moves. ``busy``: other processes kept the machine busy during the point; then, as
    when they did during the ladder, a bandwidth is implausible only past BUSY_MARGIN times the
    ceiling: a loaded 2-core VM put an honest parallel Numba point at 1.16x a ceiling measured
    under the same load, while the faults the check is for (a timer that bracketed nothing, work
    skipped) are orders of magnitude past it."""
    limits = limits_for(session)
    limits = dataclasses.replace(limits, busy=True) if busy and not limits.busy else limits
    ws = working_set
    if math.isnan(seconds) or math.isinf(seconds):
        return Verdict(math.nan, math.nan)      # no time, nothing to check (the point failed)
    ceilings = (limits.bandwidth_limit(bytes_moved, ws) / 1e9, limits.flops_limit(dtype) / 1e9)
    if seconds <= 0:
        # Work done in no time: the timer bracketed nothing (an event pair on an idle stream).
        done = bytes_moved > 0 or flops > 0
        return Verdict(*ceilings, f"beyond the hardware: the work took {seconds:g} s (the timing cannot be true)"
                       if done else "")
    problem = _problem(limits, bytes_moved, flops, seconds, dtype, ws)
    # Up to SECOND_OPINIONS thorough measurements, each keeping the best and the worst seen: one
    # busy moment of a small machine during a single one flagged an honest point.
    for _ in range(SECOND_OPINIONS):
        if not (problem and bytes_moved / seconds > limits.margin(bytes_moved, ws) * limits.bandwidth_limit(bytes_moved, ws)):
            break
        _second_opinion(session, limits, held_bytes(bytes_moved, ws), limits._rung(bytes_moved, ws))
        problem = _problem(limits, bytes_moved, flops, seconds, dtype, ws)
    level = limits.level(held_bytes(bytes_moved, ws) / SLACK) if limits.caches else ""
    return Verdict(limits.bandwidth_limit(bytes_moved, ws) / 1e9, limits.flops_limit(dtype) / 1e9, problem, level)


def _second_opinion(session: Any, limits: DeviceLimits, bytes_moved: float, ceiling: int | None) -> None:
    """The rungs around the point's size again, thoroughly, a rung at its very size, and the rung
    whose bandwidth is the point's ceiling now: between two rungs, the one below pays a call's fixed
    cost over fewer bytes and the one above may have left a cache (on the H200 machine's 16 cores an
    honest Numba triad of 12.6 MB ran at 614 GB/s, 1.2x the best the 8.4 and 16.8 MB rungs had
    shown). Not the ladder's top for every point: on a VM showing a 300 MiB L3 that rung is 1 GiB,
    and a 100 MiB point's check peaked at 1 GiB and ran for seconds inside the point."""
    with _LOCK:
        rungs = sorted(limits.bandwidth)
        own = int(bytes_moved)
        if rungs and rungs[0] <= own <= rungs[-1] and own not in limits.bandwidth:
            rungs = sorted(rungs + [own])
        for nbytes in rungs:
            if bytes_moved / 2 <= nbytes <= 4 * bytes_moved or nbytes == ceiling:
                try:
                    _measure_rung(session, limits, nbytes, thorough=True)
                except Exception as exc:  # noqa: BLE001
                    log.info("second bandwidth opinion at %d bytes failed: %s", nbytes, exc)


def _problem(limits: DeviceLimits, bytes_moved: float, flops: float, seconds: float, dtype: str,
             working_set: float | None = None) -> str:
    problems = []
    bw, bw_limit = bytes_moved / seconds, limits.bandwidth_limit(bytes_moved, working_set)
    if bytes_moved > 0 and bw > limits.margin(bytes_moved, working_set) * bw_limit:
        held = held_bytes(bytes_moved, working_set)
        where = f"from {limits.level(held / SLACK)}" if limits.caches else "at this size"
        problems.append(f"{bw / 1e9:,.0f} GB/s is {bw / bw_limit:,.1f}x the {bw_limit / 1e9:,.0f} GB/s "
                        f"that {limits.device} copies {where} (the point holds {held / 2 ** 20:,.1f} MiB)")
    rate, rate_limit = flops / seconds, limits.flops_limit(dtype)
    if flops > 0 and rate > MARGIN * rate_limit:
        problems.append(f"{rate / 1e9:,.0f} GFLOP/s is {rate / rate_limit:,.1f}x the {dtype} peak of "
                        f"{rate_limit / 1e9:,.0f} GFLOP/s of {limits.device}")
    if not problems:
        return ""
    return "beyond the hardware: " + "; ".join(problems) + " (the timing cannot be true)"


# Peak arithmetic -----------------------------------------------------------------------------------

# FLOP per clock per SM: (float32 on CUDA cores, float64 with tensor cores where cuBLAS uses them).
_GPU_RATES = {
    (6, 0): (128, 64), (7, 0): (128, 64), (8, 0): (128, 128),
    (9, 0): (256, 256), (10, 0): (256, 256),
}
_TF32_RATE = {8: 1024, 9: 2048, 10: 2048}   # float32 matmul through TF32 tensor cores, if enabled


def _gpu_rates(cc: tuple[int, int]) -> tuple[float, float, str]:
    if cc in _GPU_RATES:
        f32, f64 = _GPU_RATES[cc]
        basis = f"compute capability {cc[0]}.{cc[1]}"
    elif cc[0] in (6, 7, 8, 10, 11, 12):
        f32 = 128 if cc == (7, 5) else 256      # 64 FP32 lanes per SM on Turing, 128 elsewhere
        f64 = f32 / 16                          # consumer parts run float64 at 1/32 or 1/64: generous
        basis = f"compute capability {cc[0]}.{cc[1]} (consumer rates)"
    else:
        f32 = f64 = 512.0                       # an unknown part: twice anything known
        basis = f"compute capability {cc[0]}.{cc[1]} unknown: a generous ceiling"
    if os.environ.get("CUPY_TF32", "0") == "1":
        f32 = max(f32, _TF32_RATE.get(cc[0], 4096))
        basis += ", TF32 enabled"
    return float(f32), float(f64), basis


def _cpu_rates(cpuinfo: str = "/proc/cpuinfo") -> tuple[float, float, str]:
    """FLOP per clock per core (float32, float64) from the vector units the flags name. AMD's
    Zen 4 (family 25 with AVX-512) runs AVX-512 on two 256-bit FMA pipes: its flags say avx512f
    but it does the work of AVX2 per clock. Counted as AVX-512 on two units, the 2-core Zen 4 VM's
    ceiling was twice its peak, and OpenBLAS's sgemm at about 93 % of the real one read 46 %:
    'unknown' instead of compute-bound (issue 29). Zen 5 (family 26) has full 512-bit units."""
    fields: dict[str, str] = {}
    try:
        with open(cpuinfo) as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("flags", "Features", "vendor_id", "cpu family") and key not in fields:
                    fields[key] = value.strip()
                if "flags" in fields or "Features" in fields:
                    break
    except OSError:
        pass
    words = set((fields.get("flags") or fields.get("Features") or "").split())
    amd_family = int(fields["cpu family"]) if fields.get("vendor_id") == "AuthenticAMD" and \
        fields.get("cpu family", "").isdigit() else 0
    if "avx512f" in words and amd_family == 25:
        return 32.0, 16.0, "AVX-512 on 256-bit units (AMD Zen 4), 2 FMA units"
    if "avx512f" in words:
        return 64.0, 32.0, "AVX-512, 2 FMA units"
    if "avx2" in words and "fma" in words:
        return 32.0, 16.0, "AVX2, 2 FMA units"
    return 64.0, 32.0, "vector width unknown: AVX-512 rates assumed"


def _cpu_clock_hz() -> float:
    mhz = 0.0
    try:
        freq = psutil.cpu_freq()
        mhz = max(freq.max, freq.current) if freq else 0.0
    except Exception:  # noqa: BLE001 - not every platform reports a clock
        pass
    return (mhz or 5000.0) * 1e6


def cpu_cores() -> int:
    """The cores the CPU's peak counts."""
    return os.cpu_count() or 1


def threads_flops_limit(gflops_limit: float, threads: int | None) -> float:
    """The compute ceiling of a CPU point that ran on ``threads`` of the machine's cores: its share
    of the every-core peak. Held to both cores' peak, a one-thread sgemm on the 2-core VM could
    never pass 50 % (issue 29: 'numpy x1' read 'unknown' at a core's full speed). The check for
    implausible figures keeps the every-core peak: a generous ceiling, and threads it cannot see
    (a BLAS that ignores its pool's limit) must not condemn an honest point."""
    if not threads or threads <= 0 or not math.isfinite(gflops_limit):
        return gflops_limit
    return gflops_limit * min(threads, cpu_cores()) / cpu_cores()


def peak_flops(kind: str) -> tuple[dict[str, float], str]:
    if kind == "gpu":
        p = driver.properties(0)
        if p is None or not p.sm_count or not p.clock_khz:
            return {}, "the driver gave no SM count or clock: no arithmetic ceiling"
        f32, f64, basis = _gpu_rates(p.compute_capability)
        clock = p.clock_khz * 1e3
        return ({"float32": f32 * p.sm_count * clock, "float64": f64 * p.sm_count * clock},
                f"{p.sm_count} SMs at {clock / 1e9:.2f} GHz, {basis}")
    f32, f64, basis = _cpu_rates()
    cores, clock = cpu_cores(), _cpu_clock_hz() * CPU_TURBO
    return ({"float32": f32 * cores * clock, "float64": f64 * cores * clock},
            f"{cores} threads at up to {clock / 1e9:.2f} GHz, {basis}")
