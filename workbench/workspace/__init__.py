"""The workspace: a session's state without Qt, which the command line and the window both drive.

- ``experiment``: the settings of a sweep as a person gives them, and the one check that turns
  them into an engine spec (each problem named by its setting);
- ``events``: the run state and what a workspace tells its listeners;
- ``session``: :class:`Workspace`, the sweep's rows, the sets shown, the journal or results file,
  the run state and a lesson in progress.

Its layer sits under the command line and over the lessons (pyproject.toml's layers contract).
"""
from workbench.workspace.events import RunState
from workbench.workspace.experiment import Checked, Experiment, Problem, SettingsError, check, plan
from workbench.workspace.session import Busy, Workspace

__all__ = ["Busy", "Checked", "Experiment", "Problem", "RunState", "SettingsError", "Workspace", "check", "plan"]
