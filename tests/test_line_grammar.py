"""A line's grammar beyond one verb (issue 41, the held-out part's lessons): how clauses are joined, which frame
one clause lends the next, acts told as under way, places and people named by the story's own words.

Each case here is a kind of sentence the first held-out measurement found read wrong; the sentences below are new
ones of the same kind, so a fix that only learnt the held-out sentence fails here.
"""

from __future__ import annotations

import pytest

from game.language import lexicon, spelling
from game.language.frames import plainer
from game.language.parser import parse
from game.language.reading import read
from game.world.asked import by_meaning, understand
from tests.language.acts import shipped_packs, state_for
from tests.language.rows import Row


@pytest.fixture(scope="module")
def packs():
    return shipped_packs()


def _acts(packs, story: str, at: str, line: str, **setup) -> list[str]:
    row = Row(story, at, line, (), "plain", **setup)
    asked = understand(read(line), state_for(row, packs[story]), packs[story])
    return [" ".join(x for x in (a.verb, a.target, a.to) if x) for a in asked.acts]


def _moods(line: str) -> list[tuple[str, bool]]:
    return [(c.mood, c.negated) for c in read(line).clauses]


@pytest.mark.parametrize(
    "line",
    [
        "take the herb, after that head north",
        "take the herb and afterwards head north",
        "take the herb, next head north",
        "take the herb and finally head north",
    ],
)
def test_words_of_sequence_join_two_clauses(line):
    assert [c.core for c in read(line).clauses] == ["take the herb", "head north"]


def test_a_list_with_commas_names_every_thing(packs):
    line = "pick up the gloves, the fuse and the baton"
    assert parse(line).target == "gloves, the fuse and the baton"
    assert _acts(packs, "scifi_001", "storage_area", line) == [
        "take insulated_gloves",
        "take ceramic_fuse",
        "take shock_baton",
    ]


def test_a_comma_without_a_list_still_ends_the_thing():
    assert parse("take the herb, quickly").target == "herb"
    assert parse("take the herb right away").target == "herb"


def test_two_things_bought_in_one_clause_are_two_purchases(packs):
    acts = _acts(packs, "fantasy_001", "hunter_cabin", "purchase some waybread and a herb from garrick")
    assert acts == ["buy waybread old_hunter", "buy healing_herb old_hunter"]


@pytest.mark.parametrize(
    ("line", "at", "want"),
    [
        ("take the circlet, then back east", "shadow_altar", ["take elowen_circlet", "go shadow_swamp"]),
        ("east, then back west", "forest_edge", ["go hunter_cabin", "go forest_edge"]),
    ],
)
def test_a_movement_with_no_verb_is_a_clause_of_its_own(packs, line, at, want):
    assert _acts(packs, "fantasy_001", at, line) == want


def test_back_is_never_read_as_a_misspelt_verb():
    assert read("back to the lodge").clauses[0].how == ""


@pytest.mark.parametrize(
    ("core", "plain"),
    [
        ("wolf it down", "eat it"),
        ("knock them back", "drink them"),
        ("polish it off", "eat it"),
    ],
)
def test_a_phrasal_verb_split_by_its_object_is_still_the_idiom(core, plain):
    assert plainer(core)[0] == plain


def test_the_frame_of_a_wish_reaches_the_verb_after_and():
    assert _moods("I wish I could rest and eat the bread") == [("wish", False), ("wish", False)]
    assert _moods("if I took the herb and ran, what then?")[1][0] in ("hypothetical", "question")


def test_a_refusal_reaches_the_verb_after_or_but_not_a_command_after_and():
    assert _moods("I would never kneel or beg") == [("hypothetical", True), ("hypothetical", True)]
    assert _moods("I will never kneel or bow")[1][1] is True
    assert _moods("don't drop it, and go north") == [("command", True), ("command", False)]


@pytest.mark.parametrize(
    ("line", "core"),
    [
        ("I'm heading north", "head north"),
        ("we're taking the herb", "take the herb"),
        ("I am drinking the tonic", "drink the tonic"),
    ],
)
def test_an_act_told_as_under_way_is_the_act(line, core):
    clause = read(line).clauses[0]
    assert clause.mood == "command" and clause.core == core


def test_a_state_told_in_the_progressive_is_no_act():
    assert read("I'm freezing").clauses[0].command.verb not in ("go", "take", "use", "attack")


@pytest.mark.parametrize(
    "line",
    [
        "Would you be so kind as to open the way north?",
        "I'd be grateful if I might rest here a while",
        "I should be very grateful if I could take the herb",
        "I should like to rest",
    ],
)
def test_old_fashioned_courtesy_is_a_request(line):
    clause = read(line).clauses[0]
    assert clause.mood == "command"


@pytest.mark.parametrize(("line", "mood"), [("lets rest", "command"), ("ok lets head north", "command")])
def test_let_us_without_its_apostrophe_is_a_command_not_a_report(line, mood):
    assert read(line).clauses[0].mood == mood


def test_a_place_is_found_by_the_words_of_the_place_described(packs):
    """Cliff Road's text says "The lane down into the village lies to the east"; the harbour's own text is "A
    curved stone quay ...": neither word is a place's name."""
    assert _acts(packs, "victorian_001", "cliff_road", "stroll down into the village") == ["go high_street"]
    assert _acts(packs, "victorian_001", "high_street", "walk to the quay") == ["go harbour"]


def test_a_word_no_place_near_describes_names_no_way(packs):
    assert _acts(packs, "victorian_001", "high_street", "walk to the volcano") == []


@pytest.mark.parametrize(
    ("story", "at", "line", "who"),
    [
        ("victorian_001", "drowned_man", "ask the barkeep about the wreck", "talk bess"),
        ("scifi_001", "ripper_clinic", "hey medic, got a minute?", "talk doc_hoshino"),
        ("scifi_001", "netrunner_den", "oi, hacker", "talk nyx"),
        ("fantasy_001", "sanctuary_gate", "Good evening, your highness.", "talk alicia"),
    ],
)
def test_a_person_is_found_by_a_word_for_their_role(packs, story, at, line, who):
    assert _acts(packs, story, at, line)[:1] == [who]


def test_a_role_word_no_one_here_fits_finds_no_one(packs):
    assert _acts(packs, "victorian_001", "drowned_man", "ask the surgeon about the wreck") == []


def test_role_words_are_kin_both_ways():
    assert "landlady" in lexicon.role_kin("innkeeper") and "innkeeper" in lexicon.role_kin("landlady")
    assert lexicon.role_kin("herb") == frozenset({"herb"})


@pytest.mark.parametrize(("typed", "fixed"), [("goo", "go"), ("gett", "get")])
def test_a_letter_typed_twice_is_forgiven(typed, fixed):
    assert spelling.nearest(typed, ["go", "get", "give", "take"]) == fixed


def test_a_verb_run_into_a_direction_is_read_apart():
    assert spelling.split_run("walknorth", (), ["walk"]) == "walk north"


def test_a_deal_taken_is_a_deal_accepted():
    assert plainer("take your deal")[0] == "accept the deal"
    assert plainer("count me in")[0] == "accept"


def test_a_story_choice_is_known_in_any_determiner(packs):
    """join_shadow's words are "accept the offer" and "join him"; the player says "your offer", "join you"."""
    row = Row("fantasy_001", "shadow_throne", "", (), "plain")
    for line in ("I accept your offer", "fine, I will join you"):
        asked = understand(read(line), state_for(row, packs["fantasy_001"]), packs["fantasy_001"])
        assert [(a.verb, a.target) for a in (*asked.acts, *asked.offer)] == [("choice", "join_shadow")], line


def test_an_unknown_verb_on_the_one_thing_named_is_asked_back_never_applied(packs):
    """No reader knows "yoink"; the tonic is the one thing of the scene the line names, so the game asks whether
    to take it. A line naming two things, or none, is not guessed."""
    pack = packs["fantasy_001"]
    state = state_for(Row("fantasy_001", "hunter_cabin", "", (), "plain"), pack)
    asked = by_meaning(understand(read("yoink the tonic"), state, pack), None, state, pack)
    assert asked.acts == () and [(a.verb, a.target, a.guessed) for a in asked.offer] == [
        ("take", "heartsap_tonic", True)
    ]
    carrying = state_for(Row("fantasy_001", "hunter_cabin", "", (), "plain", carried=("waybread",)), pack)
    assert by_meaning(understand(read("yoink the waybread"), carrying, pack), None, carrying, pack).offer
    for line in ("yoink the tonic with the waybread", "yoink it"):
        asked = by_meaning(understand(read(line), carrying, pack), None, carrying, pack)
        assert asked.kind == "open" and asked.offer == (), line
