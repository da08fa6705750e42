"""The fast ranking paths rank exactly as the straightforward code they replaced.

``bench/turn_overhead.py`` made recall over a 10,000-turn game fast: BM25 scores
vectorised per term (``keyword.py``), the fused ranking ordered by numpy
(``hybrid.fuse``), the vector store asked with the cheap equality filter when
that gives the same top pool (``HybridIndex._dense``), and the relevant-memory
scores computed for every memory at once, then exactly for the few that can
reach the top (``retrieval.MemoryFeatures``). Each is compared here with the
item-by-item code it replaced (kept below as the reference), on generated
games: same ids, same scores, same parts, same order.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter

import numpy as np
import pytest

from bench.turn_overhead import generate_state
from game.llm.scripted import ScriptedNarrator
from game.memory import hybrid
from game.memory.base import TurnRecord
from game.memory.hybrid import KEYWORD_WEIGHT, Hit, HybridIndex, fuse
from game.memory.keyword import BM25Index
from game.memory.manager import GameMemory
from game.memory.recall import ScoredMemory, distinct, hybrid_score, recency, score_parts, unit_scale
from game.memory.retrieval import PLACE_PRIOR, active_at
from game.memory.stores import InProcessVectorStore
from game.text import keywords
from game.world.loader import content_root, load_pack
from game.world.state import new_game


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


# ------------------------------------------------------------------ the tests
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
        doc_id = f"d{rng.randrange(300)}"  # re-adds replace
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        index.add(doc_id, text)
        docs[doc_id] = text
        if n % 7 == 0:
            gone = rng.choice(sorted(docs))
            index.remove(gone)
            del docs[gone]
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


def test_mirrored_chroma_answers_as_the_inprocess_store(tmp_path):
    """The in-memory copy of a local Chroma index answers as an exact store would, and writes reach Chroma."""
    from game.memory.mirror import MirroredStore
    from game.memory.stores import open_chroma

    rng = np.random.default_rng(7)
    COLLECTION = "memories__mirror-test"  # a collection of a model (a bare name is a legacy one, dropped at open)
    chroma = open_chroma(tmp_path / "index")
    mirrored, exact = MirroredStore(chroma), InProcessVectorStore()
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
                out.append([(h.id, round(h.similarity, 5)) for h in hits])
        return out

    query = rng.normal(size=16).astype(np.float32)
    want = answers(exact)
    assert answers(mirrored) == want
    assert mirrored.count(COLLECTION) == exact.count(COLLECTION)
    assert mirrored.metadata(COLLECTION, {"session": "s1"}) == exact.metadata(COLLECTION, {"session": "s1"})
    assert mirrored.existing(COLLECTION, ["s0:m0", "s0:m1", "nope"]) == exact.existing(
        COLLECTION, ["s0:m0", "s0:m1", "nope"]
    )
    chroma.close()
    reopened = MirroredStore(open_chroma(tmp_path / "index"))  # read back from Chroma into a new copy
    assert answers(reopened) == want
    reopened.close()
