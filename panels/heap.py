"""The window's heap: the objects of the modules it has imported, kept out of Python's full collections.

A full collection (generation 2) scans every object the collector tracks, in whichever thread
allocated when one came due: in the window, the GUI thread, 20 to 50 ms at a time at 5,000 points
(83,000 objects at the first frame, 36,000 more once pandas is imported: 28 and 13 ms a scan on
this 2-core machine, issue 38). Those objects live as long as the process, and ``gc.freeze`` takes
them out of every later scan. It is done where the modules imported have grown since the last
time (the first frame; the first sweep or file, which bring pandas): a handful of times a session.
What is frozen is never collected as a cycle: garbage of a cycle alive at that moment would stay,
which is why only the window does it, never the library (a notebook's heap is its user's).
"""
from __future__ import annotations

import gc
import sys

_modules = 0      # how many modules were imported at the last freeze


def settle(always: bool = False) -> bool:
    """Freeze what the collector tracks now, if modules were imported since the last time (or
    ``always``: the window is ready, all it keeps is built); whether it did."""
    global _modules
    if len(sys.modules) <= _modules and not always:
        return False
    _modules = len(sys.modules)
    gc.freeze()
    return True
