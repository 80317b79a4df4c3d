"""The command line: ``gpu-workbench [list | info | run | plot | report ...]``."""
from workbench.cli.main import main

__all__ = ["main"]
