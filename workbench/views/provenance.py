"""Where a result set was measured, said in a few words: the chart's stamp and the compare labels.

Both come from the same facets (workload, dtype, host memory, CPU, GPU, library versions,
date): a chart of one set is stamped with all of them; sets compared on one chart are
labelled by the facets that differ between them and stamped with those they share.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

from workbench.results.files import ResultSet

log = logging.getLogger(__name__)

#: The libraries a stamp names, by the backends that use them (first match wins); numpy always.
_LIBRARIES = (("numpy", ("numpy",)), ("numba-cuda", ("numba-cuda",)), ("numba", ("numba",)),
              ("pandas", ("pandas",)), ("cupy", ("cupy-cuda13x", "cupy-cuda12x")),
              ("cudf", ("cudf-cu13", "cudf-cu12")))
#: Facets in the order a stamp reads them; labels use the same order.
ORDER = ("workload", "dtype", "host memory", "machine", "cpu", "gpu", "libraries", "date")


def facets(rs: ResultSet) -> dict[str, str]:
    """The set's facets as short text; a facet the set cannot tell is left out."""
    frame = rs.frame
    out: dict[str, str] = {}
    out["workload"] = _join(frame["workload"])
    out["dtype"] = _join(frame["dtype"])
    memory = _join(frame["host_memory"])
    if memory:
        out["host memory"] = f"{memory} host memory"
    if rs.host:
        out["machine"] = rs.host
    devices = _texts(frame["device"])
    cpus = [d for d in devices if d.startswith("CPU")] or \
        ([f"CPU: {rs.environment['cpu']}"] if rs.environment.get("cpu") else [])
    if cpus:
        out["cpu"] = ", ".join(cpus)
    gpus = [d for d in devices if d.startswith("GPU")]
    if gpus:
        out["gpu"] = ", ".join(gpus)
    out["libraries"] = ", ".join(f"{name} {version}" for name, version in _library_versions(rs).items())
    if rs.written:
        out["date"] = rs.written[:10]
    return {k: v for k, v in out.items() if v}


def _texts(values) -> list[str]:
    """The distinct non-empty strings, in order (a live row may hold NaN where a file holds "").
    ``unique`` first, in pandas' own loop: a column of Arrow strings read in Python took 30 ms at
    5,000 rows, held in the GUI thread where compared sets are shown (issue 38)."""
    values = values.unique() if hasattr(values, "unique") else values
    return [v for v in dict.fromkeys(values) if isinstance(v, str) and v]


def _join(values) -> str:
    return ", ".join(_texts(values))


def _library_versions(rs: ResultSet) -> dict[str, str]:
    """Versions of numpy and of the libraries behind the backends in the set, as recorded."""
    recorded = rs.environment.get("libraries")
    if not isinstance(recorded, dict):
        return {}
    backends = set(rs.frame["backend"].unique()) | {"numpy"}
    out = {}
    for prefix, packages in _LIBRARIES:
        used = any(b == prefix or b.startswith(prefix + "-") for b in backends)
        # "numba-cuda" starts with "numba-": numba itself only counts where a backend is "numba".
        if prefix == "numba":
            used = "numba" in backends
        for package in packages if used else ():
            if package in recorded:
                out[package] = str(recorded[package])
                break
    return out


def stamp(sets: Sequence[ResultSet], extra: str = "") -> str:
    """One line naming what every set shares (all facets, for a single set), then ``extra``."""
    shared = _shared(sets)
    parts = [shared[k] for k in ORDER if k in shared and k != "machine"]
    return " · ".join(parts + ([extra] if extra else []))


def _shared(sets: Sequence[ResultSet]) -> dict[str, str]:
    every = [facets(rs) for rs in sets]
    if not every:
        return {}
    return {k: v for k, v in every[0].items() if all(f.get(k) == v for f in every[1:])}


def labels(sets: Sequence[ResultSet]) -> list[str]:
    """A label per set naming what differs between the sets (machine, GPU, dtype, versions, ...).

    Libraries are compared one by one, so that the label says "cupy-cuda13x 14.2.0" and not
    the whole list. Sets that differ in nothing recorded are told apart by their file names,
    and failing that by their position.
    """
    if len(sets) <= 1:
        return ["" for _ in sets]
    every = [facets(rs) for rs in sets]
    libs = [_library_versions(rs) for rs in sets]
    names = []
    for key in ORDER:
        if key in ("libraries", "date"):
            continue
        if len({f.get(key, "") for f in every}) > 1:
            names.append(key)
    lib_names = [p for p in dict.fromkeys(p for lv in libs for p in lv) if len({lv.get(p, "") for lv in libs}) > 1]
    out = []
    for f, lv in zip(every, libs):
        parts = [f.get(k, f"no {k}") for k in names]
        if "machine" in names and "cpu" in names:   # the CPU says more than a host name
            parts.remove(f.get("machine", "no machine"))
        parts += [f"{p} {lv[p]}" if p in lv else f"no {p}" for p in lib_names]
        out.append(", ".join(parts))
    if len(set(out)) < len(out):   # nothing recorded tells some sets apart: their files do
        tags = [Path(rs.source).stem if rs.source else f"set {i}" for i, rs in enumerate(sets, 1)]
        if len(set(tags)) < len(tags):
            tags = [f"set {i}" for i in range(1, len(sets) + 1)]
        out = [f"{o} ({t})" if o else t for o, t in zip(out, tags)]
    return out
