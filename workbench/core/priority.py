"""The window's background processes run below its priority: the spec process and the exports'
and reads' child (``workbench.views.spec_process``, ``workbench.measure.offload``).

On a 2-core machine, a child reading 5,000 rows or making a chart's spec took a core at the same
weight as the GUI thread, which then waited for one with nothing else to wait for (docs/
PERFORMANCE.md, issue 38). Lowered, the child still has every core the window leaves idle.
"""
from __future__ import annotations

import os

#: How much lower a background process's scheduling priority is than the window's (``os.nice``).
NICE = 10


def lower() -> None:
    """This process below the window's priority; where it cannot be (no ``nice`` on Windows, or
    not allowed), it runs as before."""
    try:
        os.nice(NICE)
    except (AttributeError, OSError):
        pass
