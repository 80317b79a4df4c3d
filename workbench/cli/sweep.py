"""What ``run`` and ``lesson`` share: the runner a sweep goes through, its time limit, ``--out``."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli.usage import UsageError, check_writable, say

if TYPE_CHECKING:        # imported with the engine when a sweep is planned, not for --help
    from workbench.measure.runner import Runner


#: The command line's name for each setting an experiment's check can name (``workbench.workspace``).
OPTION_OF = {"sizes": "--sizes", "device_memory_limit": "--device-memory-limit", "threads": "--threads"}


#: The TLS options of ``--cluster``, as the parser names them.
TLS_OPTIONS = ("tls_ca_file", "tls_cert", "tls_key")


def refuse(checked) -> None:
    """The first problem the workspace's check found, as a UsageError naming its option."""
    if checked.problems:
        problem = checked.problems[0]
        option = OPTION_OF.get(problem.setting)
        raise UsageError(f"{option}: {problem.text}" if option else problem.text)


def make_runner(args: argparse.Namespace) -> "Runner":
    """The supervised engine (with --in-process, the engine in this process; with --cluster, a Dask cluster)."""
    from workbench.measure.supervisor import InProcess, Supervisor
    timeout = point_timeout(args)
    target = cluster_target(args)
    if target is not None:
        from workbench.cluster.places import parse_devices
        from workbench.cluster.runner import ClusterRunner      # imports Dask only when a sweep starts
        return ClusterRunner(target, plugins=tuple(args.plugin), point_timeout_s=timeout,
                             devices=parse_devices(getattr(args, "devices", None)))
    if getattr(args, "in_process", False):
        return InProcess()
    return Supervisor(plugins=tuple(args.plugin), point_timeout_s=timeout)


def point_timeout(args: argparse.Namespace) -> float:
    """``--point-timeout`` in seconds, or the default; UsageError where it cannot work."""
    from workbench.measure.supervisor import DEFAULT_POINT_TIMEOUT_S
    timeout = args.point_timeout if args.point_timeout is not None else DEFAULT_POINT_TIMEOUT_S
    if not 0 < timeout < float("inf"):     # an endless limit would let a hung kernel hang the sweep
        raise UsageError(f"--point-timeout {args.point_timeout}: must be a positive, finite number of seconds")
    return timeout


def cluster_target(args: argparse.Namespace):
    """The Dask cluster ``--cluster`` names (None: this machine), checked; UsageError otherwise."""
    from workbench.cluster.options import target_of
    try:        # `lesson` has no cluster options: each is None (or False) there
        return target_of(getattr(args, "cluster", None), *(getattr(args, n, None) for n in TLS_OPTIONS),
                         timeout_s=getattr(args, "cluster_timeout", None), devices=getattr(args, "devices", None),
                         in_process=getattr(args, "in_process", False), resume=getattr(args, "resume", False))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def check_out(args: argparse.Namespace) -> None:
    """``--out`` is refused before any point runs: a name results.save would not take, a bad place."""
    if args.out is None:
        return
    if Path(args.out).suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"--out {args.out!r}: the file name must end in .csv or .json")
    check_writable(Path(args.out), "--out")


def results_out(args: argparse.Namespace):
    """``--out`` as a locked ResultsOut (None without one): an existing file is refused unless
    ``--force`` or ``--resume``, and so is a file another sweep is writing."""
    if args.out is None:
        return None
    from workbench.results.out import Refused, ResultsOut
    try:
        out = ResultsOut(args.out, force=args.force, resume=getattr(args, "resume", False))
        out.lock()
    except Refused as exc:
        raise UsageError(str(exc)) from None
    for line in out.notes:          # said once the file is taken: a refusal is the one line
        say(f"gpu-workbench: --out {args.out}: {line}")
    return out
