from __future__ import annotations

import pytest

from game.world.parser import parse


@pytest.mark.parametrize(
    ("text", "verb", "target", "obj", "topic"),
    [
        ("n", "go", "north", "", ""),
        ("go north", "go", "north", "", ""),
        ("Walk to the Elven Sanctuary.", "go", "elven sanctuary", "", ""),
        ("look", "look", "", "", ""),
        ("examine the old altar", "examine", "old altar", "", ""),
        ("look at harp", "examine", "harp", "", ""),
        ("talk to the old hunter", "talk", "", "the old hunter", ""),
        ("ask elvin about the harp", "talk", "", "elvin", "the harp"),
        ("speak with Alicia about her mother", "talk", "", "alicia", "her mother"),
        ("take the moonlight harp", "take", "moonlight harp", "", ""),
        ("pick up herbs", "take", "herbs", "", ""),
        ("drop sword", "drop", "sword", "", ""),
        ("use fuse on breaker", "use", "fuse", "breaker", ""),
        ("play the harp", "use", "harp", "", ""),
        ("give the herbs to elvin", "give", "herbs", "elvin", ""),
        ("attack the wolf", "attack", "wolf", "", ""),
        ("attack", "attack", "", "", ""),
        ("flee", "flee", "", "", ""),
        ("rest", "rest", "", "", ""),
        ("i", "inventory", "", "", ""),
        ("quests", "quests", "", "", ""),
        ("where is Hal?", "ask", "", "", "where is hal"),
        ("what is my name", "ask", "", "", "what is my name"),
    ],
)
def test_verbs(text, verb, target, obj, topic):
    command = parse(text)
    assert (command.verb, command.target, command.obj, command.topic) == (verb, target, obj, topic)
    assert command.text == text.strip()


def test_statements_about_the_player_are_said():
    for text in ("My name is Ren", "I come from the northern isles", "I promise to find Hal", 'say "hello there"'):
        assert parse(text).verb == "say", text


def test_tell_someone_something():
    command = parse("tell alicia my name is Ren")
    assert command.verb == "say" and command.obj == "alicia"


def test_meta_commands():
    for text in ("help", "save", "save slot2", "load", "quit", "inventory", "quests", "status"):
        assert parse(text).is_meta, text
    assert parse("save slot2").target == "slot2"
    assert not parse("go north").is_meta


def test_unknown_and_empty_text():
    assert parse("dance wildly").verb == "other"
    assert parse("   ").verb == "other"
