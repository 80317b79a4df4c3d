"""The caches between a kernel and memory: how many bytes each level holds, read from the system.

The sanity check (:mod:`workbench.measure.limits`) holds a point to the speed of the memory its working set
fits in, so it needs the levels' sizes. A level's size here is all of it: every instance the device
has (Linux's ``shared_cpu_list`` tells the instances apart). Two cores with a private 1 MiB L2 each
hold 2 MiB in L2 when a parallel Numba kernel runs on both, and a ceiling of one core's L2 would call
that kernel impossible.
"""
from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from workbench.core import driver

log = logging.getLogger(__name__)

SYS_CPU = Path("/sys/devices/system/cpu")
_SCALE = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}
# Where /sys is missing: getconf's names (glibc asks the CPU itself), and whether each level is one
# per core (L1, L2, counted once a thread: generous) or one for the chip (L3, counted once).
_GETCONF = (("L1d", "LEVEL1_DCACHE_SIZE", True), ("L2", "LEVEL2_CACHE_SIZE", True),
            ("L3", "LEVEL3_CACHE_SIZE", False))


def levels(kind: str) -> dict[str, int]:
    """Level name -> bytes it holds in all, smallest first; {} where the system cannot say."""
    found = _gpu() if kind == "gpu" else (cpu_from_sys() or cpu_from_getconf())
    return dict(sorted(found.items(), key=lambda item: item[1]))


def _gpu() -> dict[str, int]:
    p = driver.properties(0)
    return {"L2": int(p.l2_bytes)} if p is not None and p.l2_bytes else {}


def parse_size(text: str) -> int:
    """'32K' -> 32768 (the format of /sys's cache ``size``); 0 where it is not a size."""
    text = text.strip()
    scale = _SCALE.get(text[-1:].upper(), 1)
    digits = text.rstrip("KMGkmg")
    return int(digits) * scale if digits.isdigit() else 0


def cpu_from_sys(root: Path | None = None) -> dict[str, int]:
    """Data and unified caches of every CPU, each instance counted once; {} without /sys."""
    instances: dict[str, dict[str, int]] = {}       # level -> shared_cpu_list -> bytes
    for index in sorted((root or SYS_CPU).glob("cpu[0-9]*/cache/index[0-9]*")):
        try:
            read = {name: (index / name).read_text().strip()
                    for name in ("level", "type", "size", "shared_cpu_list")}
        except OSError:
            continue
        if read["type"] == "Instruction":
            continue
        name = f"L{read['level']}" + ("d" if read["type"] == "Data" else "")
        instances.setdefault(name, {})[read["shared_cpu_list"]] = parse_size(read["size"])
    return {name: sum(sizes.values()) for name, sizes in instances.items() if sum(sizes.values()) > 0}


def cpu_from_getconf() -> dict[str, int]:
    """The fallback: getconf knows one instance's size of each level (Python's sysconf does not)."""
    out = {}
    for name, key, per_core in _GETCONF:
        try:
            text = subprocess.run(["getconf", key], capture_output=True, text=True, timeout=5).stdout
        except (OSError, subprocess.SubprocessError):
            break                                   # no getconf on this system
        size = int(text) if text.strip().isdigit() else 0
        if size > 0:
            out[name] = size * ((os.cpu_count() or 1) if per_core else 1)
    if not out:
        log.info("no cache sizes from the system: the bandwidth ceilings go rung by rung")
    return out
