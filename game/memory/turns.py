"""What memory keeps of a played turn: its episode, and the people it was about or spent with."""

from __future__ import annotations

from game.memory.base import TurnRecord
from game.memory.query import QueryRewriter
from game.memory.records import Episode
from game.text import clip
from game.world.conditions import npcs_at
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
        events=record.events,
        when=when,
        importance=60 if record.notes else 50 if any(e not in QUIET_EFFECTS for e, _ in record.applied) else 20,
    )


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
    """The people the player was with in ``episodes``: present where a turn was played, or spoken or given to
    (someone the player only named is not)."""
    if pack is None:
        return []
    places = {node.name: node.id for node in pack.nodes.values()}
    found: set[str] = set()
    for episode in episodes:
        node = places.get(episode.node)
        if node is not None:
            found.update(npcs_at(pack, node))
        for event in episode.events:
            effect, _, detail = event.partition(" ")
            person = _given_or_spoken(effect, detail)
            if person is not None:
                found.add(person)
    return sorted(found & set(pack.npcs))
