"""Lore the game's state switches (issue 44, item 2): whether a lore entry may reach the prompt now.

A ``knowledge.json`` entry may carry ``when``, a :class:`~game.world.content_base.LoreCondition`: the condition
language of choices, exits and endings (a place, flags, quests done, people's trust, things carried, enemies
beaten) and three clauses only lore asks about (people present, quests under way, the time of day). The state
decides: such an entry is recalled only while its condition holds, whatever its keys or its meaning score, and
never otherwise. :func:`lore_gate` is the one test, called where recall chooses entries
(``game/memory/search/retrieval.py``); it gives the reason an entry was held back, which the turn's record shows.
"""

from __future__ import annotations

from game.world.conditions import npcs_at, unmet
from game.world.content import ContentPack, LoreCondition
from game.world.content_base import TimeOfDay
from game.world.state import GameState

DAY_PARTS: tuple[tuple[int, TimeOfDay], ...] = ((6, "night"), (12, "morning"), (18, "afternoon"), (22, "evening"))
"""(the hour a part ends, the part): before 06:00 is night, before 12:00 morning, and so on; from 22:00, night."""


def time_of_day(clock_minutes: int) -> TimeOfDay:
    """The part of the day the game's clock (minutes since day 1, 00:00) is in."""
    hour = clock_minutes % (24 * 60) // 60
    return next((part for end, part in DAY_PARTS if hour < end), "night")


def lore_gate(when: LoreCondition | None, state: GameState, pack: ContentPack) -> str | None:
    """Why an entry with the condition ``when`` may not reach the prompt in ``state`` ("held back: must be at
    Old Mill, it is morning not night"), or None when it may (no condition, or one that holds)."""
    if when is None:
        return None
    missing = unmet(when, state, pack)
    here = npcs_at(pack, state.node)
    missing += [f"{_name(pack, n)} is not here" for n in when.npcs_present if n not in here]
    for quest in when.quests_active:
        progress = state.quests.get(quest)
        if progress is None or progress.status != "active":
            found = pack.quest(quest)
            missing.append(f"quest '{found.title if found else quest}' is not under way")
    now = time_of_day(state.clock_minutes)
    if when.time_of_day and now not in when.time_of_day:
        missing.append(f"it is {now}, not {' or '.join(when.time_of_day)}")
    return f"held back by its condition: {'; '.join(missing)}" if missing else None


def _name(pack: ContentPack, npc: str) -> str:
    person = pack.npcs.get(npc)
    return person.name if person is not None else npc
