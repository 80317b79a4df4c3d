"""Where a sweep runs, from plain values: the Dask cluster named, checked before anything starts
(no Dask imported here; the command line's argparse options live in ``workbench.cli.parser``)."""
from __future__ import annotations

import logging

from workbench.cluster.connect import DEFAULT_TIMEOUT_S, Target
from workbench.cluster.places import parse_devices

log = logging.getLogger(__name__)


def target_of(cluster: str | None, tls_ca_file: str | None = None, tls_cert: str | None = None,
              tls_key: str | None = None, timeout_s: float | None = None, devices: str | None = None,
              in_process: bool = False, resume: bool = False) -> Target | None:
    """The cluster ``cluster`` names (None: this machine), with its TLS files and how long to try to
    reach it; ValueError (one line, naming the option) when the choices cannot work together."""
    tls = [tls_ca_file, tls_cert, tls_key]
    if cluster is None:
        if devices is not None or any(tls):
            raise ValueError("--devices and the TLS options go with --cluster")
        return None
    target = Target(cluster.strip(), *(t or "" for t in tls),
                    timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s)
    target.check()
    if in_process:
        raise ValueError("--in-process and --cluster: choose one")
    if devices is not None and resume:
        raise ValueError("--resume does not go with --devices yet: its rows are named by device")
    parse_devices(devices)
    return target
