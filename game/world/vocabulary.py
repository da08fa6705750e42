"""The parser's vocabulary: the words it knows and the patterns that read a sentence.

Directions, question openings, statements about oneself, the lines that mean
"go" somewhere, and :func:`verb_key`, which verbs mean the same. Each verb's own
words and patterns are in :mod:`game.world.verbs`; :mod:`game.world.parser`
reads a line with both.
"""

from __future__ import annotations

import re

DIRECTIONS = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "u": "up",
    "d": "down",
    "north": "north",
    "south": "south",
    "east": "east",
    "west": "west",
    "up": "up",
    "down": "down",
    "in": "in",
    "out": "out",
    "inside": "in",
    "outside": "out",
    "northeast": "northeast",
    "northwest": "northwest",
    "southeast": "southeast",
    "southwest": "southwest",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
    "upstairs": "up",
    "downstairs": "down",
}

QUESTION_WORDS = (
    "where",
    "what",
    "who",
    "whom",
    "why",
    "how",
    "when",
    "which",
    "do ",
    "does ",
    "did ",
    "is ",
    "are ",
    "can ",
    "could ",
    "have ",
    "will ",
    "would ",
    "were ",
    "was ",
)
SELF_STATEMENT = re.compile(
    r"^(my name is|my name's|call me|i am|i'm|im|i come from|i came from|i was born|i promise|i swear|i vow"
    r"|my secret|i have a secret|remember that|i love|i hate|i fear)\b"
)
NAME_GIVEN = re.compile(r"\b(?:my name is|my name's|call me|i am called|i'm called)\s+(?P<v>[\w' -]+)", re.I)
"""The player telling their name ("my name is Kael"); the Story Bible and the rules read it."""
MAX_NAME_CHARS = 40


def name_given(text: str) -> str | None:
    """The name the player gives in ``text`` ("call me kael and ..." -> "Kael"), at most three words, or None."""
    match = NAME_GIVEN.search(text)
    if not match:
        return None
    value = re.split(r"\s+and\b|\s+but\b|[.;!,?]", match.group("v"), maxsplit=1, flags=re.I)[0]
    words = value.split()[:3]
    name = " ".join(w if any(c.isupper() for c in w) else w.capitalize() for w in words)[:MAX_NAME_CHARS]
    return name or None


PRONOUNS = frozenset({"him", "her", "them", "it", "he", "she", "they"})
"""Words by which the player points at someone present without naming them."""

DIRECTION_WORDS = "|".join(sorted((re.escape(d) for d in DIRECTIONS if len(d) > 2), key=len, reverse=True))
ARTICLE = r"(?:(?:the|a|an|some|this|that|your|my)\s+)"

SIMPLE_GO = {
    "ascend": "up",
    "climb": "up",
    "climb up": "up",
    "go up": "up",
    "descend": "down",
    "climb down": "down",
    "go down": "down",
    "enter": "in",
    "go in": "in",
    "go inside": "in",
    "go out": "out",
}

VERB_GROUPS = (
    "talk speak chat converse ask question greet address tell say recite chant utter",
    "haul pull drag tug free rescue yank help lift untangle unravel untie calm soothe",
    "go walk head travel move run proceed continue hike march trek journey wander climb clamber scramble ascend"
    " descend ride board enter reach find visit stand arrive slip sneak creep squeeze crawl",
    "take get grab collect gather pluck harvest snatch retrieve fetch obtain wrench pry prise salvage scavenge claim",
    "use play strum activate operate start insert install plug fit seat slot pour put place apply",
    "drink sip quaff",
    "eat consume chew swallow",
    "read study",
    "give offer hand deliver bring return",
    "defeat attack fight kill slay destroy face hit strike smash break crush shoot stab beat vanquish wreck",
)
SAME_VERB: dict[str, str] = {word: group.split()[0] for group in VERB_GROUPS for word in group.split()}
"""Verbs that mean the same when a narrator compares the player's words with an objective's."""


def verb_key(word: str) -> str:
    """What a verb means, so that synonyms compare equal ("destroy" and "defeat", "haul" and "pull")."""
    word = word.lower().strip(" ,.!?")
    for suffix in ("ing", "ed", "s"):  # "slipping", "hauled", "pours"
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]
            if base in SAME_VERB or base + "e" in SAME_VERB:
                word = base if base in SAME_VERB else base + "e"
                break
            if suffix != "s":
                word = base
                break
    return SAME_VERB.get(word, word)


def is_verb(word: str) -> bool:
    """Whether ``word`` is a verb the vocabulary knows, in any of its forms ("pours", "start")."""
    return verb_key(word) in SAME_VERB.values() or word in SAME_VERB
