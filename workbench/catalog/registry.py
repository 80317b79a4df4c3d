"""Deprecated path: the registry lives in ``workbench.catalog.workloads``; users import ``workbench.api``."""
from workbench.core.moved import moved

#: What ``from workbench.registry import *`` gave before the split.
NAMES = ("KINDS", "Phases", "Context", "Implementation", "Workload", "max_relative_error", "PluginError",
                 "Registry", "REGISTRY", "register", "shown", "ENTRY_POINT_GROUP")
__getattr__, __dir__ = moved(__name__, "workbench.catalog.workloads", "workbench.api", NAMES)
