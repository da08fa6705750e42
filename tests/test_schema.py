"""JSON turn validation and repair."""

from __future__ import annotations

import json

import pytest

from game.engine.schema import TurnParseError, parse_turn

GOOD = {
    "narration": "You step into the mist.",
    "choices": ["go north", "look"],
    "effects": {"move_to": "woods", "items_gained": [], "affinity": {}},
    "memory_notes": [],
}


def test_valid_turn_needs_no_repair():
    turn, repaired = parse_turn(json.dumps(GOOD))
    assert not repaired
    assert turn.effects.move_to == "woods"
    assert turn.choices == ["go north", "look"]


def test_object_wrapped_in_prose_and_fences_is_extracted():
    raw = "Sure! Here is the turn:\n```json\n" + json.dumps(GOOD) + "\n```\nEnjoy."
    turn, repaired = parse_turn(raw)
    assert repaired and turn.narration == GOOD["narration"]


def test_trailing_commas_and_single_quotes_are_repaired():
    raw = "{'narration': 'You wait.', 'choices': ['look', 'rest',], 'effects': {'rest': true,},}"
    turn, repaired = parse_turn(raw)
    assert repaired
    assert turn.effects.rest is True
    assert turn.choices == ["look", "rest"]


def test_lenient_shapes_are_coerced():
    raw = json.dumps(
        {
            "narration": "x",
            "choices": ["a", "b", "c", "d", "e"],
            "effects": {"items_gained": "herbs", "quest_updates": ["q1:o1", {"quest_id": "q2", "objective_id": "o2"}]},
            "memory_notes": "the player is called Ren",
            "unexpected": 1,
        }
    )
    turn, _ = parse_turn(raw)
    assert turn.choices == ["a", "b", "c", "d"]
    assert turn.effects.items_gained == ["herbs"]
    assert [(u.quest, u.objective) for u in turn.effects.quest_updates] == [("q1", "o1"), ("q2", "o2")]
    assert turn.memory_notes == ["the player is called Ren"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("I cannot do that.", "no JSON object"),
        ('{"choices": ["a"]}', "narration"),
        ('{"narration": ""}', "narration"),
        ('["narration"]', "no JSON object"),
        ('{"narration": "x", "effects": {"hp_delta": "lots"}}', "hp_delta"),
    ],
)
def test_invalid_turns_raise_a_clear_error(raw, message):
    with pytest.raises(TurnParseError, match=message):
        parse_turn(raw)
