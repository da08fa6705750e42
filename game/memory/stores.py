"""Vector stores: what memory needs from one (:class:`VectorStore`), embedding spaces, and the in-process store.

The Chroma store is in ``chroma.py``.

Similarity is the inner product (vectors arrive unit-length, or as the mean of
two unit vectors). Vectors are an index, not the truth: every text they point at also lives in the
memory state (and so in the save), so a store can be dropped and rebuilt.
Filters use Chroma's ``where`` syntax restricted to what both backends support:
equality (``{"session": "abc"}``) and ``{"turn": {"$lte": 12}}``, combined with
AND. One evaluator (:class:`MetadataTable`) applies them in process, for the
in-process store and for the hybrid index's own items alike.

The in-process store is brute-force numpy (a vectorised metadata mask, then
one matrix product over the allowed rows). FAISS (``faiss-cpu``) was measured
beside it with the same filter (``bench/vector_index.py``): FAISS answered a
filtered top-10 query 2.4-3x faster, but at game sizes both take under half a
millisecond (numpy 0.13 ms at 1,000 vectors, 0.46 ms at 5,000), an order of
magnitude less than embedding the query. numpy keeps the fallback free of an
extra native dependency and makes deletes and upserts trivial.

Every collection belongs to one embedding model (:class:`EmbeddingSpace`):
callers name it ``<base>__<slug of the model>`` (:func:`space_collection`), so
each embedder has collections of its own, and pass the space with every
``upsert`` and ``query``. The store records the space (model name, version,
vector dimension) when it creates the collection (Chroma: in the collection's
metadata) and refuses with :class:`SpaceMismatch` a write or a query from any
other space: vectors of two models are never compared, even when their
dimensions agree. Switching embedders therefore re-embeds into new
collections; the old ones stay, so switching back embeds nothing. A local
index drops the collections of StoryEcho before this scheme
(:data:`LEGACY_COLLECTIONS`: no record of their model) when it opens.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from game.memory.embedders import EmbeddingSpace, Vectors
from game.memory.metadata_table import MetadataTable, Where

log = logging.getLogger("storyecho.memory")

COLLECTION_PREFIX = "storyecho_"
COLLECTIONS = ("knowledge", "memories", "history")
"""The collections StoryEcho keeps per embedding model (each prefixed with :data:`COLLECTION_PREFIX`)."""
LEGACY_COLLECTIONS = tuple(COLLECTION_PREFIX + name for name in COLLECTIONS)
"""Collections of StoryEcho before they were kept per model: which model made their vectors is unknown."""
SPACE_SEPARATOR = "__"
META_MODEL = "storyecho_model_name"
META_VERSION = "storyecho_model_version"
META_DIMENSION = "storyecho_dimension"


def space_collection(base: str, space: EmbeddingSpace) -> str:
    """The collection holding ``base``'s vectors of ``space`` (``knowledge__all-minilm-l6-v2-1a2b3c4d5e``)."""
    return f"{base}{SPACE_SEPARATOR}{space.slug}"


class SpaceMismatch(RuntimeError):
    """A collection was asked to mix or compare vectors of another embedding model (or dimension) than its own."""


def check_space(
    collection: str,
    recorded: EmbeddingSpace | None,
    recorded_dimension: int | None,
    space: EmbeddingSpace | None,
    dimension: int | None,
) -> None:
    """Raise :class:`SpaceMismatch` unless ``space`` and ``dimension`` are the collection's own."""
    if recorded != space:
        own = recorded.label() if recorded else "an unrecorded model"
        asked = space.label() if space else "an unnamed model"
        raise SpaceMismatch(f"collection {collection!r} holds vectors of {own}, not of {asked}")
    if recorded_dimension and dimension and recorded_dimension != dimension:
        raise SpaceMismatch(
            f"collection {collection!r} holds {recorded_dimension}-dimensional vectors, not {dimension}-dimensional"
        )


def space_metadata(space: EmbeddingSpace | None, dimension: int) -> dict[str, Any]:
    """What a collection records about its vectors."""
    meta: dict[str, Any] = {META_DIMENSION: int(dimension)}
    if space is not None:
        meta |= {META_MODEL: space.model_name, META_VERSION: space.model_version}
    return meta


def recorded_space(meta: dict[str, Any] | None) -> tuple[EmbeddingSpace | None, int | None]:
    """The space and dimension a collection's metadata records."""
    meta = meta or {}
    space = None
    if META_MODEL in meta:
        space = EmbeddingSpace(str(meta[META_MODEL]), str(meta.get(META_VERSION, "")))
    dimension = meta.get(META_DIMENSION)
    return space, int(dimension) if dimension else None


@dataclass
class VectorHit:
    id: str
    similarity: float


@dataclass(frozen=True)
class DenseAnswer:
    """A dense query's hits as arrays, best first: ``similarity`` of each, and their vector ids, either one per
    hit (``rows`` None) or, from a store holding its vectors in rows (the mirror's copy), the store's ids by row
    with ``rows`` the hits' rows, so a caller can map rows to its own without an id lookup per hit."""

    similarity: np.ndarray
    ids: Sequence[str | None]
    rows: np.ndarray | None = None

    @classmethod
    def of(cls, hits: list[VectorHit]) -> DenseAnswer:
        """The answer of a store that answers with :class:`VectorHit` objects."""
        return cls(np.array([h.similarity for h in hits], dtype=np.float64), [h.id for h in hits])

    def vector_id(self, n: int) -> str | None:
        """The vector id of hit ``n``."""
        return self.ids[int(self.rows[n])] if self.rows is not None else self.ids[n]


class StoreUnavailable(RuntimeError):
    """The vector store cannot be started or reached."""


class VectorStore(Protocol):
    """What memory needs from a vector index.

    ``upsert`` and ``query`` take the embedding space of the vectors: a
    collection records the space of its first write and raises
    :class:`SpaceMismatch` on a write or query of another.
    """

    backend: str

    def upsert(
        self,
        collection: str,
        ids: list[str],
        vectors: Vectors,
        metadatas: list[dict[str, Any]],
        space: EmbeddingSpace | None = None,
    ) -> None: ...

    def query(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> list[VectorHit]: ...

    def query_arrays(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> DenseAnswer:
        """:meth:`query` as arrays (:class:`DenseAnswer`): what a search over a thousand hits reads."""
        ...

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]: ...

    def existing(self, collection: str, ids: list[str]) -> set[str]:
        """Which of ``ids`` the collection holds."""
        ...

    def delete(self, collection: str, ids: list[str]) -> None: ...

    def count(self, collection: str) -> int: ...

    def flush(self) -> None:
        """Wait for the writes queued so far (a store writing behind: ``mirror.py``)."""
        ...

    def close(self) -> None:
        """Finish queued writes and release what the store holds (a local index's lock)."""
        ...


_BLAS_LOCK = threading.Lock()
_blas: list[Any] = []


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread (serialised: one such block at a time).

    For the similarity product of a vector query (``matrix @ vector``, memory-bound). With a second BLAS
    thread, a query over a 2,000 x 384 matrix took 0.15 ms alone but 15 ms median on a loaded machine
    (the calling thread spins until the other is scheduled), and the threads split the rows so that a
    few rows at the split get sums a last bit off the single-thread ones: on one thread the numbers no
    longer depend on how many threads BLAS has. Without ``threadpoolctl`` (a dependency of
    sentence-transformers) the block runs as it is.
    """
    with _BLAS_LOCK:
        if not _blas:
            try:
                from threadpoolctl import ThreadpoolController

                _blas.append(ThreadpoolController())
            except Exception:  # noqa: BLE001 - no control over BLAS threads: run as is
                _blas.append(None)
        controller = _blas[0]
        if controller is None:
            yield
            return
        with controller.limit(limits=1, user_api="blas"):
            yield


class InProcessVectorStore:
    """Brute-force inner-product search over numpy arrays, one per collection.

    Metadata lives in a :class:`MetadataTable` per collection, row-aligned
    with a growable vector matrix, so a filtered query is a vectorised mask
    followed by one matrix product over the allowed rows, and an upsert costs
    no copy of the matrix (capacity doubles when full).
    """

    backend = "inprocess"

    def __init__(self) -> None:
        self._tables: dict[str, MetadataTable] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._spaces: dict[str, tuple[EmbeddingSpace | None, int]] = {}
        """Each collection's space and dimension, recorded by its first write."""
        self._lock = threading.Lock()

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
        new = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        with self._lock:
            recorded, dimension = self._spaces.setdefault(collection, (space, new.shape[1]))
            check_space(collection, recorded, dimension, space, new.shape[1])
            table = self._tables.setdefault(collection, MetadataTable())
            table.upsert(ids, metadatas)
            matrix = self._vectors.get(collection)
            needed = len(table.ids)
            if matrix is None or matrix.shape[0] < needed:
                grown = np.zeros(
                    (max(needed, 2 * (0 if matrix is None else matrix.shape[0]), 64), new.shape[1]), np.float32
                )
                if matrix is not None:
                    grown[: matrix.shape[0]] = matrix
                matrix = self._vectors[collection] = grown
            matrix[[table.rows[i] for i in ids]] = new

    def query(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> list[VectorHit]:
        with self._lock:
            if collection in self._spaces:
                check_space(collection, *self._spaces[collection], space, int(np.asarray(vector).size))
            table = self._tables.get(collection)
            if table is None or not len(table):
                return []
            rows = np.flatnonzero(table.mask(where))
            if not len(rows) or k <= 0:
                return []
            with one_blas_thread():
                sims = self._vectors[collection][rows] @ np.asarray(vector, dtype=np.float32).reshape(-1)
            count = min(k, len(rows))
            top = np.argpartition(-sims, count - 1)[:count] if count < len(rows) else np.arange(len(rows))
            top = top[np.argsort(-sims[top], kind="stable")]
            return [VectorHit(str(table.ids[rows[i]]), float(sims[i])) for i in top]

    def query_arrays(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> DenseAnswer:
        return DenseAnswer.of(self.query(collection, vector, k, where, space))

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        with self._lock:
            table = self._tables.get(collection)
            if table is None:
                return {}
            return {doc_id: table.metadata(doc_id) for doc_id in table.matching(where)}

    def existing(self, collection: str, ids: list[str]) -> set[str]:
        with self._lock:
            table = self._tables.get(collection)
            return {i for i in ids if table is not None and i in table.rows}

    def delete(self, collection: str, ids: list[str]) -> None:
        with self._lock:
            table = self._tables.get(collection)
            if table is None:
                return
            table.delete(ids)
            if table.needs_compaction():
                keep = table.compact()
                self._vectors[collection] = self._vectors[collection][keep]

    def flush(self) -> None:
        """Nothing to wait for: every write lands before it returns."""

    def close(self) -> None:
        """Nothing held."""

    def count(self, collection: str) -> int:
        with self._lock:
            table = self._tables.get(collection)
            return len(table) if table is not None else 0

    def collections(self) -> dict[str, dict[str, Any]]:
        """Each collection's recorded space and vector count (see :meth:`ChromaVectorStore.collections`)."""
        with self._lock:
            return {
                name: space_metadata(space, dimension) | {"count": len(self._tables.get(name) or ())}
                for name, (space, dimension) in self._spaces.items()
            }

    def drop(self, collection: str) -> None:
        """Delete a whole collection and its record."""
        with self._lock:
            self._tables.pop(collection, None)
            self._vectors.pop(collection, None)
            self._spaces.pop(collection, None)
