"""The player's words bind (issue 31): a reading of the sentence, not a bag of words, decides what a model may do
for the player. The corpus (``tests/intent_corpus.py``) is measured both ways: misses (an act applied that the
player refused, wondered about, asked about or only looked at) and false refusals (a plain request refused)."""

from __future__ import annotations

import json

import pytest

from game.engine.pipeline import TurnPipeline
from game.language.reading import CLASSES, MOODS, Reading, read
from game.world.effects import Effects
from game.world.intent import NOT_ASKED
from game.world.rules import Rules
from game.world.state import new_game
from tests.conftest import keyword_memory
from tests.fakes import ScriptedAnswers
from tests.intent_corpus import APPLY, REFUSE, Row

STORY_CHOICE_NODES = {"shadow_throne": ["visited:shadow_throne"]}


def refusals(packs, row: Row) -> tuple[set[str], set[str]]:
    """(the acts of the row's effects, those refused as not asked) at the row's place, carrying its items."""
    story, node, carried, action, effects = row
    pack = packs[story]
    state = new_game(pack, seed=1)
    state.node = node
    state.inventory += [i for i in carried if i not in state.inventory]
    state.hp = max(1, state.hp // 2)  # so that healing has something to do
    state.gold = max(state.gold, 100)  # so that spending is possible
    proposed = Effects.model_validate(effects)
    out = Rules(pack).resolve_turn(state, proposed, Reading.of(action))
    acts = {k for k in effects}
    return acts, {r.effect for r in out.rejected if r.reason == NOT_ASKED}


@pytest.fixture(scope="module")
def packs(fantasy, scifi):
    return {"fantasy_001": fantasy, "scifi_001": scifi}


def test_the_corpus_has_two_hundred_actions_both_ways():
    assert len(REFUSE) >= 80 and len(APPLY) >= 80 and len(REFUSE) + len(APPLY) >= 200


def test_no_refused_action_lets_a_model_act_for_the_player(packs):
    """Misses: every act proposed for a negation, question, wish, hypothetical, report, glance or wrong object."""
    misses = []
    for row in REFUSE:
        acts, refused = refusals(packs, row)
        if acts - refused:
            misses.append((row[3], sorted(acts - refused)))
    print(f"refuse corpus: {len(REFUSE) - len(misses)}/{len(REFUSE)} refused, {len(misses)} missed")
    assert misses == []


def test_no_plain_request_is_refused(packs):
    """False refusals: a commanded, positive request of each kind applies."""
    false = []
    for row in APPLY:
        _, refused = refusals(packs, row)
        if refused:
            false.append((row[3], sorted(refused)))
    print(f"apply corpus: {len(APPLY) - len(false)}/{len(APPLY)} applied, {len(false)} refused")
    assert false == []


# --------------------------------------------------------------- the reading itself
@pytest.mark.parametrize(
    ("action", "moods"),
    [
        ("go north", ["command"]),
        ("I'd like to head east", ["command"]),
        ("what lies to the north?", ["question"]),
        ("should I kneel?", ["question"]),
        ("I wonder if I should kneel", ["wish"]),
        ("maybe I should rest", ["wish"]),
        ("if I join him, will he spare the forest?", ["hypothetical", "question"]),
        ("I would never drop my knife", ["hypothetical"]),
        ("Garrick told me to go west", ["report"]),
        ("the wolf takes the herb", ["report"]),
        ("I went north yesterday", ["report"]),
        ("I stay here and do not go west", ["command", "command"]),
    ],
)
def test_each_clause_has_its_mood(action, moods):
    clauses = read(action).clauses
    assert [c.mood for c in clauses] == moods
    assert all(c.classes <= set(CLASSES) and c.mood in MOODS for c in clauses)


@pytest.mark.parametrize(
    ("action", "negated"),
    [
        ("I will never kneel to you", [True]),
        ("I stay here and do not go west", [False, True]),
        ("I am not tired, no rest for me now", [True, True]),
        ("take the herb, not the knife", [False, True]),
        ('say "I will never kneel"', [False]),  # words said: the speech is not the player's act
        ("go north, don't look back", [False, True]),
    ],
)
def test_negation_is_read_per_clause(action, negated):
    assert [c.negated for c in read(action).clauses] == negated


def test_sensing_has_only_its_own_class():
    for action in ("look north", "look at everything I carry", "examine the herb", "peer north into the fog"):
        assert [set(c.classes) for c in read(action).clauses] == [{"sense"}], action


def test_the_narrators_command_is_the_clause_that_binds():
    assert (read("I head east to the old lodge").command.verb, read("pick the healing herb").command.verb) == (
        "go",
        "take",
    )
    assert read("don't play the harp yet, I look around").command.verb == "look"
    assert read("I will never kneel to you!").command.verb == "other"
    assert read("what lies to the north?").command.verb == "ask"
    assert read("ｇｏ ｎｏｒｔｈ").command.target == "north"  # fullwidth letters are letters


# --------------------------------------------------------- through a model narrator
def answer(narration: str, **effects) -> str:
    return json.dumps({"narration": narration, "choices": ["look"], "effects": effects, "memory_notes": []})


@pytest.mark.parametrize(
    ("node", "action", "effects"),
    [
        ("shadow_throne", "I will never kneel to you!", JOIN := {"choice": "join_shadow"}),
        ("shadow_throne", "Why would I ever join him? I refuse.", JOIN),
        ("misty_path", "look north", {"move_to": "sanctuary_gate"}),
        ("forest_edge", "I stay here and do not go west", {"move_to": "thieves_camp"}),
        ("forest_edge", "I would never drop my hunting knife", {"items_lost": ["hunting_knife"]}),
        ("forest_edge", "look", {"gold_delta": -25}),
    ],
)
def test_a_model_narrator_cannot_act_against_the_players_words(fantasy, node, action, effects):
    """Was: each of these applied the model's effects (the Eternal Night ending, a move, a lost knife, no gold)."""
    first = answer("It is done.", **effects)
    game = TurnPipeline(fantasy, new_game(fantasy, seed=3), ScriptedAnswers([first, first]), keyword_memory(fantasy))
    game.state.node, game.state.gold = node, 40
    game.state.flags += ["visited:shadow_throne"]
    before = game.state.snapshot()
    result = game.play(action)
    assert result.ok and game.state.ending is None
    assert game.state.node == node and game.state.inventory == before.inventory and game.state.gold == 40
    assert {r.reason for r in result.rejected} == {NOT_ASKED}


def test_the_harp_held_back_is_no_requiem(fantasy):
    game = TurnPipeline(
        fantasy,
        new_game(fantasy, seed=3),
        ScriptedAnswers([answer("You play.", choice="play_requiem")] * 2),
        keyword_memory(fantasy),
    )
    game.state.node = "shadow_throne"
    game.state.inventory.append("moonlight_harp")
    game.state.flags += ["visited:shadow_throne"]
    game.play("don't play the harp yet, I look around")
    assert game.state.ending is None and not game.state.has_flag("choice:play_requiem")


def test_the_debug_panel_shows_how_the_action_was_read(fantasy):
    """Why an act was refused is on the panel: each clause's mood, polarity, kind and whether it binds."""
    from game.tui.debug_data import DebugData
    from game.tui.debug_render import render_output

    moved = answer("You head west.", move_to="thieves_camp")
    game = TurnPipeline(fantasy, new_game(fantasy, seed=3), ScriptedAnswers([moved, moved]), keyword_memory(fantasy))
    data = DebugData.from_result(game.play("I stay here and do not go west"))
    assert data.reading == [
        '"i stay here": command, no act: binds',
        '"do not go west": command, negated, move: binds nothing',
    ]
    assert "How the action was read" in render_output(data).plain
