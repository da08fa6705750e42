"""A model's reading of a line the reader left open is asked back, not refused (issue 41 item 3,
:mod:`game.world.proposed`).

Before, a narrator that read "smooch garrick" as a word with Garrick proposed ``talk_to``, the intent check refused it
as not asked, and the player read that nothing happened. Now the game asks "Do you mean: talk to Old Garrick?" at
no turn's cost, when the act is plausible (the line names its object, or says its verb of the one thing it could
take) and the rules would allow it; the lines the reader says ask nothing stay refused.

The narrator here is :class:`tests.fakes.ScriptedAnswers`, a fake on purpose: no model on this machine proposes on
demand the act a test needs (the recorded relay game, ``tests/test_relay_game.py``, is the real model's record).
"""

from __future__ import annotations

import json

import pytest

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from tests.fakes import ScriptedAnswers
from tests.language.acts import shipped_packs, state_for
from tests.language.rows import Row


@pytest.fixture(scope="module")
def packs():
    return shipped_packs()


def _turn(effects: dict, narration: str = "You do as you said.") -> str:
    return json.dumps({"narration": narration, "choices": ["look"], "effects": effects})


def _game(packs, story: str, at: str, answers: list[str], **setup) -> tuple[TurnPipeline, ScriptedAnswers]:
    pack = packs[story]
    model = ScriptedAnswers(answers)
    memory = GameMemory(pack, ScriptedNarrator(pack), config=MemoryConfig(), background=False)  # type: ignore[arg-type]
    state = state_for(Row(story, at, "", (), "plain", **setup), pack)
    return TurnPipeline(pack, state, model, memory), model


def test_a_word_with_a_person_the_model_read_is_asked_back_and_played_on_yes(packs):
    game, model = _game(
        packs, "fantasy_001", "hunter_cabin", [_turn({"talk_to": "old_hunter"}), _turn({"talk_to": "old_hunter"})]
    )
    turn, clock = game.state.turn, game.state.clock_minutes
    asked = game.play("smooch garrick")
    assert len(model.bundles) == 1  # one call, its answer asked back
    assert asked.asking and asked.free and not asked.applied
    assert asked.narration == "Do you mean: talk to Old Garrick?"
    assert (game.state.turn, game.state.clock_minutes) == (turn, clock)
    played = game.play("yes")
    assert played.ok and ("talk_to", "old_hunter") in [(a.effect, a.detail) for a in played.applied]
    assert model.bundles[1].asks == "acts" and model.bundles[1].acts[0].target == "old_hunter"  # the yes is read


def test_a_misspelt_way_the_model_read_is_offered(packs):
    """ "sashay easterly": no reader knows the verb, and "easterly" is no direction of its own; the way east leads
    to the lodge."""
    game, _ = _game(packs, "fantasy_001", "forest_edge", [_turn({"move_to": "hunter_cabin"})])
    asked = game.play("sashay easterly")
    assert asked.asking and asked.narration == "Do you mean: go to the Old Hunter's Lodge?"
    assert game.play("no").narration == "Then nothing is done." and game.state.node == "forest_edge"


@pytest.mark.parametrize(
    ("line", "effects"),
    [
        ("what lies to the east?", {"move_to": "hunter_cabin"}),  # a question: the reader said it asks nothing
        ("I will never go east", {"move_to": "hunter_cabin"}),  # a refusal
        ("frobnicate the quux", {"move_to": "hunter_cabin"}),  # open, but it names no way and says no verb
    ],
)
def test_a_proposal_the_line_does_not_ask_for_stays_refused(packs, line, effects):
    game, _ = _game(packs, "fantasy_001", "forest_edge", [_turn(effects), _turn(effects)])
    result = game.play(line)
    assert not result.asking and game.pending is None
    assert game.state.node == "forest_edge"


def test_an_act_the_rules_would_refuse_is_not_offered(packs):
    """The model reads "yoink the moonvine" at the trailhead, where no moonvine lies: nothing to ask about."""
    game, _ = _game(packs, "fantasy_001", "forest_edge", [_turn({"items_gained": ["moonvine"]})] * 2)
    result = game.play("yoink the moonvine")
    assert not result.asking and "moonvine" not in game.state.inventory


def test_rest_with_no_object_is_offered_for_a_line_left_open(packs):
    game, _ = _game(packs, "fantasy_001", "elven_sanctuary", [_turn({"rest": True}), _turn({"rest": True})], hp=40)
    asked = game.play("zonk out under the boughs")
    assert asked.asking and asked.narration == "Do you mean: rest?"
    assert game.play("yes").ok and game.state.hp > 40


@pytest.mark.parametrize(
    ("story", "at", "line", "effects", "question"),
    [
        ("victorian_001", "high_street", "sidle past the shutters to the inn", {"move_to": "drowned_man"}, "go to"),
        ("victorian_001", "chapel", "bless me father", {"talk_to": "pellow"}, "talk to Reverend"),
    ],
)
def test_a_place_or_person_named_by_its_kind_is_offered(packs, story, at, line, effects, question):
    """Found by a model played through the relay (tests/data/relay/drowned_light/model_notes.md): "the inn" is the
    Drowned Man's kind of place (its taproom), "father" the reverend's kind of person."""
    game, _ = _game(packs, story, at, [_turn(effects)])
    asked = game.play(line)
    assert asked.asking and question in asked.narration


def test_a_foe_named_by_a_word_for_foes_is_offered_when_it_is_the_one_here(packs):
    game, _ = _game(packs, "victorian_001", "crypt", [_turn({"start_combat": "crypt_rat", "combat_action": "attack"})])
    asked = game.play("brain the vermin")
    assert asked.asking and asked.narration == "Do you mean: attack the Crypt Rat?"
