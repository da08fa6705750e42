"""Lore the game's state switches (issue 44, item 2): a knowledge entry's ``when`` decides whether it may reach
the prompt, whatever its keys or meaning score, with real Chroma and real embeddings.

Each test fails on the code before it: ``when`` was an unknown field of ``knowledge.json`` (the story did not load),
and nothing held an entry back by the game's state.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.report import turn_json
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.tui.debug_data import DebugData
from game.tui.debug_render import render_timings
from game.world.content import ContentError
from game.world.loader import load_pack
from game.world.lore_state import lore_gate, time_of_day
from game.world.state import GameState, new_game
from tests.conftest import DATA

SONG = {
    "id": "ferry_song",
    "category": "place",
    "title": "The ferryman's song",
    "content": "Beside the bridge the river sings the drowned ferryman's song to everyone who crosses the water.",
    "keywords": ["song", "river"],
    "when": {"at_node": "bridge"},
}
OATH = {
    "id": "troll_oath",
    "category": "history",
    "title": "The troll's oath",
    "content": "Grumm swore an oath to guard the crossing until the river forgives him for the ferry he sank.",
    "keywords": ["oath"],
    "when": {"flags": ["talked:troll_npc"]},
}
STONE = {
    "id": "stone_hum",
    "category": "item",
    "title": "The humming stone",
    "content": "The river stone hums a low note in the hand of whoever carries it, louder near running water.",
    "keywords": ["hum", "stone"],
    "when": {"has_items": ["stone"]},
}
OWLS = {
    "id": "night_owls",
    "category": "place",
    "title": "The owls of the woods",
    "content": "White owls hunt over the woods and call the names of lost travellers into the dark.",
    "keywords": ["owls"],
    "when": {"time_of_day": ["night"], "npcs_present": []},
}
TOLL = {
    "id": "bridge_toll",
    "category": "hidden_rule",
    "title": "The bridge toll",
    "content": "No one crosses the troll's bridge without paying the toll in riddles or in silver.",
    "keywords": [],
    "when": {"at_node": "bridge", "npcs_present": ["troll_npc"]},
}


def story(tmp_path: Path, *entries: dict) -> Path:
    """The mini story with ``entries`` added to its lore."""
    folder = tmp_path / "mini"
    shutil.copytree(DATA / "mini", folder)
    lore = json.loads((folder / "knowledge.json").read_text(encoding="utf-8"))
    (folder / "knowledge.json").write_text(json.dumps([*lore, *entries]), encoding="utf-8")
    return folder


@pytest.fixture
def gated(tmp_path, embedder, chroma_store):
    """The mini story with state-gated lore, and memory on real Chroma with the real embedder."""
    pack = load_pack(story(tmp_path, SONG, OATH, STONE, OWLS, TOLL))
    memory = GameMemory(pack, ScriptedNarrator(pack), store=chroma_store, embedder=embedder, background=False)
    yield pack, memory
    memory.close()


def lore(memory: GameMemory, action: str, state: GameState) -> tuple[list[str], list[dict[str, str]], str]:
    """The knowledge block's texts for ``action`` in ``state``, what its condition held back, the strategy."""
    context = memory.recall(action, state)
    block = context.block("knowledge")
    texts = [item.text for item in block.items] if block else []
    meta = context.retrieval_meta
    return texts, meta.get("lore_held", []), str(meta["knowledge_strategy"])


def named(texts: list[str], entry: dict) -> bool:
    return any(entry["title"] in text for text in texts)


def test_an_entry_at_a_place_fires_only_there(gated):
    pack, memory = gated
    state = new_game(pack)
    assert state.node == "camp"
    texts, held, strategy = lore(memory, "what song does the river sing?", state)
    assert strategy.startswith("hybrid") and not named(texts, SONG)  # meaning search ran, and its state did not hold
    assert any(h["source"].endswith("The ferryman's song") and "must be at" in h["why"] for h in held)
    state.node = "bridge"
    texts, held, _ = lore(memory, "what song does the river sing?", state)
    assert named(texts, SONG) and not any("ferryman's song" in h["source"] for h in held)


def test_an_entry_with_a_flag_and_one_with_an_item_fire_only_with_them(gated):
    pack, memory = gated
    state = new_game(pack)
    for entry, question in ((OATH, "what oath did the troll swear?"), (STONE, "why does the stone hum?")):
        texts, held, _ = lore(memory, question, state)
        assert not named(texts, entry), entry["id"]
        assert any(entry["title"] in h["source"] for h in held), held
    state.add_flag("talked:troll_npc")
    state.inventory.append("stone")
    texts, _, _ = lore(memory, "what oath did the troll swear?", state)
    assert named(texts, OATH)
    texts, _, _ = lore(memory, "why does the stone hum?", state)
    assert named(texts, STONE)


def test_an_entry_of_the_night_fires_only_at_night(gated):
    pack, memory = gated
    state = new_game(pack)  # 08:00, morning
    texts, held, _ = lore(memory, "what hunts over the woods and calls names?", state)
    assert not named(texts, OWLS) and any("it is morning, not night" in h["why"] for h in held)
    state.clock_minutes = 23 * 60
    texts, _, _ = lore(memory, "what hunts over the woods and calls names?", state)
    assert named(texts, OWLS)


def test_a_hidden_rule_with_a_condition_is_in_every_prompt_while_it_holds_and_never_canon(gated):
    pack, memory = gated
    state = new_game(pack)
    texts, _, _ = lore(memory, "look", state)
    assert not named(texts, TOLL)
    state.node = "bridge"
    texts, _, _ = lore(memory, "look", state)  # nothing of the action touches it: the state brings it
    assert named(texts, TOLL)
    assert memory.bible.by_key("rule:bridge_toll") is None  # canon is in every prompt: the state cannot switch it


def test_the_turn_record_and_the_debug_panel_say_an_entry_was_held_back(gated):
    pack, memory = gated
    engine = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), memory)
    result = engine.play("what song does the river sing?")
    held = turn_json(result)["retrieval_meta"]["lore_held"]
    assert any("ferryman's song" in h["source"] and "must be at" in h["why"] for h in held)
    assert "The ferryman's song" not in result.trace.prompt.user
    shown = render_timings(DebugData.from_result(result)).plain
    assert "lore_held" in shown and "held back by its condition" in shown


def test_the_gate_says_why_and_lets_an_ungated_entry_pass(tmp_path):
    pack = load_pack(story(tmp_path, SONG, OWLS, TOLL))
    state = new_game(pack)
    when = {entry.id: entry.when for entry in pack.knowledge}
    assert lore_gate(when["troll_past"], state, pack) is None
    assert lore_gate(when["bridge_toll"], state, pack) == (
        "held back by its condition: must be at Troll Bridge; Grumm is not here"
    )
    state.node = "bridge"
    assert lore_gate(when["bridge_toll"], state, pack) is None
    assert [time_of_day(h * 60) for h in (0, 5, 6, 11, 12, 17, 18, 21, 22, 23, 24 + 7)] == [
        *("night", "night", "morning", "morning", "afternoon", "afternoon", "evening", "evening", "night"),
        *("night", "morning"),
    ]


def test_a_condition_naming_what_the_story_lacks_is_an_error_naming_the_field(tmp_path):
    bad = {
        **SONG,
        "when": {
            "at_node": "old_mill",
            "npcs_present": ["nobody"],
            "quests_active": ["no_quest"],
            "has_items": ["ghost_lamp"],
        },
    }
    with pytest.raises(ContentError) as caught:
        load_pack(story(tmp_path, bad))
    message = str(caught.value)
    for line in (
        "knowledge.json: [ferry_song].when.at_node: unknown node 'old_mill'",
        "knowledge.json: [ferry_song].when.npcs_present: unknown npc 'nobody'",
        "knowledge.json: [ferry_song].when.quests_active: unknown quest 'no_quest'",
        "knowledge.json: [ferry_song].when.has_items: unknown item 'ghost_lamp'",
    ):
        assert line in message
    with pytest.raises(ContentError, match=r"knowledge.json: \[1\].when.time_of_day\[0\]: Input should be 'morning'"):
        load_pack(story(tmp_path / "b", {**SONG, "when": {"time_of_day": ["midnight"]}}))


def test_content_check_names_the_field_of_an_unknown_id(tmp_path):
    from tests.test_content_import import storyecho

    stories = tmp_path / "stories"
    stories.mkdir()
    shutil.copytree(story(tmp_path, {**SONG, "when": {"at_node": "old_mill"}}), stories / "mini")
    checked = storyecho(stories, tmp_path / "data", "content", "check", "--story", "mini")
    assert checked.returncode == 1
    assert "knowledge.json: [ferry_song].when.at_node: unknown node 'old_mill'" in checked.stdout + checked.stderr
