"""The soak under faults (issue 18): command-line sweeps for a given time, with faults injected
while they run, checked at the end to hold every planned point exactly once.

    python3 benchmarks/fault_soak.py [--minutes 30] [--out DIR]

A cycle is one sweep plan (a workload, NumPy and Numba, sizes from 2^8 up, one dtype) written to
one results file. While it runs, at random moments, one of:

- the output folder goes away and comes back 2-4 s later (``chmod 555`` does not stop root, who
  runs this in CI and on the lab machines; taking the folder away fails every write alike);
- SIGTERM to the command: it must end within 2 s with exit 143, and the sweep is resumed with
  ``--resume``;
- the engine process (the command's child) is killed with SIGKILL, twice per cycle at most: the
  point in progress becomes an error row and the sweep goes on;
- the command is killed with SIGKILL and its journal (``.NAME.rows.jsonl``) damaged: a line that is
  not UTF-8, or a row whose size is not a number, appended; ``--resume`` must keep every other line.

The command is rerun with ``--resume`` until it exits 0 or 1 with every point in the file; then
the file is read and checked: every planned (backend, size) exactly once. The table printed last
says per cycle: points, faults of each kind, runs, and whether the file was whole.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = (("source_terms", "2^8:2^24:x1.4142"), ("reduction", "2^8:2^24:x1.4142"),
             ("stencil", "2^4:2^11:x1.4142"), ("flux", "2^4:2^11:x1.4142"))


def command(out: Path, workload: str, sizes: str, dtype: str, resume: bool) -> list[str]:
    argv = [sys.executable, "-m", "workbench", "run", "-w", workload, "-b", "numpy,numba", "-s", sizes,
            "-d", dtype, "--budget", "0.5", "-q", "-o", str(out)]
    return argv + (["--resume"] if resume else [])


def planned(workload: str, sizes: str, dtype: str) -> set[tuple[str, int]]:
    sys.path.insert(0, str(ROOT))
    from workbench.measure import engine
    from workbench.core.sizes import parse_sizes
    spec = engine.SweepSpec(workload, ("numpy", "numba"), tuple(parse_sizes(sizes)), dtype)
    return {(b, int(n)) for n, _, b in engine.plan(spec, engine.validate(spec))}


def engine_of(proc: subprocess.Popen) -> psutil.Process | None:
    try:
        kids = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        return None
    engines = [k for k in kids if "resource_tracker" not in " ".join(k.cmdline())]
    return engines[0] if engines else None


def cycle(folder: Path, workload: str, sizes: str, dtype: str, rng: random.Random, log) -> dict:
    out = folder / f"{workload}-{dtype}.json"
    want = planned(workload, sizes, dtype)
    faults = {"folder": 0, "sigterm": 0, "engine": 0, "journal": 0}
    runs, resume = 0, False
    while True:
        runs += 1
        folder.mkdir(exist_ok=True)
        proc = subprocess.Popen(command(out, workload, sizes, dtype, resume), cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        t_fault = time.monotonic() + rng.uniform(1.0, 6.0)
        while proc.poll() is None:
            time.sleep(0.1)
            if time.monotonic() < t_fault:
                continue
            kind = rng.choice(("folder", "sigterm", "engine", "journal"))
            if kind == "engine" and faults["engine"] >= 2:
                kind = "folder"
            if kind == "folder":
                away = folder.with_name(folder.name + ".away")
                os.replace(folder, away)
                time.sleep(rng.uniform(2.0, 4.0))
                os.replace(away, folder)
            elif kind == "sigterm":
                t0 = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                log(f"  SIGTERM: exit {proc.returncode} after {time.monotonic() - t0:.2f} s")
            elif kind == "journal":
                killed_and_damaged(proc, out, rng)
                log(f"  SIGKILL and a damaged journal line: exit {proc.returncode}")
            else:
                e = engine_of(proc)
                if e is None:
                    continue
                e.kill()
            faults[kind] += 1
            t_fault = time.monotonic() + rng.uniform(3.0, 10.0)
        stdout, stderr = proc.communicate()
        for line in stderr.splitlines():
            if "could not be read" in line:        # a damaged journal resumed: what it skipped
                log(f"  {line}")
        log(f"  run {runs}: exit {proc.returncode}; {stderr.strip().splitlines()[-1:] if stderr.strip() else ''}")
        resume = True
        if proc.returncode in (0, 1) and _points(out) >= len(want):
            break
        if runs > 40:
            break
    rows = json.loads(out.read_text())["rows"] if out.exists() else []
    keys = [(r["backend"], int(r["size"])) for r in rows]
    return {"workload": f"{workload} {dtype}", "planned": len(want), "rows": len(rows),
            "once": len(keys) == len(set(keys)) and set(keys) == want, "runs": runs, **faults}


DAMAGE = (b"\xff\xfe not UTF-8\n",
          b'{"workload": "x", "backend": "numpy", "size": "abc", "dtype": "float32", "variant": "", "status": "ok"}\n')


def killed_and_damaged(proc: subprocess.Popen, out: Path, rng: random.Random) -> None:
    """SIGKILL to the command (and its engine, which a kill leaves behind), then one bad line at the
    end of the journal it leaves: what a crash plus a damaged disk block would leave."""
    try:
        kids = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        kids = []
    proc.kill()
    proc.wait()
    for kid in kids:
        try:
            kid.kill()
        except psutil.Error:
            pass
    journal = out.with_name(f".{out.name}.rows.jsonl")
    if journal.is_file():
        with journal.open("ab") as f:
            f.write(rng.choice(DAMAGE))


def _points(out: Path) -> int:
    try:
        return len(json.loads(out.read_text())["rows"])
    except (OSError, ValueError, KeyError):
        return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="fault-soak-")))
    ap.add_argument("--seed", type=int, default=18)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    logf = open(a.out / "soak.log", "a")

    def log(text: str) -> None:
        print(text, flush=True)
        logf.write(text + "\n")
        logf.flush()
    end = time.monotonic() + 60 * a.minutes
    results, k = [], 0
    while time.monotonic() < end:
        workload, sizes = WORKLOADS[k % len(WORKLOADS)]
        dtype = ("float32", "float64")[(k // len(WORKLOADS)) % 2]
        folder = a.out / f"cycle-{k:02d}"
        log(f"cycle {k}: {workload} {dtype} {sizes}")
        results.append(cycle(folder, workload, sizes, dtype, rng, log))
        log(f"  -> {results[-1]}")
        k += 1
    lines = ["| cycle | planned | rows | every point once | runs | folder away | SIGTERM | engine killed "
             "| killed, journal damaged |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['workload']} | {r['planned']} | {r['rows']} | {'yes' if r['once'] else 'NO'} | "
                     f"{r['runs']} | {r['folder']} | {r['sigterm']} | {r['engine']} | {r['journal']} |")
    table = "\n".join(lines)
    log(table)
    shutil.rmtree(a.out / "cycle-tmp", ignore_errors=True)
    return 0 if all(r["once"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
