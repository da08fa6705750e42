"""A local Chroma index whose vectors are also held in process, so queries are answered by numpy.

The local index (Chroma ``PersistentClient`` under ``saves/.index``) belongs to
one process at a time (``stores.IndexLock``): while the game runs nothing else
writes to it, so a copy of each collection kept in memory stays exactly what
Chroma holds. :class:`MirroredStore` writes through to Chroma (which keeps the
vectors across runs, and stays the one truth on disk) and answers ``query``,
``existing``, ``metadata`` and ``count`` from the copy.

Why: a memory search asks for the top 1,000 vectors of the session up to the
current turn (``hybrid.DENSE_POOL``, for the z-statistics of the fused score).
Over the 11,000 memories of a 10,000-turn game Chroma's filtered HNSW query took
20-115 ms (more under load), several times the query embedding; an exact inner
product over every vector of the collection and a walk down the best ones until
``k`` pass the filter takes a few milliseconds (``bench/turn_overhead.py``).
The answer is the exact top ``k`` (Chroma's HNSW is approximate). A Chroma
server (``chroma_url``) is shared between processes and is queried directly.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from game.memory.embedders import EmbeddingSpace, Vectors
from game.memory.stores import VectorHit, Where, where_clauses

LOAD_BATCH = 5000


class _Collection:
    """One collection's vectors and metadata, row-aligned; each metadata key is a column (objects and numbers)."""

    def __init__(self) -> None:
        self.ids: list[str | None] = []
        self.rows: dict[str, int] = {}
        self.metadatas: list[dict[str, Any]] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.objects: dict[str, np.ndarray] = {}
        self.numbers: dict[str, np.ndarray] = {}

    def _grow(self, needed: int, dimension: int) -> None:
        size = max(64, needed, 2 * len(self.alive))
        matrix = np.zeros((size, dimension), dtype=np.float32)
        matrix[: len(self.matrix)] = self.matrix
        self.matrix = matrix
        self.alive = np.concatenate([self.alive, np.zeros(size - len(self.alive), dtype=bool)])
        for key, column in self.objects.items():
            self.objects[key] = np.concatenate([column, np.full(size - len(column), None, dtype=object)])
            self.numbers[key] = np.concatenate([self.numbers[key], np.full(size - len(column), np.nan)])

    def upsert(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        if not ids:
            return
        if self.matrix.shape[1] != vectors.shape[1]:
            self.matrix = np.zeros((len(self.alive), vectors.shape[1]), dtype=np.float32)
        if len(self.ids) + len(ids) > len(self.alive):
            self._grow(len(self.ids) + len(ids), vectors.shape[1])
        for doc_id, vector, meta in zip(ids, vectors, metadatas, strict=True):
            row = self.rows.get(doc_id)
            if row is None:
                row = self.rows[doc_id] = len(self.ids)
                self.ids.append(doc_id)
                self.metadatas.append({})
            self.matrix[row] = vector
            old = self.metadatas[row]
            self.metadatas[row] = dict(meta)
            self.alive[row] = True
            for key in set(old) | set(meta):
                if key not in self.objects:
                    self.objects[key] = np.full(len(self.alive), None, dtype=object)
                    self.numbers[key] = np.full(len(self.alive), np.nan)
                value = meta.get(key)
                self.objects[key][row] = value
                number = isinstance(value, int | float) and not isinstance(value, bool)
                self.numbers[key][row] = value if number else np.nan

    def delete(self, ids: list[str]) -> None:
        for doc_id in ids:
            row = self.rows.pop(doc_id, None)
            if row is not None:
                self.ids[row] = None
                self.alive[row] = False

    def mask(self, where: Where | None) -> np.ndarray:
        size = len(self.ids)
        mask = self.alive[:size].copy()
        for key, op, value in where_clauses(where):
            if key not in self.objects:
                mask[:] = False
            elif op == "$eq":
                mask &= np.equal(self.objects[key][:size], value).astype(bool)
            elif isinstance(value, bool) or not isinstance(value, int | float):
                mask[:] = False  # a range over something else than a number matches nothing
            else:
                with np.errstate(invalid="ignore"):
                    mask &= self.numbers[key][:size] <= value
        return mask

    def query(self, vector: Vectors, k: int, where: Where | None) -> list[VectorHit]:
        """The exact top ``k`` by inner product among the rows matching ``where``, best first."""
        rows = np.flatnonzero(self.mask(where))
        if not len(rows) or k <= 0:
            return []
        sims = self.matrix[: len(self.ids)] @ np.asarray(vector, dtype=np.float32).reshape(-1)
        sims = sims[rows]
        count = min(k, len(rows))
        top = np.argpartition(-sims, count - 1)[:count] if count < len(rows) else np.arange(len(rows))
        top = top[np.argsort(-sims[top], kind="stable")]
        ids = self.ids
        return [VectorHit(str(ids[row]), sim) for row, sim in zip(rows[top].tolist(), sims[top].tolist(), strict=True)]


class MirroredStore:
    """A Chroma store (local, locked to this process) with an in-memory copy that answers reads.

    Writes go to Chroma first, then to the copy (a failed write changes neither).
    Each collection is read from Chroma into the copy on first use. The
    embedding-space check of a query (``stores.SpaceMismatch``) is still made
    against the collection Chroma records.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.backend = inner.backend
        self._collections: dict[str, _Collection] = {}
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:  # lock, rebuilt_from, close, collections, ...
        return getattr(self.inner, name)

    def _get(self, collection: str) -> _Collection:
        with self._lock:
            found = self._collections.get(collection)
            if found is None:
                found = _Collection()
                col = self.inner._collection(collection)
                offset = 0
                while col is not None:
                    got = col.get(include=["embeddings", "metadatas"], limit=LOAD_BATCH, offset=offset)
                    if not len(got["ids"]):
                        break
                    vectors = np.asarray(got["embeddings"], dtype=np.float32)
                    found.upsert(list(got["ids"]), vectors, [dict(m or {}) for m in got["metadatas"]])
                    offset += len(got["ids"])
                self._collections[collection] = found
            return found

    def upsert(
        self,
        collection: str,
        ids: list[str],
        vectors: Vectors,
        metadatas: list[dict[str, Any]],
        space: EmbeddingSpace | None = None,
    ) -> None:
        if not ids:
            return
        with self._lock:
            mirror = self._get(collection)
            self.inner.upsert(collection, ids, vectors, metadatas, space=space)
            mirror.upsert(ids, np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1), metadatas)

    def query(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> list[VectorHit]:
        checked = getattr(self.inner, "_checked", None)
        if checked is not None:  # the store's own check that the collection holds vectors of this model
            checked(collection, space, int(np.asarray(vector).size), create=False)
        with self._lock:
            return self._get(collection).query(vector, k, where)

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        with self._lock:
            mirror = self._get(collection)
            return {str(mirror.ids[row]): dict(mirror.metadatas[row]) for row in np.flatnonzero(mirror.mask(where))}

    def existing(self, collection: str, ids: list[str]) -> set[str]:
        with self._lock:
            rows = self._get(collection).rows
            return {i for i in ids if i in rows}

    def delete(self, collection: str, ids: list[str]) -> None:
        if not ids:
            return
        with self._lock:
            mirror = self._get(collection)
            self.inner.delete(collection, ids)
            mirror.delete(ids)

    def count(self, collection: str) -> int:
        with self._lock:
            return len(self._get(collection).rows)

    def drop(self, collection: str) -> None:
        with self._lock:
            self.inner.drop(collection)
            self._collections.pop(collection, None)
