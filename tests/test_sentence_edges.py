"""The scripted narrator at the edges of a sentence: a negation, a wish, a what-if and a question about the
player's own route are answered as what they are, never told back as an attempt ("You try to you don't want to go
north") and never answered from an unrelated memory."""

from __future__ import annotations

import pytest

from game.engine.pipeline import TurnPipeline
from game.language.reading import read
from game.llm.scripted import ScriptedNarrator
from game.llm.tellings import TELLINGS
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory


def engine(pack: ContentPack) -> TurnPipeline:
    return TurnPipeline(pack, new_game(pack, seed=3), ScriptedNarrator(pack), keyword_memory(pack))


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("I don't want to go north", "held_back"),
        ("don't attack anyone", "held_back"),
        ("I will never kneel", "held_back"),
        ("I won't take anything", "held_back"),
        ("I wish I could fly", "musing"),
    ],
)
def test_words_that_ask_for_no_act_are_told_as_such_and_change_nothing(scifi, action, kind):
    """Was: "You try to you don't want to go north, but nothing much comes of it." and "Nothing much comes of
    trying to you wish you could fly."."""
    game = engine(scifi)
    before = (game.state.node, list(game.state.inventory))
    told = game.play(action).narration
    assert told in TELLINGS[kind], (action, told)
    assert "try" not in told and " you don't" not in told
    assert (game.state.node, game.state.inventory) == before


def test_an_act_the_story_has_nothing_for_is_still_told_as_tried(scifi):
    """The positive control: a plain command the story has no rule for is an attempt, told as one."""
    told = engine(scifi).play("juggle the static").narration
    assert told not in TELLINGS["held_back"] + TELLINGS["musing"] and "juggle the static" in told


def test_where_have_i_been_lists_the_places_in_the_order_visited(scifi):
    """Was: "where have I been?" recalled The Voice ("Mysterious guide ... found at Lab Pod Bay")."""
    game = engine(scifi)
    assert game.play("where have I been?").narration == "You have been nowhere but Lab Pod Bay."
    for move in ("go east", "go north"):
        assert game.play(move).ok
    told = game.play("which places have I visited?").narration
    assert told == (
        "You have been to Lab Pod Bay, Security Hub and Freight Lift Shaft, in that order; "
        "you are at Freight Lift Shaft."
    )


def test_what_if_i_went_one_way_says_where_that_way_leads_and_moves_nothing(fantasy):
    """Was: "what if I went west?" gave "You have not gone anywhere else." (read as a question about the past)."""
    game = engine(fantasy)
    told = game.play("what if I went west?").narration
    assert told.startswith("To the west lies Thieves' Hollow") and game.state.node == "forest_edge"


def test_what_should_i_do_names_the_next_open_objective_and_hint_lists_the_quests():
    """Was: "what should I do?" searched memory and found nothing; "hint" was tried "to no effect"."""
    game = engine(load_pack(content_root() / "victorian_001"))
    for question in ("what should I do?", "what now?", "where should I go next?"):
        told = game.play(question).narration
        assert told == "Your next steps - The Dark Light: Talk to Bess Tregarthen at the Drowned Man.", question
    hint = game.play("hint")
    assert hint.turn == game.state.turn == 3 and "[ ] Talk to Bess Tregarthen at the Drowned Man." in hint.narration


def test_a_bare_way_with_no_exit_names_no_place_an_objective_mentions():
    """Was: "go south" at the Cliff Road gave "Wreckers' Cove is not reachable from here.", a place the player had
    not heard of, because an objective reads "Go south from the harbour into Wreckers' Cove"."""
    game = engine(load_pack(content_root() / "victorian_001"))
    told = game.play("go south").narration
    assert "Wreckers' Cove" not in told and "south" in told and game.state.node == "cliff_road"


def test_who_am_i_with_nothing_said_answers_from_the_rules_record(fantasy):
    told = engine(fantasy).play("who am i?").narration
    assert "Traveller - level 1" in told and "search your memory" not in told


def test_take_everything_takes_each_thing_lying_here_through_the_rules(fantasy):
    """Was: "take everything" gave "You look about for the everything, but there is none here."."""
    game = engine(fantasy)
    assert game.play("take everything").narration == "There is nothing here to take."
    assert game.state.turn == 0  # nothing there: no turn
    for item in ("herb", "waybread"):
        assert game.play(f"drop the {item}").ok
    assert "healing_herb" not in game.state.inventory and "waybread" not in game.state.inventory
    result = game.play("take all")
    assert result.ok and {"healing_herb", "waybread"} <= set(game.state.inventory)
    assert "You take the Healing Herb and the Elven Waybread." in result.narration  # the take told once (issue 46)


def test_take_everything_where_one_thing_lies_is_told_as_taking_it():
    game = engine(load_pack(content_root() / "victorian_001"))
    result = game.play("take everything")
    assert "boathook" in game.state.inventory and "gather up" not in result.narration


@pytest.mark.parametrize(
    ("action", "verb", "target"),
    [
        ("look west toward the hollow", "examine", "west"),
        ("peer north into the fog", "examine", "north"),
        ("look up the elevator shaft", "examine", "up"),
        ("look in the chest", "examine", "chest"),  # into a thing, not the way "in"
        ("glance at the herb", "examine", "herb"),
        ("let me sleep for a while", "rest", ""),
        ("I need some rest", "rest", ""),
        ("I munch on the waybread", "use", "waybread"),
        ("I don't need rest", "other", ""),  # a negation stays no act
    ],
)
def test_the_sentence_is_read_to_the_act_it_names(action, verb, target):
    """Was: each of these was told back as an attempt ("You make an attempt to peer north into the fog, to no
    effect."; "For all your trying to you need some rest, nothing comes of it.")."""
    command = read(action).command
    assert (command.verb, command.target) == (verb, target)


def test_an_act_the_story_has_nothing_for_is_told_by_its_verb_phrase(fantasy):
    told = engine(fantasy).play("I juggle the pinecones").narration
    assert "juggle the pinecones" in told and "you juggle" not in told


def test_a_lone_pronoun_asks_which_thing_and_costs_nothing(fantasy):
    """Was: "drop it" gave "You carry no it."."""
    game = engine(fantasy)
    for action in ("drop it", "take them", "use it"):
        result = game.play(action)
        assert result.narration.startswith("Which one do you mean by '"), (action, result.narration)
    assert game.state.turn == 0 and "hunting_knife" in game.state.inventory
