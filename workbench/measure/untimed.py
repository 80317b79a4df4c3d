"""What the untimed passes after a point's rounds record, beside its memory: the kernels one GPU
call launches (CUPTI) and the energy of a call (a board's or a package's counter), with the
sweep's energy meter measured once at its first use."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from workbench.catalog.workloads import Phases
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
                sessions[key] = EnergyMeter(counter, energy.window_s(res), idle,
                                            f"{counter.source}, a step every {res.step_s * 1e3:.0f} ms "
                                            f"of {res.step_j * 1e3:.0f} mJ; idle {idle:.0f} W taken off")
    return sessions[key]



def _call(phases: Phases, session: Any) -> Callable[[], None]:
    def call() -> None:
        sampling.execute(phases, session.timed)
        session.synchronize()
    return call


def kernels_of(phases: Phases, session: Any) -> dict:
    """The columns of one call's kernels: a call to warm the implementation made anew, one recorded."""
    call = _call(phases, session)
    call()
    with kernels.recording() as found:
        call()
    return dict(kernel_count=sum(a.kind == "kernel" for a in found), kernels=kernels.encode(found))


def energy_of(phases: Phases, session: Any, meter: EnergyMeter, flops: float, stop: Any = None) -> dict:
    """The energy columns of a call: ``energy.WINDOWS`` readings over the meter's window, their median
    the figure, their range its spread; none where a call is below what the counter resolves."""
    call = _call(phases, session)
    call()                              # warm: the implementation was made anew
    readings = [energy.per_call(meter.counter, call, meter.window_s, meter.idle_w, stop)
                for _ in range(energy.WINDOWS)]
    joules = sorted(r.joules for r in readings)
    source = meter.source
    if not joules[0] > 0:      # within the counter's noise: no figure, and why
        source += f"; a call's energy is below what the counter resolves over {readings[0].seconds:.1f} s"
        joules = [math.nan] * len(joules)
    median = joules[len(joules) // 2]
    return dict(energy_j=median, energy_lo_j=joules[0], energy_hi_j=joules[-1],
                power_w=float(np.median([r.watts for r in readings])), idle_w=meter.idle_w, energy_source=source,
                gflop_per_j=flops / median / 1e9 if flops > 0 and median > 0 else math.nan)
