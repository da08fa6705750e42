"""Metadata as numpy columns, row-aligned with an index's documents, updated on upsert.

What a hybrid index filters with (``hybrid.HybridIndex.table``): a Chroma-style
``where`` over every document as vectorised comparisons, no Python loop per
document (``tests/test_memory_ranking.py`` holds it equal to the list-based
table it replaced).
"""

from __future__ import annotations

from typing import Any

import numpy as np

Where = dict[str, Any]
"""A Chroma-style filter: ``{key: value}``, ``{key: {"$eq"|"$lte": value}}``, or ``{"$and": [...]}``."""


def where_clauses(where: Where | None) -> list[tuple[str, str, Any]]:
    """``where`` as (key, operator, value) triples: equality, ``$eq`` and ``$lte``, joined by AND."""
    if not where:
        return []
    clauses = where["$and"] if "$and" in where else [{k: v} for k, v in where.items()]
    out: list[tuple[str, str, Any]] = []
    for clause in clauses:
        for key, expected in clause.items():
            if isinstance(expected, dict):
                for op, value in expected.items():
                    if op not in ("$eq", "$lte"):
                        raise ValueError(f"unsupported where operator {op!r}")
                    out.append((key, op, value))
            else:
                out.append((key, "$eq", expected))
    return out


class MetadataTable:
    """Metadata rows by id, filtered with ``where`` clauses: the one ``where`` evaluator.

    Each metadata key is a column kept as numpy arrays, updated in place by an
    upsert (capacity doubles when full): the values (objects), the numbers
    (NaN for anything else) and a code per distinct value, so a filter is one
    vectorised comparison per clause over arrays that are never rebuilt. Over
    the 11,000 memories of a 10,000-turn game, rebuilding the arrays from
    Python lists after every upsert cost ~7 ms a search (``bench/turn_overhead.py``).
    Deleted rows are tombstones until more than half the table is dead, then
    the table is compacted (``epoch`` counts compactions: row numbers change).
    Not thread-safe: its owner locks.
    """

    def __init__(self) -> None:
        self.ids: list[str | None] = []
        self.rows: dict[str, int] = {}
        self.epoch = 0
        """Compactions so far: row numbers of an earlier epoch are stale."""
        self._capacity = 0
        self._alive = np.zeros(0, dtype=bool)
        self._ids = np.zeros(0, dtype=object)
        self._objects: dict[str, np.ndarray] = {}
        self._numbers: dict[str, np.ndarray] = {}
        self._odd: dict[str, int] = {}
        """Per column, how many rows (dead ones included) hold something else than a number or None."""
        self._codes: dict[str, np.ndarray | None] = {}
        """Per column, a code per row for its value (None: a value that cannot be hashed was seen)."""
        self._code_of: dict[str, dict[Any, int]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def _grow(self, needed: int) -> None:
        size = max(64, needed, 2 * self._capacity)
        extra = size - self._capacity
        self._alive = np.concatenate([self._alive, np.zeros(extra, dtype=bool)])
        self._ids = np.concatenate([self._ids, np.full(extra, None, dtype=object)])
        for key in self._objects:
            self._objects[key] = np.concatenate([self._objects[key], np.full(extra, None, dtype=object)])
            self._numbers[key] = np.concatenate([self._numbers[key], np.full(extra, np.nan)])
            codes = self._codes[key]
            if codes is not None:
                self._codes[key] = np.concatenate([codes, np.zeros(extra, dtype=np.int64)])
        self._capacity = size

    def _column(self, key: str) -> None:
        self._objects[key] = np.full(self._capacity, None, dtype=object)
        self._numbers[key] = np.full(self._capacity, np.nan)
        self._odd[key] = 0
        self._codes[key] = np.zeros(self._capacity, dtype=np.int64)
        self._code_of[key] = {None: 0}

    def _set(self, key: str, row: int, value: Any) -> None:
        objects = self._objects[key]
        old = objects[row]
        if old is not None and not _is_number(old):
            self._odd[key] -= 1
        objects[row] = value
        number = _is_number(value)
        self._numbers[key][row] = value if number else np.nan
        if value is not None and not number:
            self._odd[key] += 1
        codes = self._codes[key]
        if codes is not None:
            try:
                codes[row] = self._code_of[key].setdefault(value, len(self._code_of[key]))
            except TypeError:  # unhashable: equality is evaluated value by value from now on
                self._codes[key] = None

    def upsert(self, ids: list[str], metadatas: list[dict[str, Any]]) -> None:
        for doc_id, meta in zip(ids, metadatas, strict=True):
            row = self.rows.get(doc_id)
            if row is None:
                row = len(self.ids)
                if row >= self._capacity:
                    self._grow(row + 1)
                self.rows[doc_id] = row
                self.ids.append(doc_id)
                self._ids[row] = doc_id
                self._alive[row] = True
            for key in meta:
                if key not in self._objects:
                    self._column(key)
            for key in self._objects:
                self._set(key, row, meta.get(key))

    def delete(self, ids: list[str]) -> None:
        for doc_id in ids:
            row = self.rows.pop(doc_id, None)
            if row is not None:
                self.ids[row] = None
                self._ids[row] = None
                self._alive[row] = False

    def needs_compaction(self) -> bool:
        return len(self.ids) > 32 and len(self.rows) * 2 < len(self.ids)

    def compact(self) -> list[int]:
        """Drop dead rows; returns the old row numbers kept, in their new order."""
        keep = [row for row, doc_id in enumerate(self.ids) if doc_id is not None]
        index = np.array(keep, dtype=np.int64)
        size = max(64, len(keep))
        self.ids = [self.ids[row] for row in keep]
        self.rows = {doc_id: n for n, doc_id in enumerate(self.ids) if doc_id is not None}

        def take(array: np.ndarray, fill: Any) -> np.ndarray:
            out = np.full(size, fill, dtype=array.dtype)
            out[: len(keep)] = array[index]
            return out

        self._alive = take(self._alive, False)
        self._ids = take(self._ids, None)
        for key in list(self._objects):
            self._objects[key] = take(self._objects[key], None)
            self._numbers[key] = take(self._numbers[key], np.nan)
            self._odd[key] = sum(1 for v in self._objects[key][: len(keep)] if v is not None and not _is_number(v))
            codes = self._codes[key]
            if codes is not None:
                self._codes[key] = take(codes, 0)
        self._capacity = size
        self.epoch += 1
        return keep

    def metadata(self, doc_id: str) -> dict[str, Any]:
        row = self.rows[doc_id]
        return {key: column[row] for key, column in self._objects.items() if column[row] is not None}

    def id_array(self) -> np.ndarray:
        """The id of each row (None for a dead one) as an object array, row-aligned (a view: do not keep)."""
        return self._ids[: len(self.ids)]

    def mask(self, where: Where | None) -> np.ndarray:
        """Which rows are alive and match ``where`` (a new array)."""
        size = len(self.ids)
        mask = self._alive[:size].copy()
        for key, op, value in where_clauses(where):
            objects = self._objects.get(key)
            if op == "$eq":
                if objects is None:  # no row has the key: every value is None
                    if value is not None:
                        mask[:] = False
                    continue
                codes = self._codes[key]
                code = _code(self._code_of[key], value) if codes is not None else None
                if codes is not None and code is not None:  # a value no row holds has code -1
                    mask &= codes[:size] == code
                else:
                    mask &= np.equal(objects[:size], value).astype(bool)
            elif isinstance(value, bool) or not isinstance(value, int | float):
                # $lte on something else than a number: compared value by value (as Python compares them)
                column = objects[:size] if objects is not None else np.full(size, None, dtype=object)
                mask &= np.array([_is_number(v) and v <= value for v in column], dtype=bool)
            elif objects is None:
                mask[:] = False
            elif self._odd[key]:  # a missing or non-numeric value never matches
                mask &= np.array([_is_number(v) and v <= value for v in objects[:size]], dtype=bool)
            else:
                with np.errstate(invalid="ignore"):
                    mask &= self._numbers[key][:size] <= value
        return mask

    def matching(self, where: Where | None) -> list[str]:
        """Ids of the rows that match ``where``, in row order."""
        return self._ids[: len(self.ids)][self.mask(where)].tolist()  # type: ignore[no-any-return]


def _code(codes: dict[Any, int], value: Any) -> int | None:
    """The code of ``value`` in a column (-1 when no row holds it), None when it cannot be hashed.

    Codes group values as ``==`` does for the scalars metadata holds (``1 == 1.0 == True`` share one).
    """
    try:
        return codes.get(value, -1)
    except TypeError:
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def matches(meta: dict[str, Any], where: Where | None) -> bool:
    """Whether metadata ``meta`` matches ``where`` (as :class:`MetadataTable` and Chroma evaluate it)."""
    for key, op, value in where_clauses(where):
        actual = meta.get(key)
        if op == "$eq":
            if actual != value:
                return False
        elif not (isinstance(actual, int | float) and not isinstance(actual, bool) and actual <= value):
            return False
    return True


def equalities(where: Where | None) -> Where | None:
    """``where`` without its range clauses, when it has both kinds (else None: nothing to narrow)."""
    clauses = where_clauses(where)
    equal = {key: value for key, op, value in clauses if op == "$eq"}
    if not equal or len(equal) == len(clauses) or len(equal) != sum(1 for _, op, _ in clauses if op == "$eq"):
        return None
    return equal
