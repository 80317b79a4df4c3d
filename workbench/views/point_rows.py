"""The row of each drawn point, found by its key without making the sets' tables.

A hover names a point by (set, backend, variant, size). Found by filtering each set's table, it
needed the live set's table made in the GUI process first (to_frame of every row: 0.2 s and more
at 5,000 points) and four column comparisons and a drop of duplicates per hover (15 ms). Here each
set's ok rows are indexed once by key, a live set's as its rows arrive (only the new ones), and a
hover is a dictionary look-up (issue 38, docs/PERFORMANCE.md).
"""
from __future__ import annotations

from dataclasses import is_dataclass
from operator import attrgetter, itemgetter
from typing import Any, Callable, Mapping, Sequence

from workbench.views.compare import Baseline

Key = tuple[str, str, float]        # (backend, variant, size)
_KEY_FIELDS = ("backend", "variant", "size", "status")


class _Index:
    """One set's ok rows by key, the first of each key (as ``compare.baseline_rows`` keeps it)."""

    def __init__(self, rows: Callable[[int], Sequence[Any]], count: Callable[[], int],
                 as_dict: Callable[[int], dict]) -> None:
        self._rows, self._count, self._as_dict = rows, count, as_dict
        self.at: dict[Key, int] = {}
        self.backends: set[str] = set()
        self.indexed = 0                # how many rows are in ``at`` already

    def catch_up(self) -> None:
        n = self._count()
        if n < self.indexed:            # other rows in the same list: indexed anew
            self.at, self.backends, self.indexed = {}, set(), 0
        if n == self.indexed:
            return
        for i, (backend, variant, size, status) in enumerate(self._rows(self.indexed)[:n - self.indexed],
                                                              start=self.indexed):
            if status == "ok":
                self.backends.add(backend)
                self.at.setdefault((backend, variant, float(size)), i)
        self.indexed = n

    def row(self, key: Key) -> dict | None:
        self.catch_up()
        i = self.at.get(key)
        return None if i is None else self._as_dict(i)


def _of_rows(rows: Sequence[Mapping[str, Any]], count: int | None) -> _Index:
    """A live set's rows (appended to while it is indexed): read up to ``count`` (None: all there are)."""
    def keys(start: int) -> list:
        new = rows[start:]
        # A live list holds the engine's Row objects: read as attributes, 5,000 rows index in
        # 2 ms; through their mapping's checked look-up, 11 ms, in the first hover after a sweep.
        as_attributes = bool(new) and is_dataclass(new[0])
        return list(map((attrgetter if as_attributes else itemgetter)(*_KEY_FIELDS), new))
    return _Index(keys, (lambda: len(rows)) if count is None else (lambda: count), lambda i: dict(rows[i]))


def _of_frame(frame) -> _Index:
    def keys(start: int) -> list:
        return list(zip(*(frame[c].tolist()[start:] for c in ("backend", "variant", "size", "status"))))
    return _Index(keys, lambda: len(frame), lambda i: frame.iloc[i].to_dict())


class PointRows:
    """The ok rows of the sets shown, by set and key: ``row`` for a point, ``baseline_row`` for its
    baseline's at the same size and variant (what ``compare.baseline_rows`` would choose)."""

    def __init__(self, indexes: Sequence[_Index]) -> None:
        self._sets = list(indexes)

    @classmethod
    def of_sets(cls, sets: Sequence[Any]) -> "PointRows":
        """Result sets (their frames)."""
        return cls([_of_frame(rs.frame) for rs in sets])

    @classmethod
    def of_parts(cls, parts: Any) -> "PointRows":
        """A session's ``SetParts``: the main set's rows as they are in the live list (indexed as
        they come), then the sets compared."""
        return cls([_of_rows(parts.rows, None), *(_of_frame(rs.frame) for rs in parts.compared)])

    def __len__(self) -> int:
        return len(self._sets)

    def catch_up_live(self) -> None:
        """Index the main set's rows not indexed yet (a live set's new ones); a compared set's table
        is indexed at its first look-up."""
        if self._sets:
            self._sets[0].catch_up()

    def row(self, set_index: int, backend: str, variant: str, size: float) -> dict | None:
        if not 0 <= set_index < len(self._sets):
            return None
        return self._sets[set_index].row((backend, variant, float(size)))

    def baseline_row(self, b: Baseline, set_index: int, variant: str, size: float) -> dict | None:
        """The baseline's row at ``size`` and ``variant`` for a point of ``set_index``: the named
        set's, else its own set's, else the first set's that has the backend."""
        order = [b.set_index] if b.set_index is not None else [set_index, *range(len(self._sets))]
        for i in order:
            if not 0 <= i < len(self._sets):
                continue
            index = self._sets[i]
            index.catch_up()
            if b.backend in index.backends:
                return index.row((b.backend, variant, float(size)))
        return None
