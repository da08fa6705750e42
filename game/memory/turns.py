"""What memory keeps of a played turn: its episode, and the people it was about or spent with."""

from __future__ import annotations

from game.memory.base import TurnRecord
from game.memory.people import with_whom
from game.memory.records import REFUSED, Episode
from game.memory.search.query import QueryRewriter
from game.memory.search.question import read_question
from game.text import clip
from game.world.content import ContentPack

QUIET_EFFECTS = frozenset({"move_to", "rest", "achievement"})
"""Effects that do not make a turn worth remembering by themselves."""


def episode_of(record: TurnRecord, pack: ContentPack | None, query: QueryRewriter, when: str, chars: int) -> Episode:
    """The log episode of a played turn (its narration cut to ``chars``), with the importance recall ranks by."""
    place = pack.nodes[record.node].name if pack and record.node in pack.nodes else record.node
    return Episode(
        turn=record.turn,
        action=record.action,
        narration=clip(record.narration, chars),
        node=place,
        npcs=involved(record, query),
        events=[*record.events, *(f"{REFUSED}{told}" for told in record.refused)],
        when=when,
        importance=60 if record.notes else 50 if any(e not in QUIET_EFFECTS for e, _ in record.applied) else 20,
        recalled=recollects(record, query),
    )


def recollects(record: TurnRecord, query: QueryRewriter) -> bool:
    """Whether the turn only answered a question about the past ("what did Garrick tell me?"): nothing but quiet
    effects applied (nobody answered, nothing changed). Its narration (a recollection, or a denial) is kept in the
    log the player reads back, never as evidence (issue 32: each stored answer ranked first the next time)."""
    if any(effect not in QUIET_EFFECTS for effect, _ in record.applied):
        return False
    asked = read_question(record.action, query)
    return asked is not None and asked.about_past


def _given_or_spoken(effect: str, detail: str) -> str | None:
    if effect == "talk_to":
        return detail
    if effect == "give_item":
        return detail.partition("->")[2]
    return None


def involved(record: TurnRecord, query: QueryRewriter) -> list[str]:
    """Characters the turn was about: spoken to, given to, or named (merely present does not count)."""
    found = set(query.characters(record.action)[0])
    for effect, detail in record.applied:
        person = _given_or_spoken(effect, detail)
        if person is None and effect == "affinity_threshold":
            person = detail.partition(":")[0]
        if person is not None:
            found.add(person)
    return sorted(found)


def companions(pack: ContentPack | None, episodes: list[Episode]) -> list[str]:
    """The people the player was with in ``episodes``: spoken or given to, or named or heard where they stand
    (someone the player only named, or passed, is not; ``people.with_whom``)."""
    if pack is None:
        return []
    return sorted({npc for episode in episodes for npc in with_whom(pack, episode)})
