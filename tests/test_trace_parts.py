"""What the debug panel reads from the engine: score parts of every recalled item, the session's turn history,
prompt tokens per block per turn."""

from __future__ import annotations

import pytest

from game.engine import session as session_module
from game.engine.pipeline import TurnPipeline
from game.engine.report import turn_json
from game.engine.session import GameSession
from game.llm.base import NarratorError
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.search.recall import W_IMPORTANCE, W_MATCH, W_RECENCY
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game

PLAY = [
    "go east",
    "talk to garrick",
    "tell garrick my secret is that I stole the silver chalice",
    "ask garrick about hal",
    "look",
    "go west",
    "rest",
]


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def keyword_engine(pack) -> TurnPipeline:
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, background=False)
    return TurnPipeline(pack, new_game(pack, seed=3), narrator, memory)


def played(pack) -> TurnPipeline:
    engine = keyword_engine(pack)
    for action in PLAY:
        assert engine.play(action).ok
    return engine


def test_relevant_memory_parts_are_the_weighted_terms_of_the_score(fantasy):
    engine = played(fantasy)
    memory = engine.memory
    assert isinstance(memory, GameMemory)
    state = engine.state
    ranked = memory.search_memories("what did I tell garrick about the chalice?", state, 10)
    assert ranked
    importance = {e.id: e.importance for e in memory.state.bible}
    importance |= {e.id: e.importance for e in memory.state.log}
    turns = {e.id: e.source_turn for e in memory.state.bible} | {e.id: e.turn for e in memory.state.log}
    for found in ranked:
        assert found.score == pytest.approx(sum(found.parts.values()), abs=1e-12)
        assert (
            {"semantic", "importance", "recency"}
            <= set(found.parts)
            <= {
                "semantic",
                "importance",
                "recency",
                "match",
                "open_thread",
            }
        )
        assert found.parts["semantic"] == pytest.approx(0.5 * found.semantic)
        assert found.parts["importance"] == pytest.approx(W_IMPORTANCE * importance[found.id] / 100)
        half_life = memory.config.recency_half_life_turns
        assert found.parts["recency"] == pytest.approx(W_RECENCY * 0.5 ** ((state.turn - turns[found.id]) / half_life))
    assert any(found.parts.get("match") == W_MATCH for found in ranked)  # Garrick is named: what involves him


def test_every_recalled_item_carries_parts_that_explain_its_score(fantasy):
    engine = played(fantasy)
    result = engine.play("what did I tell garrick about the chalice?")
    blocks = {b.name: b for b in result.trace.memory.blocks}
    relevant = blocks["relevant_memories"].items
    # what the question's parts found (answers.py) is scored by them alone; what the search found, by its terms
    answered = [i for i in relevant if "question" in i.parts]
    assert answered and all(i.parts == {"question": i.score} for i in answered)
    searched = [i for i in relevant if "question" not in i.parts]
    assert searched and all({"semantic", "importance", "recency"} <= set(i.parts) for i in searched)
    assert min(i.score for i in answered) > max(i.score for i in searched)
    for block in result.trace.memory.blocks:
        for item in block.items + block.cut:
            assert item.parts, (block.name, item.source)
            assert sum(item.parts.values()) == pytest.approx(item.score, abs=0.003 * len(item.parts))
    for item in blocks["open_threads"].items:
        assert item.parts == {"importance": item.score}
    for item in blocks["bible_core"].items:  # why this character is in the prompt
        assert len(item.parts) == 1 and set(item.parts) <= {"required", "named", "met"}
        assert item.required == ("required" in item.parts)
    assert all(i.parts == {"recency": 1.0} for i in blocks["recent_story"].items)
    history = blocks["history_recall"].items
    assert history and set(history[0].parts) in ({"recency"}, {"semantic"})

    lore = engine.play("ask about hal").trace.memory.block("knowledge")  # at the trailhead, Garrick not there
    assert lore is not None and lore.items
    assert all(i.parts == {"semantic": i.score} for i in lore.items)


def test_the_json_trace_reports_the_parts(fantasy):
    engine = played(fantasy)
    line = turn_json(engine.play("what did I tell garrick about the chalice?"))
    blocks = {b["name"]: b for b in line["memory_blocks"]}
    for item in blocks["relevant_memories"]["items"]:
        assert {"semantic", "importance", "recency"} <= set(item["parts"]) or set(item["parts"]) == {"question"}
        assert sum(item["parts"].values()) == pytest.approx(item["score"], abs=0.01)
    assert all(set(item["parts"]) <= {"required", "named", "met"} for item in blocks["bible_core"]["items"])
    assert all("parts" in item for block in line["memory_blocks"] for item in block["cut"])


def test_the_session_keeps_each_engine_turn_and_its_prompt_tokens(fantasy, tmp_path):
    game = GameSession(keyword_engine(fantasy), SlotStore(tmp_path))
    for text in ["look", "save one", "", "go east", "help", "saves", "load one", "look"]:
        game.play(text)
    assert [r.action for r in game.history] == ["look", "", "go east", "help", "look"]  # save commands are not
    assert [r.ok for r in game.history] == [True, False, True, True, True]

    by_block = game.prompt_tokens_by_block()
    assert [turn for turn, _ in by_block] == [1, 2, 2]  # the load went back to turn 1: turn 2 was played twice
    traced = [r for r in game.history if r.trace.prompt is not None]
    for (_, tokens), result in zip(by_block, traced, strict=True):
        assert tokens == {b.name: b.tokens for b in result.trace.prompt.blocks}
        assert tokens["player_action"] > 0 and "node_info" in tokens


def test_a_failed_turn_is_kept_under_the_turn_it_tried_to_play(fantasy, tmp_path):
    game = GameSession(keyword_engine(fantasy), SlotStore(tmp_path))
    assert game.play("look").ok
    narrator = game.engine.narrator
    real = narrator.narrate

    def down(bundle):
        raise NarratorError("connection refused")

    narrator.narrate = down  # type: ignore[method-assign]
    failed = game.play("go east")
    narrator.narrate = real  # type: ignore[method-assign]
    assert not failed.ok and failed.turn == 1 and game.history[-1] is failed
    assert game.play("go east").ok
    assert [turn for turn, _ in game.prompt_tokens_by_block()] == [1, 2, 2]


def test_the_history_keeps_the_last_turns_only(fantasy, monkeypatch):
    monkeypatch.setattr(session_module, "HISTORY_LIMIT", 3)
    game = GameSession(keyword_engine(fantasy), None)
    actions = ["look", "go east", "look", "talk to garrick", "go west"]
    for action in actions:
        assert game.play(action).ok
    assert [r.action for r in game.history] == actions[-3:]
    assert [turn for turn, _ in game.prompt_tokens_by_block()] == [3, 4, 5]
