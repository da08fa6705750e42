"""The in-process vector index: each collection held as row-aligned ids, a float32 matrix and metadata columns.

:class:`InProcessVectorStore` is a whole :class:`~game.memory.stores.VectorStore` in memory (no Chroma: the
fallback, tests, benches); the local Chroma index is the same store with Chroma behind it
(:class:`~game.memory.mirror.MirroredStore`: it loads each collection on first use and writes behind). Reads
are an exact inner-product top ``k`` under a Chroma-style ``where`` filter (a vectorised mask, then one matrix
product over every row), with what a turn's recall asks again kept between queries (the last query's products,
the rows matching each ``$eq`` clause): :class:`CollectionCopy`.

Brute force is enough: FAISS (``faiss-cpu``) was measured beside it with the same filter
(``bench/vector_index.py``): 2.4-3x faster on a filtered top-10, but at game sizes both take under half a
millisecond, an order of magnitude less than embedding the query.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from game.memory.embedders import EmbeddingSpace, Vectors
from game.memory.metadata_table import Where, where_clauses
from game.memory.stores import DenseAnswer, VectorHit, check_space, one_blas_thread, recorded_space, space_metadata


class CollectionCopy:
    """One collection's vectors and metadata, row-aligned; each metadata key is a column (objects and numbers).
    Not thread-safe: its store calls it under its lock."""

    def __init__(self) -> None:
        self.ids: list[str | None] = []
        self.rows: dict[str, int] = {}
        self.metadatas: list[dict[str, Any]] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.objects: dict[str, np.ndarray] = {}
        self.numbers: dict[str, np.ndarray] = {}
        self._equal: dict[tuple[str, Any], np.ndarray] = {}
        """Rows whose ``key`` equals ``value`` (an ``$eq`` clause: the session, in every query), until rows change."""
        self._similarities: tuple[bytes, np.ndarray] | None = None
        """The last query vector's bytes and its inner product with every row: a turn's recall asks the same
        collection with one vector under several filters (3 times a turn), and the product is most of a query."""

    def _grow(self, needed: int, dimension: int) -> None:
        size = max(64, needed, 2 * len(self.alive))
        matrix = np.zeros((size, dimension), dtype=np.float32, order="F")  # see _products
        matrix[: len(self.matrix)] = self.matrix
        self.matrix = matrix
        self.alive = np.concatenate([self.alive, np.zeros(size - len(self.alive), dtype=bool)])
        for key, column in self.objects.items():
            self.objects[key] = np.concatenate([column, np.full(size - len(column), None, dtype=object)])
            self.numbers[key] = np.concatenate([self.numbers[key], np.full(size - len(column), np.nan)])

    def upsert(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        if not ids:
            return
        self._similarities = None  # rows change: no product computed before holds
        if self.matrix.shape[1] != vectors.shape[1]:
            self.matrix = np.zeros((len(self.alive), vectors.shape[1]), dtype=np.float32, order="F")
        if len(self.ids) + len(ids) > len(self.alive):
            self._grow(len(self.ids) + len(ids), vectors.shape[1])
        written = np.empty(len(ids), dtype=np.int64)
        for n, (doc_id, meta) in enumerate(zip(ids, metadatas, strict=True)):
            row = self.rows.get(doc_id)
            if row is None:
                row = self.rows[doc_id] = len(self.ids)
                self.ids.append(doc_id)
                self.metadatas.append({})
            written[n] = row
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
        for (key, value), equal in list(self._equal.items()):  # the masks kept, brought up to date
            if len(equal) < len(self.ids):
                equal = self._equal[(key, value)] = np.concatenate(
                    [equal, np.zeros(len(self.ids) - len(equal), dtype=bool)]
                )
            column = self.objects.get(key)
            equal[written] = np.equal(column[written], value) if column is not None else False
        # one assignment (rows of a column-major matrix are strided), in order: a repeated id keeps its last
        if len(set(written.tolist())) == len(written):
            self.matrix[written] = vectors
        else:
            for row, vector in zip(written.tolist(), vectors, strict=True):
                self.matrix[row] = vector

    def delete(self, ids: list[str]) -> None:
        for doc_id in ids:
            row = self.rows.pop(doc_id, None)
            if row is not None:
                self.ids[row] = None
                self.alive[row] = False  # masks start from alive: the kept equality masks still hold

    def export(self) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
        """The live rows: ids, vectors (float32) and metadata, in row order."""
        rows = [row for row, doc_id in enumerate(self.ids) if doc_id is not None]
        dimension = self.matrix.shape[1] if self.matrix.ndim == 2 else 0
        matrix = self.matrix[rows] if rows else np.zeros((0, dimension), dtype=np.float32)
        return [str(self.ids[row]) for row in rows], matrix, [dict(self.metadatas[row]) for row in rows]

    def mask(self, where: Where | None) -> np.ndarray:
        size = len(self.ids)
        mask = self.alive[:size].copy()
        for key, op, value in where_clauses(where):
            if key not in self.objects:
                mask[:] = False
            elif op == "$eq":
                mask &= self._equals(key, value, size)
            elif isinstance(value, bool) or not isinstance(value, int | float):
                mask[:] = False  # a range over something else than a number matches nothing
            else:
                with np.errstate(invalid="ignore"):
                    mask &= self.numbers[key][:size] <= value
        return mask

    def _equals(self, key: str, value: Any, size: int) -> np.ndarray:
        try:
            found = self._equal.get((key, value))
        except TypeError:  # an unhashable value: not remembered
            equal: np.ndarray = np.equal(self.objects[key][:size], value).astype(bool)
            return equal
        if found is None or len(found) != size:
            found = self._equal[(key, value)] = np.equal(self.objects[key][:size], value).astype(bool)
            if len(self._equal) > 64:  # a filter on many values (not the game's): keep the newest
                del self._equal[next(iter(self._equal))]
        return found

    def query(self, vector: Vectors, k: int, where: Where | None) -> list[VectorHit]:
        """The exact top ``k`` by inner product among the rows matching ``where``, best first."""
        ids, sims = self.top(vector, k, where)
        return [VectorHit(doc_id, sim) for doc_id, sim in zip(ids, sims.tolist(), strict=True)]

    def top(self, vector: Vectors, k: int, where: Where | None) -> tuple[list[str], np.ndarray]:
        """:meth:`query` as (ids, similarities as float64), no :class:`VectorHit` made."""
        rows, sims = self.top_rows(vector, k, where)
        ids = self.ids
        return [ids[row] for row in rows.tolist()], sims

    def top_rows(self, vector: Vectors, k: int, where: Where | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`top` as rows of this copy (``ids[row]`` is the vector's id), no id looked up: a caller that
        maps rows to its own (``hybrid.StoreRows``) needs none."""
        rows = np.flatnonzero(self.mask(where))
        if not len(rows) or k <= 0:
            return rows[:0], np.zeros(0)
        sims = self._products(np.asarray(vector, dtype=np.float32).reshape(-1))[rows]
        count = min(k, len(rows))
        top = np.argpartition(-sims, count - 1)[:count] if count < len(rows) else np.arange(len(rows))
        top = top[np.argsort(-sims[top], kind="stable")]
        return rows[top], sims[top].astype(np.float64)

    def _products(self, vector: np.ndarray) -> np.ndarray:
        """The inner product of ``vector`` with every row (dead ones too: the mask drops them), reused while
        neither the vector nor the rows change (deleting a row changes no product).

        The matrix is column-major: OpenBLAS's single-thread product of a row-major (11,079 x 384) matrix with
        a vector took 1.1 ms here, of a column-major one 0.35 ms (the same sums in another order: last-bit
        differences, about 1e-7 of a similarity)."""
        key = vector.tobytes()
        last = self._similarities
        if last is not None and last[0] == key and len(last[1]) == len(self.ids):
            return last[1]
        with one_blas_thread():  # see stores.one_blas_thread: no wait for a second BLAS thread
            sims: np.ndarray = np.asarray(self.matrix[: len(self.ids)] @ vector)
        self._similarities = (key, sims)
        return sims


class InProcessVectorStore:
    """Every collection in memory (:class:`CollectionCopy`), each recording the embedding space of its first write.

    A subclass puts a durable store behind it through three hooks: :meth:`_get` (a collection not held yet),
    :meth:`_written` (each write, after the space check and before the copy changes) and :meth:`_checked`.
    """

    backend = "inprocess"

    def __init__(self) -> None:
        self._collections: dict[str, CollectionCopy] = {}
        self._meta: dict[str, dict[str, Any] | None] = {}
        """Each collection's recorded space (``stores.space_metadata``); None: none recorded yet."""
        self._lock = threading.RLock()

    def _get(self, collection: str) -> CollectionCopy:
        """The collection's copy (call under the lock); a new one for a collection never written."""
        found = self._collections.get(collection)
        if found is None:
            found = self._collections[collection] = CollectionCopy()
        return found

    def _written(self, op: tuple[Any, ...]) -> None:
        """A write about to change the copy: ``("upsert", collection, ids, matrix, metadatas, space)``,
        ``("delete", collection, ids)`` or ``("drop", collection)``."""

    def _checked(self, collection: str, *, write: bool) -> None:
        """The space of a read or write was checked (the mirror notes the first read)."""

    def _check(self, collection: str, space: EmbeddingSpace | None, dimension: int, *, create: bool) -> None:
        """Raise ``SpaceMismatch`` unless the collection holds vectors of ``space`` (``create``: a write records it)."""
        with self._lock:
            self._get(collection)
            self._checked(collection, write=create)
            meta = self._meta.get(collection)
            if meta is None:
                if create:
                    self._meta[collection] = space_metadata(space, dimension)
                return
        check_space(collection, *recorded_space(meta), space, dimension)

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
        matrix = np.array(vectors, dtype=np.float32).reshape(len(ids), -1)  # a copy: a write behind keeps it
        rows = [dict(m) for m in metadatas]
        with self._lock:
            copy = self._get(collection)
            self._check(collection, space, matrix.shape[1], create=True)
            self._written(("upsert", collection, list(ids), matrix, rows, space))
            copy.upsert(list(ids), matrix, rows)

    def query(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> list[VectorHit]:
        self._check(collection, space, int(np.asarray(vector).size), create=False)
        with self._lock:
            return self._get(collection).query(vector, k, where)

    def query_arrays(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> DenseAnswer:
        """As rows of the collection's copy, with the copy's ids by row. The ids list is the copy's own,
        append-only: a row keeps its id for good (None once deleted, and a deleted id written again takes a
        new row), and a rebuilt collection is a new list. So a caller can keep what each row maps to and look
        up only rows added since (``store_rows.StoreRows``), instead of an id per hit: for the 1,000 hits of a
        memory search that lookup was 0.5 ms of cache misses (``bench/ablation.py``: ~1 ms of a turn's recall)."""
        self._check(collection, space, int(np.asarray(vector).size), create=False)
        with self._lock:
            copy = self._get(collection)
            rows, sims = copy.top_rows(vector, k, where)
            return DenseAnswer(sims, copy.ids, rows)

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        with self._lock:
            copy = self._get(collection)
            return {str(copy.ids[row]): dict(copy.metadatas[row]) for row in np.flatnonzero(copy.mask(where))}

    def existing(self, collection: str, ids: list[str]) -> set[str]:
        with self._lock:
            rows = self._get(collection).rows
            return {i for i in ids if i in rows}

    def delete(self, collection: str, ids: list[str]) -> None:
        if not ids:
            return
        with self._lock:
            copy = self._get(collection)
            self._written(("delete", collection, list(ids)))
            copy.delete(ids)

    def count(self, collection: str) -> int:
        with self._lock:
            return len(self._get(collection).rows)

    def drop(self, collection: str) -> None:
        """Delete a whole collection and its record."""
        with self._lock:
            self._written(("drop", collection))
            self._collections[collection] = CollectionCopy()
            self._meta[collection] = None

    def collections(self) -> dict[str, dict[str, Any]]:
        """Each collection's recorded space and vector count (see :meth:`ChromaVectorStore.collections`)."""
        with self._lock:
            return {
                name: meta | {"count": len(self._collections[name].rows)}
                for name, meta in self._meta.items()
                if meta is not None
            }

    def flush(self) -> None:
        """Nothing to wait for here: every write has landed when it returns."""

    def close(self) -> None:
        """Nothing held here."""
