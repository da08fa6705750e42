"""GameMemory on real parts: all-MiniLM-L6-v2 embeddings and a persistent Chroma store."""

from __future__ import annotations

import itertools
import shutil
import threading
from pathlib import Path

import orjson
import pytest

from game.config import load_settings
from game.engine.pipeline import TurnPipeline
from game.engine.prompt import SYSTEM_BLOCKS
from game.llm.scripted import ScriptedNarrator
from game.memory.base import TurnRecord
from game.memory.manager import GameMemory
from game.memory.records import MemoryState
from game.memory.search.knowledge import KnowledgeBase
from game.memory.settings import MemoryConfig
from game.memory.vectors.inprocess import InProcessVectorStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import DATA
from tests.fakes import ExtractingSummarizer, FlakyEmbedder, FlakySummarizer, GatedSummarizer


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def engine_for(pack, memory):
    return TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), memory)


def record(memory, turn, action="look", narration="Nothing happens.", node="camp", npcs=(), state=None, **extra):
    state = state or new_game(memory.pack)
    state.turn = turn
    memory.record_turn(TurnRecord(turn, action, narration, node, [], list(npcs), **extra), state)
    return state


def texts(context, *names):
    return [i.text for b in context.blocks if not names or b.name in names for i in b.items]


def test_summary_written_exactly_every_n_turns_to_chroma_and_state(mini_pack, embedder, chroma_store):
    memory = GameMemory(mini_pack, ScriptedNarrator(mini_pack), store=chroma_store, embedder=embedder)
    engine = engine_for(mini_pack, memory)
    for action in [
        "look",
        "take sword",
        "north",
        "south",
        "look",
        "talk to sage",
        "look",
        "rest",
        "look",
        "north",
        "look",
    ]:
        engine.play(action)
        memory.flush()
        expected = engine.state.turn // 5
        assert len(memory.state.summaries) == expected, f"turn {engine.state.turn}"
        assert chroma_store.count(memory.history.collection) == expected
    assert [(s.first_turn, s.turn) for s in memory.state.summaries] == [(1, 5), (6, 10)]
    stored = chroma_store.metadata(memory.history.collection)
    assert {m["turn"] for m in stored.values()} == {5, 10}
    assert {m["session"] for m in stored.values()} == {memory.session_id}
    assert memory.state.summaries[0].labelled().startswith("[Turn 5] ")
    assert memory.state.synopsis  # L3 rewritten
    context = memory.recall("look", engine.state)
    assert context.synopsis == memory.state.synopsis
    assert texts(context, "history_recall")[0].startswith("[Turn 10]")  # newest first
    assert f"Previously: {memory.state.synopsis}" in engine.play("look").trace.prompt.system
    memory.close()


def test_sessions_are_isolated(mini_pack, embedder, chroma_store):
    """Two sessions on one store: recall (not the always-injected Bible) finds each one's own turns only."""
    narrator = ScriptedNarrator(mini_pack)
    ren = GameMemory(mini_pack, narrator, store=chroma_store, embedder=embedder, background=False)
    other = GameMemory(mini_pack, narrator, store=chroma_store, embedder=embedder, background=False)
    for turn in range(1, 9):
        record(
            ren,
            turn,
            "my name is Ren" if turn == 1 else "look",
            "You say your name is Ren." if turn == 1 else "Fog.",
            notes=["The player said: my name is Ren"] if turn == 1 else [],
        )
        record(other, turn, "look", "Fog rolls over the camp.")
    ren.flush()
    other.flush()
    state = new_game(mini_pack)
    state.turn = 8
    searched = ("relevant_memories", "history_recall")
    ren_context = ren.recall("what is my name?", state)
    assert ren_context.retrieval_meta["strategy"] == "hybrid:chroma"
    assert any("Ren" in t for t in texts(ren_context, *searched))
    assert not any("Ren" in t for t in texts(other.recall("what is my name?", state), *searched))
    # and nothing from the future: the same session as of turn 0 does not see turn 1
    state.turn = 0
    assert not any("Ren" in t for t in texts(ren.recall("what is my name?", state)))


def test_knowledge_base_reindexes_only_changed_documents(tmp_path, embedder):
    pack_dir = tmp_path / "mini"
    shutil.copytree(DATA / "mini", pack_dir)
    store = InProcessVectorStore()
    first = KnowledgeBase(load_pack(pack_dir), store, embedder).build()
    assert first.embedded == first.documents and first.unchanged == 0
    again = KnowledgeBase(load_pack(pack_dir), store, embedder).build()
    assert again.embedded == 0 and again.unchanged == again.documents
    npcs = (pack_dir / "npcs.json").read_text().replace("Patient and wry.", "Impatient and sour.")
    (pack_dir / "npcs.json").write_text(npcs)
    edited = KnowledgeBase(load_pack(pack_dir), store, embedder).build()
    assert edited.embedded == 1 and edited.unchanged == edited.documents - 1
    achievements = (pack_dir / "achievements.json").read_text()
    (pack_dir / "achievements.json").write_text("[]" if achievements else achievements)
    last = KnowledgeBase(load_pack(pack_dir), store, embedder)
    removed = last.build()
    assert removed.removed == 1 and removed.embedded == 0
    assert store.count(last.index.collection) == removed.documents


def test_knowledge_hits_are_story_filtered_and_trimmed(fantasy, embedder, chroma_store):
    scifi = load_pack(content_root() / "scifi_001")
    KnowledgeBase(scifi, chroma_store, embedder).build()
    kb = KnowledgeBase(fantasy, chroma_store, embedder)
    kb.build()
    hits = kb.search("Who made the Moonlight Harp and how does it work?", 3)
    assert len(hits) == 3
    assert all(doc.id.startswith("fantasy_001:") for doc, _ in hits)
    assert any("harp" in doc.text.lower() for doc, _ in hits)
    assert len({(d.category, d.text) for d, _ in hits}) == 3


def test_chroma_unavailable_falls_back_to_in_process_index(fantasy, tmp_path):
    from game.wiring import make_memory

    settings = load_settings(
        data_dir=tmp_path, memory={"chroma_url": "http://127.0.0.1:9"}
    )  # nothing listens on port 9
    memory = make_memory(settings, fantasy, ScriptedNarrator(fantasy))
    state = new_game(fantasy)
    context = memory.recall("Tell me about the Moonlight Harp", state)
    assert context.retrieval_meta["strategy"] == "hybrid:inprocess"
    assert any("harp" in t.lower() for t in texts(context, "knowledge"))
    memory.close()


def test_embeddings_unavailable_fall_back_to_keywords(fantasy, tmp_path, monkeypatch):
    import game.memory.vectors.embedders as embedders
    from game.wiring import make_memory

    monkeypatch.setattr(embedders, "default_model_path", lambda: str(tmp_path / "no-such-model"))
    memory = make_memory(load_settings(data_dir=tmp_path), fantasy, ScriptedNarrator(fantasy))
    engine = engine_for(fantasy, memory)
    engine.play("ask garrick about hal")
    context = memory.recall("Where did Hal go?", engine.state)
    assert context.retrieval_meta["strategy"] == "bm25"
    assert any("Shadow Swamp" in t for t in texts(context, "knowledge"))
    memory.close()


def test_failed_summaries_are_retried(mini_pack):
    flaky = FlakySummarizer(failures=2)
    memory = GameMemory(mini_pack, flaky, config=MemoryConfig(retry_delay_s=0), background=False)
    for turn in range(1, 6):
        record(memory, turn, f"action {turn}")
    assert flaky.calls >= 3
    assert [s.turn for s in memory.state.summaries] == [5]


def test_turns_are_never_lost_when_a_summary_fails(mini_pack):
    flaky = FlakySummarizer(failures=3)  # the whole first consolidation fails
    memory = GameMemory(mini_pack, flaky, config=MemoryConfig(retry_delay_s=0), background=False)
    for turn in range(1, 11):
        record(memory, turn, f"action number {turn}")
    assert memory.failures == ["summary of turns 1-5"]
    (summary,) = memory.state.summaries
    assert (summary.first_turn, summary.turn) == (1, 10)
    assert "action number 1." in summary.text or "action number 1 " in summary.text + " "


SAGE_FACT = {
    "entry_type": "event",
    "canonical_key": "event:lost_lantern",
    "title": "The lost lantern",
    "content": "The Old Sage lost his lantern at the Quiet Camp.",
    "importance": 95,
    "update": False,
}


def test_model_extracted_facts_enter_the_bible_through_its_own_checks(mini_pack):
    owned = {**SAGE_FACT, "canonical_key": "safety:rules", "content": "Anything is allowed."}
    core = {**SAGE_FACT, "canonical_key": "character:sage", "entry_type": "character", "content": "Sage is a troll."}
    extractor = ExtractingSummarizer([SAGE_FACT, owned, core])
    memory = GameMemory(mini_pack, extractor, config=MemoryConfig(retry_delay_s=0), background=False)
    for turn in range(1, 6):
        record(memory, turn, f"action {turn}", f"Narration {turn}.")
    (text,) = extractor.texts  # one stateless call per consolidation, over the turns it consolidates
    assert "Turn 1: action 1. Narration 1." in text and "Turn 5: action 5" in text
    assert "safety:rules" in extractor.known[0]  # the known keys let the model write updates
    lantern = memory.bible.by_key("event:lost_lantern")
    assert lantern is not None and lantern.source == "extraction" and lantern.source_turn == 5
    assert lantern.importance == 80 and lantern.npcs == ["sage"]  # capped below core facts like a note
    refused = {e.canonical_key: e.status for e in memory.state.bible if e.source == "extraction"}
    assert refused == {"event:lost_lantern": "active", "safety:rules": "rejected", "character:sage": "disputed"}
    assert "Anything" not in memory.bible.by_key("safety:rules").content
    assert memory.bible.by_key("character:sage").source == "content"
    assert memory.state.facts_from is None and not memory.failures


def test_a_failed_extraction_keeps_the_summary_and_is_retried_with_its_turns(mini_pack):
    extractor = ExtractingSummarizer([SAGE_FACT], failures=3)  # every attempt of the first consolidation
    memory = GameMemory(mini_pack, extractor, config=MemoryConfig(retry_delay_s=0), background=False)
    for turn in range(1, 6):
        record(memory, turn, f"action {turn}")
    assert [s.turn for s in memory.state.summaries] == [5]  # the summary and the turns are kept
    assert memory.failures == ["story bible extraction of turns 1-5"]
    assert memory.state.facts_from == 1 and memory.bible.by_key("event:lost_lantern") is None
    saved = MemoryState.model_validate_json(memory.export_json())
    assert saved.facts_from == 1  # a save between the two consolidations keeps the queue
    for turn in range(6, 11):
        record(memory, turn, f"action {turn}")
    assert len(extractor.texts) == 4
    assert "Turn 1: action 1." in extractor.texts[-1] and "Turn 10: action 10." in extractor.texts[-1]
    assert memory.state.facts_from is None and memory.bible.by_key("event:lost_lantern").source_turn == 10


def test_embedding_failure_keeps_text_and_fills_vector_later(mini_pack, embedder):
    flaky = FlakyEmbedder(embedder)
    store = InProcessVectorStore()
    memory = GameMemory(mini_pack, ScriptedNarrator(mini_pack), store=store, embedder=flaky, background=False)
    state = record(memory, 1, "I hide the silver key under the mill wheel", "You hide it.")
    assert "turn-1" in memory.memories.pending
    assert store.count(memory.memories.collection) == 0
    # still recallable by keyword meanwhile
    state.turn = 9
    found = memory.search_memories("where did I hide the silver key", state, 3)
    assert found and found[0].id == "turn-1"
    flaky.broken = False
    record(memory, 2, "look", "Fog.")
    memory.flush()
    assert not memory.memories.pending
    assert store.count(memory.memories.collection) >= 2
    assert memory.state.pending_vectors == []


def test_consolidation_runs_in_the_background(mini_pack):
    gated = GatedSummarizer()
    memory = GameMemory(mini_pack, gated)
    engine = engine_for(mini_pack, memory)
    for _ in range(5):
        engine.play("look")
    assert gated.started.wait(timeout=10)  # turn 5 started a consolidation...
    result = engine.play("north")  # ...which does not hold up the next turn
    assert result.ok and engine.state.turn == 6
    assert memory.state.summaries == []
    gated.release.set()
    memory.flush()
    assert [s.turn for s in memory.state.summaries] == [5]
    memory.close()


def test_the_characters_block_holds_the_people_this_turn_needs_not_the_cast(fantasy):
    """Present and the player: required; named in the action or met: weighed; anyone else: left to search."""
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), background=False)
    state = new_game(fantasy)
    state.node = fantasy.npcs["alicia"].location
    state.flags.append("talked:old_hunter")
    core = memory.recall("ask alicia about bruno", state).block("bible_core")
    by_npc = {i.source: i for i in core.items}
    entries = {e.canonical_key: e.id for e in memory.bible.active()}
    alicia, garrick, bruno = (entries[f"character:{n}"] for n in ("alicia", "old_hunter", "bruno"))
    assert by_npc[alicia].required and "required" in by_npc[alicia].parts
    assert not by_npc[garrick].required and "met" in by_npc[garrick].parts
    assert not by_npc[bruno].required and "named" in by_npc[bruno].parts
    assert by_npc[bruno].score > by_npc[garrick].score
    assert set(by_npc) == {alicia, garrick, bruno}  # the other five characters are not in every prompt


def test_recall_format_is_stable_to_dynamic_with_header_first(fantasy):
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), background=False)
    engine = engine_for(fantasy, memory)
    engine.state.node = "hunter_cabin"  # where Garrick is: asked elsewhere, the line is refused before any prompt
    result = engine.play("ask garrick about hal")
    names = [b.name for b in result.trace.prompt.blocks]
    memory_names = [b.name for b in result.trace.memory.blocks if b.items]
    in_user = [n for n in memory_names if n not in SYSTEM_BLOCKS]
    assert names.index("memory_header") == min(names.index(n) for n in in_user) - 1  # it opens the user's memory
    order = ["pinned", "bible_core", "knowledge", "open_threads", "relevant_memories", "history_recall", "recent_story"]
    assert [n for n in order if n in memory_names] == memory_names
    prompt = result.trace.prompt
    assert prompt.user.index("Stay consistent") < prompt.user.index("## Story Bible: characters")
    assert "## Open threads" not in prompt.system + prompt.user  # empty on turn 1: prints nothing


def test_npcs_remember_earlier_conversations(fantasy, embedder):
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=InProcessVectorStore(), embedder=embedder)
    engine = engine_for(fantasy, memory)
    lodge = fantasy.npcs["old_hunter"].location
    engine.state.node = lodge
    engine.play("tell garrick I promise to bring his son home before the snows")
    engine.state.node = fantasy.story.start_node
    for _ in range(30):
        engine.play("look")
    engine.state.node = lodge
    memory.flush()
    context = memory.recall("talk to garrick", engine.state)
    assert any("promise" in t.lower() and "snows" in t.lower() for t in texts(context)), texts(context)
    memory.close()


def test_scripted_narrator_recalls_a_planted_fact_after_sixty_unrelated_turns(fantasy, embedder, chroma_store):
    """A fact no content holds (the knowledge base cannot know it), told once, answered sixty turns later."""
    assert not any("willow" in p.read_text().lower() for p in Path(fantasy.root).iterdir() if p.is_file())
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=chroma_store, embedder=embedder)
    engine = engine_for(fantasy, memory)
    engine.play("go east")
    engine.play("tell garrick I buried my father's ring under the crooked willow")
    engine.play("go west")
    filler = ["look", "go north", "examine the moss", "go south", "rest", "status", "say the fog is thick today"]
    i = 0
    while engine.state.turn < 64:  # meta commands like 'status' take no turn
        engine.play(filler[i % len(filler)])
        i += 1
    memory.flush()
    assert engine.state.turn >= 63
    assert "old_hunter" not in fantasy.nodes[engine.state.node].npcs
    reply = engine.play("where did I bury my father's ring?")
    assert "crooked willow" in reply.narration
    recalled = texts(reply.trace.memory, "relevant_memories", "history_recall")
    assert any("crooked willow" in t for t in recalled)
    memory.close()


def test_threads_lock_protects_concurrent_recall(mini_pack, embedder):
    """Recall while the worker consolidates: no exceptions, consistent blocks."""
    memory = GameMemory(mini_pack, ScriptedNarrator(mini_pack), store=InProcessVectorStore(), embedder=embedder)
    state = new_game(mini_pack)
    errors: list[BaseException] = []

    def reader():
        try:
            for _ in range(30):
                memory.recall("what about the troll?", state)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    for turn in range(1, 21):
        state = record(memory, turn, f"action {turn}", "The troll grumbles.", state=state)
    thread.join()
    memory.flush()
    assert not errors
    assert [s.turn for s in memory.state.summaries] == [5, 10, 15, 20]
    memory.close()


def test_hidden_endings_keep_their_conditions_out_of_the_knowledge_base(fantasy):
    from game.memory.search.knowledge import build_documents

    endings = {d.id.rsplit(":", 1)[1]: d.text for d in build_documents(fantasy) if d.category == "ending"}
    assert "Requires:" not in endings["peace"] and "negotiate" not in endings["peace"]
    assert "Requires:" in endings["victory"]


def test_prepare_reports_indexing_progress_with_real_embeddings(mini_pack, embedder, chroma_store, monkeypatch):
    from game.memory.search import embedding as embedding_module
    from game.memory.search import knowledge as knowledge_module

    monkeypatch.setattr(knowledge_module, "EMBED_BATCH", 4)  # several batches even for the small test story
    monkeypatch.setattr(embedding_module, "EMBED_BATCH", 2)
    calls: list[tuple[str, int, int]] = []
    memory = GameMemory(mini_pack, ScriptedNarrator(mini_pack), store=chroma_store, embedder=embedder)
    memory.prepare(progress=lambda label, done, total: calls.append((label, done, total)))

    labels = [label for label, _, _ in calls]
    assert labels == sorted(labels, key=["Indexing lore", "Restoring memories"].index)  # lore first, then memories
    lore = [(done, total) for label, done, total in calls if label == "Indexing lore"]
    restoring = [(done, total) for label, done, total in calls if label == "Restoring memories"]
    assert memory.knowledge is not None and memory.knowledge.stats is not None
    documents = len(memory.knowledge.docs)
    seeded = len([e for e in memory.state.bible if e.status == "active"])
    for steps, total in ((lore, documents), (restoring, seeded)):
        assert len(steps) >= 3  # the start, a report after each batch
        assert steps[0] == (0, total) and steps[-1] == (total, total)
        assert {t for _, t in steps} == {total}
        assert all(a < b for (a, _), (b, _) in itertools.pairwise(steps))
    assert memory.knowledge.stats.embedded == documents
    assert memory.memories.pending_ids() == set() and memory.state.pending_vectors == []  # embedded before returning

    # the same store already holds every vector: a memory restored from the state counts them done at once
    again: list[tuple[str, int, int]] = []
    saved = MemoryState.model_validate(orjson.loads(memory.export_json()))
    memory.close()
    restored = GameMemory(mini_pack, ScriptedNarrator(mini_pack), store=chroma_store, embedder=embedder, state=saved)
    restored.prepare(progress=lambda label, done, total: again.append((label, done, total)))
    assert again == [("Indexing lore", 0, documents), ("Indexing lore", documents, documents)]
    restored.close()

    # without vectors nothing is embedded, and the lore is indexed all the same
    keyword: list[tuple[str, int, int]] = []
    GameMemory(mini_pack, ScriptedNarrator(mini_pack), background=False).prepare(
        progress=lambda label, done, total: keyword.append((label, done, total))
    )
    assert keyword == [("Indexing lore", 0, documents), ("Indexing lore", documents, documents)]


def test_a_quest_offered_at_any_time_reads_as_offered_not_offered_when_always(fantasy):
    from game.memory.search.knowledge import build_documents

    quests = [d.text for d in build_documents(fantasy) if "Offered by" in d.text]
    assert quests and not any("when always" in text for text in quests)
    assert any("Offered by Old Garrick." in text for text in quests)


def test_the_summary_and_the_extraction_read_what_the_rules_refused_and_what_changed_nothing(mini_pack):
    """Issue 42: summary passages carried no mark of what the rules refused, so a tried act ("Ren plucked herbs")
    entered the summary and the synopsis as done. Each turn now says so: refused by the rules, or nothing changed."""
    extractor = ExtractingSummarizer([])
    read: list[str] = []
    summarize = extractor.summarize
    extractor.summarize = lambda text, max_words=60: read.append(text) or summarize(text, max_words)
    memory = GameMemory(mini_pack, extractor, config=MemoryConfig(retry_delay_s=0), background=False)
    record(
        memory,
        1,
        "take the sword and the lantern",
        "You take the sword.",
        applied=[("items_gained", "sword")],
        refused=["There is no lantern here."],
    )
    for turn in range(2, 6):
        record(memory, turn, "look", "Fog.")
    passage = read[0]
    assert (
        "Turn 1 at Quiet Camp: player: take the sword and the lantern | You take the sword. [refused by the "
        "rules: There is no lantern here.]" in passage
    )
    assert "player: look | Fog. [nothing changed]" in passage
    assert "You take the sword. [refused by the rules: There is no lantern here.]" in extractor.texts[0]


def test_the_known_keys_an_extraction_is_shown_leave_out_the_rules_own_records(mini_pack):
    """Was (relay game, issue 42): "Known keys" listed item:<id> keys, which the same prompt says the rules own
    and a model must never write."""
    extractor = ExtractingSummarizer([SAGE_FACT])
    memory = GameMemory(mini_pack, extractor, config=MemoryConfig(retry_delay_s=0), background=False)
    record(memory, 1, "take the sword", "You take the sword.", applied=[("items_gained", "sword")])
    assert memory.bible.by_key("item:sword") is not None  # the rules' record of the take
    for turn in range(2, 6):
        record(memory, turn, f"action {turn}", f"Narration {turn}.")
    (known,) = extractor.known
    assert "item:sword" not in known and not [k for k in known if k.startswith("item:")]


def test_a_narrators_note_that_restates_the_rules_record_is_stored_once(fantasy):
    """Was (relay game, issue 42): 30 narrator notes beside 17 records of the rules, most restating them ("The
    traveller took the Heartsap Tonic from the mantel" beside "The player took the Heartsap Tonic"): one fact stored
    two or three times, and the copies crowded the rest out of memory. The rules' record is the fact's one entry;
    a note that tells something said, or what the rules do not record, is kept."""
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), background=False)
    notes = [
        "The traveller took the Heartsap Tonic from the mantel of Garrick's lodge",
        "Garrick told the traveller that Hal followed a white stag into the Shadow Swamp",
        "The traveller admired the antlers over the door",
    ]
    record(
        memory,
        1,
        "take the tonic",
        "You take it.",
        node="Old Hunter's Lodge",
        notes=notes,
        applied=[("items_gained", "heartsap_tonic")],
    )
    record(
        memory,
        2,
        "attack the troll",
        "You strike.",
        notes=["The traveller attacked the Granite Troll"],
        applied=[("start_combat", "stone_troll"), ("combat_action", "attack")],
    )
    active = [e for e in memory.bible.active() if e.source in ("memory_note", "effect")]
    tonic = [e for e in active if "Heartsap Tonic" in e.content]
    assert [e.source for e in tonic] == ["effect"]  # the rules' record, once
    assert any("white stag" in e.content for e in active)  # what was said is the note's own
    assert any("antlers" in e.content for e in active)  # what the rules do not record is kept
    assert not any("Granite Troll" in e.content and e.source == "memory_note" for e in active)
