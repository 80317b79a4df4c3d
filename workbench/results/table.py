"""The result table of a set being measured: its rows as they arrive, and the DataFrame they make.

A live window asks for the table a few times a second while points arrive. Built from every row
each time, it grew with the sweep (10 ms and more of the GUI thread at 500 points, every 150 ms);
here the rows already in the table stay there, and only the new ones are turned into a frame and
joined to it.

The window's plots read the table in a worker thread (``panels.plots``), while the GUI thread
appends rows and may read it too (an export, a lesson's statement): the cached frame is made
under a lock.
"""
from __future__ import annotations

import threading
from typing import Iterable, Iterator, Mapping, Any

from workbench.core.lazy import lazy_module

from workbench.results.rows import Row, to_frame

pd = lazy_module("pandas")      # imported at first use: not needed to show the window


class RowTable:
    """Rows (:class:`~workbench.results.rows.Row`) in the order they were measured, and their table.

    ``rows`` is the one list they live in: the table widget's model reads it in place."""

    def __init__(self, rows: Iterable[Mapping[str, Any]] = ()) -> None:
        self.rows: list[Row] = [Row.of(r) for r in rows]
        self._frame: pd.DataFrame | None = None
        self._framed = 0                 # how many of rows the cached frame holds
        self._lock = threading.Lock()    # the cache is made in one thread at a time
        self.epoch = 0                   # bumped where the rows are replaced: who copied them knows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> Row:
        return self.rows[index]

    def append(self, row: Mapping[str, Any]) -> Row:
        row = Row.of(row)
        self.rows.append(row)
        return row

    def replace(self, rows: Iterable[Mapping[str, Any]], frame: pd.DataFrame | None = None) -> None:
        """Other rows in place of these (in the same list, which the views hold); ``frame``: their
        table, where it is at hand (a file read is one already)."""
        with self._lock:
            self.rows[:] = [Row.of(r) for r in rows]
            self.epoch += 1
            self._frame, self._framed = (frame, len(self.rows)) if frame is not None else (None, 0)

    def clear(self) -> None:
        self.replace(())

    def frame_is_behind(self) -> bool:
        """Rows came since the last :meth:`frame`: what was drawn from it lacks them."""
        return self._framed < len(self.rows)

    def frame(self, chunk: int | None = None) -> pd.DataFrame:
        """The rows as a result table (``workbench.results.rows.to_frame``); the rows it already
        held are not converted again. ``chunk``: new rows converted that many per call, and without
        the lock, where a thread other than the GUI's makes it: to_frame holds the GIL, and with it
        the GUI thread, for as long as one call runs (5,000 rows at once: 136 ms, issue 38), and
        held throughout, the lock kept the GUI thread's ``replace`` (a sweep begun) waiting as long.
        A table made of rows replaced meanwhile is returned, not kept."""
        if chunk is not None and chunk <= 0:
            raise ValueError(f"chunk is a number of rows, above 0: not {chunk}")
        with self._lock:
            rows = self.rows[:]          # appended to meanwhile by the GUI thread: these, as they are now
            if chunk is None:
                self._frame, self._framed = _joined(self._frame, self._framed, rows, len(rows)), len(rows)
                return self._frame
            epoch, base, framed = self.epoch, self._frame, self._framed
        made = _joined(base, framed, rows, chunk)
        with self._lock:
            if self.epoch == epoch and self._framed == framed:
                self._frame, self._framed = made, len(rows)
        return made


def chunked_frame(rows: list[Row], chunk: int) -> pd.DataFrame:
    """The table of ``rows`` made ``chunk`` rows per ``to_frame`` call, then joined: a thread other
    than the GUI's holds the GIL for one chunk at a time, not for the whole table."""
    if chunk <= 0:
        raise ValueError(f"chunk must be a positive number of rows, not {chunk}")
    return _joined(None, 0, rows, chunk)


def _joined(base: pd.DataFrame | None, framed: int, rows: list[Row], step: int) -> pd.DataFrame:
    """The table of ``rows``, whose first ``framed`` are ``base`` already, the rest made ``step`` a call."""
    n = len(rows)
    if base is None or framed > n:
        base, framed = None, 0
    if base is not None and framed == n:
        return base
    parts = ([base] if framed else []) + [to_frame(rows[i:i + step]) for i in range(framed, n, max(step, 1))]
    if not parts:
        return to_frame(())
    # copy(): the joined table in one block per dtype again (to_frame's).
    return pd.concat(parts, ignore_index=True).copy() if len(parts) > 1 else parts[0]
