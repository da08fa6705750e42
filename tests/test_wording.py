"""Words that fit the world (issue 34, seen while authoring): a name that names many is "are defeated", and an
attack with no weapon draws none."""

from __future__ import annotations

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.world.content import Enemy
from game.world.state import new_game
from tests.conftest import keyword_memory


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
    bare = play(mini_pack, ["go north", "attack wolf"])[-1].narration
    assert "You raise your fists and go for the Grey Wolf!" in bare and "draw your" not in bare
    armed = play(mini_pack, ["take sword", "go north", "attack wolf"])[-1].narration
    assert "You draw your Iron Sword and charge the Grey Wolf!" in armed
