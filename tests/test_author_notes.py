"""`content check` tells an author what no search finds (issue 34 item 5): a choice the parser reads as another
command, and lore against the prompt budget. Each warning is checked against what the game does with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from game.checker.analysis import check_pack
from game.checker.authoring import choice_misreads, lore_size
from game.checker.scaffold import new_story
from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.search.knowledge import SNIPPET_CHARS
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import SHIPPED, keyword_memory


def with_choice(tmp_path, name: str, keywords: list[str]):
    folder = new_story(tmp_path, "lamp")
    story = json.loads((folder / "story.json").read_text())
    story["choices"] = [
        {
            "id": "dark",
            "name": name,
            "keywords": keywords,
            "description": "You leave the lamp unlit.",
            "condition": {"at_node": "landing"},
        }
    ]
    (folder / "story.json").write_text(json.dumps(story))
    endings = json.loads((folder / "endings.json").read_text())
    endings.append(
        {
            "id": "dark",
            "title": "Dark",
            "description": "The dark stays.",
            "priority": 5,
            "condition": {"flags": ["choice:dark"]},
        }
    )
    (folder / "endings.json").write_text(json.dumps(endings))
    return load_pack(folder)


def play(pack, action: str):
    pipeline = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack))
    try:
        return pipeline.play(action), pipeline.state
    finally:
        pipeline.memory.close()


def test_a_choice_read_as_another_command_is_warned_and_is_refused_in_play(tmp_path):
    misread = with_choice(tmp_path / "a", "Leave the lamp dark", ["leave", "dark"])
    warnings = choice_misreads(misread)
    assert len(warnings) == 1 and "'drop lamp dark'" in warnings[0] and "choices[dark].name" in warnings[0]
    assert any("Leave the lamp dark" in note for note in check_pack(misread).notes)
    _, state = play(misread, "Leave the lamp dark")
    assert "choice:dark" not in state.flags  # the warning is true: the name does not make the choice
    fixed = with_choice(tmp_path / "b", "Keep the lamp dark", ["keep", "dark"])
    assert choice_misreads(fixed) == []
    _, state = play(fixed, "Keep the lamp dark")
    assert "choice:dark" in state.flags and state.ending == "dark"


@pytest.mark.parametrize("story", SHIPPED)
def test_no_shipped_choice_is_warned(story):
    assert choice_misreads(load_pack(content_root() / story)) == []


def test_lore_is_counted_against_the_budget_and_a_long_entry_is_named(tmp_path):
    folder = new_story(tmp_path, "lore")
    notes = lore_size(load_pack(folder))
    assert len(notes) == 1 and notes[0].startswith("lore: 2 knowledge entries and the worldview, about ")
    knowledge = json.loads((folder / "knowledge.json").read_text())
    knowledge[0]["content"] = "The beacon's long history. " * 80
    (folder / "knowledge.json").write_text(json.dumps(knowledge))
    notes = lore_size(load_pack(folder))
    assert len(notes) == 2 and f"shows at most {SNIPPET_CHARS} of one" in notes[1]
    assert "[beacon_history].content: 2,160 characters" in notes[1]


@pytest.mark.parametrize("story", SHIPPED)
def test_every_shipped_lore_entry_reaches_the_prompt_whole(story):
    """Issue 44: seven shipped entries were 355-388 characters and every prompt showed 300 of them, unsaid."""
    pack = load_pack(content_root() / story)
    assert max(len(entry.content) for entry in pack.knowledge) <= SNIPPET_CHARS
    assert len(lore_size(pack)) == 1  # and the checker, which warns of what a prompt shortens, says nothing


def with_rat(tmp_path, *, variant: bool):
    folder = new_story(tmp_path, "rat")
    enemies = [
        {
            "id": "rat",
            "name": "Cellar Rat",
            "category": "beast",
            "tier": 1,
            "hp": 3,
            "attack": 1,
            "nodes": ["cellar"],
            "encounter": "A rat bares its teeth.",
            "exp": 5,
        }
    ]
    (folder / "enemies.json").write_text(json.dumps(enemies))
    game_map = json.loads((folder / "map.json").read_text())
    cellar = next(n for n in game_map["nodes"] if n["id"] == "cellar")
    cellar["description"] = "A damp cellar under the road, where a Cellar Rat guards the shelves."
    cellar["safe"], cellar["enemies"] = False, ["rat"]
    if variant:
        cellar["variants"] = [
            {"when": {"defeated": ["rat"]}, "text": "A damp cellar under the road, quiet now.", "replace": True}
        ]
    (folder / "map.json").write_text(json.dumps(game_map))
    quests = json.loads((folder / "quests.json").read_text())  # the rat stands in the story's way: it is fought
    quests["main"][0]["objectives"].insert(
        0, {"id": "rid", "description": "Clear the cellar", "kind": "defeat", "target": "rat"}
    )
    quests["main"][0]["ordered"] = True  # the rat first: states after its defeat come before the ending
    (folder / "quests.json").write_text(json.dumps(quests))
    return load_pack(folder)


def test_a_place_that_still_names_a_defeated_enemy_is_warned_until_a_variant_says_what_it_became(tmp_path):
    notes = [n for n in check_pack(with_rat(tmp_path / "a", variant=False)).notes if "once it is defeated" in n]
    assert len(notes) == 1 and notes[0].startswith("map.json: nodes[cellar].description still names Cellar Rat")
    fixed = check_pack(with_rat(tmp_path / "b", variant=True))
    assert not [n for n in fixed.notes if "once it is defeated" in n] and fixed.defects == 0


def test_a_variant_told_after_the_defeat_may_name_the_enemy_and_a_variant_told_before_may_not(tmp_path):
    """The Drowned Light's causeway: "Where the drowned sailor stood there is only a pool" says what it became."""
    cases = [
        ("after", {"defeated": ["rat"]}, 0),
        ("flag", {"flags": ["defeated:rat"]}, 0),
        ("unrelated", {"flags": ["visited:cellar"]}, 1),
    ]
    for folder, when, warned in cases:
        path = Path(with_rat(tmp_path / folder, variant=True).root) / "map.json"
        game_map = json.loads(path.read_text())
        cellar = next(n for n in game_map["nodes"] if n["id"] == "cellar")
        cellar["variants"] = [{"when": when, "text": "Where the Cellar Rat stood, only a smear.", "replace": True}]
        path.write_text(json.dumps(game_map))
        notes = [n for n in check_pack(load_pack(path.parent)).notes if "once it is defeated" in n]
        assert len(notes) == warned, (folder, notes)


def test_an_entry_longer_than_a_prompt_shows_is_cut_with_a_record(tmp_path):
    """Issue 44: lore reached the prompt at about 300 characters ending "…", and the prompt's ``cut`` was empty."""
    folder = new_story(tmp_path, "lore")
    knowledge = json.loads((folder / "knowledge.json").read_text())
    tail = "and the last ship it saved was the Mary Ellen, in the winter of the great storm."
    knowledge[0]["content"] = "The beacon's long history. " * 20 + tail
    (folder / "knowledge.json").write_text(json.dumps(knowledge))
    result, _ = play(load_pack(folder), "tell me about the beacon's history")
    shown = [i for b in result.trace.prompt.memory.blocks for i in b.items if i.source.startswith("kb:history")]
    assert shown and len(shown[0].text) <= SNIPPET_CHARS and shown[0].text.endswith("…")
    cuts = [c for c in result.trace.prompt.cut if c.source == shown[0].source]
    assert len(cuts) == 1 and cuts[0].reason.startswith("shortened: the entry's own size (")
    assert tail in cuts[0].text and tail not in result.trace.prompt.user
