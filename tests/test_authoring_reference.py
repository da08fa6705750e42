"""docs/authoring.md's field reference and docs/schema/ are the models the loader enforces (issue 34 item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from game.checker.reference import END, FILES, START, reference_markdown, schema_of
from game.checker.scaffold import pack_files
from game.world.loader import content_root
from tests.conftest import SHIPPED

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_committed_reference_is_the_generated_one():
    text = (DOCS / "authoring.md").read_text(encoding="utf-8")
    committed = text[text.index(START) : text.index(END) + len(END)]
    assert committed == reference_markdown(), "run: python -m game.checker.reference"
    for filename in FILES:
        path = DOCS / "schema" / filename.replace(".json", ".schema.json")
        assert json.loads(path.read_text()) == schema_of(filename), "run: python -m game.checker.reference"


def test_every_field_of_every_file_is_in_the_reference():
    text = reference_markdown()
    for field in ("start_node", "main_quest_order", "exits", "topics", "requires", "to_npc", "priority", "keywords"):
        assert f"| `{field}` |" in text, field
    assert "| `category` | one of item, relationship, hidden_rule, history, place, faction | required |" in text


@pytest.mark.parametrize("story", SHIPPED)
def test_the_shipped_stories_meet_their_schemas(story):
    for filename in FILES:
        document = json.loads((content_root() / story / filename).read_text(encoding="utf-8"))
        jsonschema.validate(document, schema_of(filename))


def test_a_schema_catches_what_the_loader_refuses():
    files = {name: json.loads(text) for name, text in pack_files("demo", "Demo", "mystery").items() if ".json" in name}
    for filename, document in files.items():
        jsonschema.validate(document, schema_of(filename))  # the starter story passes
    files["npcs.json"][0].pop("greeting")
    with pytest.raises(jsonschema.ValidationError, match="'greeting' is a required property"):
        jsonschema.validate(files["npcs.json"], schema_of("npcs.json"))
    files["map.json"]["nodes"][0]["id"] = "Bad Id"
    with pytest.raises(jsonschema.ValidationError, match="does not match"):
        jsonschema.validate(files["map.json"], schema_of("map.json"))
