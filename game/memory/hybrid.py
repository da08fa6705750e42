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

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from game.memory.embedders import Embedder, EmbedderUnavailable, Vectors
from game.memory.keyword import BM25Index
from game.memory.stores import StoreUnavailable, VectorStore, Where, matches_where

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


class HybridIndex:
    """A collection searchable by meaning and by keywords.

    Args:
        collection: the vector store collection name.
        store: vector store, or None for keyword-only.
        embedder: embedder, or None for keyword-only.
    """

    def __init__(self, collection: str, store: VectorStore | None, embedder: Embedder | None) -> None:
        self.collection = collection
        self.store = store
        self.embedder = embedder
        self.bm25 = BM25Index()
        self.items: dict[str, IndexItem] = {}
        self.pending: set[str] = set()
        self.dense_ok = store is not None and embedder is not None
        self._lock = threading.RLock()

    @property
    def strategy(self) -> str:
        if not self.dense_ok or self.store is None:
            return "bm25"
        return f"hybrid:{self.store.backend}"

    def add(self, items: Iterable[IndexItem], *, embed: bool = True) -> None:
        """Index items (replacing same ids); embeddings now or, with ``embed=False``, later."""
        batch = list(items)
        with self._lock:
            for item in batch:
                self.items[item.id] = item
                keyword_text = item.keyword_text if item.keyword_text is not None else f"{item.text} {item.context}"
                self.bm25.add(item.id, keyword_text)
                self.pending.add(item.id)
        if embed:
            self.embed_pending([item.id for item in batch])

    def embed_pending(self, ids: Iterable[str] | None = None) -> int:
        """Embed pending items (all, or the given ones); returns how many remain pending."""
        if not self.dense_ok or self.store is None or self.embedder is None:
            return len(self.pending)
        with self._lock:
            todo = [self.items[i] for i in (ids if ids is not None else list(self.pending)) if i in self.pending]
        if not todo:
            return len(self.pending)
        try:
            vectors = self._vectors(todo)
            self.store.upsert(self.collection, [i.id for i in todo], vectors, [i.metadata for i in todo])
        except (EmbedderUnavailable, StoreUnavailable) as exc:
            log.warning("embedding %d texts failed, kept pending: %s", len(todo), exc)
            return len(self.pending)
        except Exception as exc:  # noqa: BLE001 - a store fault must never lose the text
            log.warning("vector store write failed, kept pending: %s", exc)
            return len(self.pending)
        with self._lock:
            for item in todo:
                if self.items.get(item.id) is item:  # not replaced meanwhile
                    self.pending.discard(item.id)
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
        with self._lock:
            for doc_id in ids:
                self.items.pop(doc_id, None)
                self.bm25.remove(doc_id)
                self.pending.discard(doc_id)
        if self.store is not None and self.dense_ok:
            try:
                self.store.delete(self.collection, ids)
            except Exception as exc:  # noqa: BLE001
                log.warning("vector delete failed: %s", exc)

    def embed_query(self, query: str) -> Vectors | None:
        if not self.dense_ok or self.embedder is None:
            return None
        try:
            vector: Vectors = self.embedder.embed([query])[0]
            return vector
        except EmbedderUnavailable as exc:
            log.warning("query embedding failed, keyword search only: %s", exc)
            return None

    def search(
        self,
        query: str,
        k: int | None,
        where: Where | None = None,
        keep: Callable[[str], bool] | None = None,
        query_vector: Vectors | None = None,
        prior: dict[str, float] | None = None,
    ) -> list[Hit]:
        """Best ``k`` (None: all) items for ``query`` among those matching ``where`` and ``keep``."""
        with self._lock:
            allowed = [
                i for i, item in self.items.items() if matches_where(item.metadata, where) and (keep is None or keep(i))
            ]
        if not allowed:
            return []
        keyword = self.bm25.scores(query, allowed)
        dense: dict[str, float] = {}
        vector = query_vector if query_vector is not None else (self.embed_query(query) if query.strip() else None)
        if vector is not None and self.store is not None:
            try:
                found = self.store.query(self.collection, vector, min(len(allowed), DENSE_POOL), where)
                allowed_set = set(allowed)
                dense = {h.id: h.similarity for h in found if h.id in allowed_set}
            except Exception as exc:  # noqa: BLE001 - fall back to keywords for this query
                log.warning("vector query failed, keyword search only: %s", exc)
        hits = fuse(allowed, dense, keyword, prior or {})
        return hits if k is None else hits[:k]


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
