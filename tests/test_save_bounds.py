"""Bounds that agree (issue 33, item 4): whatever a save accepts, play keeps in range and saves again.

Was: a save with exp 1e9 loaded and played, but its first level-up took max HP and the stats past what a save
accepts, so every save written afterwards was refused at load. The bounds are the saved state's own
(``game/world/state.py``); the rules keep a played turn within them (``Rules.resolve_turn``).
"""

from __future__ import annotations

import orjson

from game.engine.session import GameSession
from game.saves.format import encode
from game.world.effects import Effects
from game.world.rules import Rules
from game.world.rules.growth import level_for
from game.world.state import MAX_AMOUNT, MAX_STAT, MAX_TURN, GameState, new_game
from tests.conftest import scripted_session

EXTREME = {
    "exp": MAX_AMOUNT,
    "gold": MAX_AMOUNT,
    "strength": MAX_STAT,
    "agility": MAX_STAT,
    "intelligence": MAX_STAT - 1,
    "max_hp": MAX_STAT,
    "hp": MAX_STAT,
    "clock_minutes": MAX_AMOUNT - 5,
}
"""The largest values a save accepts (level 1: the first turn levels up by ten million)."""


session = scripted_session


def write(game: GameSession, name: str, **fields: object) -> None:
    """Save ``game`` to slot ``name`` with its state's ``fields`` replaced (as a file may hold them)."""
    doc = orjson.loads(encode(game.engine.pack, game.engine.state, game.engine.memory.export_state()))
    doc["game"].update(fields)
    assert game.slots is not None
    game.slots.write(name, orjson.dumps(doc))


def test_a_save_at_the_bounds_plays_a_fight_and_a_level_up_and_saves_again(fantasy, tmp_path):
    first = session(fantasy, tmp_path)
    assert first.play("look").ok
    write(first, "extreme", node="misty_path", **EXTREME)

    game = session(fantasy, tmp_path)
    game.load("extreme")
    assert game.engine.state.exp == MAX_AMOUNT
    for action in ["look", "attack the mist wolf", "attack the mist wolf", "look"]:
        assert game.play(action).ok, action
    state = game.engine.state
    assert "defeated:mist_wolf" in state.flags  # the fight was won (its exp and gold on top of the most there is)
    assert state.level > 1  # and the player levelled up
    game.save("after")
    again = session(fantasy, tmp_path)
    again.load("after")  # was: SaveError "damaged save: game.max_hp: Input should be less than or equal to 100000"
    assert again.engine.state == state
    assert again.play("look").ok


def test_every_bounded_number_stays_in_bounds_after_a_turn_at_its_limit(fantasy):
    """The rules' one door keeps every number of the state where a save accepts it."""
    rules = Rules(fantasy)
    state = new_game(fantasy, seed=5)
    for field, value in EXTREME.items():
        setattr(state, field, value)
    state.level = 1
    for _ in range(3):
        rules.resolve_turn(state, Effects(exp_delta=5, rest=True))
    GameState.model_validate(state.model_dump())  # what a load checks
    assert state.exp == MAX_AMOUNT and state.max_hp == MAX_STAT and state.hp <= state.max_hp
    assert state.strength == MAX_STAT and state.level == level_for(MAX_AMOUNT)


def test_a_game_at_the_last_turn_is_told_so_and_still_saves(fantasy, tmp_path):
    first = session(fantasy, tmp_path)
    assert first.play("look").ok
    write(first, "last", turn=MAX_TURN - 1)
    game = session(fantasy, tmp_path)
    game.load("last")
    assert game.play("look").ok and game.engine.state.turn == MAX_TURN
    refused = game.play("look")
    assert not refused.ok and "last turn" in refused.narration
    assert game.engine.state.turn == MAX_TURN
    game.save("at-the-end")
    session(fantasy, tmp_path).load("at-the-end")


def test_the_inventory_is_bounded_in_a_save_and_in_play(fantasy, tmp_path):
    """Was (issue 43): a save within every other bound held an 800,000-item inventory. A save holding more than
    ``MAX_CARRIED`` things is refused with a reason; at the bound, a take and a purchase are refused (no turn is
    lost to them), and a foe's loot stays on the ground. Play keeps to the bound a load checks."""
    import pytest

    from game.saves.format import SaveError
    from game.world.state import MAX_CARRIED

    first = session(fantasy, tmp_path)
    assert first.play("look").ok
    write(first, "hoard", inventory=["hunting_knife"] * (MAX_CARRIED + 1))
    game = session(fantasy, tmp_path)
    with pytest.raises(SaveError, match="inventory"):
        game.load("hoard")
    write(first, "full", node="misty_path", inventory=["hunting_knife"] * MAX_CARRIED)
    game.load("full")
    turn = game.engine.state.turn
    took = game.play("take the healing herb")
    assert "carry too much" in took.narration and game.engine.state.turn == turn  # refused, no turn spent
    assert len(game.engine.state.inventory) == MAX_CARRIED and "healing_herb" not in game.engine.state.inventory
    for _ in range(4):
        if "defeated:mist_wolf" in game.engine.state.flags:
            break
        assert game.play("attack the mist wolf").ok
    assert "defeated:mist_wolf" in game.engine.state.flags
    assert len(game.engine.state.inventory) == MAX_CARRIED
    game.save("after")  # what play made of it, a load takes
    session(fantasy, tmp_path).load("after")


def test_the_state_s_lists_are_bounded_in_a_save_and_in_play(fantasy, tmp_path):
    """Was (issue 43): lists in the state (flags, things taken, things left at a place) had no bound, so a save
    within every other bound could make each prompt megabytes. A save holding more is refused with a reason, and
    loses nothing (the slot stays as it was); at a place holding ``MAX_CARRIED`` things a drop is refused."""
    import pytest

    from game.saves.format import SaveError
    from game.world.state import MAX_CARRIED, MAX_LISTED

    first = session(fantasy, tmp_path)
    assert first.play("look").ok
    game = session(fantasy, tmp_path)
    for field, value in [
        ("flags", [f"flag_{n}" for n in range(MAX_LISTED + 1)]),
        ("taken_items", [f"misty_path:thing_{n}" for n in range(MAX_LISTED + 1)]),
        ("dropped_items", {"misty_path": ["hunting_knife"] * (MAX_CARRIED + 1)}),
        ("dropped_items", {f"place_{n}": [] for n in range(MAX_LISTED + 1)}),
        ("achievements", [f"a_{n}" for n in range(MAX_LISTED + 1)]),
    ]:
        write(first, "lists", **{field: value})
        kept = (tmp_path / "lists.json").read_bytes()
        with pytest.raises(SaveError, match=field):
            game.load("lists")
        assert (tmp_path / "lists.json").read_bytes() == kept  # refused, nothing lost
    assert game.engine.state.turn == 0  # the game in play is as it was

    write(first, "ground", node="forest_edge", dropped_items={"forest_edge": ["hunting_knife"] * MAX_CARRIED})
    game.load("ground")
    game.engine.state.inventory.append("healing_herb")
    turn = game.engine.state.turn
    dropped = game.play("drop the healing herb")
    assert "no room to leave" in dropped.narration and game.engine.state.turn == turn  # refused, no turn spent
    assert "healing_herb" in game.engine.state.inventory
    game.save("after")
    session(fantasy, tmp_path).load("after")
