"""Which worker measures which point: a sweep's points as tasks, each restricted to the workers that
can run it (plain data: no Dask)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.catalog.backends import is_gpu
from workbench.cluster import places
from workbench.cluster.connect import ClusterError

if TYPE_CHECKING:          # the engine (NumPy and the registry) is imported by the sweep, not by this module
    from workbench.measure.engine import SweepSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Task:
    """One point on one device: what is submitted, and how its rows are named."""

    index: int               # its place in the sweep as the runner announces it
    point: int               # its index in the engine's plan (workbench.measure.engine.plan)
    name: str                # the backend, or the series name 'cupy @ node2:GPU1' when devices are named
    backend: str
    size: int
    variant: str
    gpu: bool
    place: str = ""          # the device it must run on ('' : any worker that can run its backend)
    workers: tuple[str, ...] | None = None


def tasks_of(spec: SweepSpec, points: list, skip: set[int], workers: list[places.WorkerInfo], asked: set[str],
             devices: tuple[str, ...] | None) -> list[Task]:
    """The tasks of a sweep's ``points`` (less ``skip``): without ``devices``, one per point on any
    worker that can run its backend; with them, one per point and device. ClusterError (one line)
    when a device named is not in the cluster or cannot run a backend."""
    tasks: list[Task] = []
    if devices is None:           # spread: any worker that can run the backend
        for i, (size, variant, backend) in enumerate(points):
            if i in skip:
                continue
            able = tuple(w.address for w in workers if not w.usable.get(backend, "?"))
            # Unrestricted only when every worker asked can run it (a worker its nanny restarts
            # under a new address may then take the points on): never a worker that failed its
            # survey or did not answer it.
            restrict = None if set(able) == asked else able
            tasks.append(Task(i, i, backend, backend, size, variant, is_gpu(backend), "", restrict))
        return tasks
    unknown = places.unknown_devices(workers, devices)
    if unknown:
        known = sorted({w.gpu_place for w in workers if w.gpu} | {w.cpu_place for w in workers})
        raise ClusterError(f"no worker has {', '.join(unknown)}; the cluster's devices: {', '.join(known)}")
    by_backend = {}
    for backend in spec.backends:
        chosen = places.choose_places(workers, devices, is_gpu(backend))
        chosen = [p for p in chosen if places.workers_for(workers, p, backend, is_gpu(backend))]
        if not chosen:
            raise ClusterError(f"{backend}: none of the devices named ({', '.join(devices)}) can run it")
        by_backend[backend] = chosen
    for i, (size, variant, backend) in enumerate(points):
        if i in skip:
            continue
        for place in by_backend[backend]:
            tasks.append(Task(len(tasks), i, places.series_name(backend, place), backend, size, variant,
                              is_gpu(backend), place,
                              tuple(places.workers_for(workers, place, backend, is_gpu(backend)))))
    return tasks
