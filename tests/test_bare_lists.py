"""A step said with no verb, only things named, is asked back with the whole line (issue 41, ``guess._bare``).

Part 9 of the corpus, read once, found a player packing a bag in shorthand: "fuse + gloves, then east through the
hatch" went east and left the fuse and gloves, with no word why; "fuse and gloves" alone asked which of the two.
A clause that is only names of things (lying here: take them; carried, with a place's fitting: use it) is now a
step of the line, and the line is asked back whole, on one yes: "Do you mean: take the Ceramic Fuse, then take
the Insulated Gloves, then go to the Maintenance Corridor?". The sentences here are new ones of that kind; the
controls keep a clause with a verb the lexicon lacks ("draw my baton") a flourish.
"""

from __future__ import annotations

import pytest

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from tests.language.acts import shipped_packs, state_for
from tests.language.rows import Row


@pytest.fixture(scope="module")
def packs():
    return shipped_packs()


def _engine(packs, story: str, at: str, **setup) -> TurnPipeline:
    pack = packs[story]
    memory = GameMemory(pack, ScriptedNarrator(pack), config=MemoryConfig(), background=False)  # type: ignore[arg-type]
    return TurnPipeline(pack, state_for(Row(story, at, "", (), "plain", **setup), pack), ScriptedNarrator(pack), memory)


def test_two_things_and_a_way_are_asked_back_whole_and_played_on_one_yes(packs):
    game = _engine(packs, "fantasy_001", "tree_of_life")
    turn = game.state.turn
    asked = game.play("dewdrop and branch, then back south")
    assert asked.asking and asked.choices == ["yes", "no"]
    assert asked.narration == (
        "Do you mean: take the Dewdrop of Living Sap, then take the Lifewood Branch, then go to the Elven Sanctuary?"
    )
    assert (
        game.state.turn == turn
        and game.state.inventory == state_for(Row("fantasy_001", "x", ""), packs["fantasy_001"]).inventory
    )
    played = game.play_all("yes")
    assert all(r.ok for r in played)
    assert {"sap_dewdrop", "lifewood_branch"} <= set(game.state.inventory)
    assert game.state.node == "elven_sanctuary"


def test_a_bare_list_alone_is_both_things_not_one_of_them(packs):
    game = _engine(packs, "scifi_001", "ripper_clinic")
    asked = game.play("chip & salve")
    assert asked.narration == "Do you mean: take the Reflex Chip, then take the Nano-Salve?"


def test_the_things_are_taken_in_the_order_said(packs):
    game = _engine(packs, "victorian_001", "wreckers_cove")
    asked = game.play("the watch n the burner then north")
    assert asked.narration.startswith("Do you mean: take the Brass Pocket Watch, then take the Brass Burner, then go")


def test_a_thing_carried_named_at_a_fitting_is_used(packs):
    game = _engine(packs, "scifi_001", "distribution_room", carried=("ceramic_fuse",))
    asked = game.play("fuse in breaker, take cell, down to generator")
    assert asked.narration.startswith("Do you mean: use the Ceramic Fuse, then take the Starter Cell, then go to")


def test_no_leaves_the_world_as_it_was(packs):
    game = _engine(packs, "scifi_001", "storage_area")
    before = game.state.model_dump()
    assert game.play("gloves + baton, east").asking
    assert game.play("no").narration == "Then nothing is done."
    assert game.state.model_dump() == before


@pytest.mark.parametrize(
    ("story", "at", "line", "node"),
    [
        ("scifi_001", "storage_area", "I draw my baton and go east", "maintenance_corridor"),  # a verb, unknown
        ("victorian_001", "wreckers_cove", "gotta hurry, north", "harbour"),  # no thing named
    ],
)
def test_a_clause_that_is_not_only_names_is_no_step(packs, story, at, line, node):
    game = _engine(packs, story, at)
    played = game.play_all(line)
    assert not played[0].asking and game.state.node == node
