"""The command line: ``gpu-workbench [list | info | run | plot | report ...]``."""
from workbench.cli.commands import main

__all__ = ["main"]
