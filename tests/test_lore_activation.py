"""Imported lore fires as its author meant (issue 44, item 1): the issue's examples, played through the engine.

The fixtures are small files of the real shapes, written for these tests: ``keeper.lorebook`` (a NovelAI lorebook
with categories and a keyless entry) and ``sakana.json`` (a V2 card whose book has the "Holding Hands" entry:
primary key ``place``, secondary ``your hand``, AND ANY). Both are imported into one story and played with the
scripted narrator and keyword memory. On the code before issue 44 the keyless entry and the "Holding Hands" one
reach the prompt by meaning, and Sakana answers "about this place" with "I hold your left hand".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from game.checker.imports import import_file
from game.engine.pipeline import TurnPipeline
from game.engine.report import turn_json
from game.llm.scripted import ScriptedNarrator
from game.tui.debug_data import DebugData
from game.tui.debug_render import render_blocks
from game.world.library import StoryLibrary
from game.world.loader import load_pack
from game.world.state import new_game
from tests.conftest import DATA, keyword_memory

IMPORTS = DATA / "imports"
HOLDING_HANDS = "I hold your left hand against mine"


@pytest.fixture
def coast(tmp_path: Path) -> tuple[TurnPipeline, list[str]]:
    """The NovelAI lorebook imported with --new, then Sakana's card: an engine on the story, and the two reports."""
    stories = tmp_path / "stories"
    novel = import_file(IMPORTS / "keeper.lorebook", StoryLibrary.of(stories), stories, "coast", new=True)
    card = import_file(IMPORTS / "sakana.json", StoryLibrary.of(stories), stories, "coast")
    pack = load_pack(stories / "coast")
    return TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack)), [novel.text(), card.text()]


def lore_in(result) -> dict[str, str]:
    """The knowledge block's items of a turn's prompt: text -> why."""
    block = result.trace.prompt.memory.block("knowledge")
    return {item.text: getattr(item, "why", "") for item in (block.items if block is not None else [])}


def test_ask_the_keeper_about_christopher_fires_the_entry_keyed_christopher(coast):
    engine, _ = coast
    result = engine.play("ask the keeper about christopher")
    lore = lore_in(result)
    # the other entries' keys were not in the text: NovelAI would not fire them, and neither does the game
    for other in ("The keeper's lamp", "The keeper's log", "Winter notes", "Widow Rocks"):
        assert not any(text.startswith(other) for text in lore), (other, lore)
    fired = {text: why for text, why in lore.items() if text.startswith("Lost at sea")}
    assert list(fired.values()) == ["key 'Christopher' found"], lore
    assert "He was the keeper's only son" in result.trace.prompt.user
    verdicts = result.trace.memory.retrieval_meta["lore"]
    assert {"entry": "lost_at_sea", "title": "Lost at sea (also: Christopher, Kit)", "fired": True,
            "why": "key 'Christopher' found"} in verdicts  # fmt: skip


def test_holding_hands_needs_its_secondary_key_as_in_sillytavern(coast):
    engine, reports = coast
    result = engine.play("ask sakana about this place")
    prompt = result.trace.prompt
    assert HOLDING_HANDS not in prompt.system + prompt.user and HOLDING_HANDS not in result.narration
    assert "not a topic of 'sakana': it fires only with its secondary keys (AND ANY your hand)" in reports[1]
    assert "The tide shrine stands on piles" in result.narration  # the entry keyed "this place" answers
    held = DebugData.from_result(result).lore_held
    assert ("holding_hands", "key 'place' found, but secondary keys failed (AND ANY 'your hand')") in held
    taken = engine.play("I take your hand in this place")
    assert lore_in(taken)[next(t for t in lore_in(taken) if t.startswith("Holding Hands"))] == (
        "key 'place' found (AND ANY 'your hand')"
    )


def test_novelai_categories_become_the_story_s_and_keyless_entries_never_fire(coast):
    engine, reports = coast
    pack = engine.pack
    lore = {entry.id: entry for entry in pack.knowledge}
    assert {lore["keeper_s_lamp"].category, lore["lost_at_sea"].category, lore["widow_rocks"].category} == {
        "item", "relationship", "place"
    }  # fmt: skip
    assert lore["winter_notes"].category == "history"  # no category in the file
    assert (
        "entries[4] 'Winter notes' -> knowledge.json 'winter_notes' (history; no keys: never fires by key"
        in (reports[0])
    )
    assert lore["lost_at_sea"].activation is not None and lore["lost_at_sea"].activation.scan_chars == 1000
    assert lore["lost_at_sea"].activation.order == 500  # contextConfig.budgetPriority
    for action in ("what does the keeper note in winter?", "look at the keeper's winter mood"):
        result = engine.play(action)
        assert "A note about the keeper's mood in winter" not in result.trace.prompt.user, action


def test_the_json_record_and_the_debug_panel_say_why_each_entry_fired(coast):
    engine, _ = coast
    result = engine.play("tell the keeper I found a lantern by the reef")
    record = turn_json(result)
    knowledge = next(b for b in record["memory_blocks"] if b["name"] == "knowledge")
    whys = {item["why"] for item in knowledge["items"]}
    assert {"key 'lantern' found", "key 'reef' found"} <= whys
    fired = {v["entry"] for v in record["retrieval_meta"]["lore"] if v["fired"]}
    assert {"keeper_s_lamp", "widow_rocks"} <= fired
    data = DebugData.from_result(result)
    rows = data.block("knowledge")
    assert rows is not None and any(row.why == "key 'reef' found" for row in rows.items)
    shown = render_blocks(data).plain  # what the F12 panel's memory tab draws
    assert "why: key 'reef' found" in shown and "why: key 'lantern' found" in shown
    held = render_blocks(DebugData.from_result(engine.play("what place is this?"))).plain
    assert "Imported lore whose keys were seen but that did not fire" in held
    assert "holding_hands: key 'place' found, but secondary keys failed (AND ANY 'your hand')" in held


def test_a_loaded_game_fires_the_lore_the_game_that_went_on_fired(tmp_path):
    """Sticky, cooldown and rolls come from the log and the seed: memory restored in a fresh engine (a load) fires
    on the next turn exactly what the engine that never stopped fires."""
    book = {"entries": {
        "0": {"uid": 0, "key": ["bell"], "comment": "The tide bell", "sticky": 2, "cooldown": 1, "probability": 80,
              "content": "The tide bell rings when the sea turns; the fishermen count its strokes."},
        "1": {"uid": 1, "key": ["gull", "gulls"], "comment": "Gulls", "cooldown": 2,
              "content": "The gulls of the quay steal bait and scream at the bell."},
    }}  # fmt: skip
    source = tmp_path / "bells.json"
    source.write_text(json.dumps(book))
    stories = tmp_path / "stories"
    import_file(source, StoryLibrary.of(stories), stories, "bells", new=True)
    pack = load_pack(stories / "bells")
    lines = ["ring the bell", "look", "look at the gulls", "ring the bell", "feed the gull", "look", "ring the bell"]
    engine = TurnPipeline(pack, new_game(pack, seed=3), ScriptedNarrator(pack), keyword_memory(pack))
    verdicts = []
    for line in lines[:-1]:
        verdicts.append(engine.play(line).trace.memory.retrieval_meta.get("lore"))
    assert any(v and any("sticky" in x["why"] for x in v) for v in verdicts)  # the effects did something
    assert any(v and any("cooldown" in x["why"] for x in v) for v in verdicts)
    loaded_memory = keyword_memory(pack)
    loaded_memory.restore(engine.memory.mark().thawed())
    loaded = TurnPipeline(pack, engine.state, ScriptedNarrator(pack), loaded_memory)
    assert loaded.play(lines[-1]).trace.memory.retrieval_meta.get("lore") == (
        engine.play(lines[-1]).trace.memory.retrieval_meta.get("lore")
    )
