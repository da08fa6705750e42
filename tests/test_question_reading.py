"""Issue 32: a question about the past read into its parts, the rules' record read as events, and what answers.

The corpus below holds questions (with the parts each must be read into) and lines that ask nothing about the past
(positive controls: a question about now, a command, words said), so a reading that finds a question everywhere
fails as surely as one that finds none.
"""

from __future__ import annotations

import pytest

from game.memory.base import TurnRecord
from game.memory.events import EventRecord, record_of
from game.memory.records import BibleEntry, Episode
from game.memory.search.answers import ANSWER_SCORE, answers
from game.memory.search.query import QueryRewriter
from game.memory.search.question import read_question
from game.memory.turns import recollects

# text, speaker, topic, event, order, places, people
QUESTIONS = [
    ("what did garrick tell me about hal?", "old_hunter", "hal", None, None, (), ()),
    ("What has Garrick said about the wolves?", "old_hunter", "the wolves", None, None, (), ()),
    ("tell me again what garrick said about hal", "old_hunter", "hal", None, None, (), ()),
    ("what did garrick tell me of hal?", "old_hunter", "hal", None, None, (), ()),
    ("what did alicia say about garrick?", "alicia", "garrick", None, None, (), ()),
    ("what do I know about the circlet?", None, "the circlet", None, None, (), ()),
    ("what did I give to garrick?", None, "", "give", None, (), ("old_hunter",)),
    ("remind me what I gave garrick", None, "", "give", None, (), ("old_hunter",)),
    ("who did I fight on the fogbound path?", None, "", "fight", None, ("Fogbound Path",), ()),
    ("what did I take from the lodge?", None, "", "take", None, ("Old Hunter's Lodge",), ()),
    ("what did I pick up at the lodge?", None, "", "take", None, ("Old Hunter's Lodge",), ()),
    ("what did I do first?", None, "", "any", "first", (), ()),
    ("who did I talk to first?", None, "", "talk", "first", (), ()),
    ("who was the last person I talked to?", None, "", "talk", "last", (), ()),
    ("which enemy did I kill first?", None, "", "fight", "first", (), ()),
    ("where was I before the lodge?", None, "", "go", "before", (), ()),
    ("where was I when I fought the wolf?", None, "", "fight", None, (), ()),
    ("what quests have I finished?", None, "", "quest_done", None, (), ()),
    ("what did I do before I met alicia?", None, "", "any", "before", (), ()),
]
NOT_ABOUT_THE_PAST = [
    "where is hal?",
    "what lies north?",
    "who is garrick?",
    "go north",
    "ask garrick about hal",
    "take the tonic",
    'say "what did you do?"',
    "I will never kneel",
    "tell me what you know about hal",
    "garrick, what did you see?",
]


@pytest.fixture(scope="module")
def query(fantasy):
    return QueryRewriter(fantasy)


@pytest.mark.parametrize(("text", "speaker", "topic", "event", "order", "places", "people"), QUESTIONS)
def test_a_question_is_read_into_its_parts(query, text, speaker, topic, event, order, places, people):
    asked = read_question(text, query)
    assert asked is not None and asked.about_past, text
    assert (asked.speaker, asked.topic, asked.event, asked.order) == (speaker, topic, event, order)
    assert asked.places == places
    assert asked.people == people


@pytest.mark.parametrize("text", NOT_ABOUT_THE_PAST)
def test_a_line_that_asks_nothing_of_the_past_is_no_memory_question(query, text):
    asked = read_question(text, query)
    assert asked is None or not asked.about_past


def test_before_points_at_what_it_names(query):
    asked = read_question("where was I before the granite stair?", query)
    assert asked is not None and asked.anchor == "the granite stair" and asked.anchor_places == ("Granite Stair",)


def episode(turn, node, action, events, *, recalled=False):
    return Episode(turn=turn, action=action, narration="...", node=node, events=events, recalled=recalled)


LOG = [
    episode(1, "Old Hunter's Lodge", "go east", ["move_to hunter_cabin"]),
    episode(2, "Old Hunter's Lodge", "talk to garrick", ["talk_to old_hunter", "quest_started find_hal"]),
    episode(3, "Old Hunter's Lodge", "take tonic", ["items_gained heartsap_tonic"]),
    episode(4, "Old Hunter's Lodge", "what did I take?", [], recalled=True),
    episode(5, "Mistwood Trailhead", "go west", ["move_to forest_edge"]),
    episode(6, "Fogbound Path", "go north", ["move_to misty_path"]),
    episode(7, "Fogbound Path", "attack wolf", ["start_combat mist_wolf"]),
    episode(8, "Fogbound Path", "attack wolf", ["combat_action attack", "defeated mist_wolf", "level_up 2"]),
]


def test_the_rules_record_reads_every_applied_effect_in_order_with_its_place(fantasy):
    events = record_of(fantasy, LOG)
    told = [e.text() for e in events]
    assert told[0] == "Turn 1: the player went from Mistwood Trailhead to Old Hunter's Lodge."
    assert "Turn 2 at Old Hunter's Lodge: the player talked to Old Garrick." in told
    assert "Turn 3 at Old Hunter's Lodge: the player took the Heartsap Tonic." in told
    assert "Turn 6: the player went from Mistwood Trailhead to Fogbound Path." in told
    assert told[-1] == "Turn 8 at Fogbound Path: the player defeated the Mist Wolf."
    assert [e.turn for e in events] == sorted(e.turn for e in events)
    assert all(e.turn != 4 for e in events)  # a turn that only recalled did nothing


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("what did I take from the lodge?", "took the Heartsap Tonic"),
        ("who did I fight on the fogbound path?", "defeated the Mist Wolf"),
        ("who did I talk to first?", "talked to Old Garrick"),
        ("what did I do first?", "went from Mistwood Trailhead to Old Hunter's Lodge"),
        ("what did I do last?", "defeated the Mist Wolf"),
        ("where was I before the fogbound path?", "went from Mistwood Trailhead to Fogbound Path"),
    ],
)
def test_an_event_question_is_answered_from_the_record_above_any_search_score(fantasy, query, text, first):
    asked = read_question(text, query)
    assert asked is not None
    found = answers(asked, fantasy, LOG, [])
    assert found and first in found[0].text, [f.text for f in found]
    assert found[0].score == ANSWER_SCORE and found[0].parts == {"question": ANSWER_SCORE}
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)


def test_an_event_that_did_not_happen_finds_nothing(fantasy, query):
    asked = read_question("what did I give to garrick?", query)
    assert asked is not None and answers(asked, fantasy, LOG, []) == []


def test_the_speakers_words_on_the_topic_rank_above_their_other_words_and_others_on_the_topic(fantasy, query):
    def said(n, text, npcs):
        return BibleEntry(
            id=f"bible-{n}",
            entry_type="event",
            canonical_key=f"said:{n}",
            title=text[:20],
            content=text,
            source_turn=n,
            npcs=npcs,
            source="memory_note",
            status="active",
        )

    bible = [
        said(1, "Old Garrick said about hal: My boy, Hal.", ["old_hunter", "hal"]),
        said(2, "Old Garrick said about the elves: I hunted with the elves.", ["old_hunter"]),
        said(3, "Princess Alicia said about hal: The hunter's boy passed the gate.", ["alicia", "hal"]),
    ]
    asked = read_question("what did garrick tell me about hal?", query)
    assert asked is not None
    found = answers(asked, fantasy, [], bible)
    assert [f.id for f in found] == ["bible-1", "bible-3"]


def test_a_turn_that_only_recalled_is_a_recollection_and_one_where_someone_answered_is_not(query):
    def record(action, applied=()):
        return TurnRecord(1, action, "You recall: ...", "hunter_lodge", [], [], list(applied))

    assert recollects(record("what did garrick tell me about hal?"), query)
    assert recollects(record("who did I talk to first?"), query)
    assert not recollects(record("where is hal?"), query)  # about now: the narrator may tell something new
    assert not recollects(record("garrick, what did you see?", [("talk_to", "old_hunter")]), query)
    assert not recollects(record("ask garrick about hal", [("talk_to", "old_hunter")]), query)


def test_the_kept_record_reads_on_from_where_it_stopped_and_again_after_an_undo_or_a_load(fantasy):
    record = EventRecord()
    log = list(LOG[:3])
    assert [e.turn for e in record.sync(fantasy, log)] == [1, 2, 2, 3]
    log.append(LOG[4])
    assert (
        record.sync(fantasy, log)[-1].text() == "Turn 5: the player went from Old Hunter's Lodge to Mistwood Trailhead."
    )
    del log[-1:]  # an undo cuts the log, and another turn is played in its place
    log.append(episode(4, "Old Hunter's Lodge", "give letter to garrick", ["give_item hunters_letter->old_hunter"]))
    assert record.sync(fantasy, log)[-1].text() == (
        "Turn 4 at Old Hunter's Lodge: the player gave the Hunter's Letter to Old Garrick."
    )
    loaded = list(LOG)  # a load: another log
    assert [e.text() for e in record.sync(fantasy, loaded)] == [e.text() for e in record_of(fantasy, loaded)]


def test_a_models_own_prose_of_a_talk_answers_what_the_speaker_said(fantasy, query):
    """Was (issue 42): only a narration in the built-in narrator's ``Name: "..."`` form counted as speech, so when a
    model told the talk in its own prose "what did garrick tell me about hal?" found none of it. What was said is
    read from the structure: the rules applied the talk to that person, and the action asked about the topic."""
    told = Episode(
        turn=3,
        action="ask garrick about his son hal",
        narration="Garrick is quiet a long while, turning a fletching between his thick fingers. 'My boy went after "
        "a white stag three moons back,' he says at last, 'and the mist kept him.'",
        node="Old Hunter's Lodge",
        events=["talk_to old_hunter"],
    )
    scenery = Episode(turn=4, action="look at hal's bow", narration="Hal's bow hangs by the door.", node="Lodge")
    other = told.model_copy(update={"turn": 5, "events": ["talk_to alicia"], "action": "ask alicia about hal"})
    asked = read_question("what did garrick tell me about hal?", query)
    assert asked is not None
    found = answers(asked, fantasy, [told, scenery, other], [])
    assert [f.id for f in found] == ["turn-3", "turn-5"]  # Garrick's words first; only someone spoke: no scenery
    assert found[0].score == ANSWER_SCORE
