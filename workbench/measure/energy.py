"""Energy per call, from the hardware's own energy counters, above the idle draw (issue 29).

The GPU board's counter is NVML's (``nvmlDeviceGetTotalEnergyConsumption``, read through the
sweep's :class:`~workbench.measure.gpu.clocks.GpuClocks`); the CPU's is RAPL's package counter
under ``/sys/class/powercap``, which most VMs do not expose: there the row says so and no figure
is made up.

A counter moves in steps, tens of milliseconds apart on a GPU: one call of a few microseconds
cannot be read. So a point's calls are repeated over a window many steps long, read from one
step of the counter to another (the span between two steps holds exactly the energy between
them), and the board's idle draw over the same span, measured once per sweep with nothing
running, is taken off: what remains is what the calls cost. A GPU point is read twice: its
compute alone, back to back as its timing bursts run it (the figure), and its whole call with
the copies, during which the board mostly idles (``workbench.measure.untimed``). The pass runs
after the point's rounds and is untimed: no timed call waits on a counter.
"""
from __future__ import annotations

import glob
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

#: The shortest window a point's calls are repeated over, and its length in counter steps.
MIN_WINDOW_S = 0.5
MIN_STEPS = 10
#: Windows a point's energy is read over: their median is its figure, their range its spread.
WINDOWS = 3
#: The longest a counter is waited on to step before it is taken for stuck.
STEP_TIMEOUT_S = 2.0
POLL_S = 0.0005


class Counter:
    """An energy counter: ``read()`` in joules (None where it cannot be read), what it covers, and
    the smallest change it counts (``unit_j``; 0 where it is not known). How often it is updated is
    another thing, measured (:func:`resolution`)."""
    source = ""
    unit_j = 0.0

    def read(self) -> float | None:
        raise NotImplementedError


class NvmlCounter(Counter):
    source = "GPU board (NVML)"
    unit_j = 1e-3          # nvmlDeviceGetTotalEnergyConsumption counts millijoules

    def __init__(self, clocks: Any) -> None:
        self.clocks = clocks

    def read(self) -> float | None:
        return self.clocks.energy_joules()


class RaplCounter(Counter):
    """The sum of the CPU packages' RAPL counters (``energy_uj``), unwrapped across their range."""
    source = "CPU packages (RAPL)"
    unit_j = 1e-6          # energy_uj counts microjoules (the hardware's own unit may be coarser)

    def __init__(self, domains: list[str]) -> None:
        self.domains = domains
        self.ranges = [_int(os.path.join(d, "max_energy_range_uj")) or 2 ** 32 for d in domains]
        self.last = [_int(os.path.join(d, "energy_uj")) for d in domains]
        self.total = 0

    def read(self) -> float | None:
        now = [_int(os.path.join(d, "energy_uj")) for d in self.domains]
        if any(v is None for v in now):
            return None
        for i, (was, value) in enumerate(zip(self.last, now)):
            self.total += (value - was) % self.ranges[i]        # a counter that wrapped goes on
        self.last = now
        return self.total / 1e6


def _int(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def cpu_counter(root: str = "/sys/class/powercap") -> tuple[RaplCounter | None, str]:
    """(RAPL counter, '') or (None, why not): the package domains (``intel-rapl:N``), readable."""
    domains = sorted(d for d in glob.glob(os.path.join(root, "intel-rapl:*")) if d.count(":") == 1)
    if not domains:
        return None, "not measured here: this machine exposes no RAPL energy counter (a VM, or no Intel/AMD RAPL)"
    if any(_int(os.path.join(d, "energy_uj")) is None for d in domains):
        return None, "not measured here: the RAPL energy counter is not readable by this user"
    return RaplCounter(domains), ""


@dataclass(frozen=True)
class Resolution:
    step_s: float        # median time between two steps of the counter: its update period
    step_j: float        # median size of a step: the draw times the period, not what it counts in


def _step(counter: Counter, work: Callable[[], Any] | None = None,
          clock: Callable[[], float] = time.perf_counter) -> tuple[float, float]:
    """(time, value) at the counter's next step: waited on, or worked through with ``work``."""
    first = counter.read()
    if first is None:
        raise OSError("the energy counter cannot be read")
    deadline = clock() + STEP_TIMEOUT_S
    while True:
        if work is not None:
            work()
        else:
            time.sleep(POLL_S)
        value = counter.read()
        now = clock()
        if value is None:
            raise OSError("the energy counter cannot be read")
        if value != first:
            return now, value
        if now > deadline:
            raise OSError(f"the energy counter did not move in {STEP_TIMEOUT_S:.0f} s")


def resolution(counter: Counter, steps: int = 6) -> Resolution:
    """The counter's update interval and step, measured by watching it step ``steps`` times."""
    times, values = zip(*(_step(counter) for _ in range(steps + 1)))
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    jumps = sorted(b - a for a, b in zip(values, values[1:]))
    return Resolution(gaps[len(gaps) // 2], jumps[len(jumps) // 2])


def window_s(res: Resolution) -> float:
    """The window a point's calls are repeated over: long enough that a step is a small share."""
    return max(MIN_WINDOW_S, MIN_STEPS * res.step_s)


def watts(counter: Counter, seconds: float) -> float:
    """The mean draw from one step to another, at least ``seconds`` apart, with nothing run."""
    t0, e0 = _step(counter)
    time.sleep(seconds)
    t1, e1 = _step(counter)
    return (e1 - e0) / (t1 - t0)


def describe(counter: Counter, res: Resolution, idle_w: float) -> str:
    """'GPU board (NVML): updated every 100 ms, counts in 1 mJ; idle 120 W taken off': the update
    period and the resolution apart (a step's size is the draw over a period, neither of them)."""
    from workbench.core.units import joules
    counts = f", counts in {joules(counter.unit_j)}" if counter.unit_j > 0 else ""
    return f"{counter.source}: updated every {res.step_s * 1e3:.0f} ms{counts}; idle {idle_w:.0f} W taken off"


@dataclass(frozen=True)
class Reading:
    joules: float        # per call, above the idle draw
    watts: float         # the mean draw while the calls ran
    idle_watts: float
    calls: int
    seconds: float

    @property
    def call_s(self) -> float:
        """The time of one call in the window read: ``joules`` is (watts - idle) times this."""
        return self.seconds / self.calls


def per_call(counter: Counter, call: Callable[[], Any], seconds: float, idle_watts: float,
             stop: Any = None, calls_per: int = 1) -> Reading:
    """Energy of one call: ``call()`` runs ``calls_per`` calls and returns when their work is
    complete. It is repeated from one step of the counter until ``seconds`` have passed and the
    counter has stepped again, so the span read holds nothing but calls; the idle draw over the
    span is taken off."""
    t0, e0 = _step(counter)
    calls = 0
    while time.perf_counter() - t0 < seconds and not (stop is not None and stop.is_set()):
        call()
        calls += calls_per

    def more() -> None:
        nonlocal calls
        call()
        calls += calls_per
    t1, e1 = _step(counter, more)
    span = t1 - t0
    gross = e1 - e0
    return Reading((gross - idle_watts * span) / calls, gross / span, idle_watts, calls, span)


def text(joules: float, watts: float, idle: float, what: str = "a call") -> str:
    """'1.9 mJ a call (412 W while running, 74 W idle taken off)'; '' where not measured."""
    from workbench.core.units import joules as in_joules
    if not isinstance(joules, (int, float)) or not math.isfinite(joules):
        return ""
    return (f"{in_joules(joules)} {what} ({watts:.0f} W while running, "
            f"{idle:.0f} W idle taken off)")
