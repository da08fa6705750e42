"""Words that fit the world (issue 34, seen while authoring): a name that names many is "are defeated", and an
attack with no weapon draws none; a place told before is told briefly (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.llm.tellings import TELLINGS
from game.world.content import Enemy
from game.world.describe import changes_here
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import SHIPPED, keyword_memory


def enemy(name: str, plural: bool | None = None) -> Enemy:
    return Enemy(
        id="e",
        name=name,
        category="beast",
        tier=1,
        hp=5,
        attack=1,
        nodes=["camp"],
        encounter="It comes.",
        plural=plural,
    )


def test_a_name_that_names_many_is_read_as_many():
    assert enemy("The Loft Rats").many and enemy("Wreckers").many
    assert not enemy("Grey Wolf").many and not enemy("Bog Moss").many and not enemy("Octopus").many
    assert enemy("Cyclops", plural=False).many is False and enemy("Swarm", plural=True).many


def play(pack, actions, **state):
    pipeline = TurnPipeline(pack, new_game(pack).model_copy(update=state), ScriptedNarrator(pack), keyword_memory(pack))
    try:
        return [pipeline.play(action) for action in actions]
    finally:
        pipeline.memory.close()


def test_the_defeat_line_agrees_with_the_name(mini_pack):
    rats = mini_pack.enemies["wolf"].model_copy(update={"name": "Loft Rats", "hp": 1})
    pack = mini_pack.model_copy(update={"enemies": {**mini_pack.enemies, "wolf": rats}})
    told = " ".join(r.narration for r in play(pack, ["go north", "attack rats", "attack", "attack"]))
    assert "The Loft Rats are defeated!" in told and "Loft Rats is defeated" not in told


def test_an_attack_with_no_weapon_draws_none(mini_pack):
    bare = play(mini_pack, ["go north", "attack wolf"])[-1].narration.splitlines()[0]
    assert bare in told("charge_bare", foe="the Grey Wolf") and "Iron Sword" not in bare
    armed = play(mini_pack, ["take sword", "go north", "attack wolf"])[-1].narration.splitlines()[0]
    assert armed in told("charge", foe="the Grey Wolf", weapon="Iron Sword")


def told(kind: str, **fields: str) -> list[str]:
    """Every way the scripted narrator tells ``kind``."""
    return [variant.format(**fields) for variant in TELLINGS[kind]]


WALKTHROUGHS = Path(__file__).parent / "walkthroughs"


@pytest.mark.parametrize("story", SHIPPED)
def test_a_place_told_before_is_told_in_at_most_half_the_words_of_its_first_telling(story):
    """Every walkthrough of the story: each move back to a place where nothing has happened since (no variant
    of its text holds by an event: ``changes_here``) is told in at most half the words of its first telling
    (the narrator's line; the rules' lines after it are the turn's outcomes). The start is told by the intro."""
    pack = load_pack(content_root() / story)
    checked = 0
    for path in sorted(WALKTHROUGHS.glob(f"{story}__*.txt")):
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
        first: dict[str, int] = {pack.story.start_node: 10**6}  # the start is told by the intro
        node = pack.story.start_node
        for result in play(pack, [line for line in lines if line and not line.startswith("#")]):
            moved, node = result.state.node != node, result.state.node
            if not moved or result.state.combat or result.state.ending:
                continue
            words = len(result.narration.splitlines()[0].split())
            if node not in first:
                first[node] = words
            elif not changes_here(result.state, pack, node):
                checked += 1
                assert words <= first[node] / 2, (path.stem, node, result.narration)
    assert checked >= 3


def test_what_changed_at_a_place_is_told_on_the_first_return_and_not_again_soon_after():
    """Was: Moonwatch Gate's changed sentence ("The elven archers in the boughs know your face now ...") came back
    on every return. Told once, a second return soon after is brief again: at most half the first telling."""
    pack = load_pack(content_root() / "fantasy_001")
    actions = ["go west", "go north", "go north", "talk to alicia", "go north", "go south", "go north", "go south"]
    results = play(pack, actions, node="hunter_cabin")
    assert [r.state.node for r in results][-4:] == ["elven_sanctuary", "sanctuary_gate"] * 2
    first, back, again = (results[i].narration.splitlines()[0] for i in (2, 5, 7))
    change = changes_here(results[7].state, pack, "sanctuary_gate")
    assert change and change in back  # the first return says what changed
    assert change not in again and len(again.split()) <= len(first.split()) / 2


def test_a_detail_that_holds_from_the_start_is_not_told_as_a_change():
    """Was: "Above the hearth hangs a yew bow far too fine to be for sale." (a variant that holds until the bow is
    taken: ``not_flags`` only) was told as what changed at Old Hunter's Lodge on every return, five words of
    scenery the first telling had already said."""
    pack = load_pack(content_root() / "fantasy_001")
    assert "yew bow" not in changes_here(new_game(pack, seed=0), pack, "hunter_cabin")
    results = play(pack, ["go east", "go west", "go north", "go south", "go east", "go west", "go east"])
    assert [r.state.node for r in results][-1] == "hunter_cabin"
    assert "yew bow" in results[0].narration  # the first telling has it
    assert not [r.narration for r in results[1:] if "yew bow" in r.narration]
