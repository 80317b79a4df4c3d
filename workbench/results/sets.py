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
from workbench.results.pieces import pack, pack_set, unpack, unpack_set
from workbench.results.table import chunked_frame

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
    return [main_set(frame, origin, environment, settings), *compared]


def main_set(frame: pd.DataFrame, origin: ResultSet | None, environment: Mapping[str, Any],
             settings: Mapping[str, Any]) -> ResultSet:
    """The main set of ``frame``, its rows' table, empty or not."""
    if origin is None:        # measured here: this machine's record, the sweep's settings
        return result_files.live(frame, environment, settings)
    return dataclasses.replace(origin, frame=frame)


#: Rows made a table per call (``table.chunked_frame``): to_frame holds the GIL as long as one call
#: runs, where a thread other than the GUI's makes a table, or the exports' child.
CHUNK_ROWS = 500


@dataclasses.dataclass(frozen=True)
class PackedParts:
    """A session's sets unmade (``workbench.results.sets.SetParts``) packed to cross to a child:
    the main set's rows as they are, in pieces, and the sets compared packed. The child makes the
    tables (``unpacked``): made in the window's process by the job's thread, the main set's table
    held the GIL against the GUI thread (issue 38, "export results" in docs/PERFORMANCE.md).
    ``one``: the main set alone."""

    rows: tuple                 # pickles of the main set's rows
    origin: Any                 # the file they were read from, without its table; None: measured here
    compared: tuple             # each compared set, packed (``pack_set``)
    environment: Any
    settings: Any
    one: bool = False

    @classmethod
    def of(cls, parts, one: bool = False) -> PackedParts:
        origin = parts.origin
        if origin is not None:      # its table is the rows': sent as rows, not twice
            origin = dataclasses.replace(origin, frame=origin.frame.iloc[:0])
        return cls(tuple(pack(list(parts.rows[:parts.count]))), origin,
                   () if one else tuple(pack_set(rs) for rs in parts.compared),
                   dict(parts.environment), dict(parts.settings), one)

    def unpacked(self):
        frame = chunked_frame(unpack(self.rows), CHUNK_ROWS)
        if self.one:            # made even where it has no rows (a sweep stopped before its first
            return main_set(frame, self.origin, self.environment, self.settings)    # beside sets compared)
        return sets_of(frame, self.origin, [unpack_set(p) for p in self.compared], self.environment,
                       self.settings)
