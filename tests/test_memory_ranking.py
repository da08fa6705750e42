"""The fast ranking paths rank exactly as the straightforward code they replaced.

``bench/turn_overhead.py`` made recall over a 10,000-turn game fast: BM25 scores
vectorised per term (``keyword.py``), the fused ranking ordered by numpy
(``fusion.fuse_arrays``), the vector store asked with the cheap equality filter when
that gives the same top pool (``HybridIndex._dense``), and the relevant-memory
scores computed for every memory at once, then exactly for the few that can
reach the top (``features.MemoryFeatures``). Then recall was made to scale
with the candidates rather than the items: metadata columns kept as numpy
arrays updated on upsert (``metadata_table.MetadataTable``), the search done on table
rows (allowed items as a mask, ``drop`` instead of a ``keep`` call per item,
BM25 as one array, the fusion without dictionaries and the ranking sorted only
as far as asked), the features synced from the index's journal of changes, and
the history block read from an index of the summaries. Each is compared here
with the item-by-item code it replaced (kept below as the reference), on
generated games: same ids, same scores, same parts, same order.
"""

from __future__ import annotations

import hashlib
import math
import random
import sys
from collections import Counter
from typing import Any

import numpy as np
import pytest

from bench.turn_overhead import generate_state
from game.llm.scripted import ScriptedNarrator
from game.memory.base import TurnRecord
from game.memory.manager import GameMemory
from game.memory.search import hybrid
from game.memory.search.bible_view import CANDIDATES, active_at
from game.memory.search.fusion import KEYWORD_WEIGHT, Hit, fuse_arrays
from game.memory.search.hybrid import HybridIndex
from game.memory.search.keyword import BM25Index
from game.memory.search.recall import ScoredMemory, distinct, hybrid_score, recency, score_parts
from game.memory.search.retrieval import PLACE_PRIOR
from game.memory.vectors.inprocess import InProcessVectorStore
from game.memory.vectors.metadata_table import MetadataTable, where_clauses
from game.memory.vectors.stores import VectorHit
from game.text import keywords
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.fakes import CountingEmbedder, FlakyEmbedder


class HashEmbedder:
    """Deterministic bag-of-hashed-words vectors: instant, and similar texts get similar vectors."""

    model_name = "hash-words"
    model_version = "1"

    def embed(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in keywords(text) or ["empty"]:
                out[row, int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % 64] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


# ------------------------------------------------------------ the reference
def reference_bm25(docs: dict[str, str], query: str, allowed=None, k1: float = 1.5, b: float = 0.75):
    """BM25 item by item, as ``keyword.py`` computed it before."""
    counted = {doc_id: Counter(keywords(text)) for doc_id, text in docs.items()}
    n = len(counted)
    if not n:
        return {}
    df: Counter[str] = Counter()
    postings: dict[str, set[str]] = {}
    for doc_id, terms in counted.items():
        for term in terms:
            df[term] += 1
            postings.setdefault(term, set()).add(doc_id)
    lengths = {doc_id: sum(terms.values()) for doc_id, terms in counted.items()}
    avg = sum(lengths.values()) / n or 1.0
    allowed_set = set(allowed) if allowed is not None else None
    out: dict[str, float] = {}
    for term, repeats in Counter(keywords(query)).items():
        if not postings.get(term):
            continue
        idf = repeats * math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
        for doc_id in postings[term]:
            if allowed_set is not None and doc_id not in allowed_set:
                continue
            tf = counted[doc_id][term]
            norm = tf + k1 * (1 - b + b * lengths[doc_id] / avg)
            out[doc_id] = out.get(doc_id, 0.0) + idf * tf * (k1 + 1) / norm
    return out


def _z(values):
    std = float(values.std())
    return (values - values.mean()) / std if std > 1e-9 else np.zeros_like(values)


def reference_fuse(ids, dense, keyword, prior):
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
    if not dense:
        order = [n for n in order if kw[n] > 0 or boost[n] > 0]
    return [Hit(ids[n], float(score[n]), float(dense_values[n]), float(kw[n])) for n in order]


def reference_search(index: HybridIndex, query, k, where, keep=None, query_vector=None, prior=None):
    """``HybridIndex.search`` as it was: one store query with the whole filter, sorted item by item."""
    allowed = [i for i in index._table.matching(where) if keep is None or keep(i)]
    keyword = index.bm25.scores(query, allowed) if allowed else {}
    pool = min(hybrid.DENSE_POOL, max(len(allowed), index._stored, index._in_store))
    if not allowed:
        return []
    vector = query_vector if query_vector is not None else index.embed_query(query)
    space = {"space": index.space} if hasattr(index, "space") else {}  # the embedding-space check, where there is one
    found = index.store.query(index.collection, vector, pool, where, **space)
    allowed_set = set(allowed)
    dense = {doc: h.similarity for h in found if (doc := index._by_vector.get(h.id)) is not None and doc in allowed_set}
    hits = reference_fuse(allowed, dense, keyword, prior or {})
    return hits if k is None else hits[:k]


def reference_search_memories(memory: GameMemory, query, state, k, *, focus=None, exclude=None, query_vector=None):
    """``MemoryRecall.search_memories`` as it was: every memory scored one by one."""
    focus = set(focus or ())
    exclude = exclude or set()
    named, rewritten = memory.query.characters(query)
    places, rewritten = memory.query.places(rewritten)
    focus |= set(named)
    turn = state.turn
    entries = {e.id for e in memory.state.bible if active_at(e, turn)}
    items = memory.memories.snapshot()
    recent_cutoff = turn - memory.config.window_messages // 2

    def keep(doc_id):
        if doc_id in exclude:
            return False
        if doc_id.startswith("bible-"):
            return doc_id in entries
        meta = items[doc_id].metadata if doc_id in items else {}
        return not meta.get("game_turn") or int(meta.get("turn", 0)) <= recent_cutoff

    def involves(doc_id, npcs):
        return bool(set(str(items[doc_id].metadata.get("npcs", "")).split(",")) & npcs)

    prior = {}
    if len(places) == 1:
        place = places[0].lower()
        for doc_id, item in items.items():
            node = str(item.metadata.get("node", "")).lower()
            if node == place or (not node and place in item.text.lower()):
                prior[doc_id] = PLACE_PRIOR
    where = {"session": memory.session_id, "turn": {"$lte": turn}}
    vector = query_vector if rewritten == query else None
    ranked = reference_search(memory.memories, rewritten or query, None, where, keep, query_vector=vector, prior=prior)
    semantic = unit_scale({h.id: h.score for h in ranked})
    for doc_id in items:
        if doc_id not in semantic and focus and involves(doc_id, focus) and keep(doc_id):
            meta = items[doc_id].metadata
            if meta.get("session") == memory.session_id and int(meta.get("turn", 0)) <= turn:
                semantic[doc_id] = 0.0
    query_terms = set(keywords(query)) - {"character", "item", "event", "thread", "player"}
    scored = []
    for doc_id, sem in semantic.items():
        if doc_id not in items:
            continue
        meta = items[doc_id].metadata
        key_terms = set(keywords(str(meta.get("key", "")).replace(":", " ").replace("-", " ")))
        match = involves(doc_id, focus) or bool(key_terms & query_terms)
        terms = (
            sem,
            int(meta.get("importance", 40)),
            recency(turn, int(meta.get("turn", 0)), memory.config.recency_half_life_turns),
            match,
            meta.get("entry_type") == "open_thread",
        )
        scored.append(
            ScoredMemory(
                doc_id,
                items[doc_id].text,
                hybrid_score(*terms),
                sem,
                int(meta.get("turn", 0)),
                str(meta.get("kind")),
                score_parts(*terms),
            )
        )
    scored.sort(key=lambda m: (-m.score, -m.turn, m.id))
    return distinct(scored, k)


def fuse(ids, dense, keyword, prior):
    """``fuse_arrays`` through dicts, as the references take them."""
    id_array = np.empty(len(ids), dtype=object)
    id_array[:] = ids
    kw = np.array([keyword.get(i, 0.0) for i in ids], dtype=np.float64) if keyword else np.zeros(len(ids))
    found = None
    if dense:
        at = [n for n, i in enumerate(ids) if i in dense]
        found = (np.array(at, dtype=np.int64), np.array([dense[ids[n]] for n in at], dtype=np.float64))
    boost = np.array([prior.get(i, 0.0) for i in ids]) if prior else None
    return fuse_arrays(id_array, found, kw, boost, "", floor=min(dense.values()) if dense else None).hits()


def unit_scale(scores):
    """Min-max scale to [0, 1] (all 1.0 when they are all equal), as recall scales fused scores."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {i: (v - low) / span if span > 1e-9 else 1.0 for i, v in scores.items()}


class ReferenceStore:
    """An exact vector store in plain Python (a dict per collection and a sort), the oracle the in-process index
    (``inprocess.py``) and the mirror are checked against: it shares no code with ``game/memory``."""

    def __init__(self):
        self.collections = {}

    def upsert(self, collection, ids, vectors, metadatas, space=None):
        rows = self.collections.setdefault(collection, {})
        for doc_id, vector, meta in zip(ids, np.asarray(vectors, dtype=np.float32), metadatas, strict=True):
            rows[doc_id] = (vector, dict(meta))  # a repeated id keeps its place; a deleted one comes back last

    def delete(self, collection, ids):
        for doc_id in ids:
            self.collections.get(collection, {}).pop(doc_id, None)

    @staticmethod
    def holds(meta, where):
        clauses = (where or {}).get("$and", [where] if where else [])
        for clause in clauses:
            for key, wanted in clause.items():
                value = meta.get(key)
                ops = wanted if isinstance(wanted, dict) else {"$eq": wanted}
                for op, bound in ops.items():
                    number = isinstance(value, int | float) and not isinstance(value, bool)
                    if (op == "$eq" and value != bound) or (op == "$lte" and not (number and value <= bound)):
                        return False
        return True

    def query(self, collection, vector, k, where=None, space=None):
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        found = [
            VectorHit(doc_id, float(row @ vector))
            for doc_id, (row, meta) in self.collections.get(collection, {}).items()
            if self.holds(meta, where)
        ]
        return sorted(found, key=lambda hit: -hit.similarity)[: max(k, 0)]

    def metadata(self, collection, where=None):
        return {i: dict(m) for i, (_, m) in self.collections.get(collection, {}).items() if self.holds(m, where)}

    def existing(self, collection, ids):
        return {i for i in ids if i in self.collections.get(collection, {})}

    def count(self, collection):
        return len(self.collections.get(collection, {}))


class ReferenceTable:
    """``metadata_table.MetadataTable`` as it was: Python list columns, arrays rebuilt after every change."""

    def __init__(self):
        self.ids, self.rows, self.columns = [], {}, {}

    def upsert(self, ids, metadatas):
        for doc_id, meta in zip(ids, metadatas, strict=True):
            row = self.rows.get(doc_id)
            if row is None:
                row = len(self.ids)
                self.rows[doc_id] = row
                self.ids.append(doc_id)
                for column in self.columns.values():
                    column.append(None)
            for key in set(self.columns) | set(meta):
                column = self.columns.setdefault(key, [None] * len(self.ids))
                column[row] = meta.get(key)

    def delete(self, ids):
        for doc_id in ids:
            row = self.rows.pop(doc_id, None)
            if row is not None:
                self.ids[row] = None

    def compact(self):
        keep = [row for row, doc_id in enumerate(self.ids) if doc_id is not None]
        self.ids = [self.ids[row] for row in keep]
        self.rows = {doc_id: n for n, doc_id in enumerate(self.ids)}
        self.columns = {key: [column[row] for row in keep] for key, column in self.columns.items()}

    def metadata(self, doc_id):
        row = self.rows[doc_id]
        return {key: column[row] for key, column in self.columns.items() if column[row] is not None}

    def mask(self, where):
        mask = np.array([doc_id is not None for doc_id in self.ids], dtype=bool)
        for key, op, value in where_clauses(where):
            column = self.columns.get(key, [None] * len(self.ids))
            array = np.empty(len(column), dtype=object)
            array[:] = column
            if op == "$eq":
                mask &= np.equal(array, value).astype(bool)
                continue
            numeric = all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in column)
            if not numeric or isinstance(value, bool) or not isinstance(value, int | float):
                mask &= np.array(
                    [isinstance(v, int | float) and not isinstance(v, bool) and v <= value for v in column], dtype=bool
                )
            else:
                numbers = np.array([np.nan if v is None else v for v in column], dtype=np.float64)
                with np.errstate(invalid="ignore"):
                    mask &= numbers <= value
        return mask

    def matching(self, where):
        return [self.ids[row] for row in np.flatnonzero(self.mask(where))]


def reference_history_items(memory: GameMemory, action, state, query_vector):
    """``MemoryRecall._history_items`` as it was: every summary filtered and mapped by id."""
    summaries = [s for s in memory.state.summaries if s.turn <= state.turn]
    by_id = {s.id: s for s in summaries}
    chosen = {s.id: 1.0 for s in summaries[-memory.config.recent_summaries :]}
    parts = {i: {"recency": 1.0} for i in chosen}
    where = {"session": memory.session_id, "turn": {"$lte": state.turn}}
    for hit in reference_search(memory.history, action, memory.config.history_k, where, query_vector=query_vector):
        if hit.id in by_id and hit.id not in chosen:
            chosen[hit.id] = round(hit.score, 3)
            parts[hit.id] = {"semantic": chosen[hit.id]}
    ordered = sorted(chosen, key=lambda i: -by_id[i].turn)
    return [(by_id[i].labelled(), chosen[i], f"history:{i}", parts[i]) for i in ordered]


# ------------------------------------------------------------------ the tests
def test_a_replaced_text_updates_only_what_changed_and_scores_stay_exact():
    """A document indexed again (a turn whose context grew) keeps the arrays of the terms whose frequency did
    not change, and the scores are those of the new texts: a term gained, lost, repeated, or merely longer."""
    docs = {f"d{n}": f"fog lantern bridge {'moon ' * (n % 3)}turn {n}" for n in range(30)}
    index = BM25Index()
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    query = "fog moon lantern troll"
    assert index.scores(query) == reference_bm25(docs, query)
    kept = index._arrays["fog"]
    for doc_id, text in [
        ("d4", "fog lantern bridge moon moon moon turn 4"),  # moon repeated more
        ("d5", "fog lantern bridge turn 5 troll"),  # moon lost, troll gained
        ("d6", "fog lantern bridge turn 6 and a longer context now"),  # only longer
    ]:
        index.add(doc_id, text)
        docs[doc_id] = text
        assert index.scores(query) == reference_bm25(docs, query)
    assert index._arrays["fog"] is kept  # no frequency of "fog" changed: its arrays were never built again
    docs["d7"] = "fog lantern bridge moon moon moon moon turn 7"
    index.add("d7", docs["d7"])
    assert "moon" not in index._arrays
    assert index.warm() == 1 and "moon" in index._arrays  # built again ahead of the query that needs it
    assert "bridge" not in index._arrays  # never asked for: not built at all
    assert index.scores(query) == reference_bm25(docs, query)


def test_bm25_scores_are_the_item_by_item_scores():
    rng = random.Random(3)
    words = [
        "fog",
        "lantern",
        "swamp",
        "bridge",
        "troll",
        "harp",
        "moon",
        "ring",
        "willow",
        "salt",
        "ferry",
        "coin",
        "song",
        "bell",
    ]
    index, docs = BM25Index(), {}
    for n in range(400):
        doc_id = f"d{rng.randrange(300)}"  # re-adds replace: at times with the same text but a word, as turns do
        if doc_id in docs and n % 3:
            text = docs[doc_id] + " " + rng.choice(words)
        else:
            text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        index.add(doc_id, text)
        docs[doc_id] = text
        if n % 7 == 0:
            gone = rng.choice(sorted(docs))
            index.remove(gone)
            del docs[gone]
        if n % 40 == 0:  # scored between changes too: each change drops what it made stale of the kept arrays
            assert index.scores("fog troll moon moon") == reference_bm25(docs, "fog troll moon moon")
            if n % 80 == 0:
                index.warm()
    for query in ["fog on the swamp", "troll troll bridge", "moon", "nothing matches", "ring willow salt coin"]:
        allowed = rng.sample(sorted(docs), len(docs) // 2)
        assert index.scores(query) == reference_bm25(docs, query)
        assert index.scores(query, allowed) == reference_bm25(docs, query, allowed)
        assert index.scores(query, []) == {}


@pytest.mark.parametrize("with_dense", [True, False])
def test_fuse_orders_as_the_sorted_loop(with_dense):
    rng = random.Random(5)
    ids = [f"m{n}" for n in rng.sample(range(2000), 600)]
    keyword = {i: float(rng.choice([0, 0, 1, 2.5, 3])) for i in ids}  # many ties
    dense = {i: rng.choice([0.1, 0.2, 0.3]) for i in ids[:400]} if with_dense else {}
    prior = {i: PLACE_PRIOR for i in ids[::37]}
    assert fuse(ids, dense, keyword, prior) == reference_fuse(ids, dense, keyword, prior)
    assert fuse(ids, dense, keyword, {}) == reference_fuse(ids, dense, keyword, {})


@pytest.fixture(scope="module", params=["forward", "branch"])
def big_memory(request):
    """A generated 600-turn game (summaries, 150 extra Bible facts) in an in-process store.

    ``forward``: then a few turns played (each embedded before its context was complete, so older versions of
    them stay in the store) and Bible facts retired (their vectors stay too). ``branch``: restored to turn 450,
    so the store also holds the session's turns 451-600, which are never returned.
    """
    pack = load_pack(content_root() / "fantasy_001")
    memory = GameMemory(
        pack, ScriptedNarrator(pack), store=InProcessVectorStore(), embedder=HashEmbedder(), background=False
    )
    memory.prepare()
    full = generate_state(pack, 600, 150, seed=4)
    memory.restore(full.model_copy(deep=True))
    state = new_game(pack)
    if request.param == "forward":
        for turn in range(601, 606):
            state.turn = turn
            memory.record_turn(
                TurnRecord(turn, f"ask garrick about the fog {turn}", "Fog rolls in.", "forest_edge", [], ["garrick"]),
                state,
            )
            memory.flush()  # embeds the newest turns before their context is complete: older versions
        for entry in [e for e in memory.state.bible if e.status == "active" and e.source == "memory_note"][:20]:
            memory.review_bible(entry.id, "archive", 605)
        memory.flush()
    else:
        older = full.model_copy(deep=True)
        del older.log[450:]
        older.summaries = [s for s in older.summaries if s.turn <= 450]
        memory.restore(older)  # a branch: turns 451-600 stay in the store, never returned
        memory.flush()
        state.turn = 450
    return memory, state


QUERIES = [
    ("look", None, None),
    ("ask garrick about hal", {"garrick"}, None),
    ("what did I find on the Fogbound Path?", None, None),
    ("what did I pick up at the hunter's lodge?", {"garrick"}, {"turn-448", "bible-3"}),
    ("where is the moonlight harp", None, None),
    ("say the fog never lifts here", {"alicia"}, None),
]


@pytest.mark.parametrize("pool", [hybrid.DENSE_POOL, 120])
@pytest.mark.parametrize(("query", "focus", "exclude"), QUERIES)
def test_search_memories_ranks_as_the_item_by_item_code(big_memory, monkeypatch, pool, query, focus, exclude):
    memory, state = big_memory
    monkeypatch.setattr(hybrid, "DENSE_POOL", pool)  # a pool smaller than the session: items outside it take the floor
    monkeypatch.setattr(hybrid, "NARROW_BACKOFF", 0)  # every search tries the equality-filter query first
    vector = memory.embedder.embed([query])[0]
    for turn in (state.turn, 300):
        at = state.model_copy(update={"turn": turn})
        got = memory.search_memories(query, at, 12, focus=focus, exclude=exclude, query_vector=vector)
        want = reference_search_memories(memory, query, at, 12, focus=focus, exclude=exclude, query_vector=vector)
        assert got == want
        assert len(got) == 12


def test_hybrid_search_matches_the_one_query_search(big_memory, monkeypatch):
    memory, state = big_memory
    monkeypatch.setattr(hybrid, "NARROW_BACKOFF", 0)
    for query in ("fog lantern", "ask garrick about hal"):
        vector = memory.embedder.embed([query])[0]
        for turn in (state.turn, 200):
            where = {"session": memory.session_id, "turn": {"$lte": turn}}
            got = memory.memories.search(query, None, where, query_vector=vector)
            assert got.hits == reference_search(memory.memories, query, None, where, query_vector=vector)
            history = memory.history.search(query, 3, where, query_vector=vector)
            assert history.hits == reference_search(memory.history, query, 3, where, query_vector=vector)


def test_mirrored_chroma_answers_as_an_exact_store(tmp_path):
    """The in-memory copy of a local Chroma index answers as an exact store would, and writes reach Chroma."""
    from game.memory.vectors.chroma import open_chroma
    from game.memory.vectors.mirror import MirroredStore

    rng = np.random.default_rng(7)
    COLLECTION = "memories__mirror-test"  # a collection of a model (a bare name is a legacy one, dropped at open)
    chroma = open_chroma(tmp_path / "index")
    mirrored, exact = MirroredStore(chroma), ReferenceStore()
    for batch in range(6):
        ids = [f"s{batch % 2}:m{n}" for n in rng.choice(400, 60, replace=False)]  # re-upserts replace
        vectors = rng.normal(size=(60, 16)).astype(np.float32)
        metas = [{"session": f"s{batch % 2}", "turn": int(t), "kind": "turn"} for t in rng.integers(0, 50, 60)]
        for store in (mirrored, exact):
            store.upsert(COLLECTION, ids, vectors, metas)
    gone = [f"s0:m{n}" for n in range(0, 400, 9)]
    for store in (mirrored, exact):
        store.delete(COLLECTION, gone)

    def answers(store):
        out = []
        for where in (None, {"session": "s0"}, {"session": "s1", "turn": {"$lte": 20}}, {"turn": {"$lte": -1}}):
            for k in (1, 10, 1000):
                hits = store.query(COLLECTION, query, k, where)
                out.append([(h.id, h.similarity) for h in hits])
        return out

    def same(got, expected):
        """The same ids in the same order, similarities equal but for the last bits (the copy's matrix is
        column-major, so its sums run in another order than the in-process store's)."""
        assert [[i for i, _ in hits] for hits in got] == [[i for i, _ in hits] for hits in expected]
        for hits, wanted in zip(got, expected, strict=True):
            assert np.allclose([s for _, s in hits], [s for _, s in wanted], rtol=1e-6, atol=1e-6)
        return True

    query = rng.normal(size=16).astype(np.float32)
    want = answers(exact)
    assert same(answers(mirrored), want)
    assert mirrored.count(COLLECTION) == exact.count(COLLECTION)
    assert mirrored.metadata(COLLECTION, {"session": "s1"}) == exact.metadata(COLLECTION, {"session": "s1"})
    assert mirrored.existing(COLLECTION, ["s0:m0", "s0:m1", "nope"]) == exact.existing(
        COLLECTION, ["s0:m0", "s0:m1", "nope"]
    )
    mirrored.flush()  # the copy writes to Chroma behind: every write lands first (no snapshot is written)
    chroma.close()
    reopened = MirroredStore(open_chroma(tmp_path / "index"))  # read back from Chroma into a new copy
    assert same(answers(reopened), want)
    reopened.close()


METAS = [
    lambda rng: {"session": rng.choice(["a", "b"]), "turn": rng.randint(0, 40), "kind": rng.choice(["turn", "bible"])},
    lambda rng: {"session": rng.choice(["a", "b"]), "turn": rng.randint(0, 40), "flag": rng.choice([True, False, 1])},
    lambda rng: {"session": "a", "turn": rng.choice([3, 7.5, None]), "tag": rng.choice(["x", 2, 2.0, None])},
    lambda rng: {"session": rng.choice(["a", "c"]), "turn": rng.choice([5, "late", True])},  # a mixed column
    lambda rng: {"node": rng.choice(["lodge", "path"])},  # no session, no turn
]
WHERES = [
    None,
    {},
    {"session": "a"},
    {"session": "zzz"},
    {"session": "a", "turn": {"$lte": 20}},
    {"$and": [{"session": {"$eq": "b"}}, {"turn": {"$lte": 7.5}}]},
    {"turn": {"$lte": -1}},
    {"turn": {"$lte": True}},
    {"flag": True},
    {"flag": 1},
    {"flag": 1.0},
    {"tag": 2},
    {"tag": None},
    {"missing": None},
    {"missing": "x"},
    {"missing": {"$lte": 3}},
    {"kind": "bible", "session": "a"},
]


def test_metadata_table_filters_as_the_list_table():
    """Columns kept as arrays (codes, numbers, a count of non-numbers) filter as rebuilt lists did."""
    rng = random.Random(8)
    table, want = MetadataTable(), ReferenceTable()
    for step in range(600):
        doc_id = f"d{rng.randrange(120)}"
        if rng.random() < 0.2:
            gone = [f"d{rng.randrange(120)}" for _ in range(rng.randint(1, 6))]
            table.delete(gone)
            want.delete(gone)
        else:
            meta = rng.choice(METAS)(rng)
            meta = {k: v for k, v in meta.items() if v is not None or rng.random() < 0.5}
            table.upsert([doc_id], [meta])
            want.upsert([doc_id], [meta])
        if table.needs_compaction() or step % 97 == 0:
            assert table.compact() == [row for row, i in enumerate(want.ids) if i is not None]
            want.compact()
        assert table.ids == want.ids and table.rows == want.rows
        if step % 10 == 0:
            for where in WHERES:
                assert table.mask(where).tolist() == want.mask(where).tolist(), where
                assert table.matching(where) == want.matching(where)
            for doc_id in table.rows:
                assert table.metadata(doc_id) == want.metadata(doc_id)
    with pytest.raises(ValueError):
        table.mask({"turn": {"$gt": 3}})


def test_bm25_score_array_holds_the_scores():
    rng = random.Random(2)
    words = ["fog", "lantern", "swamp", "bridge", "troll", "harp", "moon"]
    index = BM25Index()
    for n in range(300):
        index.add(f"d{rng.randrange(200)}", " ".join(rng.choice(words) for _ in range(rng.randint(1, 12))))
        if n % 9 == 0:
            index.remove(f"d{rng.randrange(200)}")
    for query in ["fog fog moon", "troll", "nothing"]:
        total = index.score_array(query)
        assert {i: float(total[index.row(i)]) for i in index.scores(query)} == index.scores(query)
        assert not any(total[index.row(i)] for i in set(index._docs) - set(index.scores(query)))
    assert BM25Index().score_array("fog") is None


@pytest.mark.parametrize("with_dense", [True, False])
def test_fused_top_k_is_the_head_of_the_full_ranking(with_dense):
    """``hits(k)`` sorts only the best k (and the ties of the k-th) yet gives the full ranking's first k."""
    rng = random.Random(9)
    ids = [f"m{n}" for n in rng.sample(range(5000), 900)]
    keyword = {i: float(rng.choice([0, 0, 0, 1, 2])) for i in ids}  # many ties, across the k-th too
    dense = {i: rng.choice([0.1, 0.2]) for i in ids[:500]} if with_dense else {}
    prior = {i: PLACE_PRIOR for i in ids[::50]}
    want = reference_fuse(ids, dense, keyword, prior)
    id_array = np.array(ids, dtype=object)
    found = None
    if dense:
        at = [n for n, i in enumerate(ids) if i in dense]
        found = (np.array(at), np.array([dense[ids[n]] for n in at]))
    kw = np.array([keyword[i] for i in ids])
    boost = np.array([prior.get(i, 0.0) for i in ids])
    for k in (0, 1, 3, 10, 17, 100, 899, 900, 2000, None):
        fused = fuse_arrays(id_array, found, kw, boost, "")
        assert fused.hits(k) == (want if k is None else want[:k]), k
        assert sorted(fused.selected().tolist()) == sorted(fused.order.tolist())
    assert fuse(ids, {"elsewhere": 0.05, **dense}, keyword, prior) == reference_fuse(
        ids, {"elsewhere": 0.05, **dense}, keyword, prior
    )  # the floor of a dense score outside the ids, as before


@pytest.mark.parametrize("backend", ["inprocess", "mirror"])
def test_recall_stays_exact_as_the_index_changes(monkeypatch, tmp_path, backend):
    """The features follow the index's journal: searches between additions, replacements, removals and a
    compaction of the index's table rank as the reference does, and the history block is the one it was.

    ``mirror``: the game's own store, whose dense answers are rows of its copy that the index maps to its
    table with an array kept up to date (``store_rows.StoreRows``); the reference asks it for vector ids."""
    monkeypatch.setattr(hybrid, "NARROW_BACKOFF", 0)
    pack = load_pack(content_root() / "fantasy_001")
    if backend == "mirror":
        from game.memory.vectors.chroma import open_chroma
        from game.memory.vectors.mirror import MirroredStore

        store: Any = MirroredStore(open_chroma(tmp_path / "index"))
    else:
        store = InProcessVectorStore()
    memory = GameMemory(pack, ScriptedNarrator(pack), store=store, embedder=HashEmbedder(), background=False)
    memory.prepare()
    memory.restore(generate_state(pack, 150, 60, seed=6))
    state = new_game(pack)
    state.turn = 150
    queries = ["ask garrick about hal", "what did I find on the Fogbound Path?", "look at the lantern"]
    focus = {"alicia", "old_hunter"}

    def check(k=8):
        for query in queries:
            vector = memory.embedder.embed([query])[0]
            for at_turn in (state.turn, 90):
                at = state.model_copy(update={"turn": at_turn})
                got = memory.search_memories(query, at, k, focus=focus, query_vector=vector)
                assert got == reference_search_memories(memory, query, at, k, focus=focus, query_vector=vector)
                # what a block shows is left out, and not pulled back in by the focus: the best that involve it
                shown = {m.id for m in got if "match" in m.parts} or {m.id for m in got[:3]}
                got = memory.search_memories(query, at, k, focus=focus, exclude=shown, query_vector=vector)
                assert not shown & {m.id for m in got}
                assert got == reference_search_memories(
                    memory, query, at, k, focus=focus, exclude=shown, query_vector=vector
                )
                history = memory._recall._history_items(query, at, vector, {}, {})
                assert [(i.text, i.score, i.source, i.parts) for i in history] == reference_history_items(
                    memory, query, at, vector
                )

    check()
    for turn in range(151, 157):  # additions and replacements (each turn re-indexes the two before it)
        state.turn = turn
        memory.record_turn(
            TurnRecord(turn, f"ask garrick about the lantern {turn}", "The lantern gutters.", "forest_edge", [], []),
            state,
        )
        memory.flush()
        check()
    facts = [e for e in memory.state.bible if e.status == "active" and e.source in ("memory_note", "consolidation")]
    for entry in facts[: len(facts) // 2]:  # removals
        memory.review_bible(entry.id, "archive", state.turn)
    memory.flush()
    check()
    index = memory.memories
    epoch = index.table.epoch
    with index.lock:  # most of the index's rows die: its table is compacted (rows renumbered)
        index.remove(sorted(i for i in index.items if i.startswith("turn-") and int(i[5:]) % 3))
    assert index.table.epoch > epoch
    check()
    for turn in range(157, 160):  # and changes after the compaction
        state.turn = turn
        memory.record_turn(TurnRecord(turn, f"light the lantern {turn}", "It flares.", "forest_edge", [], []), state)
        memory.flush()
        check()
    if backend == "inprocess":  # no store rows to map: nothing kept for a mapping that never comes
        assert not memory.memories._store_rows._changed
    memory.close()


def test_a_big_restored_game_is_frozen_for_the_garbage_collector(monkeypatch):
    """A full collection over a big game's objects paused a turn for ~0.5 s: a big restore freezes them, the
    next restore unfreezes first (so the replaced state can be collected), a small one leaves nothing frozen."""
    import gc

    from game.memory import manager

    pack = load_pack(content_root() / "fantasy_001")
    memory = GameMemory(pack, ScriptedNarrator(pack), store=None, embedder=None, background=False)
    memory.prepare()
    monkeypatch.setattr(manager, "FREEZE_FROM", 100)
    try:
        gc.unfreeze()
        memory.restore(generate_state(pack, 120, 5, seed=1))
        assert gc.get_freeze_count() > 0
        memory.restore(generate_state(pack, 50, 5, seed=1))
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_the_mirror_reuses_a_querys_products_only_while_its_rows_are_unchanged():
    """A turn's recall asks one collection with one vector under several filters, and the copy reuses that
    vector's products with every row; a row added or replaced in between is seen by the next query."""
    from game.memory.vectors.inprocess import CollectionCopy

    rng = np.random.default_rng(3)
    copy, exact = CollectionCopy(), ReferenceStore()
    ids = [f"m{n}" for n in range(50)]
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    metas = [{"turn": n} for n in range(50)]
    copy.upsert(ids, vectors, metas)
    exact.upsert("c", ids, vectors, metas)
    query = rng.normal(size=8).astype(np.float32)

    def same() -> None:
        for where in (None, {"turn": {"$lte": 20}}):
            got_ids, got_sims = copy.top(query, 5, where)
            want = exact.query("c", query, 5, where)
            assert got_ids == [h.id for h in want] and np.allclose(got_sims, [h.similarity for h in want])

    same()
    for store in (copy, exact):  # a row replaced (as many rows as before): now the best
        store.upsert(*(["c"] if store is exact else []), ["m7"], query[None, :] * 3, [{"turn": 7}])
    same()
    assert copy.top(query, 1, None)[0] == ["m7"]
    for store in (copy, exact):  # a row added
        store.upsert(*(["c"] if store is exact else []), ["new"], query[None, :] * 2, [{"turn": 60}])
    same()
    assert copy.top(query, 2, None)[0] == ["m7", "new"]
    copy.delete(["m7"])
    exact.delete("c", ["m7"])
    same()


def test_the_copys_filters_follow_every_write():
    """The copy's metadata table follows every write (rows added, replaced with another value, deleted, a batch
    repeating an id, a row without the key): every query, interleaved with writes, answers as an exact store."""
    from game.memory.vectors.inprocess import CollectionCopy

    rng = np.random.default_rng(11)
    copy, exact = CollectionCopy(), ReferenceStore()
    for step in range(40):
        count = int(rng.integers(1, 6))
        ids = [f"m{n}" for n in rng.integers(0, 60, count)]  # repeats: re-upserts, and ids twice in a batch
        vectors = rng.normal(size=(count, 8)).astype(np.float32)
        metas = [{"session": f"s{rng.integers(0, 3)}", "turn": int(rng.integers(0, 30))} for _ in ids]
        if step % 7 == 3:
            metas[0] = {"turn": 5}  # a row without the key at all
        last = {doc_id: n for n, doc_id in enumerate(ids)}  # a batch repeating an id keeps its last (as Chroma)
        keep = sorted(last.values())
        batch = [ids[n] for n in keep], vectors[keep], [metas[n] for n in keep]
        copy.upsert(*batch)
        exact.upsert("c", *batch)
        if step % 5 == 4:
            gone = [f"m{n}" for n in rng.integers(0, 60, 3)]
            copy.delete(gone)
            exact.delete("c", gone)
        query = rng.normal(size=8).astype(np.float32)
        for where in ({"session": "s0"}, {"session": "s1", "turn": {"$lte": 15}}, {"session": "s2"}):
            got_ids, got_sims = copy.top(query, 10, where)
            want = exact.query("c", query, 10, where)
            assert got_ids == [h.id for h in want], (step, where)
            assert np.allclose(got_sims, [h.similarity for h in want], rtol=1e-6, atol=1e-6)


def test_recall_embeds_an_action_and_its_rewrite_in_one_batch(monkeypatch):
    """A named character leaves the memory query's text (``query.py``), so recall embeds two texts: one batch,
    whose answer is the one of embedding each alone (with this embedder and the ONNX one). When that batch
    fails, every search falls back to keywords and says so."""
    pack = load_pack(content_root() / "fantasy_001")
    spy = CountingEmbedder(HashEmbedder())
    memory = GameMemory(pack, ScriptedNarrator(pack), store=InProcessVectorStore(), embedder=spy, background=False)
    memory.prepare()
    memory.restore(generate_state(pack, 120, 40, seed=8))
    memory.flush()
    state = new_game(pack)
    state.turn = 120
    action = "ask garrick about the lantern"

    def shown(context):
        return [(b.name, [(i.text, i.score, i.source, i.parts) for i in b.items]) for b in context.blocks]

    blank = memory.recall("   ", state)  # nothing to search by meaning (the pipeline refuses a blank action)
    assert blank.retrieval_meta["strategies"]["memories"] == "bm25"
    spy.batches.clear()
    batched = memory.recall(action, state)
    assert spy.batches == [[action, "ask about the lantern"]]
    batch = HybridIndex.embeddings
    monkeypatch.setattr(HybridIndex, "embeddings", lambda self, queries: [batch(self, [q])[0] for q in queries])
    spy.batches.clear()
    alone = memory.recall(action, state)
    assert spy.batches == [[action], ["ask about the lantern"]]  # the same texts, one call each
    assert shown(batched) == shown(alone)
    assert any(b.name == "relevant_memories" and b.items for b in batched.blocks)

    monkeypatch.undo()
    broken = FlakyEmbedder(spy)
    memory.embedder = memory.memories.embedder = memory.history.embedder = broken
    failed = memory.recall(action, state)
    assert failed.retrieval_meta["strategies"]["memories"] == "bm25"
    assert "memories: query embedding failed: GPU fell off the bus" in failed.retrieval_meta["fallback"]


def test_the_worker_prepares_the_next_recall_after_a_recorded_turn():
    """After a turn is recorded the memory worker builds what the next recall reads whatever the action (the
    Story Bible view, the keyword arrays of the words that turn changed), so that recall finds them ready; and
    a Story Bible section no entry of which changed keeps its block."""
    pack = load_pack(content_root() / "fantasy_001")
    memory = GameMemory(pack, ScriptedNarrator(pack), store=InProcessVectorStore(), embedder=HashEmbedder())
    memory.prepare()
    memory.restore(generate_state(pack, 60, 30, seed=9))
    state = new_game(pack)
    state.turn = 60
    memory.recall("look", state)
    threads = memory._recall.bible_view(60).threads
    assert threads.name == "open_threads" and threads.items
    for turn in (61, 62):
        state.turn = turn
        version = memory.bible_version
        note = f"The player hid a brass lantern under stone {turn}."
        memory.record_turn(TurnRecord(turn, "hide the lantern", "Hidden.", "forest_edge", [], [], notes=[note]), state)
        memory.flush()
        view = memory._recall._bible._view
        assert view is not None and view.key[0] == memory.bible_version and view.first == turn
        assert memory.memories.bm25._stale == set()
        assert memory._recall.bible_view(turn) is view  # the recall's own call finds it ready
        assert memory.bible_version != version  # the note changed the Story Bible, not its threads
        assert view.threads is threads
    memory.close()


def test_near_copies_crowding_the_top_rank_as_the_item_by_item_code(monkeypatch):
    """A game that repeats itself: the same room description forty times and the same fact noted again and again.
    The fast ranking counts near-copies once when it picks the memories it scores exactly, and scores only the
    best of each; what it returns is still the reference's ranking."""
    monkeypatch.setattr(hybrid, "NARROW_BACKOFF", 0)
    pack = load_pack(content_root() / "fantasy_001")
    memory = GameMemory(
        pack, ScriptedNarrator(pack), store=InProcessVectorStore(), embedder=HashEmbedder(), background=False
    )
    memory.prepare()
    memory.restore(generate_state(pack, 100, 20, seed=12))
    state = new_game(pack)
    for turn in range(101, 161):
        state.turn = turn
        action, narration = ("look", "Mist curls between the old trees.") if turn % 3 else ("rest", "You rest.")
        memory.record_turn(TurnRecord(turn, action, narration, "forest_edge", [], []), state)
    memory.flush()
    for query, focus in [("look at the mist", None), ("rest under the trees", {"garrick"}), ("look", None)]:
        vector = memory.embedder.embed([query])[0]
        for at_turn, k in [(160, 12), (160, 40), (130, 8)]:
            at = state.model_copy(update={"turn": at_turn})
            got = memory.search_memories(query, at, k, focus=focus, query_vector=vector)
            assert got == reference_search_memories(memory, query, at, k, focus=focus, query_vector=vector)
            assert len({m.text.split(": ", 1)[-1] for m in got}) == len(got)  # no two copies of one text


def test_the_story_bible_view_is_what_each_entry_says_at_every_turn():
    """Recall's Story Bible view is made in one pass over the Bible; at any turn it holds exactly the entries
    active then (a restored save's later entries, superseded and archived ones included up to their end), each
    section's entries as filtering the active ones gives them, and the next turn at which that changes."""
    pack = load_pack(content_root() / "fantasy_001")
    memory = GameMemory(pack, ScriptedNarrator(pack), store=None, embedder=None, background=False)
    memory.prepare()
    memory.restore(generate_state(pack, 120, 60, seed=14))
    facts = [e for e in memory.state.bible if e.status == "active" and e.source != "content"]
    for n, entry in enumerate(facts[:12]):
        memory.review_bible(entry.id, ("pin", "archive", "pin")[n % 3], 60 + n)
    characters = [e for e in memory.state.bible if e.entry_type == "character" and e.status == "active"]
    memory.review_bible(characters[-1].id, "pin", 70)
    for n, entry in enumerate(facts[12:18]):  # newer facts of the same keys: the old ones are superseded then
        assert memory.bible is not None
        memory.bible.propose(
            entry.entry_type,
            entry.canonical_key,
            entry.title,
            f"{entry.content} (again)",
            turn=80 + n,
            importance=entry.importance,
            source=entry.source,
        )
    for n, importance in enumerate((29, 30, 35, 69, 70)):  # each side of the thresholds of the sections
        memory.bible.propose(
            "open_thread", f"thread:edge-{n}", "Edge", f"A thread {n}", turn=90, importance=importance, source="effect"
        )
        memory.bible.propose(
            "world_rule", f"rule:edge-{n}", "Edge", f"A rule {n}", turn=90, importance=importance, source="effect"
        )
    memory.bible_version += 1
    bible = memory.state.bible
    assert {e.status for e in bible} >= {"active", "superseded", "archived"} and any(e.pinned for e in bible)
    for turn in (0, 1, 30, 59, 60, 61, 65, 70, 71, 80, 82, 85, 90, 119, 120, 500):
        view = memory._recall.bible_view(turn)
        active = [e for e in bible if active_at(e, turn)]
        later = [e.source_turn for e in bible if e.source_turn > turn]
        later += [
            e.ended_turn
            for e in bible
            if e.status in ("superseded", "archived") and e.ended_turn and e.ended_turn > turn
        ]
        assert view.active == active and view.active_ids == {e.id for e in active}
        assert view.horizon == min(later, default=sys.maxsize)
        pinned = [e for e in active if e.pinned]
        rest = [e for e in active if not e.pinned]
        assert {i.source for i in view.pinned.items} == {e.id for e in pinned}
        assert {e.id for e in view.characters} == {e.id for e in rest if e.entry_type == "character"}
        unsaid = {e.id for e in rest if e.entry_type in ("style_rule", "safety_rule")}
        assert view.shown == {e.id for e in pinned} | unsaid  # world and item rules are searched, not shown
        threads = [e for e in rest if e.entry_type == "open_thread" and e.importance >= 30]
        offered = {e.id for e in sorted(threads, key=lambda e: (-e.importance, -e.source_turn))[:CANDIDATES]}
        assert view.thread_ids == offered and {i.source for i in view.threads.items} == offered
