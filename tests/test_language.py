"""The player's English in one room (issue 41): one lexicon, typos forgiven in scope, frames that ask nothing."""

from __future__ import annotations

import re

import pytest

from game.language import lexicon, spelling
from game.language.frames import bare_refusal, declined, left_be, plainer, refusal, vocative
from game.language.parser import parse
from game.language.question import event_words, parts, status_question
from game.language.reading import read
from game.language.verbs import PATTERNS


def test_one_lexicon_serves_the_parser_the_reading_the_questions_and_the_voice_check():
    """A word added to the lexicon is a verb to every reader at once: "nab" takes in the parser, grounds a take
    in the reading, names a take event in a question and compares equal to "take" for quest objectives."""
    assert parse("nab the herb").verb == "take"
    assert read("nab the herb").binding("take")
    assert lexicon.event_kind("nabbed") == "take" and "nab" in event_words()
    assert lexicon.verb_key("nab") == lexicon.verb_key("take") == "take"
    assert lexicon.DECISIONS["kneel"] == ("assent",)


def test_every_word_of_a_verb_is_in_its_parser_pattern():
    """The parser's alternations are drawn from the lexicon, so no word is a verb to one reader and not another."""
    pattern = next(p.pattern for verb, p in PATTERNS if verb == "take" and "target" in p.pattern)
    for word in lexicon.words_of("take"):
        assert re.search(rf"\b{re.escape(word.split()[0])}\b", pattern), word


@pytest.mark.parametrize(
    ("word", "base"),
    [("took", "take"), ("grabbing", "grab"), ("nabbed", "nab"), ("hurries", "hurry"), ("knelt", "kneel")],
)
def test_lemma_finds_the_base_form_of_a_known_verb(word, base):
    assert lexicon.lemma(word) == base


def test_a_word_that_is_no_verb_keeps_its_form():
    assert lexicon.lemma("herbs") == "herbs" and lexicon.senses("herbs") == ()


@pytest.mark.parametrize(
    ("typed", "vocabulary", "fixed"),
    [
        ("tkae", ["take", "talk", "go"], "take"),  # two letters swapped
        ("nroth", ["north", "south"], "north"),
        ("gve", ["give", "go"], "give"),  # a letter left out of a short word
        ("tak", ["take", "talk"], None),  # as near to both: no guess
        ("garrick", ["take", "talk"], None),  # no verb near a name
    ],
)
def test_a_typo_is_forgiven_only_to_the_one_nearest_word_in_scope(typed, vocabulary, fixed):
    assert spelling.nearest(typed, vocabulary) == fixed


def test_the_distance_counts_a_swap_as_one_edit():
    assert spelling.distance("tkae", "take") == 1 and spelling.distance("hreb", "herb") == 1
    assert spelling.distance("wolf", "sword") == 3


def test_two_words_typed_as_one_are_read_apart():
    assert spelling.split_run("pickup", lexicon.phrasal()) == "pick up"
    assert spelling.split_run("grabthe", (), lexicon.known_verbs()) == "grab the"
    assert spelling.split_run("garrick", lexicon.phrasal(), lexicon.known_verbs()) is None


@pytest.mark.parametrize(
    ("core", "plain"),
    [
        ("take on the wolf", "fight the wolf"),
        ("take a look at the herb", "look at the herb"),
        ("hit the road", "leave"),
        ("kill time", "wait"),
        ("scarf down the waybread", "eat the waybread"),
        ("pass the letter to garrick", "give the letter to garrick"),
        ("slip past the troll", "slip past the troll"),  # "slip" gives only "X to Y"
        ("have a hot toddy", "order a hot toddy"),
    ],
)
def test_an_idiom_is_read_as_its_plainer_phrase(core, plain):
    assert plainer(core)[0] == plain


@pytest.mark.parametrize(
    "sentence",
    [
        "over my dead body will i kneel",
        "only a fool would kneel to you",
        "yeah, right, sell my pearl for pocket change",
    ],
)
def test_a_refusal_in_a_sentence_is_found(sentence):
    assert refusal(sentence)


def test_a_sentence_that_is_only_a_refusal_takes_back_what_came_before():
    assert bare_refusal("no deal") and bare_refusal("No, thank you.") and not bare_refusal("no, take the herb")
    reading = read("yeah, right, sell my pearl for pocket change. No deal.")
    assert not reading.binding()


def test_what_is_declined_or_left_be_is_no_act():
    assert declined("push corbyn's purse back across the desk") and declined("turn down his offer")
    assert not declined("push the cart north")
    assert left_be("leave my knife alone") and not left_be("leave the lodge")


def test_a_name_before_a_comma_is_whom_the_line_is_said_to():
    assert vocative("reverend, may i have a word") == ("reverend", "may i have a word")
    assert vocative("how much for the toddy, bess") == ("bess", "how much for the toddy")
    assert vocative("okay, take it")[0] == "" and vocative("take the herb, then go north")[0] == ""
    assert vocative("hello,") == ("", "hello,") and vocative(", garrick")[0] == "garrick"  # an empty part


def test_an_act_held_back_is_no_act():
    assert not read("I almost kneel, but stop").binding()
    assert not read("I start to drop the knife, then think better of it").binding()


def test_a_polite_request_binds_and_a_question_does_not():
    assert read("may I pass through the gate, please?").binding("move")
    assert read("could I buy some waybread from you?").binding("trade")
    assert not read("should I kneel?").binding()
    assert not read("if I took the baton, could I beat the crawler?").binding()


def test_the_question_grammar_reads_the_parts_as_words():
    asked = parts("what did garrick tell me about hal")
    assert (asked.speaker, asked.topic, asked.about_past) == ("garrick", "hal", True)
    assert parts("who did i fight first").event == "fight" and parts("who did i fight first").order == "first"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("how much gold do I have?", "gold"),
        ("how many credits do i have", "gold"),
        ("am I hurt?", "health"),
        ("what am I carrying?", "inventory"),
        ("how much for the toddy?", ""),
        ("where is hal?", ""),
    ],
)
def test_a_question_about_the_players_own_state_is_the_rules_to_answer(question, kind):
    assert status_question(question) == kind
