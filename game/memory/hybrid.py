"""One searchable collection: BM25 in process, vectors in a store, fused.

Ranking (measured on LoCoMo, see ``bench/locomo_recall.py`` and the README):

    score = z(dense) + 0.5 * z(bm25) + prior

- ``dense`` is the inner product of the query vector with the item's vector.
  An item with context (a turn and its neighbouring turns) is stored as the
  mean of two unit vectors, the item alone and the item followed by its
  context, so its dense score is the mean of both cosines.
- ``bm25`` runs over the item's keyword text (for a turn: its window of
  neighbouring turns).
- ``z`` standardises each score over the items the query may see, so the two
  scales can be added; ``prior`` is a caller's boost (e.g. memories of the
  character the question names).

Each text is indexed for keywords at once (synchronous, cheap) and embedded
when an embedder is available. A failed embedding leaves the item searchable by
keyword and pending; ``embed_pending`` fills the vector in later. With no
embedder or store the search is keyword-only, and ``strategy`` says so.

Dense scores come from the vector store's filtered top-``DENSE_POOL`` query; a
session with more items than that gets z-statistics over the pool (items
outside it take the pool's lowest score).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from game.memory.embedders import Embedder, EmbedderUnavailable, Vectors
from game.memory.keyword import BM25Index
from game.memory.stores import MetadataTable, StoreUnavailable, VectorStore, Where

log = logging.getLogger("storyecho.memory")

KEYWORD_WEIGHT = 0.5
DENSE_POOL = 1000
CONTEXT_SEPARATOR = " | context: "


@dataclass
class IndexItem:
    """What is indexed for one id.

    Attributes:
        text: the item itself (what recall shows).
        context: neighbouring text that helps find it ("" for none).
        keyword_text: what BM25 indexes (defaults to text + context).
    """

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    context: str = ""
    keyword_text: str | None = None


@dataclass
class Hit:
    id: str
    score: float
    dense: float
    keyword: float


@dataclass
class Ranked:
    """A search's hits and how they were found.

    Attributes:
        strategy: ``hybrid:<store>`` when dense scores took part, ``bm25``
            when only keywords did.
        fallback: why dense search did not run this time although it is
            configured (the embedder or the store failed), else None.
    """

    hits: list[Hit]
    strategy: str
    fallback: str | None = None

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)


def _digest(item: IndexItem) -> str:
    payload = json.dumps([item.text, item.context, item.metadata], sort_keys=True, default=str)
    return hashlib.sha1(payload.encode()).hexdigest()[:12]


class HybridIndex:
    """A collection searchable by meaning and by keywords.

    Vector ids in the store are ``<namespace>:<id>#<digest of what was embedded>``:
    two sessions sharing a store (or two branches of one session) never
    overwrite each other's vectors, identical items share one, and an index
    rebuilt from a save finds which vectors the store already holds instead of
    embedding everything again (:meth:`adopt_stored`). Dense hits are mapped
    back through this index's own items, so a vector that is not one of its
    current items (another session's, an older version's) is never returned.
    Vectors are therefore never deleted when an item is replaced or removed:
    an older save of the session (which still holds that version) restores
    without embedding it again, and another process playing a branch of the
    same session keeps its vectors. Pruning what no save refers to is the
    save store's job.

    All reads and writes of the index's own data happen under one lock;
    embedding and store calls happen outside it, so a search never waits for
    an embedding batch.

    Args:
        collection: the vector store collection name.
        store: vector store, or None for keyword-only.
        embedder: embedder, or None for keyword-only.
        namespace: prefix of this index's vector ids (the session id for memories).
    """

    def __init__(
        self, collection: str, store: VectorStore | None, embedder: Embedder | None, namespace: str = ""
    ) -> None:
        self.collection = collection
        self.store = store
        self.embedder = embedder
        self.namespace = namespace
        self.bm25 = BM25Index()
        self.items: dict[str, IndexItem] = {}
        self.pending: set[str] = set()
        self.dense_ok = store is not None and embedder is not None
        self._table = MetadataTable()
        self._vector_id: dict[str, str] = {}
        """Local id -> id of the vector the store holds for its current version."""
        self._by_vector: dict[str, str] = {}
        self._stored = 0
        """Vectors this index has put in or found in the store, older versions included."""
        self._in_store = 0
        """Vectors the collection held when this index adopted them (other versions and branches included)."""
        self._lock = threading.RLock()

    @property
    def strategy(self) -> str:
        """The configured strategy (a search may fall back; see :class:`Ranked`)."""
        if not self.dense_ok or self.store is None:
            return "bm25"
        return f"hybrid:{self.store.backend}"

    def vector_id(self, item: IndexItem) -> str:
        return f"{self.namespace}:{item.id}#{_digest(item)}"

    def snapshot(self) -> dict[str, IndexItem]:
        """A consistent copy of the items."""
        with self._lock:
            return dict(self.items)

    def pending_ids(self) -> set[str]:
        with self._lock:
            return set(self.pending)

    def pending_turns(self) -> list[int]:
        """The ``turn`` metadata of each item still waiting for its vector."""
        with self._lock:
            return [int(self.items[i].metadata.get("turn", 0)) for i in self.pending if i in self.items]

    def add(self, items: Iterable[IndexItem], *, embed: bool = True) -> None:
        """Index items (replacing same ids); embeddings now or, with ``embed=False``, later.

        An item identical to the one indexed under its id changes nothing; a
        changed one needs a new vector.
        """
        batch = list(items)
        with self._lock:
            for item in batch:
                old = self.items.get(item.id)
                if old is not None and (old.text, old.context, old.metadata, old.keyword_text) == (
                    item.text,
                    item.context,
                    item.metadata,
                    item.keyword_text,
                ):
                    continue
                self.items[item.id] = item
                keyword_text = item.keyword_text if item.keyword_text is not None else f"{item.text} {item.context}"
                self.bm25.add(item.id, keyword_text)
                self._table.upsert([item.id], [item.metadata])
                if self._vector_id.get(item.id) != self.vector_id(item):
                    self.pending.add(item.id)
        if embed:
            self.embed_pending([item.id for item in batch])

    def adopt_stored(self) -> int:
        """Take the vectors the store already holds for the current items (after a rebuild); returns how many.

        Everything else stays pending, to be embedded.
        """
        if not self.dense_ok or self.store is None:
            return 0
        with self._lock:
            wanted = {self.vector_id(self.items[i]): i for i in self.pending}
        try:
            found = self.store.existing(self.collection, list(wanted))
            in_store = self.store.count(self.collection)
        except Exception as exc:  # noqa: BLE001 - an unreadable index is rebuilt by embedding
            log.warning("reading the %s index failed, re-embedding: %s", self.collection, exc)
            return 0
        with self._lock:
            self._in_store = max(self._in_store, in_store)
            for vector_id in found:
                doc_id = wanted[vector_id]
                if doc_id in self.items and self.vector_id(self.items[doc_id]) == vector_id:
                    self._set_vector(doc_id, vector_id)
        return len(found)

    def _set_vector(self, doc_id: str, vector_id: str) -> None:
        """Record that ``doc_id``'s current version has ``vector_id``."""
        previous = self._vector_id.get(doc_id)
        if previous != vector_id:
            self._stored += 1
        if previous is not None:
            self._by_vector.pop(previous, None)
        self._vector_id[doc_id] = vector_id
        self._by_vector[vector_id] = doc_id
        self.pending.discard(doc_id)

    def embed_pending(self, ids: Iterable[str] | None = None) -> int:
        """Embed pending items (all, or the given ones); returns how many remain pending."""
        if not self.dense_ok or self.store is None or self.embedder is None:
            with self._lock:
                return len(self.pending)
        with self._lock:
            chosen = list(self.pending) if ids is None else [i for i in ids if i in self.pending]
            todo = [self.items[i] for i in sorted(chosen) if i in self.items]
            vector_ids = [self.vector_id(item) for item in todo]
        if not todo:
            with self._lock:
                return len(self.pending)
        try:
            vectors = self._vectors(todo)
            self.store.upsert(self.collection, vector_ids, vectors, [i.metadata for i in todo])
        except (EmbedderUnavailable, StoreUnavailable) as exc:
            log.warning("embedding %d texts failed, kept pending: %s", len(todo), exc)
            with self._lock:
                return len(self.pending)
        except Exception as exc:  # noqa: BLE001 - a store fault must never lose the text
            log.warning("vector store write failed, kept pending: %s", exc)
            with self._lock:
                return len(self.pending)
        with self._lock:
            for item, vector_id in zip(todo, vector_ids, strict=True):
                if self.items.get(item.id) is item:  # not replaced or removed meanwhile
                    self._set_vector(item.id, vector_id)
            return len(self.pending)

    def _vectors(self, items: list[IndexItem]) -> Vectors:
        assert self.embedder is not None
        texts = [i.text for i in items]
        with_context = [n for n, i in enumerate(items) if i.context]
        texts += [items[n].text + CONTEXT_SEPARATOR + items[n].context for n in with_context]
        encoded = self.embedder.embed(texts)
        vectors = np.array(encoded[: len(items)], dtype=np.float32)
        for row, n in enumerate(with_context):
            vectors[n] = (vectors[n] + encoded[len(items) + row]) / 2
        return vectors

    def remove(self, ids: list[str]) -> None:
        """Take items out of the index (their vectors stay in the store; see the class docstring)."""
        with self._lock:
            for doc_id in ids:
                self.items.pop(doc_id, None)
                self.bm25.remove(doc_id)
                self.pending.discard(doc_id)
                self._table.delete([doc_id])
                vector_id = self._vector_id.pop(doc_id, None)
                if vector_id is not None:
                    self._by_vector.pop(vector_id, None)
            if self._table.needs_compaction():
                self._table.compact()

    def embed_query(self, query: str) -> Vectors | None:
        vector, _ = self._embed_query(query)
        return vector

    def _embed_query(self, query: str) -> tuple[Vectors | None, str | None]:
        if not self.dense_ok or self.embedder is None:
            return None, None
        try:
            vector: Vectors = self.embedder.embed([query])[0]
            return vector, None
        except Exception as exc:  # noqa: BLE001 - any embedder fault means keywords for this query
            log.warning("query embedding failed, keyword search only: %s", exc)
            return None, f"query embedding failed: {exc}"

    def search(
        self,
        query: str,
        k: int | None,
        where: Where | None = None,
        keep: Callable[[str], bool] | None = None,
        query_vector: Vectors | None = None,
        prior: dict[str, float] | None = None,
    ) -> Ranked:
        """Best ``k`` (None: all) items for ``query`` among those matching ``where`` and ``keep``."""
        with self._lock:
            allowed = [i for i in self._table.matching(where) if keep is None or keep(i)]
            keyword = self.bm25.scores(query, allowed) if allowed else {}
            # older versions (and a restored save's other branches) share the filter: ask for enough that every
            # current vector comes back, so a restored game ranks exactly as the game that never stopped
            pool = min(DENSE_POOL, max(len(allowed), self._stored, self._in_store))
        if not allowed:
            return Ranked([], self.strategy)
        fallback: str | None = None
        vector = query_vector
        if vector is None and self.dense_ok and query.strip():
            vector, fallback = self._embed_query(query)
        dense: dict[str, float] = {}
        if vector is not None and self.store is not None:
            try:
                found = self.store.query(self.collection, vector, pool, where)
            except Exception as exc:  # noqa: BLE001 - fall back to keywords for this query
                log.warning("vector query failed, keyword search only: %s", exc)
                fallback = f"vector query failed: {exc}"
            else:
                allowed_set = set(allowed)
                with self._lock:
                    owners = {h.id: self._by_vector.get(h.id) for h in found}
                dense = {doc: h.similarity for h in found if (doc := owners[h.id]) is not None and doc in allowed_set}
        hits = fuse(allowed, dense, keyword, prior or {})
        strategy = self.strategy if vector is not None and fallback is None else "bm25"
        return Ranked(hits if k is None else hits[:k], strategy, fallback)


def _z(values: np.ndarray) -> np.ndarray:
    std = float(values.std())
    return (values - values.mean()) / std if std > 1e-9 else np.zeros_like(values)


def fuse(ids: list[str], dense: dict[str, float], keyword: dict[str, float], prior: dict[str, float]) -> list[Hit]:
    """z(dense) + 0.5 z(bm25) + prior over ``ids``, best first."""
    kw = np.array([keyword.get(i, 0.0) for i in ids], dtype=np.float64)
    score = KEYWORD_WEIGHT * _z(kw) if dense else _z(kw)
    dense_values = np.zeros(len(ids))
    if dense:
        floor = min(dense.values())
        dense_values = np.array([dense.get(i, floor) for i in ids], dtype=np.float64)
        score = score + _z(dense_values)
    boost = np.array([prior.get(i, 0.0) for i in ids])
    score = score + boost
    order = sorted(range(len(ids)), key=lambda n: (-score[n], ids[n]))
    if not dense:  # keyword-only: an item sharing no word with the query is no hit
        order = [n for n in order if kw[n] > 0 or boost[n] > 0]
    return [Hit(ids[n], float(score[n]), float(dense_values[n]), float(kw[n])) for n in order]
