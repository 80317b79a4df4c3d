"""Deprecated path from before the layers split: plug-ins import ``workbench.api``."""
from workbench.core.moved import moved

__getattr__, __dir__ = moved(__name__, "workbench.catalog.workloads", "workbench.api")
