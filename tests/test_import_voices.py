"""Cards speak in their voice (issue 44, item 4, in part): a lorebook's ``{{char}}`` names the story's card
character, a transcript in a card's lore is the character's own words, and a person says a greeting.

Found on real files: in a story made from the Seraphina card, the Eldoria World Info's ``{{char}}`` became "the
character"; "ask seraphina about the shadowfangs" answered ``Seraphina: "Traveller: "What are Shadowfangs?"
Seraphina: *Seraphina's eyes darken...*"``; "talk to amy" answered ``Amy: "Amy looks up at you."``. The fixtures
here are small files of the same shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from game.checker.imports import ImportFailure, import_file
from game.world.library import StoryLibrary
from tests.conftest import DATA

IMPORTS = DATA / "imports"
TRANSCRIPT = (
    'Traveller: "What is the Gull?" Mira Vance: *Mira\'s eyes go to the water.* "Our oldest boat. Black hull, '
    'red sail, and she has not come home."'
)


def _card(tmp_path: Path, **changes: object) -> Path:
    card = json.loads((IMPORTS / "card_v2.json").read_text(encoding="utf-8"))
    card["data"].update(changes)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


def _npcs(stories: Path, story: str) -> list[dict]:
    return json.loads((stories / story / "npcs.json").read_text(encoding="utf-8"))


def test_a_lorebooks_char_names_the_character_an_earlier_card_brought(tmp_path):
    stories = tmp_path / "stories"
    import_file(IMPORTS / "card_v2.json", StoryLibrary.of(stories), stories, "quay", new=True)
    book = {
        "entries": {
            "0": {
                "uid": 0,
                "key": ["net loft"],
                "content": "{{char}} mends her nets in the net loft above the fish cellars every dawn.",
            }
        }
    }
    path = tmp_path / "book.json"
    path.write_text(json.dumps(book), encoding="utf-8")
    report = import_file(path, StoryLibrary.of(stories), stories, "quay")
    lore = json.loads((stories / "quay" / "knowledge.json").read_text(encoding="utf-8"))
    said = [k["content"] for k in lore if "net loft" in k["content"]]
    assert said == ["Mira Vance mends her nets in the net loft above the fish cellars every dawn."], report


def test_a_transcript_in_a_cards_lore_is_the_characters_own_words(tmp_path):
    card = json.loads((IMPORTS / "card_v2.json").read_text(encoding="utf-8"))["data"]
    book = card["character_book"]
    book["entries"][0]["content"] = TRANSCRIPT
    stories = tmp_path / "stories"
    import_file(_card(tmp_path, character_book=book), StoryLibrary.of(stories), stories, "quay", new=True)
    mira = next(n for n in _npcs(stories, "quay") if n["name"] == "Mira Vance")
    assert mira["topics"]["gull"] == "Our oldest boat. Black hull, red sail, and she has not come home."


def test_a_card_whose_opening_says_no_words_gives_its_person_a_spoken_greeting(tmp_path):
    stories = tmp_path / "stories"
    path = _card(tmp_path, first_mes="The fog rolls over the quay. {{char}} looks up from her nets.")
    import_file(path, StoryLibrary.of(stories), stories, "quay", new=True)
    mira = next(n for n in _npcs(stories, "quay") if n["name"] == "Mira Vance")
    assert mira["greeting"] == "Well met." and "looks up" not in mira["greeting"]


def _intro(stories: Path, story: str) -> str:
    return str(json.loads((stories / story / "story.json").read_text(encoding="utf-8"))["intro"])


def test_a_card_never_replaces_an_opening_its_author_wrote_unless_asked(tmp_path):
    """Was: importing a card into a story replaced its opening without a word."""
    stories = tmp_path / "stories"
    import_file(IMPORTS / "world_info.json", StoryLibrary.of(stories), stories, "quay", new=True)
    story = json.loads((stories / "quay" / "story.json").read_text(encoding="utf-8"))
    story["intro"] = "Rain on the slates of Saltmere, and a letter in your pocket you have not opened."
    (stories / "quay" / "story.json").write_text(json.dumps(story), encoding="utf-8")
    report = import_file(IMPORTS / "card_v2.json", StoryLibrary.of(stories), stories, "quay")
    assert _intro(stories, "quay").startswith("Rain on the slates")
    assert any("keeps the opening its author wrote" in s and "--opening" in s for s in report.skipped)
    import_file(IMPORTS / "card_v2.json", StoryLibrary.of(stories), stories, "quay", opening=True)
    assert _intro(stories, "quay").startswith("The fog rolls over the quay")


def test_a_cards_person_stands_where_the_author_says(tmp_path):
    """Was: every imported person stood at the scaffold's landing."""
    stories = tmp_path / "stories"
    import_file(IMPORTS / "world_info.json", StoryLibrary.of(stories), stories, "quay", new=True)
    places = [n["id"] for n in json.loads((stories / "quay" / "map.json").read_text(encoding="utf-8"))["nodes"]]
    elsewhere = next(p for p in places if p != "landing")
    import_file(IMPORTS / "card_v2.json", StoryLibrary.of(stories), stories, "quay", place=elsewhere)
    mira = next(n for n in _npcs(stories, "quay") if n["name"] == "Mira Vance")
    assert mira["location"] == elsewhere
    with pytest.raises(ImportFailure, match="--place nowhere: no such place"):
        import_file(IMPORTS / "card_v2.json", StoryLibrary.of(stories), stories, "other", new=True, place="nowhere")


def test_a_cards_linked_world_info_is_named(tmp_path):
    card = json.loads((IMPORTS / "card_v2.json").read_text(encoding="utf-8"))["data"]
    path = _card(tmp_path, extensions={**card.get("extensions", {}), "world": "Saltmere Coast"})
    report = import_file(path, StoryLibrary.of(tmp_path / "s"), tmp_path / "s", "quay", new=True)
    assert any("'Saltmere Coast' (extensions.world)" in n for n in report.notes)


def test_an_entry_imported_again_after_an_edit_is_updated_not_doubled(tmp_path):
    stories = tmp_path / "stories"
    book = json.loads((IMPORTS / "world_info.json").read_text(encoding="utf-8"))
    import_file(IMPORTS / "world_info.json", StoryLibrary.of(stories), stories, "quay", new=True)
    before = json.loads((stories / "quay" / "knowledge.json").read_text(encoding="utf-8"))
    book["entries"]["0"]["content"] += " Its harbour wall was rebuilt after the storm of '88."
    edited = tmp_path / "world_info.json"
    edited.write_text(json.dumps(book), encoding="utf-8")
    report = import_file(edited, StoryLibrary.of(stories), stories, "quay")
    after = json.loads((stories / "quay" / "knowledge.json").read_text(encoding="utf-8"))
    assert len(after) == len(before)
    assert any("storm of '88" in k["content"] for k in after)
    assert any("updated (imported before)" in m for m in report.mapped)
