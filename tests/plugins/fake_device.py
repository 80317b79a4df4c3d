"""The fake device of tests/helpers.py as a plug-in, so that an engine process has it too: its
backends (fake-a, fake-b, fake-cpu), said to be usable, and a workload holding three device
buffers per point."""
from helpers import fake_backends, fake_memory_workload

from workbench.api import register
from workbench.catalog import backends   # a test double: it fakes the probe, which no plug-in may

backends.BACKENDS.update(fake_backends())
register(fake_memory_workload())

_probe = backends.probe
backends.probe = lambda name, deep=True: (backends.Availability(True, "", "0-fake") if name.startswith("fake")
                                          else _probe(name, deep))
