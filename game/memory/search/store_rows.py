"""Which row of a :class:`~game.memory.search.hybrid.HybridIndex`'s table each row of an in-process collection holds.

A dense search over the mirror (``mirror.MirroredStore.query_rows``) answers with
rows of its collection copy. Mapping each hit to the index's own row through its
vector id cost a dictionary lookup per hit: for the 1,000 hits of a memory search
in ``bench/turn_overhead.py``'s game, 0.5 ms of cache misses, twice a turn. This
keeps the mapping as an array instead, brought up to date with what changed since
the last search: the copy's rows added since (the copy only appends) and the
vector ids whose table row changed (:meth:`StoreRows.changed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import cast

import numpy as np


class StoreRows:
    """The table row of each row of one collection copy (-1: not a current vector of the index).

    Read and updated under the index's lock.
    """

    def __init__(self) -> None:
        self._ids: Sequence[str | None] | None = None
        """The copy's ids by row (its own list: a rebuilt copy is another list) that :attr:`_map` maps."""
        self._epoch: int | None = None
        """The table's epoch :attr:`_map` holds rows of (a compaction renumbers them)."""
        self._map = np.zeros(0, dtype=np.int64)
        self._mapped = 0
        self._row_of: dict[str, int] = {}
        """Vector id -> its (latest) row in the copy, for the rows mapped so far."""
        self._changed: set[str] = set()

    def changed(self, vector_id: str) -> None:
        """``vector_id`` now maps to another table row, or to none."""
        if self._ids is not None:  # else the first mapping reads everything anyway
            self._changed.add(vector_id)

    def table_rows(
        self, ids: Sequence[str | None], copy_rows: np.ndarray, vector_row: dict[str, int], epoch: int
    ) -> np.ndarray:
        """The table row of each of ``copy_rows`` (rows of the copy whose ids by row are ``ids``), given
        ``vector_row`` (vector id -> table row in table ``epoch``, for the index's current vectors)."""
        if ids is not self._ids or epoch != self._epoch:
            self._ids, self._epoch, self._mapped = ids, epoch, 0
            self._map = np.zeros(0, dtype=np.int64)
            self._row_of = {}
            self._changed.clear()
        size = len(ids)
        if size > self._mapped:
            new = ids[self._mapped : size]
            if size > len(self._map):
                grown = np.full(max(size, 2 * len(self._map), 1024), -1, dtype=np.int64)
                grown[: self._mapped] = self._map[: self._mapped]
                self._map = grown
            self._map[self._mapped : size] = np.fromiter(
                map(vector_row.get, cast("list[str]", new), repeat(-1)), dtype=np.int64, count=len(new)
            )
            row_of = self._row_of
            for offset, vector_id in enumerate(new, self._mapped):
                if vector_id is not None:
                    row_of[vector_id] = offset
            self._mapped = size
        if self._changed:
            for vector_id in self._changed:
                row = self._row_of.get(vector_id)
                if row is not None:
                    self._map[row] = vector_row.get(vector_id, -1)
            self._changed.clear()
        found: np.ndarray = self._map[copy_rows]
        return found
