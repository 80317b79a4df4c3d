"""Deprecated path: the registry lives in ``workbench.catalog.workloads``; users import ``workbench.api``."""
from workbench.core.moved import moved

__getattr__, __dir__ = moved(__name__, "workbench.catalog.workloads", "workbench.api")
