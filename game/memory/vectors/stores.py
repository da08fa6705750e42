"""Vector stores: what memory needs from one (:class:`VectorStore`), and embedding spaces.

The in-process index is ``inprocess.py``; the local Chroma index behind it, ``mirror.py``; Chroma, ``chroma.py``.

Similarity is the inner product (vectors arrive unit-length, or as the mean of
two unit vectors). Vectors are an index, not the truth: every text they point at also lives in the
memory state (and so in the save), so a store can be dropped and rebuilt.
Filters use Chroma's ``where`` syntax restricted to what both backends support:
equality (``{"session": "abc"}``) and ``{"turn": {"$lte": 12}}``, combined with
AND (``metadata_table.where_clauses`` reads them).

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
from typing import Any, Protocol, runtime_checkable

import numpy as np

from game.memory.vectors.embedders import EmbeddingSpace, Vectors
from game.memory.vectors.metadata_table import Where

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


@runtime_checkable
class RefusesWrites(Protocol):
    """A store that may refuse writes for a while (a server away and its queue full: ``remote.py``): asked before
    texts are embedded, so that they are not embedded for nothing."""

    def accepts(self, count: int) -> bool:
        """Whether a write of ``count`` vectors would be kept now."""
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
