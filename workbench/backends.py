"""Deprecated path from before the layers split: a plug-in adds a backend with
``workbench.api.backend(name, like=...)``; the table lives in ``workbench.catalog.backends``."""
from workbench.core.moved import moved

#: What ``from workbench.backends import *`` gave before the split (its sessions moved below:
#: ``workbench.measure.sessions.open_session``).
NAMES = ("Backend", "Availability", "BACKENDS", "get_backend", "is_gpu", "engine_of", "probe", "probe_all")
__getattr__, __dir__ = moved(__name__, "workbench.catalog.backends", "workbench.api (backend(name, like=...))", NAMES)
