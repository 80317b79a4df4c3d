"""What the NVIDIA driver says, asked through ``libcuda`` with ctypes.

No GPU library is imported, so asking costs milliseconds and works on a
machine with no CUDA Python package at all. The window and the command line ask
through :func:`ask`, which puts the question to a short-lived child process: the
driver is initialised (``cuInit``) only in processes that measure.
"""
from __future__ import annotations

import ctypes
import functools
import json
import subprocess
import sys
from dataclasses import dataclass

# CUdevice_attribute values (cuda.h); stable across CUDA 11-13.
_CLOCK_RATE_KHZ = 13
_SM_COUNT = 16
_L2_BYTES = 38
_ASYNC_ENGINES = 40        # CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT
_CC_MAJOR = 75
_CC_MINOR = 76


@dataclass(frozen=True)
class DriverInfo:
    error: str = ""                      # why there is no usable GPU, '' when there is one
    device_count: int = 0
    cuda_version: tuple[int, int] = (0, 0)
    pci_bus_ids: tuple[str, ...] = ()   # each device's, in CUDA's order (NVML finds devices by it)


@dataclass(frozen=True)
class DeviceProperties:
    """The facts about one GPU that its peak arithmetic rate and its identity are made of."""

    name: str
    pci_bus_id: str
    memory_bytes: int
    sm_count: int
    clock_khz: int                       # the highest SM clock the device runs at
    compute_capability: tuple[int, int]
    l2_bytes: int
    copy_engines: int = 0                # CUDA's async engine count: 2 copy in and out at once

    @property
    def identity(self) -> str:
        return f"{self.name} @ {self.pci_bus_id}"


def _lib():
    return ctypes.CDLL("libcuda.so.1")


@functools.cache
def query() -> DriverInfo:
    try:
        cuda = _lib()
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
        buses = []
        for ordinal in range(count.value):
            dev, bus = ctypes.c_int(0), ctypes.create_string_buffer(64)
            ok = cuda.cuDeviceGet(ctypes.byref(dev), ordinal) == 0 and cuda.cuDeviceGetPCIBusId(bus, 64, dev) == 0
            buses.append(bus.value.decode(errors="replace") if ok else "")
        return DriverInfo(device_count=count.value, cuda_version=v, pci_bus_ids=tuple(buses))
    except (AttributeError, OSError) as exc:
        return DriverInfo(error=f"the NVIDIA driver could not be queried: {exc}")


ASK_TIMEOUT_S = 30.0


@functools.cache
def ask() -> DriverInfo:
    """:func:`query`'s answer, asked in a child process, so that the asking process (the window, the
    command line) never initialises the driver: a CUDA-initialised parent is unsafe to fork and
    holds driver memory for its whole life. Without libcuda there is nothing to initialise: asked here."""
    try:
        _lib()
    except OSError:
        return query()
    code = ("import dataclasses, json; from workbench.core.driver import query; "
            "print(json.dumps(dataclasses.asdict(query())))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, errors="replace",
                             stdin=subprocess.DEVNULL, timeout=ASK_TIMEOUT_S, check=True).stdout
        got = json.loads(out.strip().splitlines()[-1])
        return DriverInfo(error=got["error"], device_count=got["device_count"],
                          cuda_version=tuple(got["cuda_version"]), pci_bus_ids=tuple(got["pci_bus_ids"]))
    except (subprocess.SubprocessError, OSError, ValueError, KeyError, IndexError) as exc:
        return DriverInfo(error=f"the NVIDIA driver could not be queried: {type(exc).__name__}: {exc}")


@functools.cache
def properties(ordinal: int = 0) -> DeviceProperties | None:
    """Device ``ordinal``'s properties, or None where the driver cannot say."""
    if query().error:
        return None
    try:
        cuda = _lib()
        dev = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(dev), ordinal) != 0:
            return None
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, dev)
        bus = ctypes.create_string_buffer(64)
        cuda.cuDeviceGetPCIBusId(bus, 64, dev)
        mem = ctypes.c_size_t(0)
        cuda.cuDeviceTotalMem_v2(ctypes.byref(mem), dev)

        def attr(which: int) -> int:
            value = ctypes.c_int(0)
            return value.value if cuda.cuDeviceGetAttribute(ctypes.byref(value), which, dev) == 0 else 0

        return DeviceProperties(
            name=name.value.decode(errors="replace"), pci_bus_id=bus.value.decode(errors="replace"),
            memory_bytes=int(mem.value), sm_count=attr(_SM_COUNT), clock_khz=attr(_CLOCK_RATE_KHZ),
            compute_capability=(attr(_CC_MAJOR), attr(_CC_MINOR)), l2_bytes=attr(_L2_BYTES),
            copy_engines=attr(_ASYNC_ENGINES))
    except (AttributeError, OSError):
        return None


class _NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def free_memory(ordinal: int = 0) -> int | None:
    """Device memory free now, in bytes, or None where it cannot be read.

    Asked of NVML (``libnvidia-ml``, part of the driver), which needs no CUDA context: the window
    and the command line ask before a sweep without creating one. The device is found by its PCI
    bus id, since NVML and CUDA may number devices differently; the bus id is asked in a child
    process (:func:`ask`), so the asking process initialises no driver."""
    buses = ask().pci_bus_ids
    if ordinal >= len(buses) or not buses[ordinal]:
        return None
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    try:
        if nvml.nvmlInit_v2() != 0:
            return None
    except AttributeError:
        return None
    try:
        handle = ctypes.c_void_p()
        if nvml.nvmlDeviceGetHandleByPciBusId_v2(buses[ordinal].encode(), ctypes.byref(handle)) != 0:
            return None
        mem = _NvmlMemory()
        if nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) != 0:
            return None
        return int(mem.free)
    except (AttributeError, OSError):
        return None
    finally:
        nvml.nvmlShutdown()
