"""What the player says about themselves, as Story Bible facts.

"My name is Ren", "I come from the salt marshes", "I promise to find Hal":
patterns over what the player said (a narrator's note ``The player said: ...``)
give a key, a label and the value, which the Bible stores in the third person
(``The player's name is Ren``). A promise becomes an open thread.
"""

from __future__ import annotations

import re

from game.language.lexicon import NAME_GIVEN
from game.memory.records import EntryType

PLAYER_FACTS: list[tuple[re.Pattern[str], EntryType, str, str, int]] = [
    (
        NAME_GIVEN,
        "character",
        "character:player",
        "name",
        85,
    ),
    (re.compile(r"\bi (?:come|came) from\s+(?P<v>.+)", re.I), "character", "character:player-origin", "origin", 80),
    (re.compile(r"\bi was born (?:in|at|on)\s+(?P<v>.+)", re.I), "character", "character:player-origin", "origin", 80),
    (
        re.compile(r"\bmy secret is\s+(?P<v>.+)|\bi have a secret[:,]?\s*(?P<v2>.+)", re.I),
        "character",
        "character:player-secret",
        "secret",
        80,
    ),
    (
        re.compile(r"\bi (?:promise|swear|vow)\s+(?:to\s+)?(?P<v>.+)", re.I),
        "open_thread",
        "thread:promise",
        "promise",
        75,
    ),
    (re.compile(r"\bi (?:fear|am afraid of)\s+(?P<v>.+)", re.I), "character", "character:player-fear", "fear", 70),
    (re.compile(r"\bi (?:love|hate)\s+(?P<v>.+)", re.I), "character", "character:player-feelings", "feelings", 60),
]


PLAYER_TEMPLATES = {
    "name": "The player's name is {}",
    "origin": "The player comes from {}",
    "secret": "The player's secret: {}",
    "promise": "The player promised to {}",
    "fear": "The player fears {}",
    "feelings": "The player said they love or hate {}",
}


def clean(text: str) -> str:
    return " ".join(text.split()).strip().rstrip(".")


def player_facts(text: str) -> list[tuple[EntryType, str, str, str, int]]:
    """(entry type, key, label, value, importance) of each fact ``text`` states."""
    found = []
    for pattern, entry_type, key, label, importance in PLAYER_FACTS:
        match = pattern.search(text)
        if match:
            value = clean(next(v for v in match.groups() if v))
            value = re.split(r"\s+and\s+(?:i|my)\b|[.;!]", value, maxsplit=1, flags=re.I)[0].strip()
            found.append((entry_type, key, label, value, importance))
    return found
