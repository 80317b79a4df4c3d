"""The workspace: a session's state without Qt, which the command line and the window both drive.

- ``experiment``: the settings of a sweep as a person gives them, and the one check that turns
  them into an engine spec (each problem named by its setting);
- ``events``: the run state and what a workspace tells its listeners;
- ``session``: :class:`Workspace`, the sweep's rows, the sets shown, the journal or results file,
  the run state and a lesson in progress.

Its layer sits under the command line and over the lessons (pyproject.toml's layers contract).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.workspace.events import RunState
    from workbench.workspace.experiment import Checked, Experiment, Problem, SettingsError, check, plan
    from workbench.workspace.session import Busy, Workspace

# Each name is imported from its module at its first use (PEP 562), not with the package: the command
# line's signal handling (``workspace.signals``) and the experiment panel's check would otherwise
# load the session, the engine and every lesson, about 100 ms of a launch, before the window is made.
_HOME = {"RunState": "events", "Checked": "experiment", "Experiment": "experiment", "Problem": "experiment",
         "SettingsError": "experiment", "check": "experiment", "plan": "experiment", "Busy": "session",
         "Workspace": "session"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])


__all__ = ["Busy", "Checked", "Experiment", "Problem", "RunState", "SettingsError", "Workspace", "check", "plan"]
