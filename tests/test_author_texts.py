"""game/world/texts.py: every text a story's authors wrote is found, with where it is, from the content models."""

from __future__ import annotations

import re
from typing import Any

import pytest

from game.world.content import ContentPack, Node, NodeVariant, Npc, Objective, Story
from game.world.loader import PACK_FILES
from game.world.texts import author_texts, texts_of


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("story", ["fantasy", "scifi", "mini_pack"])
def test_every_string_of_a_pack_is_an_author_text_or_an_id_or_data(story, request):
    pack: ContentPack = request.getfixturevalue(story)
    found = {t.text for t in author_texts(pack)}
    rest = [s for s in _strings(pack.model_dump()) if s and s not in found]
    data = {pack.root, pack.content_hash}
    words = re.compile(r"^[a-z][a-z0-9_]*$")  # ids, kinds, stats, topic keywords
    flag = re.compile(r"^[a-z_]+:[a-z0-9_:@-]+$")  # visited:x, gave:item:npc, ...
    pronouns = re.compile(r"^[a-z]+/[a-z]+$")
    missed = [s for s in rest if s not in data and not (words.match(s) or flag.match(s) or pronouns.match(s))]
    assert missed == []


def test_a_full_story_has_text_in_every_file(fantasy):
    assert {t.file for t in author_texts(fantasy)} == {*PACK_FILES, "worldview.md"}


def test_where_a_text_is_names_file_entry_and_field(fantasy):
    where: dict[tuple[type, str], str] = {}
    for t in author_texts(fantasy):
        where.setdefault((t.model, t.field), t.where)  # the first text of each field
    assert where[(Story, "intro")] == "story.json: intro"
    assert where[(Node, "description")] == "map.json: [forest_edge].description"
    assert where[(NodeVariant, "text")] == "map.json: [hunter_cabin].variants[0]"  # a variant's only text
    assert where[(Npc, "topics")] == "npcs.json: [old_hunter].topics.hal"
    assert where[(Objective, "description")] == "quests.json: [mists_call].objectives[meet_garrick].description"
    assert where[(ContentPack, "worldview")] == "worldview.md"


def test_a_text_field_added_to_a_model_is_found_without_being_listed(mini_pack):
    class SignedNode(Node):
        sign: str = ""

    camp = mini_pack.nodes["camp"]
    signed = SignedNode(**camp.model_dump(), sign="Beware the troll.")
    pack = mini_pack.model_construct(**{**dict(mini_pack), "nodes": {**mini_pack.nodes, "camp": signed}})
    found = [(t.where, t.text) for t in author_texts(pack) if t.field == "sign"]
    assert found == [("map.json: [camp].sign", "Beware the troll.")]


def test_texts_of_picks_fields_and_refuses_what_holds_no_text(mini_pack):
    intro = list(texts_of(mini_pack, [(Story, "intro")]))
    assert [(t.where, t.text) for t in intro] == [("story.json: intro", mini_pack.story.intro)]
    with pytest.raises(ValueError, match=r"Node\.id is not a text field"):
        texts_of(mini_pack, [(Node, "id")])
