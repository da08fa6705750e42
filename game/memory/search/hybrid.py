"""One searchable collection: BM25 in process, vectors in a store, fused.

Ranking (measured on LoCoMo: ``bench/locomo_recall.py``, ``docs/memory.md``): ``score = z(dense) + 0.5 * z(bm25)
+ prior``. ``dense`` is the inner product with the item's vector (an item with context, a turn and its neighbours,
is stored as the mean of two unit vectors: the item alone and the item with its context); ``bm25`` runs over the
item's keyword text; ``z`` standardises each score over the items the query may see (over the store's filtered top
``DENSE_POOL`` for dense scores: items outside it take the pool's lowest), and ``prior`` is a caller's boost.

Each text is indexed for keywords at once and embedded when an embedder is available; a failed embedding leaves it
searchable by keyword and pending (``embed_pending`` fills the vector in later). With no embedder or store the
search is keyword-only, and ``strategy`` says so.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Collection, Iterable
from itertools import repeat
from typing import Any, cast

import numpy as np

from game.memory.search.dates import date_terms
from game.memory.search.encoding import item_vectors, query_vectors, same_space
from game.memory.search.fusion import Fused, Ranked, fuse_arrays
from game.memory.search.indexing import IndexItem
from game.memory.search.keyword import BM25Index
from game.memory.search.restoring import Restoring
from game.memory.search.store_rows import StoreRows
from game.memory.vectors.embedders import Embedder, EmbedderUnavailable, EmbeddingSpace, Vectors, space_of
from game.memory.vectors.metadata_table import MetadataTable, Where, equalities, matches
from game.memory.vectors.stores import DenseAnswer, RefusesWrites, StoreUnavailable, VectorStore, space_collection

log = logging.getLogger("storyecho.memory")

DENSE_POOL = 1000
NARROW_BACKOFF = 20
"""Searches an index makes with its full filter after an equality-filter query could not be used."""


def _digest(item: IndexItem) -> str:
    payload = json.dumps([item.text, item.context, item.metadata], sort_keys=True, default=str)
    return hashlib.sha1(payload.encode()).hexdigest()[:12]


class HybridIndex:
    """A collection searchable by meaning and by keywords.

    The vectors live in the collection of the embedder's model (``<collection>__<slug of its EmbeddingSpace>``,
    ``stores.py``), so another embedder's vectors are never ranked against these. Vector ids are
    ``<namespace>:<id>#<digest of what was embedded>``: two sessions (or branches) sharing a store never overwrite
    each other's vectors, identical items share one, and an index rebuilt from a save finds the vectors the store
    holds instead of embedding again (:meth:`adopt_stored`). Dense hits are mapped back through this index's own
    items, so another session's or an older version's vector is never returned; vectors are never deleted (an
    older save restores without embedding again), and pruning what no save refers to is the save store's job.

    All reads and writes of the index's own data happen under one lock;
    embedding and store calls happen outside it, so a search never waits for
    an embedding batch.

    Args:
        collection: the base name of the vector store collection (the embedder's space is appended).
        store: vector store, or None for keyword-only.
        embedder: embedder, or None for keyword-only.
        namespace: prefix of this index's vector ids (the session id for memories).
    """

    def __init__(
        self, collection: str, store: VectorStore | None, embedder: Embedder | None, namespace: str = ""
    ) -> None:
        self.space: EmbeddingSpace | None = space_of(embedder) if embedder is not None else None
        self.collection = space_collection(collection, self.space) if self.space is not None else collection
        """The collection in the store: this embedder's own."""
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
        self._vector_row: dict[str, int] = {}
        """The same as ``_by_vector``, to the item's row in ``_table``."""
        self._store_rows = StoreRows()
        """``_vector_row`` as an array over the rows of the in-process store's copy (see ``store_rows.py``)."""
        self._stored = 0
        """Vectors this index has put in or found in the store, older versions included."""
        self._in_store = 0
        """Vectors the collection held when this index adopted them (other versions and branches included)."""
        self._vector_meta: dict[str, dict[str, Any]] = {}
        """The metadata of every vector this index put in or found in the store (older versions included)."""
        self._narrow_after = 0
        """Searches to go before the next equality-filter store query is tried (see :meth:`_dense`)."""
        self._keyword_row = np.zeros(0, dtype=np.int64)
        """The BM25 row of each row of ``_table``."""
        self._journal: list[str] = []
        """Ids added, changed or removed, in order (see :meth:`changes`)."""
        self._journal_epoch = 0
        self._restoring = Restoring()
        """Rebuilt with most vectors missing: keywords rank until they are in (:meth:`restored`)."""
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        """The index's lock: hold it to read :attr:`items` and :meth:`changes` as one consistent view."""
        return self._lock

    @property
    def table(self) -> MetadataTable:
        """The items' metadata, row-aligned (read under :attr:`lock`)."""
        return self._table

    def changes(self, token: tuple[int, int, int] | None) -> tuple[tuple[int, int, int], list[str] | None]:
        """The ids added, changed or removed since ``token`` (None: everything must be read again); call under
        :attr:`lock`. Returns the token to pass next time. A compaction of :attr:`table` (its rows renumbered)
        or an overlong journal also means everything."""
        now = (self._journal_epoch, self._table.epoch, len(self._journal))
        if token is None or token[:2] != now[:2]:
            return now, None
        return now, self._journal[token[2] :]

    def _note(self, doc_id: str) -> None:
        self._journal.append(doc_id)
        if len(self._journal) > 4 * len(self.items) + 4096:
            self._journal.clear()
            self._journal_epoch += 1

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
                self.bm25.add(item.id, f"{keyword_text} {date_terms(str(item.metadata.get('when', '')), item.text)}")
                self._table.upsert([item.id], [item.metadata])
                row = self._table.rows[item.id]
                if row >= len(self._keyword_row):
                    self._keyword_row = np.resize(self._keyword_row, max(64, row + 1, 2 * len(self._keyword_row)))
                self._keyword_row[row] = self.bm25.row(item.id)
                self._note(item.id)
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

    def restored(self) -> None:
        """The index was rebuilt from a save (:meth:`adopt_stored` took what the store held) and its missing
        vectors are being embedded in the background: :meth:`scores` ranks by keywords until most are in, and
        says why (``fallback``; ``restoring.py``)."""
        with self._lock:
            self._restoring.start(self.dense_ok, len(self.pending), len(self.items))

    def _set_vector(self, doc_id: str, vector_id: str) -> None:
        """Record that ``doc_id``'s current version has ``vector_id``."""
        self._vector_meta[vector_id] = self.items[doc_id].metadata
        previous = self._vector_id.get(doc_id)
        if previous != vector_id:
            self._stored += 1
        if previous is not None:
            self._by_vector.pop(previous, None)
            self._vector_row.pop(previous, None)
            self._store_rows.changed(previous)
        self._vector_id[doc_id] = vector_id
        self._by_vector[vector_id] = doc_id
        self._vector_row[vector_id] = self._table.rows[doc_id]
        self._store_rows.changed(vector_id)
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
        if not todo or (isinstance(self.store, RefusesWrites) and not self.store.accepts(len(todo))):
            with self._lock:  # nothing to do, or nowhere to keep it yet: pending, searchable by keyword
                return len(self.pending)
        try:
            same_space(self.embedder, self.space, self.collection)
            vectors = item_vectors(self.embedder, todo)
            self.store.upsert(self.collection, vector_ids, vectors, [i.metadata for i in todo], space=self.space)
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
                    self._vector_row.pop(vector_id, None)
                    self._store_rows.changed(vector_id)
                self._note(doc_id)
            if self._table.needs_compaction():
                keep = self._table.compact()
                self._keyword_row = self._keyword_row[np.array(keep, dtype=np.int64)]
                rows = self._table.rows
                self._vector_row = {vector_id: rows[doc_id] for vector_id, doc_id in self._by_vector.items()}

    def embedding(self, query: str) -> tuple[Vectors | None, str | None]:
        """What :meth:`scores` would embed for ``query`` (vector, why it failed), computed ahead: pass it as
        ``embedded`` (nothing is embedded when dense search is off or the query is blank)."""
        return self.embeddings([query])[0]

    def embed_query(self, query: str) -> Vectors | None:
        """The vector of ``query`` (None: dense search off, a blank query, or the embedder failed)."""
        return self.embedding(query)[0]

    def embeddings(self, queries: list[str]) -> list[tuple[Vectors | None, str | None]]:
        """:meth:`embedding` of each query, embedded in one batch: recall embeds a player's action and its
        rewrite (names taken out), and a batch of two short texts took 5.8 ms here against 7.9 ms for two
        calls (``OnnxEmbedder``, two threads). A failure fails every query of the batch. ``OnnxEmbedder``
        gives a text the same vector alone or in a batch; sentence-transformers' may differ by about 1e-7."""
        return query_vectors(self.embedder if self.dense_ok else None, self.space, self.collection, queries)

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
        scored = self.scores(query, where, keep, query_vector, prior)
        return Ranked(scored.hits(k), scored.strategy, scored.fallback)

    def scores(
        self,
        query: str,
        where: Where | None = None,
        keep: Callable[[str], bool] | None = None,
        query_vector: Vectors | None = None,
        prior: dict[str, float] | None = None,
        *,
        drop: Collection[str] = (),
        embedded: tuple[Vectors | None, str | None] | None = None,
    ) -> Fused:
        """:meth:`search` as arrays: every allowed item's fused score and their ranking, no :class:`Hit` made.

        ``drop`` leaves ids out as a ``keep`` returning False would, without a call per item; ``embedded`` is
        :meth:`embedding` of ``query`` when the caller computed it already (used when no ``query_vector``).
        Everything is numpy over the rows of :attr:`table`: no Python loop over the items.
        """
        with self._lock:
            table = self._table
            mask = table.mask(where)
            matching = mask.copy()
            if keep is not None:
                ids_of = table.ids
                for n in np.flatnonzero(mask).tolist():
                    if not keep(ids_of[n]):  # type: ignore[arg-type]
                        mask[n] = False
            if drop:
                rows_of = table.rows
                dropped = [at for doc_id in drop if (at := rows_of.get(doc_id)) is not None]
                if dropped:
                    mask[np.array(dropped, dtype=np.int64)] = False
            allowed = np.flatnonzero(mask)
            ids = table.id_array()[allowed]
            epoch = table.epoch
            keyword = np.zeros(len(allowed))
            if len(allowed):
                total = self.bm25.score_array(query)
                if total is not None:
                    keyword = total[self._keyword_row[allowed]]
            position = np.full(len(mask), -1, dtype=np.int64)
            position[allowed] = np.arange(len(allowed))
            boost = None
            if prior and len(allowed):
                boost = np.zeros(len(allowed))
                rows_of = table.rows
                for doc_id, value in prior.items():
                    found = rows_of.get(doc_id)
                    if found is not None and position[found] >= 0:
                        boost[position[found]] = value
            # older versions (and a restored save's other branches) share the filter: ask for enough that every
            # current vector comes back, so a restored game ranks exactly as the game that never stopped
            pool = min(DENSE_POOL, max(len(allowed), self._stored, self._in_store))
            restoring = self._restoring.why(len(self.pending), len(self.items))
        if not len(allowed):
            empty = np.zeros(0)
            return Fused(ids, empty, empty, empty, None, self.strategy, dense_ok=False, rows=allowed)
        fallback: str | None = restoring
        vector = None if restoring else query_vector
        if vector is None and self.dense_ok and query.strip() and not restoring:
            vector, fallback = embedded if embedded is not None else self.embedding(query)
        dense = None
        if vector is not None and self.store is not None:
            try:
                dense = self._dense(vector, pool, where, matching, position, epoch, ids)
            except Exception as exc:  # noqa: BLE001 - fall back to keywords for this query
                log.warning("vector query failed, keyword search only: %s", exc)
                fallback = f"vector query failed: {exc}"
        strategy = self.strategy if vector is not None and fallback is None else "bm25"
        return fuse_arrays(ids, dense, keyword, boost, strategy, fallback, rows=allowed)

    def _dense(
        self,
        vector: Vectors,
        pool: int,
        where: Where | None,
        matching: np.ndarray,
        position: np.ndarray,
        epoch: int,
        ids: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Similarity of the allowed items among the store's top ``pool`` vectors matching ``where``: (their
        positions among the allowed items, similarities), None when none of them is there.

        ``matching`` (which rows of the table match ``where``) and ``position`` (each row's position among
        the allowed items, -1 for none) were read under the lock in table ``epoch``; ``ids`` are the allowed ids.

        The store is first asked with the equality clauses alone (a range clause made a Chroma query 28 ms
        against 20 ms; in the in-process copy it is kept at the edge of the p95 goal, ``docs/benchmarks.md``),
        and its first ``pool`` hits matching the whole ``where`` are the full filter's
        top ``pool``. A hit this index cannot tell about (another branch's vector), or a short answer, means the
        full filter is asked, and the equality filter is not tried for the next ``NARROW_BACKOFF`` searches.
        """
        assert self.store is not None
        narrow = equalities(where) if self._narrow_after <= 0 else None
        self._narrow_after -= 1
        found = None
        if narrow is not None:
            first = self._query(vector, pool, narrow)
            with self._lock:
                found = self._filtered(first, pool, where, matching, epoch)
            if found is None:
                self._narrow_after = NARROW_BACKOFF
        if found is None:
            answer = self._query(vector, pool, where)
            with self._lock:
                found = (answer, np.arange(len(answer.similarity)), self._hit_rows(answer))
        answer, taken, rows = found
        similarity = answer.similarity[taken]
        if epoch != self._table.epoch:  # the table was compacted meanwhile: its rows are not those of position
            at = {doc_id: n for n, doc_id in enumerate(ids.tolist())}
            with self._lock:
                by_vector = self._by_vector
                where_at = [at.get(by_vector.get(answer.vector_id(n) or "", ""), -1) for n in taken.tolist()]
            places = np.array(where_at, dtype=np.int64)
        else:
            known = (rows >= 0) & (rows < len(position))
            places = np.full(len(rows), -1, dtype=np.int64)
            places[known] = position[rows[known]]
        chosen = np.flatnonzero(places >= 0)
        if not len(chosen):
            return None
        return places[chosen], similarity[chosen]

    def _query(self, vector: Vectors, k: int, where: Where | None) -> DenseAnswer:
        """The store's top ``k`` vectors matching ``where``, best first."""
        assert self.store is not None
        return self.store.query_arrays(self.collection, vector, k, where, space=self.space)

    def _hit_rows(self, answer: DenseAnswer) -> np.ndarray:
        """The table row of each hit's item (-1: not a current vector of this index). Call under the lock."""
        if answer.rows is not None:
            return self._store_rows.table_rows(answer.ids, answer.rows, self._vector_row, self._table.epoch)
        ids = cast("list[str]", answer.ids)  # a store's own answer: every hit has an id
        return np.fromiter(map(self._vector_row.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))

    def _filtered(
        self, answer: DenseAnswer, pool: int, where: Where | None, matching: np.ndarray, epoch: int
    ) -> tuple[DenseAnswer, np.ndarray, np.ndarray] | None:
        """The first ``pool`` hits of ``answer`` that match ``where``: (``answer``, their positions in it, their
        rows), or None when that cannot be told.

        Call under the lock. ``matching`` says which rows of the table (as of ``epoch``) match ``where``.
        """
        if epoch != self._table.epoch:
            return None  # rows renumbered since: the full query answers
        rows = self._hit_rows(answer)
        ok = np.zeros(len(rows), dtype=bool)
        known = (rows >= 0) & (rows < len(matching))
        ok[known] = matching[rows[known]]
        for n in np.flatnonzero(rows < 0).tolist():  # a vector that is not current: an older version, or unknown
            meta = self._vector_meta.get(answer.vector_id(n) or "")
            if meta is None:
                rows[n] = -2
            else:
                ok[n] = matches(meta, where)
        counted = np.cumsum(ok)
        full = int(np.searchsorted(counted, pool))  # the hit where the count reaches pool (len(hits): never)
        if bool((rows[: full + 1] == -2).any()):
            return None
        if full < len(rows):
            taken = np.flatnonzero(ok[: full + 1])
        elif len(rows) < pool:
            taken = np.flatnonzero(ok)
        else:
            return None
        return answer, taken, rows[taken]
