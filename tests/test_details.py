"""Details a player trips on (issue 46): each example of the issue, played through the real engine and content.

Each test failed on main before the fix (03de82a); the docstring says what the player met.
"""

from __future__ import annotations

import re

import pytest

from game.engine.session import GameSession
from game.world.content import ContentPack
from game.world.describe import inventory_text
from game.world.loader import content_root, load_pack
from game.world.state import QuestProgress
from tests.conftest import scripted_session

RAW_CHECK = re.compile(r"\d+\s*<\s*\d+|needs (strength|agility|intelligence)")


@pytest.fixture(scope="module")
def victorian() -> ContentPack:
    return load_pack(content_root() / "victorian_001")


def at(session: GameSession, node: str, *, flags: tuple[str, ...] = (), carrying: tuple[str, ...] = ()) -> None:
    """Put the game at ``node`` with ``flags`` set and ``carrying`` carried, as play would have left it."""
    state = session.engine.state
    state.node = node
    for flag in (f"visited:{node}", *flags):
        state.add_flag(flag)
    state.inventory += list(carrying)


def fight_to_the_end(session: GameSession, foe: str) -> None:
    session.play(f"attack the {foe}")
    for _ in range(12):
        if session.engine.state.combat is None:
            return
        session.play("attack")
    raise AssertionError("the fight did not end")


# ---------------------------------------------------------------- stale choices
def test_a_thing_taken_is_not_offered_again(victorian, tmp_path):
    """Was: after `take the burner` the choices still offered "take Brass Burner" (the Brass Pocket Watch, still
    there, shares a word with it), and taking it again cost a turn."""
    session = scripted_session(victorian, tmp_path)
    at(session, "wreckers_cove")
    fight_to_the_end(session, "wrecker")
    result = session.play("take the burner")
    assert "brass_burner" in result.state.inventory
    assert not [c for c in result.choices if "Brass Burner" in c], result.choices


def test_a_thing_taken_asked_for_again_is_not_another_thing_that_shares_its_word(victorian, tmp_path):
    """Was: `take brass burner` with the burner already carried took the Brass Pocket Watch instead (the issue's
    repro, turn 10): a thing carried named by its whole name is no other thing lying here."""
    session = scripted_session(victorian, tmp_path)
    at(session, "wreckers_cove")
    fight_to_the_end(session, "wrecker")
    session.play("take the burner")
    turn = session.engine.state.turn
    again = session.play("take brass burner")
    assert "You already have the Brass Burner." in again.narration
    assert "pocket_watch" not in session.engine.state.inventory and session.engine.state.turn == turn


def test_a_thing_sold_is_not_offered_for_sale_again(scifi, tmp_path):
    """Was: after selling the only Data Pearl, "sell Data Pearl to Goro Okabe" stayed among the choices."""
    session = scripted_session(scifi, tmp_path)
    at(session, "black_market", flags=("talked:okabe",), carrying=("data_pearl",))
    result = session.play("sell the data pearl to okabe")
    assert "data_pearl" not in result.state.inventory, result.narration
    assert not [c for c in result.choices if "Data Pearl" in c], result.choices


@pytest.mark.parametrize("command", ["save x1", "saves", "load x1"])
def test_the_choices_stay_after_a_command_the_session_answers(fantasy, tmp_path, command):
    """Was: in a new Misty Forest game, `save x1` answered with no choices, so keys 1-4 did nothing until the next
    turn (it struck right before the finale); the same after `saves` and `load`."""
    session = scripted_session(fantasy, tmp_path)
    before = session.play("look")
    session.play("save x1")
    result = session.play(command)
    assert result.ok, result.narration
    assert result.choices, f"{command!r} left no choices"
    assert result.choices == before.choices


# ------------------------------------------------------------ numbers in prose
def test_a_gift_refused_for_a_failed_check_is_told_in_the_authors_words(victorian, tmp_path):
    """Was: "Reverend Amos Pellow will not take the Parish Register yet: needs intelligence 12 < 18." The story
    now says it in its own words (the objective's ``refusal``)."""
    session = scripted_session(victorian, tmp_path)
    at(session, "chapel", flags=("talked:pellow",), carrying=("parish_register",))
    session.engine.state.quests["wreck_register"] = QuestProgress(objectives_done=["fetch_register"])
    result = session.play("give the register to pellow")
    assert "parish_register" in result.state.inventory
    assert not RAW_CHECK.search(result.narration), result.narration
    refusal = victorian.quest("wreck_register").objectives[1].refusal  # type: ignore[union-attr]
    assert refusal and refusal in result.narration
    assert result.narration.count(refusal) == 1, result.narration


def test_a_gift_refused_for_a_failed_check_without_an_authors_line_says_what_is_lacking(victorian, tmp_path):
    """Was: handing Jory his nets: "needs strength 11 < 13"."""
    session = scripted_session(victorian, tmp_path)
    at(session, "harbour", flags=("talked:jory", "defeated:mastiff"), carrying=("torn_nets",))
    session.engine.state.quests["torn_nets"] = QuestProgress(objectives_done=["kill_mastiff"])
    assert victorian.quest("torn_nets").objectives[1].refusal is None  # type: ignore[union-attr]
    result = session.play("give the nets to jory")
    assert "torn_nets" in result.state.inventory
    assert not RAW_CHECK.search(result.narration), result.narration
    assert "not yet strong enough" in result.narration


@pytest.mark.parametrize(("foe", "reward"), [("rat", "(+15 exp, +1 shilling)"), ("mastiff", "(+30 exp)")])
def test_a_reward_counts_its_money_in_words(victorian, tmp_path, foe, reward):
    """Was: "(+15 exp, +1 shillings)" and "(+30 exp, +0 shillings)"."""
    session = scripted_session(victorian, tmp_path)
    session.engine.state.strength = 40  # one blow each
    at(session, "crypt" if foe == "rat" else "net_loft")
    fight_to_the_end(session, foe)
    told = "\n".join(r.narration for r in session.history)
    assert reward in told, told
    assert "shillings)" not in told and "+0 " not in told


def test_one_shilling_and_many(victorian):
    from game.world.amounts import money

    assert [money(n, victorian) for n in (0, 1, 2)] == ["0 shillings", "1 shilling", "2 shillings"]


# ------------------------------------------------------------- the first blow
@pytest.mark.parametrize(
    ("story", "node", "foe"),
    [("fantasy_001", "misty_path", "wolf"), ("scifi_001", "data_core", "dark code")],
)
def test_an_enemy_with_initiative_strikes_once_in_the_turn_a_fight_starts(story, node, foe, tmp_path):
    """Was: "The Mist Wolf strikes before you are ready! ... hits you for 5", then after the player's blow "hits
    you for 6": two blows in the turn the fight started (Shadow Lord 11 + 12, Dark Code 9 + 10)."""
    pack = load_pack(content_root() / story)
    for seed in range(1, 7):
        session = scripted_session(pack, tmp_path / str(seed), seed=seed)
        at(session, node, flags=("talked:kage",))
        session.engine.state.agility = 0  # no dodging: each blow of the enemy lands and is told
        session.engine.state.max_hp = session.engine.state.hp = 400
        result = session.play(f"attack the {foe}")
        assert "strikes before you are ready" in result.narration, result.narration
        assert result.narration.count(" hits you for ") == 1, result.narration
        assert 400 - result.state.hp == int(re.findall(r"hits you for (\d+)", result.narration)[0])
        following = session.play("attack")  # the next round: one blow, as ever
        assert following.narration.count(" hits you") <= 1, following.narration


# -------------------------------------------------------------------- the text
def test_things_named_in_the_plural_are_looked_over_as_them(victorian, tmp_path):
    """Was: "You pick up the Torn Nets and look it over"."""
    told = []
    for turn in range(8):
        session = scripted_session(victorian, tmp_path / str(turn))
        at(session, "net_loft", flags=("defeated:mastiff",))
        session.engine.state.turn = turn
        told.append(session.play("take the nets").narration)
    assert not [t for t in told if "look it over" in t], told
    assert [t for t in told if "look them over" in t], told


def test_take_everything_tells_each_take_once(victorian, tmp_path):
    """Was: "You gather up the Brass Burner, the False Lantern and the Brass Pocket Watch." then "You take the Brass
    Burner." and the others again."""
    session = scripted_session(victorian, tmp_path)
    at(session, "wreckers_cove")
    fight_to_the_end(session, "wrecker")
    result = session.play("take everything")
    assert {"brass_burner", "false_lantern", "pocket_watch"} <= set(result.state.inventory)
    for name in ("Brass Burner", "False Lantern", "Brass Pocket Watch"):
        assert result.narration.count(name) == 1, result.narration


def test_the_inventory_counts_things_carried_several_times(scifi):
    """Was: "Stim Pack" listed five times instead of "Stim Pack ×5" (an ASCII x: the multiplication sign is two
    cells wide in a CJK terminal, which tests/tui/test_play_screen.py guards against)."""
    from game.world.state import new_game

    state = new_game(scifi, seed=1)
    state.inventory = ["stim_pack", "shock_baton", *["stim_pack"] * 4]
    text = inventory_text(state, scifi)
    assert "Stim Pack x5" in text and text.count("Stim Pack") == 1, text
    assert text.index("Stim Pack") < text.index("Shock Baton")
    from game.tui.widgets import sidebar_text

    shown = sidebar_text(state, scifi).plain
    assert "Stim Pack x5" in shown and shown.count("Stim Pack") == 1, shown


def test_stories_ship_with_their_money_counted():
    """Every shipped story's money reads right for one (``Story.currency_one`` or the plural's own)."""
    from game.world.amounts import money

    for story, one in [("fantasy_001", "1 gold"), ("scifi_001", "1 yen"), ("victorian_001", "1 shilling")]:
        assert money(1, load_pack(content_root() / story)) == one


def test_unsaved_progress_is_told_by_the_turn_the_game_is_at():
    """Was: "Your The Lantern Keeper game has progress since turn 8" at turn 7 (a turn undone after the save)."""
    from game.tui.loading import unsaved

    assert unsaved(9, 8) == "has progress since turn 8 that you have not saved"
    assert unsaved(7, 8) == "is back at turn 7, and your last save is of turn 8"
