"""SillyTavern's World Info semantics, one rule at a time (``game/memory/search/activation.py``, issue 44).

Each test builds entries with the activation an author would write and scans lines as a turn would: key logic,
whole words and case, regular-expression keys (and the ones refused as unsafe), recursion, inclusion groups,
probability drawn from the game's seed, and sticky / cooldown / delay counted in turns, replayed from the log
exactly as a game that never stopped has them. Nothing here could be played before issue 44: keys were hints.
"""

from __future__ import annotations

from typing import Any

import pytest

from game.memory.search.activation import LoreActivation
from game.memory.search.lore_scan import Choice, Timed
from game.world.content import KnowledgeEntry
from game.world.loader import load_pack
from game.world.lore import Activation
from game.world.state import new_game
from tests.conftest import DATA

MINI = load_pack(DATA / "mini")


def lore(*entries: dict[str, Any]) -> LoreActivation:
    """The mini story with ``entries`` (activation fields, and ``content``) as its only lore, ids e0, e1, ..."""
    knowledge = []
    for n, fields in enumerate(entries):
        fields = dict(fields)
        content = fields.pop("content", f"The lore text of entry number {n}.")
        activation = Activation(**fields)
        knowledge.append(KnowledgeEntry(id=f"e{n}", category="history", title=f"E{n}", content=content,
                                        activation=activation))  # fmt: skip
    return LoreActivation(MINI.model_copy(update={"knowledge": knowledge}))


def scan(entries: LoreActivation, line: str, *, turn: int = 1, seed: int = 0, before: tuple[str, ...] = ()) -> Choice:
    return entries.choose([line, *before], turn, seed, Timed())


def fired(choice: Choice) -> dict[str, str]:
    return {rule.id: why for rule, why in choice.fired}


def held(choice: Choice) -> dict[str, str]:
    return {v.entry: v.why for v in choice.verdicts if not v.fired}


@pytest.mark.parametrize(
    ("logic", "line", "fires"),
    [
        ("and_any", "the tower by the sea", True),
        ("and_any", "the tower on the hill", False),
        ("and_all", "the tower by the sea under the moon", True),
        ("and_all", "the tower by the sea", False),
        ("not_any", "the tower on the hill", True),
        ("not_any", "the tower by the moon", False),
        ("not_all", "the tower by the sea", True),
        ("not_all", "the tower by the sea under the moon", False),
    ],
)
def test_secondary_key_logic(logic, line, fires):
    entries = lore({"keys": ["tower"], "secondary_keys": ["sea", "moon"], "logic": logic})
    choice = scan(entries, line)
    assert ("e0" in fired(choice)) is fires
    if not fires:
        assert held(choice)["e0"].startswith("key 'tower' found, but secondary keys failed")


def test_whole_words_case_and_several_words():
    entries = lore(
        {"keys": ["Kit"]},  # whole words by default, any case
        {"keys": ["Kit"], "whole_words": False},
        {"keys": ["Kit"], "case_sensitive": True},
        {"keys": ["old keep"]},  # several words: matched as written, anywhere
    )
    assert set(fired(scan(entries, "the kitchen"))) == {"e1"}
    assert set(fired(scan(entries, "ask about kit."))) == {"e0", "e1"}
    assert set(fired(scan(entries, "ask about Kit"))) == {"e0", "e1", "e2"}
    assert set(fired(scan(entries, "the bold keeper"))) == {"e3"}


def test_regular_expression_keys_and_the_unsafe_ones():
    entries = lore({"keys": ["/whistl(e|ing)/i"]}, {"keys": ["/(a+)+$/"]}, {"keys": ["/(?<w>wolf)s?/"]})
    assert set(fired(scan(entries, "WHISTLING in the dark, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"))) == {"e0"}
    assert set(fired(scan(entries, "the wolves howl"))) == set()  # "wolves" has no "wolf"
    assert set(fired(scan(entries, "a wolf howls"))) == {"e2"}
    assert entries.rules[1].keys[0].refused.startswith("a repeated group holding a repetition")


def test_scan_depth_counts_the_line_as_the_first_message():
    entries = lore({"keys": ["beacon"]}, {"keys": ["beacon"], "scan_depth": 1}, {"keys": ["beacon"], "scan_depth": 4})
    before = ("The keeper points north.", "where is the lamp?", "The beacon is dark tonight.")
    assert set(fired(scan(entries, "look", before=before))) == {"e2"}  # three messages back
    assert set(fired(scan(entries, "look", before=("The beacon is dark.",)))) == {"e0", "e2"}


def test_recursion_names_its_source_and_obeys_exclude_and_prevent():
    entries = lore(
        {"keys": ["harbour"], "content": "The harbour is watched by the Drowned Choir."},
        {"keys": ["drowned choir"], "content": "The choir sings of the Widow Rocks."},
        {"keys": ["widow rocks"], "exclude_recursion": True},
        {"keys": ["gull"], "prevent_recursion": True, "content": "The gull flies over the harbour and the reef."},
        {"keys": ["reef"]},
    )
    choice = scan(entries, "walk to the harbour")
    assert fired(choice) == {
        "e0": "key 'harbour' found",
        "e1": "key 'drowned choir' found, in the text of 'e0' (recursion)",
    }
    assert set(fired(scan(entries, "feed the gull"))) == {"e3"}  # its text calls up neither harbour nor reef


def test_inclusion_groups_override_weight_and_scoring():
    overridden = lore(
        {"keys": ["storm"], "group": "weather", "order": 10},
        {"keys": ["storm"], "group": "weather", "group_override": True, "order": 20},
        {"keys": ["storm"], "group": "weather", "group_override": True, "order": 30},
    )
    choice = scan(overridden, "a storm comes")
    assert set(fired(choice)) == {"e2"}
    assert held(choice)["e0"] == "key 'storm' found, but inclusion group 'weather' went to 'e2' by its override"
    weighted = lore({"keys": ["storm"], "group": "weather", "group_weight": 10},
                    {"keys": ["storm"], "group": "weather", "group_weight": 90})  # fmt: skip
    wins = [next(iter(fired(scan(weighted, "storm", turn=t)))) for t in range(1, 201)]
    assert 160 <= wins.count("e1") <= 195  # drawn per turn: the heavy one wins about 9 times in 10
    scored = lore({"keys": ["storm", "rain"], "group": "w", "group_scoring": True},
                  {"keys": ["storm"], "group": "w", "group_scoring": True})  # fmt: skip
    assert set(fired(scan(scored, "storm and rain"))) == {"e0"}


def test_probability_is_drawn_from_the_game_s_seed_and_turn():
    entries = lore({"keys": ["bell"], "probability": 40})
    first = [("e0" in fired(scan(entries, "ring the bell", turn=t, seed=7))) for t in range(1, 201)]
    again = [("e0" in fired(scan(entries, "ring the bell", turn=t, seed=7))) for t in range(1, 201)]
    other = [("e0" in fired(scan(entries, "ring the bell", turn=t, seed=8))) for t in range(1, 201)]
    assert first == again and first != other
    assert 60 <= sum(first) <= 100  # about 40% of 200
    missed = next(t for t, hit in enumerate(first, 1) if not hit)
    assert "the probability roll" in held(scan(entries, "ring the bell", turn=missed, seed=7))["e0"]
    assert fired(scan(lore({"keys": ["bell"], "probability": 0, "use_probability": False}), "bell"))


def play(entries: LoreActivation, lines: list[str]) -> list[set[str]]:
    """The entries fired at each line of a game, each recall working its timed effects out of the log."""
    state, log, out = new_game(MINI), [], []
    for turn, line in enumerate(lines, 1):
        out.append(set(fired(entries.at(log, line, state.model_copy(update={"turn": turn - 1})))))
        log.append((turn, line, "The wind moves."))
    return out


def test_sticky_cooldown_and_delay_in_turns():
    sticky = lore({"keys": ["lamp"], "sticky": 2})
    assert play(sticky, ["light the lamp", "look", "look", "look"]) == [{"e0"}, {"e0"}, {"e0"}, set()]
    cooldown = lore({"keys": ["lamp"], "cooldown": 2})
    assert play(cooldown, ["lamp", "lamp", "lamp", "lamp"]) == [{"e0"}, set(), set(), {"e0"}]
    both = lore({"keys": ["lamp"], "sticky": 1, "cooldown": 1})
    assert play(both, ["lamp", "look", "lamp", "lamp"]) == [{"e0"}, {"e0"}, set(), {"e0"}]
    delayed = lore({"keys": ["lamp"], "delay": 2})
    assert play(delayed, ["lamp", "lamp", "lamp"]) == [set(), set(), {"e0"}]


def test_timed_effects_after_a_load_are_those_of_the_game_that_never_stopped():
    fields = {"keys": ["lamp"], "sticky": 1, "cooldown": 2, "probability": 70}
    lines = ["lamp", "look", "lamp", "lamp", "lamp", "look", "lamp", "lamp", "lamp", "lamp"]
    continuing = play(lore(fields), lines)
    state, log = new_game(MINI), [(t, line, "The wind moves.") for t, line in enumerate(lines[:-1], 1)]
    loaded = lore(fields).at(log, lines[-1], state.model_copy(update={"turn": len(lines) - 1}))  # a fresh process
    assert set(fired(loaded)) == continuing[-1]
    assert continuing != [{"e0"} if "lamp" in line else set() for line in lines]  # the effects did something


def test_a_branch_of_the_log_replays_its_own_timed_effects():
    """An undo or a branch hands recall a log that shares only a prefix with the last one: the effects are those
    of the branch, as a fresh process finds them, not of the line it left."""
    fields = {"keys": ["lamp"], "sticky": 2, "cooldown": 2}
    entries = lore(fields)
    state = new_game(MINI)
    line = [(1, "look", "Dark."), (2, "light the lamp", "It burns."), (3, "look", "Dark."), (4, "look", "Dark.")]
    branch = [*line[:1], (2, "look", "Dark."), (3, "light the lamp", "It burns."), (4, "look", "Dark.")]
    went_on = entries.at(line, "lamp", state.model_copy(update={"turn": 4}))
    branched = entries.at(branch, "lamp", state.model_copy(update={"turn": 4}))  # the same object, after an undo
    fresh = lore(fields).at(branch, "lamp", state.model_copy(update={"turn": 4}))
    assert fired(branched) == fired(fresh) != fired(went_on)
