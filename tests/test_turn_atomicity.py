"""A turn commits game state and memory together or not at all, and nothing a narrator returns ends the game."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.engine.pipeline import TurnPipeline
from game.llm.base import NarratorError
from game.llm.scripted import ScriptedNarrator
from game.memory.bible import NOTE_MAX_IMPORTANCE, StoryBible
from game.world.loader import content_root, load_pack
from game.world.rules import Rules
from game.world.state import MINUTES_PER_TURN, new_game
from tests.conftest import keyword_memory
from tests.fakes import ScriptedAnswers

FANTASY = load_pack(content_root() / "fantasy_001")


def engine_with(pack, answers):
    return TurnPipeline(pack, new_game(pack, seed=2), ScriptedAnswers(answers), keyword_memory(pack))


def logged_turns(engine):
    return [e.turn for e in engine.memory.state.log]


def test_a_malformed_memory_note_is_dropped_with_a_reason_and_the_turn_commits(mini_pack):
    answer = {
        "narration": "You tell the sage your name.",
        "memory_notes": [
            {"entry_type": "event", "content": "The sage knows a secret", "importance": "high"},
            {"content": ""},
            42,
            "The player said: my name is Ren",
        ],
    }
    engine = engine_with(mini_pack, [json.dumps(answer), json.dumps(answer)])
    first = engine.play("say my name is Ren")
    assert first.ok, first.error
    assert engine.state.turn == 1 and logged_turns(engine) == [1]
    dropped = first.trace.dropped_notes
    assert len(dropped) == 3
    assert any("importance" in reason for reason in dropped)
    assert engine.memory.bible.by_key("character:player").content == "The player's name is Ren"  # the good note kept
    second = engine.play("say my name is Ren")
    assert second.ok and logged_turns(engine) == [1, 2]


def test_a_failure_while_recording_commits_neither_state_nor_memory(mini_pack, monkeypatch):
    engine = TurnPipeline(mini_pack, new_game(mini_pack), ScriptedNarrator(mini_pack), keyword_memory(mini_pack))
    engine.play("look")
    state_before = engine.state.snapshot()
    memory_before = engine.memory.state.model_copy(deep=True)

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(StoryBible, "from_effects", broken)
    result = engine.play("take sword")  # the notes were recorded, then the effects' facts fail
    assert not result.ok and "Nothing changed" in result.narration
    assert any("disk on fire" in e for e in result.trace.validation_errors)
    assert engine.state == state_before
    assert engine.memory.state == memory_before  # the half-recorded turn was taken back
    monkeypatch.undo()
    assert engine.play("take sword").ok
    assert logged_turns(engine) == [1, 2] and engine.state.turn == 2
    assert "sword" in engine.state.inventory


def test_a_narrator_that_raises_anything_fails_the_turn_only(mini_pack):
    engine = engine_with(
        mini_pack,
        [RuntimeError("segfault in the tokenizer"), ValueError("bad"), NarratorError("timeout"), "not json", None],
    )
    first = engine.play("look")
    assert not first.ok and "RuntimeError" in first.error
    second = engine.play("look")  # two answers: "timeout" then "not json" (its repair)
    assert not second.ok and engine.state.turn == 0 and logged_turns(engine) == []


def test_the_trace_holds_the_state_the_narrator_saw(mini_pack):
    engine = TurnPipeline(mini_pack, new_game(mini_pack), ScriptedNarrator(mini_pack), keyword_memory(mini_pack))
    result = engine.play("take sword")
    seen = result.trace.prompt.state
    assert seen is not engine.state and seen is not result.state
    assert "sword" not in seen.inventory and seen.turn == 0
    assert "sword" in engine.state.inventory and engine.state.turn == 1
    engine.play("look")
    assert "sword" not in seen.inventory  # later turns do not rewrite what an earlier trace shows


def test_the_rules_advance_the_turn_and_the_clock(mini_pack):
    rules, state = Rules(mini_pack), new_game(mini_pack)
    clock = state.clock_minutes
    rules.apply(state, rules_effects())
    assert (state.turn, state.clock_minutes) == (0, clock)
    rules.resolve_turn(state, rules_effects())
    assert (state.turn, state.clock_minutes) == (1, clock + MINUTES_PER_TURN)


def rules_effects():
    from game.world.effects import Effects

    return Effects()


def test_a_too_long_action_is_refused_before_it_costs_a_turn(mini_pack):
    engine = engine_with(mini_pack, [])
    result = engine.play("look " * 200)
    assert not result.ok and "too long" in result.narration and engine.state.turn == 0


# ------------------------------------------------------------------- fuzzing
IDS = st.sampled_from(
    [*FANTASY.nodes, *FANTASY.items, *FANTASY.npcs, *FANTASY.enemies, "narnia", "", "safety:rules", "rule:x"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | st.text(max_size=20) | IDS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12) | IDS, inner, max_size=4),
    max_leaves=12,
)
EFFECT_NAMES = [
    "talk_to",
    "move_to",
    "items_gained",
    "items_lost",
    "use_item",
    "give_item",
    "hp_delta",
    "gold_delta",
    "exp_delta",
    "affinity",
    "start_combat",
    "combat_action",
    "rest",
    "choice",
    "trigger_side_quest",
    "quest_updates",
    "ending",
]
NOTE = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"content": st.text(max_size=40) | JSON},
        optional={
            "key": IDS | st.text(max_size=20) | JSON,
            "entry_type": st.sampled_from(["event", "safety_rule", "world_rule", "character", "nonsense"]) | JSON,
            "importance": st.integers(-50, 500) | st.sampled_from(["high", "70", None]) | JSON,
            "npcs": JSON,
        },
    ),
)
TURN = st.fixed_dictionaries(
    {"narration": st.text(min_size=1, max_size=40) | JSON},
    optional={
        "effects": st.dictionaries(st.sampled_from(EFFECT_NAMES), IDS | JSON, max_size=5) | JSON,
        "choices": JSON,
        "memory_notes": st.lists(NOTE, max_size=10) | NOTE,
    },
)
ANSWER = st.one_of(
    TURN.map(json.dumps),
    JSON.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(max_size=60),
    st.sampled_from(["{", "[" * 3000 + "]" * 3000, '{"narration": "x", "effects": ' + "[" * 3000]),
    st.sampled_from([NarratorError("down"), RuntimeError("boom"), ValueError("bad value")]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    st.lists(ANSWER, min_size=2, max_size=16),
    st.lists(st.sampled_from(["look", "go east", "take herbs"]), min_size=1, max_size=8),
)
def test_nothing_a_narrator_returns_ends_the_game_or_splits_a_turn(answers, actions):
    engine = TurnPipeline(FANTASY, new_game(FANTASY, seed=1), ScriptedAnswers(answers), keyword_memory(FANTASY))
    safety = None
    for action in actions:
        if not engine.narrator.answers:
            break
        before, log_before = engine.state.snapshot(), logged_turns(engine)
        result = engine.play(action)  # must not raise
        if result.ok and not result.free:
            assert engine.state.turn == before.turn + 1
        else:  # failed, or answered at no cost (issue 35: nothing came of it): nothing of it is kept
            assert engine.state == before and logged_turns(engine) == log_before
        assert logged_turns(engine) == list(range(1, engine.state.turn + 1))
        bible = engine.memory.bible
        if bible.by_key("safety:rules") is None:  # memory not asked yet: only lines refused before any recall
            assert engine.state.turn == 0 and result.meta == "refused"
            continue
        safety = safety or bible.by_key("safety:rules").content
        assert bible.by_key("safety:rules").content == safety
        active_keys = [e.canonical_key for e in bible.active()]
        assert len(active_keys) == len(set(active_keys))
        notes = [e for e in bible.active() if e.source == "memory_note"]
        assert all(e.importance <= NOTE_MAX_IMPORTANCE for e in notes)
        assert not [e for e in notes if e.entry_type in ("world_rule", "style_rule", "safety_rule")]
