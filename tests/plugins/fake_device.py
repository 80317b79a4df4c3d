"""The fake device of tests/helpers.py as a plug-in, so that an engine process has it too: its
backends (fake-a, fake-b, fake-cpu) and a workload holding three device buffers per point."""
from helpers import fake_backends, fake_memory_workload

from workbench.backends import BACKENDS
from workbench.registry import register

BACKENDS.update(fake_backends())
register(fake_memory_workload())
