"""What the untimed passes after a point's rounds record, beside its memory: the kernels one GPU
call launches (CUPTI) and the energy of a call (a board's or a package's counter), with the
sweep's energy meter measured once at its first use.

A GPU point's energy is read twice. Its figure (``energy_j``) is the compute alone, repeated
back to back in bursts as its timing does, so that the board works through the window: the
energy of what the compute time measures. Its whole call (``energy_e2e_j``) is read beside it:
pageable copies leave the board near its idle draw for most of such a call, so that reading is
mostly the host's time at the board's idle power, and a few watts above idle of noise over it.
A CPU call has no copies: one reading is both."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from workbench.catalog.workloads import Phases
from workbench.core import units
from workbench.measure import energy, sampling
from workbench.measure.gpu import kernels


@dataclasses.dataclass(frozen=True)
class EnergyMeter:
    """A counter with its measured step, the window read over and the idle draw, once per sweep."""
    counter: energy.Counter
    window_s: float
    idle_w: float
    source: str


def energy_meter(sessions: dict, gpu: bool, clocks: Callable[[dict], Any]) -> "EnergyMeter | str":
    """The sweep's GPU or CPU energy meter, measured at its first use (its step, the idle draw), or
    why there is none here ('not measured here: ...'); ``clocks`` gives the sweep's NVML reader."""
    key = "energy gpu" if gpu else "energy cpu"
    if key not in sessions:
        counter, why = (energy.NvmlCounter(clocks(sessions)), "") if gpu else energy.cpu_counter()
        if counter is not None and counter.read() is None:
            counter, why = None, "not measured here: NVML has no energy counter for this GPU"
        if counter is None:
            sessions[key] = why
        else:
            try:
                res = energy.resolution(counter)
                idle = energy.watts(counter, energy.window_s(res))
            except OSError as exc:
                sessions[key] = f"not measured here: {exc}"
            else:
                sessions[key] = EnergyMeter(counter, energy.window_s(res), idle, energy.describe(counter, res, idle))
    return sessions[key]



def _call(phases: Phases, session: Any) -> Callable[[], None]:
    def call() -> None:
        sampling.one_call(phases, session.timed)
        session.synchronize()
    return call


#: Calls recorded for a point's timeline; the one of median length is kept. One call alone was not
#: representative: on the H200 one pageable 2^22 copy ran 1.55 ms where the median copy took 0.97 ms.
RECORDED_CALLS = 3


def kernels_of(phases: Phases, session: Any) -> dict:
    """The columns of one call's kernels and its timeline: a call to warm the implementation made
    anew, then ``RECORDED_CALLS`` recorded, each phase a span of the host's lane (the overlapped call
    one span), and the call of median length kept."""
    _call(phases, session)()
    steps = [("call", phases.whole)] if phases.whole is not None else [
        (name, fn) for name, fn in (("h2d", phases.h2d), ("compute", phases.compute), ("d2h", phases.d2h))
        if fn is not None]
    calls = []
    for _ in range(RECORDED_CALLS):
        with kernels.recording() as rec:
            rec.begin()
            for name, fn in steps:
                rec.phase(name, lambda fn=fn: session.timed(fn))
            rec.phase("synchronize", session.synchronize)
        length = sum(a.seconds for a in rec.activities if a.kind == "phase")
        calls.append((length, len(calls), rec.activities))
    found = sorted(calls)[len(calls) // 2][2]
    return dict(kernel_count=sum(a.kind == "kernel" for a in found), kernels=kernels.encode(found))


#: A GPU compute burst of the energy pass lasts about this long: one wait for the device per
#: burst keeps its queue full for all but a few microseconds of each.
ENERGY_BURST_S = 2e-3
MAX_ENERGY_BURST = 100_000
#: The energy pass's calls may run this much longer or shorter than the timed median before the
#: row says so: the figure is then the energy of calls that ran unlike the timed ones.
CALL_DRIFT = 0.25


def energy_of(phases: Phases, session: Any, meter: EnergyMeter, flops: float, stop: Any = None,
              compute_s: float = math.nan, total_s: float = math.nan) -> dict:
    """The energy columns of a point (see the module's docstring): ``energy.WINDOWS`` readings of
    each figure over the meter's window; the median reading gives the figure, its draw and its call
    time (so ``energy_j`` is ``(power_w - idle_w) * energy_call_s``), the others its spread; none
    where a call is below what the counter resolves. ``compute_s`` and ``total_s`` are the point's
    timed medians, which the calls read are held against."""
    whole = _call(phases, session)
    whole()                              # warm: the implementation was made anew
    gpu = getattr(session, "device_kind", "cpu") == "gpu"
    moves = phases.h2d is not None or phases.d2h is not None
    notes: list[str] = []
    if gpu:
        n = _burst_length(phases, session, compute_s)

        def burst() -> None:
            for _ in range(n):
                phases.compute()
            session.synchronize()
        out = _figure(meter, burst, n, stop, "", compute_s, "compute", notes)
    else:
        out = _figure(meter, whole, 1, stop, "", compute_s, "call", notes)
    if gpu and moves:
        out.update(_figure(meter, whole, 1, stop, "_e2e", total_s, "end-to-end call", notes))
    else:       # nothing moves: the whole call is the compute
        out.update(zip(_columns("_e2e"), [out[c] for c in _columns("")]))
    median = out["energy_j"]
    out.update(idle_w=meter.idle_w, energy_source="; ".join([meter.source, *notes]),
               gflop_per_j=flops / median / 1e9 if flops > 0 and median > 0 else math.nan)
    return out


def _burst_length(phases: Phases, session: Any, compute_s: float) -> int:
    """Computes per burst: enough for ENERGY_BURST_S of device time, from the timed median (or one
    compute timed here where the point has none)."""
    one = compute_s
    if not one > 0:
        one = session.timed(phases.compute)[0]
        session.synchronize()
    if not one > 0:
        return 1
    return int(min(MAX_ENERGY_BURST, max(1, math.ceil(ENERGY_BURST_S / one))))


def _figure(meter: EnergyMeter, call: Callable[[], None], calls_per: int, stop: Any, key: str,
            timed_s: float, what: str, notes: list[str]) -> dict:
    """One figure's columns (``energy{key}_j``, its lowest and highest, ``power{key}_w``,
    ``energy{key}_call_s``); what was odd about it goes to ``notes``."""
    readings = sorted((energy.per_call(meter.counter, call, meter.window_s, meter.idle_w, stop, calls_per)
                       for _ in range(energy.WINDOWS)), key=lambda r: r.joules)
    mid = readings[len(readings) // 2]
    joules = [r.joules for r in readings]
    if not joules[0] > 0:      # within the counter's noise: no figure, and why
        notes.append(f"the {what}'s energy is below what the counter resolves over {mid.seconds:.1f} s")
        joules = [math.nan] * len(joules)
    elif timed_s > 0 and abs(mid.call_s / timed_s - 1) > CALL_DRIFT:
        notes.append(f"the {what}s read ran {units.seconds(mid.call_s)} each against "
                     f"{units.seconds(timed_s)} timed")
    return dict(zip(_columns(key), (joules[len(joules) // 2], joules[0], joules[-1], mid.watts, mid.call_s)))


def _columns(key: str) -> tuple[str, ...]:
    """A figure's columns: '' the compute's, '_e2e' the whole call's."""
    return (f"energy{key}_j", f"energy{key}_lo_j", f"energy{key}_hi_j", f"power{key}_w", f"energy{key}_call_s")
