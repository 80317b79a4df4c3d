"""``gui`` (and no command at all): the window, found by its declared entry point."""
from __future__ import annotations

import sys

from workbench.cli.usage import EXIT_USAGE


#: The window sits above the command line, so the command line finds it by declaration (the
#: entry point pyproject.toml names) rather than importing a layer above its own.
WINDOW_ENTRY_POINTS = "gpu_workbench.window"


def open_window(plugins: tuple[str, ...] = ()) -> int:
    """``gpu-workbench`` with no command: the window, through its declared launcher."""
    import importlib.metadata
    found = list(importlib.metadata.entry_points(group=WINDOW_ENTRY_POINTS, name="window"))
    if not found:
        print("gpu-workbench: the window is not installed here (no 'window' entry point in "
              f"{WINDOW_ENTRY_POINTS}); reinstall with `pip install -e .`", file=sys.stderr)
        return EXIT_USAGE
    return found[0].load()([], plugins=plugins)
