"""The in-process vector index: each collection held as row-aligned ids, a float32 matrix and metadata columns.

:class:`InProcessVectorStore` is a whole :class:`~game.memory.vectors.stores.VectorStore` in memory (no Chroma: the
fallback, tests, benches); the local Chroma index is the same store with Chroma behind it
(:class:`~game.memory.vectors.mirror.MirroredStore`: it loads each collection on first use and writes behind). Reads
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

from game.memory.vectors.embedders import EmbeddingSpace, Vectors
from game.memory.vectors.metadata_table import MetadataTable, Where
from game.memory.vectors.stores import (
    DenseAnswer,
    VectorHit,
    check_space,
    one_blas_thread,
    recorded_space,
    space_metadata,
)


class CollectionCopy:
    """One collection's vectors, row-aligned with its metadata (:class:`MetadataTable`, the one ``where``
    evaluator; never compacted here, so a row keeps its id for good). Not thread-safe: its store locks."""

    def __init__(self) -> None:
        self.table = MetadataTable()
        self.matrix = np.zeros((0, 0), dtype=np.float32, order="F")
        self._similarities: tuple[bytes, np.ndarray] | None = None
        """The last query vector's bytes and its inner product with every row: a turn's recall asks the same
        collection with one vector under several filters (3 times a turn), and the product is most of a query."""

    @property
    def ids(self) -> list[str | None]:
        """The id of each row, None once deleted (append-only: a deleted id written again takes a new row)."""
        return self.table.ids

    @property
    def rows(self) -> dict[str, int]:
        return self.table.rows

    def upsert(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        if not ids:
            return
        self._similarities = None  # rows change: no product computed before holds
        self.table.upsert(ids, metadatas)
        written = np.array([self.table.rows[doc_id] for doc_id in ids], dtype=np.int64)
        size, dimension = len(self.table.ids), vectors.shape[1]
        if self.matrix.shape[1] != dimension or size > len(self.matrix):
            grown = np.zeros((max(64, size, 2 * len(self.matrix)), dimension), dtype=np.float32, order="F")
            if self.matrix.shape[1] == dimension:
                grown[: len(self.matrix)] = self.matrix
            self.matrix = grown  # column-major: see _products
        # one assignment (rows of a column-major matrix are strided), in order: a repeated id keeps its last
        if len(set(written.tolist())) == len(written):
            self.matrix[written] = vectors
        else:
            for row, vector in zip(written.tolist(), vectors, strict=True):
                self.matrix[row] = vector

    def delete(self, ids: list[str]) -> None:
        self.table.delete(ids)  # no product changes: the mask drops dead rows

    def metadata(self, where: Where | None) -> dict[str, dict[str, Any]]:
        return {doc_id: self.table.metadata(doc_id) for doc_id in self.table.matching(where)}

    def export(self) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
        """The live rows: ids, vectors (float32) and metadata, in row order."""
        rows = [row for row, doc_id in enumerate(self.ids) if doc_id is not None]
        dimension = self.matrix.shape[1] if self.matrix.ndim == 2 else 0
        matrix = self.matrix[rows] if rows else np.zeros((0, dimension), dtype=np.float32)
        ids = [str(self.ids[row]) for row in rows]
        return ids, matrix, [self.table.metadata(doc_id) for doc_id in ids]

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
        rows = np.flatnonzero(self.table.mask(where))
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
            self._check(collection, space, matrix.shape[1], create=True)  # gets the copy (a mirror loads it)
            self._written(("upsert", collection, list(ids), matrix, rows, space))
            self._get(collection).upsert(list(ids), matrix, rows)

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
            return self._get(collection).metadata(where)

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
