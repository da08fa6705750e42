"""The scripted narrator: verbs over content, answers from memory, summaries."""

from __future__ import annotations

import json
from pathlib import Path

from game.engine.pipeline import TurnPipeline
from game.engine.prompt import compose
from game.language.parser import parse
from game.llm.scripted import ScriptedNarrator
from game.memory.base import MemoryBlock, MemoryContext, MemoryItem
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory


def answer(pack, action, memory=None, state=None):
    state = state or new_game(pack)
    bundle = compose(action, parse(action), state, pack, memory or MemoryContext())
    return json.loads(ScriptedNarrator(pack).narrate(bundle))


def test_turn_has_the_json_shape(mini_pack):
    turn = answer(mini_pack, "take the iron sword")
    assert set(turn) == {"narration", "choices", "effects", "memory_notes"}
    assert turn["effects"] == {"items_gained": ["sword"]}
    assert 2 <= len(turn["choices"]) <= 4


def test_verbs_map_to_effects(mini_pack):
    assert answer(mini_pack, "north")["effects"] == {"move_to": "woods"}
    assert answer(mini_pack, "go to the dark woods")["effects"] == {"move_to": "woods"}
    assert answer(mini_pack, "talk to the sage")["effects"] == {"talk_to": "sage"}
    assert answer(mini_pack, "eat bread")["effects"] == {"use_item": "bread"}
    assert answer(mini_pack, "give bread to sage")["effects"] == {"give_item": {"item": "bread", "to": "sage"}}
    assert answer(mini_pack, "rest")["effects"] == {"rest": True}
    assert answer(mini_pack, "look")["effects"] == {}


def test_topics_come_from_content(mini_pack):
    turn = answer(mini_pack, "ask the sage about the troll")
    assert "ferryman" in turn["narration"]
    assert turn["memory_notes"] and "ferryman" in turn["memory_notes"][0]


def test_choice_keywords_win(mini_pack):
    """Where the choice can be made (issue 41: a story choice is recognised only there; at the camp "parley" is
    no choice, and the rules never tell its name or what it needs)."""
    at_bridge = new_game(mini_pack)
    at_bridge.node = "bridge"
    assert answer(mini_pack, "I want to parley", state=at_bridge)["effects"] == {"choice": "negotiate"}
    assert "choice" not in answer(mini_pack, "I want to parley")["effects"]


def test_answers_questions_only_from_given_memory(mini_pack):
    assert "nothing you know" in answer(mini_pack, "where is Hal?")["narration"]
    memory = MemoryContext(
        blocks=[
            MemoryBlock(
                name="history_recall",
                title="Recalled history",
                layer="L2",
                items=[
                    MemoryItem("Turn 2: The hunter said: Hal was last seen in the Shadow Swamp.", 0.9, "turn:2"),
                    MemoryItem("Turn 3: You bought bread.", 0.2, "turn:3"),
                ],
            )
        ]
    )
    turn = answer(mini_pack, "where is Hal?", memory)
    assert "Shadow Swamp" in turn["narration"]


def test_remembers_what_the_player_said_about_themselves():
    pack = load_pack(content_root() / "fantasy_001")
    engine = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack))
    said = engine.play("My name is Ren and I come from the salt marshes")
    assert any("Ren" in note for note in said.memory_notes)
    for _ in range(12):
        engine.play("look")
    reply = engine.play("what is my name?")
    assert "Ren" in reply.narration
    # ...because memory recalled it, not because the narrator kept state
    assert any("Ren" in item.text for item in reply.trace.memory.all_items())


def test_a_fact_told_to_the_hunter_is_recalled_later():
    """A fact no content holds, so only memory (not the knowledge base) can answer it."""
    pack = load_pack(content_root() / "fantasy_001")
    assert not any("westhold" in p.read_text().lower() for p in Path(pack.root).iterdir() if p.is_file())
    engine = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack))
    hunter_node = pack.npcs["old_hunter"].location
    engine.state.node = hunter_node
    told = engine.play("tell the old hunter my sister Mira waits for me in Westhold")
    assert told.ok and "Mira" in told.narration
    engine.state.node = pack.story.start_node if hunter_node != pack.story.start_node else "elven_sanctuary"
    for _ in range(20):
        engine.play("look")
    reply = engine.play("who is waiting for me in Westhold?")
    assert "Mira" in reply.narration
    assert not any("Mira" in t for t in [i.text for i in reply.trace.memory.block("knowledge").items])


def test_extractive_summary_is_bounded_and_from_the_text():
    narrator = ScriptedNarrator(load_pack(content_root() / "fantasy_001"))
    text = (
        "You meet the old hunter at his cabin. He tells you his son Hal vanished in the Shadow Swamp. "
        "You take a tonic from the shelf. Rain falls. The hunter asks you to find Hal and bring him home. "
        "You promise to search the swamp at dawn."
    )
    summary = narrator.summarize(text, max_words=25)
    assert 0 < len(summary.split()) <= 25
    assert all(sentence.strip() in text for sentence in summary.split(". ") if sentence.strip())
    assert "Hal" in summary


def test_locked_exit_is_narrated_as_locked_and_shown_to_llms(mini_pack):
    from game.world.content import Condition, ExitLock

    woods = mini_pack.nodes["woods"].model_copy(
        update={
            "locked_exits": {
                "east": ExitLock(condition=Condition(has_items=["crown"]), message="A troll bars the way.")
            }
        }
    )
    pack = mini_pack.model_copy(update={"nodes": {**mini_pack.nodes, "woods": woods}})
    state = new_game(pack)
    state.node = "woods"
    turn = answer(pack, "go east", state=state)
    assert turn["narration"] == "A troll bars the way."
    bundle = compose("look", parse("look"), state, pack, MemoryContext())
    assert "LOCKED - A troll bars the way." in bundle.user
