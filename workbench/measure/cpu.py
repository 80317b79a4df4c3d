"""Clocks for the CPU, and the statistics of repeats (host memory: ``workbench.measure.host_memory``)."""
from __future__ import annotations

import logging
import os
import platform
import time
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

import numpy as np

from workbench.measure import cpu_bandwidth

log = logging.getLogger(__name__)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class CpuSession:
    """The CPU backends' session: a host clock, no device, nothing to free."""

    device_kind = "cpu"

    def __init__(self, backend: Any = None) -> None:
        self.device = "CPU: " + cpu_name()
        self.device_id = f"{cpu_name()} x {os.cpu_count()} threads"

    @staticmethod
    def activate():
        return nullcontext()

    @staticmethod
    def synchronize() -> None:
        """The host's work is done when its call returns."""

    @staticmethod
    def stream_seconds(nbytes: int, pattern: str = "copy", thorough: bool = False) -> float:
        return cpu_bandwidth.stream_seconds(nbytes, pattern, thorough)

    @staticmethod
    def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
        t0 = time.perf_counter()
        value = fn()
        return time.perf_counter() - t0, value

    @contextmanager
    def device_memory(self) -> Iterator[Callable[[], float]]:
        yield lambda: float("nan")

    def release(self) -> None:
        """Nothing to free between points on the CPU."""

    def close(self) -> None:
        """Nothing to close on the CPU."""


def summarize(values: list[float] | np.ndarray) -> dict[str, float]:
    """Median, min, max and quartiles of repeat times (NaN when there are none)."""
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        return dict.fromkeys(("median", "min", "max", "q1", "q3"), float("nan"))
    q1, med, q3 = np.percentile(a, (25, 50, 75))
    return {"median": float(med), "min": float(a.min()), "max": float(a.max()),
            "q1": float(q1), "q3": float(q3)}


def typical_stages(compute: list[float], stages: list[dict[str, float]]) -> dict[str, float]:
    """The stage times of one typical repeat: the one whose compute time is the (lower) median.

    ``stages[i]`` belongs to ``compute[i]``: one compute's stages, or for a burst of back-to-back
    computes (GPU backends) the means of its computes' stages, as ``compute[i]`` is their mean time.

    One repeat's stages, not a median per stage: medians taken stage by stage need not add up to
    any repeat's time, while one repeat's stages, timed inside its compute, add up to at most that
    compute time, which is at most the reported median, so a stacked bar of them is honest.
    Empty when the implementation reports no stages.
    """
    if not stages or len(stages) != len(compute):
        return {}
    order = sorted(range(len(compute)), key=compute.__getitem__)
    return dict(stages[order[(len(order) - 1) // 2]])


def mean_stages(stages: list[dict[str, float]]) -> dict[str, float]:
    """Stage by stage, the mean over several computes (one timed burst), in the order they ran."""
    return {k: sum(s.get(k, 0.0) for s in stages) / len(stages) for k in stages[0]}
