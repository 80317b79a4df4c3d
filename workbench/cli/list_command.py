"""``list`` and ``info``: what this machine can run, and its environment record."""
from __future__ import annotations

from workbench.cli.usage import EXIT_OK


def cmd_list() -> int:
    from workbench.catalog.backends import BACKENDS, probe_all
    from workbench.catalog.workloads import REGISTRY
    avail = probe_all()
    print("Backends:")
    for name, b in BACKENDS.items():
        a = avail[name]
        state = f"usable ({a.version})" if a.usable else f"not usable: {a.reason}"
        print(f"  {name:<16} {b.device:<4} {state}")
    if not any(a.usable for n, a in avail.items() if BACKENDS[n].device == "gpu"):
        cpu = [n for n, a in avail.items() if a.usable and BACKENDS[n].device == "cpu"]
        print(f"\nThis machine runs the CPU backends ({', '.join(cpu)}). The GPU backends need an NVIDIA GPU;"
              "\non a machine with one, the cuda12 or cuda13 extra adds them (README: Installing for a GPU "
              "workstation).")
    print("\nWorkloads:")
    for w in REGISTRY.all():
        print(f"  {w.name:<13} {w.title} [{w.kind}; size = {w.size_unit}]")
        print(f"  {'':<13} backends: {', '.join(w.backends)}"
              + (f"; variants: {', '.join(w.variants)}" if w.variants != ("",) else ""))
    if REGISTRY.load_errors:
        print("\nPlug-ins that failed to load:\n  " + "\n  ".join(REGISTRY.load_errors))
    return EXIT_OK


def cmd_info() -> int:
    from workbench.measure.environment import format_record, record
    print(format_record(record()))
    return EXIT_OK
