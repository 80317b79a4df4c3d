"""Where a point ran, in plain data: a worker's host and GPU, a device's name, a series' name.

A *place* names a device the way a lab says it: ``node2:GPU1`` (GPU 1 of host node2) or
``node2:CPU`` (its processors). A sweep that names several devices measures each of its points
on each of them; its rows then carry the series name ``cupy @ node2:GPU1`` as their backend, so
that every chart, legend, export and verdict, which all key series by backend, tells the devices
apart as they tell backends apart. No Dask here: the command line and the window read these too.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

#: Between a backend and the device it ran on, in a series name.
SEP = " @ "


@dataclass(frozen=True)
class WorkerInfo:
    """What the survey of one Dask worker found (``workbench.cluster.task.survey``)."""

    address: str
    host: str
    gpu: str = ""                  # the GPU this worker's points use ('' : none), as CUDA names it
    pid: int = 0
    usable: dict = field(default_factory=dict, hash=False)   # backend -> '' (usable) or why not

    @property
    def gpu_place(self) -> str:
        return gpu_place(self.host, self.gpu) if self.gpu else ""

    @property
    def cpu_place(self) -> str:
        return f"{self.host}:CPU"

    def place_for(self, gpu_backend: bool) -> str:
        """The device a point of this worker measures: its GPU for a GPU backend, else its host's CPU."""
        return self.gpu_place if gpu_backend and self.gpu else self.cpu_place


def gpu_place(host: str, gpu: str) -> str:
    """``node2:GPU1``; a GPU named by UUID keeps it (``node2:GPU-5f2a...``)."""
    return f"{host}:GPU{gpu}" if gpu.isdigit() else f"{host}:{gpu}"


def this_gpu(gpus_here: int) -> str:
    """The GPU this process's CUDA work goes to: the first of CUDA_VISIBLE_DEVICES (dask-cuda gives
    each worker its own GPU first), else device 0 where there is one, else ''."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        first = visible.split(",")[0].strip()
        return first if first and first != "-1" and gpus_here else ""
    return "0" if gpus_here else ""


def host_name() -> str:
    return socket.gethostname()


def series_name(backend: str, place: str) -> str:
    return f"{backend}{SEP}{place}" if place else backend


def backend_of(name: str) -> str:
    """The backend of a series name (``cupy @ node2:GPU1`` -> ``cupy``); a plain backend as it is."""
    return name.split(SEP, 1)[0]


def place_of(name: str) -> str:
    """The device of a series name ('' for a plain backend)."""
    return name.split(SEP, 1)[1] if SEP in name else ""


def parse_devices(text: str | None) -> tuple[str, ...] | None:
    """``--devices``: None (spread the points over the workers), ``("all",)``, or the places named."""
    if text is None:
        return None
    names = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    if not names:
        raise ValueError("name at least one device (node2:GPU1, node2:CPU) or 'all'")
    if "all" in names and len(names) > 1:
        raise ValueError("'all' stands alone")
    for name in names:
        if name != "all" and ":" not in name:
            raise ValueError(f"{name!r} is not a device: write HOST:GPU<n> or HOST:CPU (see --devices all)")
    return names


def choose_places(workers: list[WorkerInfo], devices: tuple[str, ...], gpu_backend: bool) -> list[str]:
    """The places a backend's points run on when a sweep names ``devices``: a GPU backend on each
    GPU named (every GPU of the cluster for ``all``); a CPU backend on the CPU of each host named
    (a GPU named brings its host's CPU), so that a host's CPU and its GPUs are compared."""
    known_gpus = list(dict.fromkeys(w.gpu_place for w in workers if w.gpu))
    known_cpus = list(dict.fromkeys(w.cpu_place for w in workers))
    if devices == ("all",):
        return known_gpus if gpu_backend else known_cpus
    if gpu_backend:
        return [d for d in devices if d in known_gpus]
    hosts = dict.fromkeys(d.rsplit(":", 1)[0] for d in devices)
    return [c for c in known_cpus if c.rsplit(":", 1)[0] in hosts]


def unknown_devices(workers: list[WorkerInfo], devices: tuple[str, ...]) -> list[str]:
    """The devices named that no worker of the cluster has."""
    known = {w.gpu_place for w in workers if w.gpu} | {w.cpu_place for w in workers}
    return [d for d in devices if d != "all" and d not in known]


def workers_for(workers: list[WorkerInfo], place: str, backend: str, gpu_backend: bool) -> list[str]:
    """The addresses of the workers that can measure ``backend`` on ``place``."""
    return [w.address for w in workers
            if not w.usable.get(backend, "?") and w.place_for(gpu_backend) == place]
