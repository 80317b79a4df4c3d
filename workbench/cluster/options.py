"""The command line's cluster options, and the runner they ask for (no Dask imported here)."""
from __future__ import annotations

import argparse
from typing import Any

from workbench.cluster.connect import DEFAULT_TIMEOUT_S, Target
from workbench.cluster.places import parse_devices


def add_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("on a Dask cluster (pip install 'gpu-workbench[cluster]'; docs/CLUSTER.md)")
    g.add_argument("--cluster", metavar="ADDRESS",
                   help="send the points to the Dask workers of the scheduler at ADDRESS (tcp://HOST:8786, "
                        "tls://HOST:8786), or 'local' for a cluster on this machine bound to 127.0.0.1 "
                        "(one worker per GPU where there are GPUs and dask-cuda)")
    g.add_argument("--devices", metavar="LIST",
                   help="with --cluster: measure every point on each device named (HOST:GPU1,HOST:CPU), or "
                        "on 'all' the cluster's devices, each its own series ('cupy @ HOST:GPU1'); without it "
                        "the points are spread over the workers")
    g.add_argument("--tls-ca-file", metavar="FILE", help="with a tls:// scheduler: the CA certificate")
    g.add_argument("--tls-cert", metavar="FILE", help="with a tls:// scheduler: this client's certificate")
    g.add_argument("--tls-key", metavar="FILE", help="with a tls:// scheduler: this client's private key")
    g.add_argument("--cluster-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"how long to try to reach the scheduler (default {DEFAULT_TIMEOUT_S:g})")


def target_of(args: argparse.Namespace) -> Target | None:
    """The cluster the arguments name (None: this machine); ValueError (one line) when they cannot work."""
    cluster = getattr(args, "cluster", None)
    tls = [getattr(args, n, None) for n in ("tls_ca_file", "tls_cert", "tls_key")]
    if cluster is None:
        if getattr(args, "devices", None) is not None or any(tls):
            raise ValueError("--devices and the TLS options go with --cluster")
        return None
    target = Target(cluster.strip(), *(t or "" for t in tls), timeout_s=args.cluster_timeout)
    target.check()
    if getattr(args, "in_process", False):
        raise ValueError("--in-process and --cluster: choose one")
    if getattr(args, "devices", None) is not None and getattr(args, "resume", False):
        raise ValueError("--resume does not go with --devices yet: its rows are named by device")
    parse_devices(getattr(args, "devices", None))
    return target


def runner(args: argparse.Namespace, target: Target, point_timeout_s: float, journal: Any = None):
    from workbench.cluster.runner import ClusterRunner
    return ClusterRunner(target, plugins=tuple(args.plugin), point_timeout_s=point_timeout_s,
                         devices=parse_devices(getattr(args, "devices", None)), journal=journal)
