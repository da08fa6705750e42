"""``storyecho content export`` (issue 44, item 7): lore and people back out, as files SillyTavern imports.

A World Info file with every field the two formats share set (``every_field.json``: logic, options, order,
position, depth, role, probability, recursion, groups, timed effects, scan depth, vectorized, a regular-expression
key, a constant) is imported and exported again and comes back equal; a story's own lore goes out as keyed or
constant entries; a person goes out as a V2 card whose book keeps its entries' activation. None of it existed
before issue 44.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from game.checker.imports import import_file
from game.checker.imports.readers import read_source
from game.world.library import StoryLibrary
from tests.conftest import DATA

IMPORTS = DATA / "imports"


def storyecho(stories: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STORYECHO_STORIES_DIR=str(stories), STORYECHO_DATA_DIR=str(stories.parent / "data"))
    return subprocess.run([sys.executable, "-m", "game", *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_world_info_file_with_every_shared_field_comes_back_equal(tmp_path):
    stories = tmp_path / "stories"
    report = import_file(IMPORTS / "every_field.json", StoryLibrary.of(stories), stories, "moor", new=True)
    assert not report.guarded and len([line for line in report.mapped if line.startswith("entries.")]) == 3
    out = tmp_path / "moor.json"
    done = storyecho(stories, "content", "export", "moor", "--format", "worldinfo", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"exported 5 lore entries of 'moor' to {out}" in done.stdout  # the scaffold's two, and three
    source = json.loads((IMPORTS / "every_field.json").read_text())["entries"]
    exported = json.loads(out.read_text())["entries"]
    scaffold = {uid: e for uid, e in exported.items() if e["comment"] not in {s["comment"] for s in source.values()}}
    assert {uid: e for uid, e in exported.items() if uid not in scaffold} == source
    assert {e["comment"] for e in scaffold.values()} == {"The beacon", "The keeper"}  # the scaffold's own lore


def test_a_story_s_own_lore_goes_out_keyed_and_comes_back_in(tmp_path):
    stories = tmp_path / "stories"
    assert storyecho(stories, "content", "new", "lighthouse").returncode == 0
    out = tmp_path / "lighthouse.json"
    assert storyecho(stories, "content", "export", "lighthouse", "-o", str(out)).returncode == 0
    entries = list(json.loads(out.read_text())["entries"].values())
    beacon = next(e for e in entries if e["comment"] == "The beacon")
    assert beacon["key"] == ["beacon", "ships"] and beacon["constant"] is False and beacon["disable"] is False
    assert beacon["content"].startswith("The beacon has guided ships home")
    back = {e.name: e for e in read_source(out).entries}  # as an import reads it back
    assert back["The beacon"].activation["keys"] == ["beacon", "ships"]


def test_a_person_goes_out_as_a_v2_card_whose_book_keeps_its_activation(tmp_path):
    stories = tmp_path / "stories"
    import_file(IMPORTS / "sakana.json", StoryLibrary.of(stories), stories, "shrine", new=True)
    out = tmp_path / "sakana_card.json"
    done = storyecho(stories, "content", "export", "shrine", "--format", "card", "--person", "sakana", "-o", str(out))
    assert done.returncode == 0, done.stderr
    card = json.loads(out.read_text())
    assert card["spec"] == "chara_card_v2" and card["spec_version"] == "2.0"
    data = card["data"]
    assert data["name"] == "Sakana" and data["description"].startswith("Sakana is a shrine maiden")
    assert data["first_mes"] == "Welcome to the tide shrine, Traveller." and data["extensions"] == {}
    hands = next(e for e in data["character_book"]["entries"] if e["comment"] == "Holding Hands")
    assert hands["keys"] == ["place"] and hands["secondary_keys"] == ["your hand"] and hands["selective"] is True
    assert hands["extensions"]["selectiveLogic"] == 0 and hands["position"] == "before_char"
    again = read_source(out)  # and it reads back as the card it is
    assert again.card is not None and again.card.name == "Sakana"
    entry = next(e for e in again.entries if e.name == "Holding Hands")
    assert entry.activation["secondary_keys"] == ["your hand"] and entry.activation["logic"] == "and_any"


def test_an_unknown_person_or_a_card_without_one_is_refused_clearly(tmp_path):
    stories = tmp_path / "stories"
    storyecho(stories, "content", "new", "lighthouse")
    out = tmp_path / "x.json"
    card = ("content", "export", "lighthouse", "--format", "card")
    nobody = storyecho(stories, *card, "--person", "mira", "-o", str(out))
    assert nobody.returncode == 1 and "lighthouse: no person 'mira' (its people: keeper)" in nobody.stderr
    unnamed = storyecho(stories, *card, "-o", str(out))
    assert unnamed.returncode == 1 and "--format card needs --person (one of keeper)" in unnamed.stderr
    missing = storyecho(stories, "content", "export", "harbour", "-o", str(out))
    assert missing.returncode == 1 and "no story 'harbour'" in missing.stderr
    assert not out.exists()


def test_a_story_imported_before_activations_were_kept_gets_them_on_a_second_import(tmp_path):
    stories = tmp_path / "stories"
    import_file(IMPORTS / "sakana.json", StoryLibrary.of(stories), stories, "shrine", new=True)
    lore = stories / "shrine" / "knowledge.json"
    entries = json.loads(lore.read_text())
    for entry in entries:
        entry.pop("activation", None)  # as an import before issue 44 wrote it
    lore.write_text(json.dumps(entries))
    again = import_file(IMPORTS / "sakana.json", StoryLibrary.of(stories), stories, "shrine")
    updated = "data.character_book.entries[0] 'Holding Hands' -> knowledge.json 'holding_hands': its activation updated"
    assert updated in again.mapped
    hands = next(e for e in json.loads(lore.read_text()) if e["id"] == "holding_hands")
    assert hands["activation"]["secondary_keys"] == ["your hand"]
    third = import_file(IMPORTS / "sakana.json", StoryLibrary.of(stories), stories, "shrine")
    assert not any("holding_hands" in line for line in third.mapped)  # nothing left to update


def test_fields_a_tool_wrote_oddly_are_left_at_the_default_and_named(tmp_path):
    odd = {"entries": {"0": {"uid": 0, "key": ["bell"], "comment": "Bell", "probability": None, "order": None,
                             "sticky": "2", "content": "The tide bell rings when the sea turns."}}}  # fmt: skip
    source = tmp_path / "odd.json"
    source.write_text(json.dumps(odd))
    stories = tmp_path / "stories"
    report = import_file(source, StoryLibrary.of(stories), stories, "odd", new=True)
    assert "sticky (in 1 entry)" in report.text()  # kept in imported/, not used
    bell = next(e for e in json.loads((stories / "odd" / "knowledge.json").read_text()) if e["id"] == "bell")
    assert bell["activation"] == {"keys": ["bell"], "uid": 0, "name": "Bell"}  # probability 100, order 100
