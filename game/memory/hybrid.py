"""One searchable collection: BM25 in process, vectors in a store, fused.

Each text is indexed for keywords at once (cheap, synchronous) and embedded
into the vector store when an embedder is available. A failed embedding leaves
the text searchable by keyword and marks it pending; ``embed_pending`` fills
the vector in later. Search fuses both rankings; with no embedder (or no
store) it is keyword-only, and ``last_strategy`` says so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from game.memory.embedders import Embedder, EmbedderUnavailable, Vectors
from game.memory.keyword import BM25Index
from game.memory.stores import StoreUnavailable, VectorStore, Where, matches_where

log = logging.getLogger("storyecho.memory")

DENSE_WEIGHT = 0.6
KEYWORD_WEIGHT = 0.4
CANDIDATES = 60


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
        self.texts: dict[str, str] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        self.pending: set[str] = set()
        self.dense_ok = store is not None and embedder is not None
        self._lock = threading.RLock()

    @property
    def strategy(self) -> str:
        if not self.dense_ok or self.store is None:
            return "bm25"
        return f"hybrid:{self.store.backend}"

    def add(self, items: Iterable[tuple[str, str, dict[str, Any]]], *, embed: bool = True) -> None:
        """Index ``(id, text, metadata)`` items; embeddings now or (``embed=False``) later."""
        batch = list(items)
        with self._lock:
            for doc_id, text, metadata in batch:
                self.texts[doc_id] = text
                self.meta[doc_id] = dict(metadata)
                self.bm25.add(doc_id, text)
                self.pending.add(doc_id)
        if embed:
            self.embed_pending([doc_id for doc_id, _, _ in batch])

    def embed_pending(self, ids: Iterable[str] | None = None) -> int:
        """Embed pending texts (all, or the given ones); returns how many remain pending."""
        if not self.dense_ok or self.store is None or self.embedder is None:
            return len(self.pending)
        with self._lock:
            todo = [i for i in (ids if ids is not None else list(self.pending)) if i in self.pending]
            texts = [self.texts[i] for i in todo]
            metas = [self.meta[i] for i in todo]
        if not todo:
            return len(self.pending)
        try:
            vectors = self.embedder.embed(texts)
            self.store.upsert(self.collection, todo, vectors, metas)
        except (EmbedderUnavailable, StoreUnavailable) as exc:
            log.warning("embedding %d texts failed, kept pending: %s", len(todo), exc)
            return len(self.pending)
        except Exception as exc:  # noqa: BLE001 - a store fault must never lose the text
            log.warning("vector store write failed, kept pending: %s", exc)
            return len(self.pending)
        with self._lock:
            self.pending.difference_update(todo)
            return len(self.pending)

    def remove(self, ids: list[str]) -> None:
        with self._lock:
            for doc_id in ids:
                self.texts.pop(doc_id, None)
                self.meta.pop(doc_id, None)
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
        k: int,
        where: Where | None = None,
        keep: Callable[[str], bool] | None = None,
        query_vector: Vectors | None = None,
    ) -> list[Hit]:
        """Best ``k`` hits for ``query`` among items matching ``where`` and ``keep``."""
        with self._lock:
            allowed = [i for i, m in self.meta.items() if matches_where(m, where) and (keep is None or keep(i))]
        if not allowed:
            return []
        keyword_scores = self.bm25.scores(query, allowed)
        dense_scores: dict[str, float] = {}
        vector = query_vector if query_vector is not None else self.embed_query(query)
        if vector is not None and self.store is not None:
            try:
                hits = self.store.query(self.collection, vector, max(CANDIDATES, 3 * k), where)
                dense_scores = {h.id: max(0.0, h.similarity) for h in hits if keep is None or keep(h.id)}
            except Exception as exc:  # noqa: BLE001 - fall back to keywords for this query
                log.warning("vector query failed, keyword search only: %s", exc)
        return fuse(dense_scores, keyword_scores, k)


def fuse(dense: dict[str, float], keyword: dict[str, float], k: int) -> list[Hit]:
    """Weighted fusion of max-normalised scores."""
    top_keyword = max(keyword.values(), default=0.0) or 1.0
    ids = set(dense) | set(keyword)
    hits = []
    for doc_id in ids:
        d = dense.get(doc_id, 0.0)
        kw = keyword.get(doc_id, 0.0) / top_keyword
        weight = DENSE_WEIGHT if dense else 0.0
        score = weight * d + (1.0 - weight) * kw if dense else kw
        hits.append(Hit(doc_id, float(score), d, kw))
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits[:k]
