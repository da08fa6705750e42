"""Memory invariants on real parts (all-MiniLM-L6-v2, Chroma): it keeps up, it belongs to one
session and one moment, it says which strategy ran, it restores from a saved state."""

from __future__ import annotations

import re
import sys
import threading
from collections import Counter

import pytest

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.base import TurnRecord
from game.memory.bible import THREAD_MAX_AGE_TURNS
from game.memory.manager import GameMemory
from game.memory.records import unquoted
from game.memory.search.hybrid import HybridIndex
from game.memory.search.indexing import CONTEXT_SEPARATOR, IndexItem
from game.memory.vectors.inprocess import InProcessVectorStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory
from tests.fakes import BreakableStore, CountingEmbedder, FlakyEmbedder

QUICK_ACTIONS = ["look", "go east", "ask garrick about hal", "go west", "rest", "go north", "take the healing herb"]


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def texts(context, *names):
    """The items' facts as they were said (without the attribution a claim gets in the prompt)."""
    return [unquoted(i.text) for b in context.blocks if b.name in names for i in b.items]


RECALL_BLOCKS = ("relevant_memories", "history_recall")
"""Blocks filled by search (the always-injected Bible blocks and the static knowledge base are left out)."""


# --------------------------------------------------------------- keeping up
def test_consolidation_keeps_up_with_quick_turns(fantasy, embedder, chroma_store):
    counting = CountingEmbedder(embedder)
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=chroma_store, embedder=counting)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    interval = memory.config.summary_interval_turns
    played = 0
    while played < 30:
        result = engine.play(QUICK_ACTIONS[played % len(QUICK_ACTIONS)])
        assert result.ok, result.error
        played += 1
        if result.trace.memory is None:  # answered before any recall: an act that cannot be (issue 41)
            assert result.meta == "refused" and result.free
            continue
        turn, meta = result.turn, result.trace.memory.retrieval_meta
        required = max(0, (turn - interval) // interval)  # every summary of turns <= turn - interval
        assert meta["summaries"] >= required, f"turn {turn}: {meta['summaries']} summaries, {required} required"
        assert chroma_store.count(memory.history.collection) >= required  # in the store too, not only in the state
        if required:
            assert "Previously:" in result.trace.prompt.system, f"turn {turn}: no synopsis"
            # recall found the summaries; whether this turn's budget delivers one is the budget's call (it
            # depends on what else recall found, which depends on how far the vectors lag on a loaded machine;
            # delivery is measured by bench/memory_delivery.py and tests/test_memory_delivery.py)
            found = [b for b in result.trace.memory.blocks if b.name == "history_recall"]
            assert found and found[0].items + found[0].cut, f"turn {turn}: recall found no summary"
        assert meta["vector_lag_turns"] <= 2 * interval, f"turn {turn}: vectors {meta['vector_lag_turns']} turns behind"
    # each played turn was embedded once, not again every time a neighbour arrived
    alone = [t for t in counting.texts if CONTEXT_SEPARATOR not in t]
    per_turn = Counter(int(m.group(1)) for t in alone if (m := re.match(r"Turn (\d+) at ", t)))
    assert per_turn and max(per_turn.values()) == 1, per_turn
    memory.close()
    assert memory.state.pending_vectors == []


# ---------------------------------------------------------- one session each
def plant_and_fill(memory, fact_turn_text, filler=6):
    state = new_game(memory.pack)
    for turn in range(1, filler + 2):
        state.turn = turn
        action, narration = fact_turn_text if turn == 1 else ("look", "Fog drifts between the pines.")
        memory.record_turn(TurnRecord(turn, action, narration, "forest_edge", [], []), state)
    memory.flush()
    return state


def two_sessions_share_one_store(fantasy, embedder, store):
    ren = GameMemory(fantasy, ScriptedNarrator(fantasy), store=store, embedder=embedder)
    kai = GameMemory(fantasy, ScriptedNarrator(fantasy), store=store, embedder=embedder)
    ren_state = plant_and_fill(ren, ("bury the ring", "You bury your father's silver ring under the crooked willow."))
    kai_state = plant_and_fill(kai, ("hide the map", "You hide the smuggler's map inside the hollow milestone."))
    # the same local ids (turn-1 ...) in one store: each session still finds its own by meaning alone
    question = "Where did I put my dad's jewellery?"
    ren_hits = ren.memories.search(question, 3, {"session": ren.session_id}, query_vector=embedder.embed([question])[0])
    assert ren_hits.hits[0].id == "turn-1" and ren_hits.hits[0].dense > 0.3, ren_hits.hits[:2]
    question = "Where did I conceal the chart?"
    kai_hits = kai.memories.search(question, 3, {"session": kai.session_id}, query_vector=embedder.embed([question])[0])
    assert kai_hits.hits[0].id == "turn-1" and kai_hits.hits[0].dense > 0.3
    ren_recall = texts(ren.recall("where is my father's ring?", ren_state), *RECALL_BLOCKS)
    kai_recall = texts(kai.recall("where is my father's ring?", kai_state), *RECALL_BLOCKS)
    assert any("crooked willow" in t for t in ren_recall)
    assert not any("willow" in t for t in kai_recall) and not any("milestone" in t for t in ren_recall)
    assert store.count(ren.memories.collection) >= 2 * 7  # both sessions' turns are stored, none overwritten
    ren.close()
    kai.close()


def test_two_sessions_on_one_chroma_store(fantasy, embedder, chroma_store):
    two_sessions_share_one_store(fantasy, embedder, chroma_store)


def test_two_sessions_on_one_in_process_store(fantasy, embedder):
    two_sessions_share_one_store(fantasy, embedder, InProcessVectorStore())


# -------------------------------------------------------------- one moment
def test_recall_as_of_an_earlier_turn_shows_nothing_later(fantasy):
    memory = keyword_memory(fantasy)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    for action in ["say my name is Kael", "look", "look", "look", "look", "say my name is Bob", "look"]:
        engine.play(action)
    assert memory.state.synopsis and len(memory.state.summaries) == 1
    at_start = memory.recall("what is my name?", new_game(fantasy))
    assert at_start.window == [] and at_start.synopsis == ""
    assert not any("Kael" in t or "Bob" in t for b in at_start.blocks for t in [i.text for i in b.items])
    at_three = new_game(fantasy)
    at_three.turn = 3
    then = memory.recall("what is my name?", at_three)
    assert [m["content"] for m in then.window if m["role"] == "user"] == ["say my name is Kael", "look", "look"]
    assert then.synopsis == ""  # the first summary was written after turn 5
    names = [t for t in texts(then, "bible_core") if "name is" in t]
    assert names == ["The player's name is Kael"]  # Bob came later and superseded it later
    now = memory.recall("what is my name?", engine.state)
    assert [t for t in texts(now, "bible_core") if "name is" in t] == ["The player's name is Bob"]
    assert now.synopsis == memory.state.synopsis


# ---------------------------------------------------------------- threads
def test_concurrent_search_and_indexing_never_collide():
    """Thousands of searches interleaved with adds, removals and embedding bookkeeping."""
    index = HybridIndex("memories", None, None, namespace="s")
    index.add([IndexItem(f"turn-{n}", f"the troll guards bridge number {n}", {"turn": n}) for n in range(200)])
    errors: list[BaseException] = []
    done = threading.Event()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows

    def writer():
        try:
            n = 200
            while not done.is_set():
                index.add([IndexItem(f"turn-{n}", f"a new troll at bridge {n} grumbles", {"turn": n})])
                index.remove([f"turn-{n - 150}"])
                index.embed_pending()
                index.pending_ids()
                n += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for n in range(3000):
            index.search("where is the troll bridge", 5, {"turn": {"$lte": 10_000}})
            if n % 10 == 0:
                index.snapshot()
    except BaseException as exc:  # noqa: BLE001
        errors.append(exc)
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(old)
    assert not errors, errors[:1]


def test_recall_while_consolidating_with_real_embeddings(fantasy, embedder):
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=InProcessVectorStore(), embedder=embedder)
    state = new_game(fantasy)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        try:
            while not stop.is_set():
                memory.recall("what about the troll?", state.snapshot())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    for turn in range(1, 26):
        state.turn = turn
        memory.record_turn(TurnRecord(turn, f"action {turn}", "The troll grumbles.", "forest_edge", [], []), state)
    stop.set()
    thread.join()
    memory.flush()
    assert not errors, errors[:1]
    assert [s.turn for s in memory.state.summaries] == [5, 10, 15, 20, 25]
    memory.close()


# -------------------------------------------------------------- strategies
def test_strategy_says_when_search_fell_back_mid_game(fantasy, embedder):
    flaky = FlakyEmbedder(embedder)
    flaky.broken = False
    store = BreakableStore(InProcessVectorStore())
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=store, embedder=flaky, background=False)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    meta = engine.play("look").trace.memory.retrieval_meta
    assert meta["strategy"] == "hybrid:inprocess" and meta["fallback"] is None
    store.broken = True  # the vector server goes away
    meta = engine.play("look").trace.memory.retrieval_meta
    assert meta["strategy"] == "bm25" and "vector query failed" in meta["fallback"]
    assert meta["strategies"]["knowledge"] == meta["strategies"]["memories"] == "bm25"
    store.broken, flaky.broken = False, True  # now the embedder dies instead
    meta = engine.play("look").trace.memory.retrieval_meta
    assert meta["strategy"] == "bm25" and "embedding failed" in meta["fallback"]
    flaky.broken = False
    meta = engine.play("look").trace.memory.retrieval_meta
    assert meta["strategy"] == "hybrid:inprocess" and meta["fallback"] is None


# ---------------------------------------------------------------- restore
def test_restore_rebuilds_without_re_embedding_and_forgets_the_future(fantasy, embedder, chroma_store):
    counting = CountingEmbedder(embedder)
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=chroma_store, embedder=counting)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    for action in ["say my name is Kael", *QUICK_ACTIONS, "look", "look"]:
        engine.play(action)
    memory.flush()
    saved_memory, saved_state = memory.state.model_copy(deep=True), engine.state.snapshot()
    for action in ["say I buried the ring under the crooked willow", *QUICK_ACTIONS]:
        engine.play(action)
    memory.flush()
    assert memory.state.log[-1].turn > saved_state.turn
    counting.texts.clear()
    memory.restore(saved_memory)
    engine.state = saved_state
    memory.flush()
    assert counting.texts == []  # every vector of the saved state was still in the store
    assert memory.state.log[-1].turn == saved_state.turn
    context = memory.recall("where did I bury the ring?", saved_state)
    assert not any("willow" in i.text for b in context.blocks for i in b.items)
    assert max(int(i.metadata["turn"]) for i in memory.memories.items.values()) <= saved_state.turn
    result = engine.play("look")  # play goes on from the save
    assert result.ok and result.turn == saved_state.turn + 1
    assert [e.turn for e in memory.state.log if e.action] == list(range(1, saved_state.turn + 2))
    memory.close()


def test_open_threads_stay_few_over_a_long_game(fantasy):
    memory = keyword_memory(fantasy)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    for n in range(20):
        engine.play(f"say I promise to light candle number {n} for the lost")
        for _ in range(9):
            engine.play("look")
    threads = [e for e in memory.bible.active() if e.entry_type == "open_thread" and e.source == "memory_note"]
    assert len(threads) <= THREAD_MAX_AGE_TURNS // 10 + 1
    assert min(e.source_turn for e in threads) >= engine.state.turn - THREAD_MAX_AGE_TURNS - 5
