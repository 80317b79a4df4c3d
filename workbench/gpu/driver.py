"""What the NVIDIA driver says, asked through ``libcuda`` with ctypes.

No GPU library is imported, so asking costs milliseconds and works on a
machine with no CUDA Python package at all.
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class DriverInfo:
    error: str = ""                      # why there is no usable GPU, '' when there is one
    device_count: int = 0
    cuda_version: tuple[int, int] = (0, 0)


@functools.cache
def query() -> DriverInfo:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return DriverInfo(error="no NVIDIA driver: libcuda.so.1 was not found")
    try:
        rc = cuda.cuInit(0)
        version = ctypes.c_int(0)
        cuda.cuDriverGetVersion(ctypes.byref(version))
        v = (version.value // 1000, (version.value % 1000) // 10)
        if rc != 0:
            return DriverInfo(error=f"the NVIDIA driver is present but cuInit failed (CUDA error {rc}): "
                                    "no usable device", cuda_version=v)
        count = ctypes.c_int(0)
        rc = cuda.cuDeviceGetCount(ctypes.byref(count))
        if rc != 0 or count.value == 0:
            return DriverInfo(error="no NVIDIA GPU: the driver sees no device", cuda_version=v)
        return DriverInfo(device_count=count.value, cuda_version=v)
    except (AttributeError, OSError) as exc:
        return DriverInfo(error=f"the NVIDIA driver could not be queried: {exc}")
