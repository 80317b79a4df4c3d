"""The GPU's clocks and the reasons it holds them down, read through NVML while a point runs.

nvbench drops the samples a GPU took while it throttled (its ``gpu_frequency`` check: an SM
clock below 75 % of the device's highest), because a throttled sample measures the cooling or
the power supply, not the code. The engine does the same with these readings, and keeps the
reasons with the point.

NVML is asked through ``libnvidia-ml`` with ctypes, as :mod:`workbench.core.driver` asks for free
memory: it is part of the driver, so this works wherever the GPU does, with no Python package
and no CUDA context (nvidia-ml-py is a ctypes wrapper over these same calls).
"""
from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass

from workbench.core import driver

log = logging.getLogger(__name__)

_NVML_CLOCK_SM = 1
_NVML_CLOCK_MEM = 2
#: nvmlClocksEventReasons bits (nvml.h); "GPU idle" and the clock settings a user chose are no throttling.
REASONS = {
    0x4: "power cap", 0x8: "hardware slowdown", 0x20: "thermal (software)",
    0x40: "thermal (hardware)", 0x80: "power brake", 0x10: "sync boost",
}
#: A sample taken with the SM clock below this share of the highest is dropped, as nvbench does.
THROTTLE_SHARE = 0.75


@dataclass(frozen=True)
class Reading:
    sm_mhz: float
    mem_mhz: float
    reasons: int       # nvmlClocksEventReasons bits, idle and user settings masked out

    def throttled(self, max_sm_mhz: float) -> bool:
        return max_sm_mhz > 0 and self.sm_mhz < THROTTLE_SHARE * max_sm_mhz

    @property
    def reason_names(self) -> list[str]:
        return [name for bit, name in REASONS.items() if self.reasons & bit]


class GpuClocks:
    """An open NVML handle on device ``ordinal`` (found by its PCI bus id); ``read()`` costs tens of µs.

    Every method returns None or does nothing where NVML cannot be had: the point is measured
    all the same, without clocks.
    """

    def __init__(self, ordinal: int = 0) -> None:
        self._nvml = None
        self._handle = ctypes.c_void_p()
        self.max_sm_mhz = 0.0
        p = driver.properties(ordinal)
        if p is None:
            return
        try:
            nvml = ctypes.CDLL("libnvidia-ml.so.1")
            if nvml.nvmlInit_v2() != 0:
                return
        except (OSError, AttributeError):
            return
        if nvml.nvmlDeviceGetHandleByPciBusId_v2(p.pci_bus_id.encode(), ctypes.byref(self._handle)) != 0:
            nvml.nvmlShutdown()
            return
        self._nvml = nvml
        mhz = ctypes.c_uint(0)
        if nvml.nvmlDeviceGetMaxClockInfo(self._handle, _NVML_CLOCK_SM, ctypes.byref(mhz)) == 0:
            self.max_sm_mhz = float(mhz.value)
        self._reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None)

    @property
    def available(self) -> bool:
        return self._nvml is not None

    def read(self) -> Reading | None:
        if self._nvml is None:
            return None
        sm, mem, bits = ctypes.c_uint(0), ctypes.c_uint(0), ctypes.c_ulonglong(0)
        if self._nvml.nvmlDeviceGetClockInfo(self._handle, _NVML_CLOCK_SM, ctypes.byref(sm)) != 0:
            return None
        self._nvml.nvmlDeviceGetClockInfo(self._handle, _NVML_CLOCK_MEM, ctypes.byref(mem))
        if self._reasons is not None:
            self._reasons(self._handle, ctypes.byref(bits))
        return Reading(float(sm.value), float(mem.value), int(bits.value) & sum(REASONS))

    def energy_joules(self) -> float | None:
        """The board's energy counter (NVML, millijoules since the driver loaded), in joules; None
        where the device has none (before Volta) or NVML cannot be had."""
        if self._nvml is None:
            return None
        mj = ctypes.c_ulonglong(0)
        if self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle, ctypes.byref(mj)) != 0:
            return None
        return mj.value / 1000.0

    def close(self) -> None:
        if self._nvml is not None:
            self._nvml.nvmlShutdown()
            self._nvml = None
