"""The fake device of tests/helpers.py as a plug-in, so that an engine process has it too: its
backends (fake-a, fake-b, fake-cpu), said to be usable, and a workload holding three device
buffers per point."""
from helpers import fake_backends, fake_memory_workload

from workbench.catalog import backends
from workbench.catalog.workloads import register

backends.BACKENDS.update(fake_backends())
register(fake_memory_workload())

_probe = backends.probe
backends.probe = lambda name, deep=True: (backends.Availability(True, "", "0-fake") if name.startswith("fake")
                                          else _probe(name, deep))
