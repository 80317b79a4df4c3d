"""What a session's result sets are made of: the main set's rows, where they came from, and the
sets compared with it; and the sets they make.

The window's workspace makes its sets from these, and so does the process that makes the charts'
specs (``workbench.views.spec_process``), from the parts it was sent: both through :func:`sets_of`,
so that the two never make different sets of the same rows.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from workbench.results import files as result_files
from workbench.results.files import ResultSet

if TYPE_CHECKING:        # annotations only: importing this module needs no pandas
    import pandas as pd


@dataclass(frozen=True)
class SetParts:
    """A session's sets as they are now, unmade: cheap to take (nothing is copied or converted)."""

    rows: Sequence[Any]                 # the main set's rows: the live list, read up to ``count``
    count: int
    epoch: int                          # the rows' table's: changes where they are replaced, not appended to
    origin: ResultSet | None            # the file they were read from; None: measured here
    compared: tuple[ResultSet, ...]     # the sets overlaid on the main one
    environment: Mapping[str, Any]      # this machine's record (a set measured here)
    settings: Mapping[str, Any]         # the sweep's settings (a set measured here)


def sets_of(frame: pd.DataFrame, origin: ResultSet | None, compared: Sequence[ResultSet],
            environment: Mapping[str, Any], settings: Mapping[str, Any]) -> list[ResultSet]:
    """The main set (``frame``: its rows' table) first, then those compared; [] where there is none."""
    if frame.empty and origin is None and not compared:
        return []
    if origin is None:        # measured here: this machine's record, the sweep's settings
        main = result_files.live(frame, environment, settings)
    else:
        main = dataclasses.replace(origin, frame=frame)
    return [main, *compared]
