"""The scripted narrator's ways of telling a turn (issue 35: telling with range).

Each kind of turn (arriving somewhere new, going back, a round of a fight, taking, resting, a refusal...) has
several authored variants, all here. :func:`tell` chooses one deterministically from the turn (its number, the
place, the retry attempt and the openings of the last tellings the prompt holds), so a test or a walkthrough
tells the same game the same way, while a player does not read "You make your way to" at every step:

- the start of the rotation is a hash of the kind, the place and the turn number;
- a variant whose four-word opening (:func:`opening`) begins one of the last tellings is passed over while
  another is left;
- a retry (``PromptBundle.attempt``) takes the next variant still left, so each retelling is another telling of
  the same outcome (same rules, dice and effects), not the same text behind a prefix.

Variants take ``str.format`` fields (``{place}``, ``{foe}``, ``{Foe}``, ``{item}``...). Lines that open a move
or a fight round are plain sentences without quotes, colons or parentheses, so the local narrator's prose mode
still finds them to retell (``game.llm.local_prose.split_prose``), and none speaks or decides for the player
(``game.engine.voice``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

RECENT_TELLINGS = 5
"""How many of the last tellings' openings a new telling avoids."""
OPENING_WORDS = 4
"""How many words make an opening (the share of turns one opening starts is the issue's measure of range)."""

TELLINGS: dict[str, tuple[str, ...]] = {
    # ------------------------------------------------------------ moving
    "arrive": (  # a place not seen before; its full description follows
        "You make your way to {place}.",
        "The way opens onto {place}.",
        "You come to {place}.",
        "Your steps bring you to {place}.",
        "You arrive at {place}.",
        "After a short walk you reach {place}.",
        "Before long you reach {place}.",
        "You go on and find yourself at {place}.",
        "New ground ahead. You step into {place}.",
    ),
    "return": (  # a place told before: briefly (a line of at most five words and the place's name)
        "You walk back to {place}.",
        "You return to {place}.",
        "You retrace your steps to {place}.",
        "Once more you are at {place}.",
        "{place}, once again.",
        "You head back to {place}.",
        "{place} again, familiar ground.",
        "The way leads back to {place}.",
        "Back you go, to {place}.",
        "Soon you are back at {place}.",
    ),
    "already_here": (
        "You are already at {place}.",
        "You are standing in {place} already.",
        "No need to go anywhere. This is {place}.",
    ),
    "no_way": (
        "You cannot go '{target}' from here. Exits lead {exits}.",
        "There is no way '{target}' from here. Exits lead {exits}.",
        "No path leads '{target}' from here. Exits lead {exits}.",
    ),
    # ------------------------------------------------------------ things
    "take": (  # the item's own description follows, or is the telling
        "{description}",
        "You reach for the {item}. {description}",
        "You pick up the {item} and look {it} over. {description}",
    ),
    "no_such_thing": (
        "There is no {target} here.",
        "You see no {target} here.",
        "You look about for the {target}, but there is none here.",
    ),
    "scenery": (
        "That is part of {place}; you leave it be.",
        "It belongs to {place}, and there it stays.",
        "You leave it be. It is part of {place}.",
    ),
    "use": (
        "You use the {item}.",
        "You put the {item} to use.",
        "You take out the {item}.",
        "Out comes the {item}.",
    ),
    "not_carrying": (
        "You have no {target}.",
        "You are not carrying any {target}.",
        "You carry no {target}.",
    ),
    "drop": (
        "You set down the {item}.",
        "You put the {item} down.",
        "You leave the {item} on the ground.",
    ),
    "give": (
        "You offer the {item} to {npc}.",
        "You hold out the {item} to {npc}.",
        "You hand the {item} to {npc}.",
    ),
    # ------------------------------------------------------------ fighting
    "charge": (  # a fight begins, a weapon in hand
        "You draw your {weapon} and charge {foe}!",
        "{weapon} in hand, you go for {foe}!",
        "You ready your {weapon} and rush {foe}!",
        "With your {weapon} raised, you close on {foe}!",
    ),
    "charge_bare": (
        "You raise your fists and go for {foe}!",
        "Bare-handed, you go for {foe}!",
        "Fists up, you rush at {foe}!",
    ),
    "strike": (  # a round of a fight
        "You press the attack against {foe}.",
        "You strike at {foe} again.",
        "Again you go for {foe}.",
        "You close in on {foe}.",
        "You look for an opening and lunge at {foe}.",
        "You come at {foe} once more.",
        "Another attack, straight at {foe}.",
        "You keep up the pressure on {foe}.",
        "You aim a blow at {foe}.",
        "You throw yourself at {foe}.",
    ),
    "guard": (
        "You brace yourself against {foe}.",
        "You raise your guard against {foe}.",
        "You set your feet and watch {foe}.",
        "Guard up, you wait for {foe} to come.",
    ),
    "break_off": (
        "You look for a way past {foe}.",
        "You edge away from {foe}, looking for a way out.",
        "You break off and look for a way past {foe}.",
    ),
    "reach_in_fight": (
        "Keeping {foe} at bay, you reach for your {item}.",
        "Between blows from {foe}, you reach for your {item}.",
        "You snatch a moment from {foe} and reach for your {item}.",
    ),
    "nothing_to_fight": (
        "There is nothing here to fight.",
        "Nothing here wants a fight.",
        "You look around, but there is nothing here to fight.",
    ),
    # ------------------------------------------------------------ resting and the rest
    "rest": (
        "You find a quiet corner and close your eyes for a while.",
        "You sit down, let your shoulders drop, and rest a while.",
        "You stretch out and let sleep take you for a while.",
        "For a while you rest, and the world goes on without you.",
    ),
    "no_rest": (
        "You glance around: this is no place to close your eyes.",
        "This is no place to rest; you stay on your feet.",
        "You would not close your eyes in a place like this.",
    ),
    "held_back": (  # an act the player says they will not do ("I will never kneel", "don't attack anyone")
        "You hold back, and nothing changes.",
        "Nothing happens; you leave it be.",
        "You keep from it. The moment passes.",
        "So be it: you do nothing of the kind.",
    ),
    "musing": (  # a wish, a what-if, a report: words that ask for no act
        "A passing thought, nothing more.",
        "You turn the thought over; it stays a thought.",
        "The idea lingers a moment, then fades.",
        "Only a thought, and the world goes on.",
    ),
    "fruitless": (  # an action the story has nothing for
        "You try to {action}, but nothing much comes of it.",
        "Nothing much comes of trying to {action}.",
        "For all your trying to {action}, nothing comes of it.",
        "You make an attempt to {action}, to no effect.",
    ),
    "says": (  # someone's words (a greeting, an answer on a topic): the first keeps the plain form a turn is
        # told with; every form is one the memory reads as their words (``SPOKEN``)
        '{npc}: "{said}"',
        '{npc} says: "{said}"',
        '{npc} answers: "{said}"',
    ),
    "answer": (  # someone's answer to a question put to them
        '{npc} answers: "{said}"',
        '{npc} says: "{said}"',
        '{npc}: "{said}"',
    ),
    "heard": (  # after the player's words to someone ("You tell Garrick: ..."), which are told as said
        "{npc} listens; {subject} will remember it.",
        "{npc} nods slowly; {subject} will remember it.",
        "{npc} takes it in; {subject} will not forget it.",
    ),
    "retold": (  # a retry of a turn told only in the story's own words (a choice, a description, a list)
        "{text}",
        "Once more, then. {text}",
        "The moment comes round again. {text}",
        "Again the story finds its thread. {text}",
    ),
}
"""The variants of every kind of turn. A kind's variants begin with different words (their openings differ), but
for ``heard``, whose sentence follows the player's words."""
SPOKEN = r"(?: answers| says)?"
"""How a person's words are introduced after their name (``says``, ``answer``): what memory reads as said."""

FIXED = frozenset({"says", "answer", "heard", "retold"})
"""Kinds told with their first variant until a retry: their opening is already the speaker's name or the story's
own words (``retold``: only a retry of a turn no other kind told frames it anew)."""


def opening(text: str, words: int = OPENING_WORDS) -> str:
    """The first ``words`` words of ``text``, lower-cased, without punctuation: what a telling opens with."""
    return " ".join(re.sub(r"[^\w\s']", " ", text.lower()).replace("'", "").split()[:words])


@dataclass(frozen=True)
class Voice:
    """What one turn's choice of variants depends on: the turn, the place, the retry and the last openings."""

    turn: int = 0
    place: str = ""
    attempt: int = 0
    recent: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, turn: int, place: str, attempt: int, told: Iterable[str]) -> Voice:
        """The voice of a turn, given the last tellings (oldest first; the last :data:`RECENT_TELLINGS` count)."""
        return cls(turn, place, attempt, frozenset(opening(t) for t in list(told)[-RECENT_TELLINGS:]))


def tell(kind: str, voice: Voice, **fields: str) -> str:
    """One variant of ``kind`` with ``fields`` filled in, chosen as the module docstring says."""
    variants = [v.format(**fields) for v in TELLINGS[kind]]
    if kind not in FIXED:
        start = zlib.crc32(f"{kind}:{voice.place}:{voice.turn}".encode()) % len(variants)
        variants = variants[start:] + variants[:start]
    fresh = [v for v in variants if opening(v) not in voice.recent] or variants
    if kind in FIXED:
        fresh = variants
    return fresh[voice.attempt % len(fresh)]


def _place_pattern(variant: str) -> re.Pattern[str]:
    head, _, tail = variant.partition("{place}")
    return re.compile("^" + re.escape(head) + r"(?P<place>[^.,\n]+?)" + re.escape(tail))


_MOVES = [_place_pattern(v) for kind in ("arrive", "return") for v in TELLINGS[kind]]


def moved_to(text: str) -> str | None:
    """The place a telling that opens with a move (``arrive``, ``return``) names, else None (the digest's
    "The player went to ...")."""
    return next((found.group("place") for p in _MOVES if (found := p.match(text))), None)
