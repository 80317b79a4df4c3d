"""Loading a user's workload file without letting it take the program down.

A plug-in is imported first in a child process, with a time limit: one that
crashes the interpreter, calls ``os._exit``, hangs or raises at import is
reported in one line (:class:`~workbench.catalog.workloads.PluginError`) and never
reaches this process. Only a file that loads cleanly there is loaded here,
where the same checks run again (a clash with a built-in name, an unknown
backend), and one more that only this process can make: a name an earlier
plug-in declared is refused, never replaced. What its points do when they run
is the supervisor's business.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from workbench.catalog.defaults import PROBE_SIZES, InputsFootprint
from workbench.catalog.workloads import REGISTRY, PluginError, check_file, read_file
from workbench.measure.exits import describe_exit

log = logging.getLogger(__name__)

VET_TIMEOUT_S = 60.0
#: How much of the child's stderr is kept: its last lines say why it failed; a plug-in may write gigabytes.
STDERR_TAIL_BYTES = 64 * 1024
# The child tells its findings on a file of their own (argv[2], a descriptor it inherits), never on
# stdout: what a plug-in prints there at import, by print() or by C code, is the user's business
# (it goes to /dev/null: the file is imported again, in the caller, where its prints show).
_VET = """import json, os, sys
from workbench.catalog.workloads import REGISTRY, PluginError
said = os.fdopen(int(sys.argv[2]), "w")
try:
    names = REGISTRY.load_file(sys.argv[1])
except PluginError as exc:
    print(exc, file=sys.stderr); sys.exit(3)
print(json.dumps(["loaded", names]), file=said, flush=True)
for name in names:          # the default footprints' fits, made here rather than in the caller
    footprint = REGISTRY.get(name).footprint
    for itemsize in (4, 8) if hasattr(footprint, "fits") else ():
        try:
            fit = footprint.fit(itemsize)
        except Exception:
            fit = None
        print(json.dumps(["fit", name, itemsize, fit]), file=said, flush=True)
"""

#: What a vetting child found of each workload's footprint: {name: {itemsize: (bytes, power) or None}}.
Fits = dict[str, dict[int, "tuple[float, float] | None"]]


def vet(path: str | Path, timeout: float | None = None) -> Fits:
    """Import ``path`` in a child process; raise PluginError with the reason if that goes wrong.
    The child imports from this process's path, as the engine process does, and from nothing
    else: ``-P`` keeps its working folder off it, so no folder there shadows a module. Returns the
    footprint fits it made; one whose inputs crashed or hung the child after the import is missing."""
    timeout = VET_TIMEOUT_S if timeout is None else timeout     # read now, so a test can shorten it
    path = Path(path)
    check_file(path)            # a FIFO or a device: refused here, never opened by the child
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
    # Files, not pipes: nothing to drain while the child runs, and no plug-in's output fills memory.
    with tempfile.TemporaryFile() as findings, tempfile.TemporaryFile() as errors:
        try:
            code: int | None = subprocess.run(
                [sys.executable, "-P", "-c", _VET, str(path.resolve()), str(findings.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                pass_fds=(findings.fileno(),), timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            code = None
        said = _findings(findings)
        errors.seek(max(0, os.fstat(errors.fileno()).st_size - STDERR_TAIL_BYTES))
        stderr = errors.read().decode(errors="replace")
    if said and said[0][0] == "loaded":         # imported cleanly: what came after is the fits'
        fits: Fits = {}
        for _, name, itemsize, fit in said[1:]:
            fits.setdefault(name, {})[itemsize] = tuple(fit) if fit else None
        if code is None:
            log.warning("%s: its inputs at sizes %s did not come in %.0f s: its footprint is not known",
                        path, " and ".join(map(str, PROBE_SIZES)), timeout)
        return fits
    if code is None:
        raise PluginError(f"{path}: loading it did not finish in {timeout:.0f} s (does it wait for something?)")
    lines = [_printable(ln) for ln in stderr.strip().splitlines() if ln.strip()]
    if code == 3 and lines:
        raise PluginError(lines[-1])
    if code < 0:
        raise PluginError(f"{path}: loading it crashed the interpreter ({describe_exit(code)})")
    raise PluginError(f"{path}: loading it ended the interpreter (exit status {code})"
                      + (f": {lines[-1]}" if lines else ""))


def _findings(file) -> list:
    """The child's lines, each a JSON list; a line a killed child left unfinished is not one."""
    file.seek(0)
    said = []
    for line in file.read().decode(errors="replace").splitlines():
        try:
            said.append(json.loads(line))
        except ValueError:
            break
    return said


def _printable(text: str) -> str:
    """A line the child wrote, as plain text: a plug-in's escape sequences must not reach a terminal."""
    return "".join(c if c.isprintable() else "?" for c in text)


def seed(names: list[str], fits: Fits) -> None:
    """Give the workloads loaded here the fits their vetting child made: none is made here."""
    for name in names:
        footprint = REGISTRY.get(name).footprint
        if isinstance(footprint, InputsFootprint):      # a footprint the workload gave is its own
            footprint.fits.update(fits.get(name, {}))
            footprint.vetted = True


def digest(path: str | Path) -> str:
    """What the file holds now, as a hash ('' where it cannot be read, or is no regular file of a
    workload file's size: a FIFO or a device is never read)."""
    try:
        return hashlib.sha256(read_file(path)).hexdigest()
    except PluginError:
        return ""


@dataclass(frozen=True)
class Vetted:
    """A file vetted: the footprints its child fitted, and the contents it vetted ('' where the
    file changed while it was vetted, so that what loaded there is not known: vet it again)."""

    fits: Fits
    digest: str


def vet_contents(path: str | Path, timeout: float | None = None) -> Vetted:
    before = digest(path)
    fits = vet(path, timeout)
    return Vetted(fits, before if before and digest(path) == before else "")


def load(path: str | Path, exclusive: bool = True, tries: int = 3) -> list[str]:
    """Vet ``path`` in a child process, then load it here, as it was vetted; returns the workload
    names it declares. A file saved again meanwhile is vetted again: never loaded unvetted."""
    for _ in range(tries):
        vetted = vet_contents(path)
        if vetted.digest and digest(path) == vetted.digest:
            names = REGISTRY.load_file(path, exclusive=exclusive)
            seed(names, vetted.fits)
            return names
    raise PluginError(f"{path}: it kept changing while it was checked; save it and load it again")
