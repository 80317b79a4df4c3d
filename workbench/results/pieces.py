"""Rows and result sets as they cross to another process: in pickles of ``PIECE_ROWS`` rows each.

A pickle is made or read in one call that holds the GIL throughout, and a table's text columns
are pickled without a pause: 5,000 rows in one pickle were 17-28 ms of the window's GUI thread
waiting (issue 38). In pieces, the GUI thread gets the GIL back between any two. The spec process
(``workbench.views.spec_process``) and the exports' child (``workbench.measure.offload``) take them so.
"""
from __future__ import annotations

import dataclasses
import gc
import pickle
from typing import Any, Sequence

from workbench.core.lazy import lazy_module

pd = lazy_module("pandas")      # imported at first use

#: Rows per pickle: 500 rows take 1.5 ms to pickle, a compared set's 500 rows 1.2 ms.
PIECE_ROWS = 500


def pack(items: Sequence) -> list[bytes]:
    """``items`` (a list) in pickles of ``PIECE_ROWS`` each."""
    return [pickle.dumps(items[i:i + PIECE_ROWS], pickle.HIGHEST_PROTOCOL) for i in range(0, len(items), PIECE_ROWS)]


def read(piece: bytes) -> Any:
    """One piece unpickled, with the cyclic collector held off: a full collection started by its
    thousands of new objects scanned the window's whole heap within this one call (50 ms at a
    million objects); held off, it comes later, in a call of its own."""
    was = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(piece)
    finally:
        if was:
            gc.enable()


def unpack(pieces: Sequence[bytes]) -> list:
    return [item for piece in pieces for item in read(piece)]


def pack_set(rs) -> tuple:
    """A result set as (the set without its rows, its table's rows in pieces); whole where its
    table's index is not the plain 0..n-1 that the pieces joined make again."""
    frame = rs.frame
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
        return rs, []
    return (dataclasses.replace(rs, frame=frame.iloc[:0]),
            [pickle.dumps(frame.iloc[i:i + PIECE_ROWS], pickle.HIGHEST_PROTOCOL)
             for i in range(0, len(frame), PIECE_ROWS)])


def unpack_set(packed: tuple):
    shell, pieces = packed
    if not pieces:
        return shell
    # copy(): one block per dtype again, as the set's own table was.
    return dataclasses.replace(shell, frame=pd.concat([read(p) for p in pieces], ignore_index=True).copy())


@dataclasses.dataclass(frozen=True)
class PackedSets:
    """Result sets (a list of them, or ``one``) packed to cross to a child: ``Offload.run`` hands
    its target the sets again (:func:`workbench.measure.offload.call`)."""

    sets: tuple
    one: bool = False

    @classmethod
    def of(cls, sets) -> PackedSets:
        one = not isinstance(sets, (list, tuple))
        return cls(tuple(pack_set(rs) for rs in ([sets] if one else sets)), one)

    def unpacked(self):
        sets = [unpack_set(p) for p in self.sets]
        return sets[0] if self.one else sets
