"""The life of an open thread of the Story Bible (a promise the narrator noted): fulfilled by the quest it is
about, or aged out.

A thread is a model's note ("The player promised Old Garrick to bring Hal home"), so it is never the rules'
word: it is archived when a completed quest meets one of its people *and* is about what it is about, or when it
has gone :data:`THREAD_MAX_AGE_TURNS` turns without one.
"""

from __future__ import annotations

from collections.abc import Iterable

from game.memory.records import BibleEntry
from game.text import keywords
from game.world.content import ContentPack, Quest

MODEL_SOURCES = frozenset({"memory_note", "extraction"})
"""Sources a language model writes: capped below core importance, threads age out."""
THREAD_MAX_AGE_TURNS = 150
"""A promise thread older than this is archived at the next consolidation."""
_THREAD_WORDS = frozenset(keywords("the player said promised promise swore vowed will would to"))
"""Words of any thread: they tell that it is a promise, not what it is about."""


def _threads(entries: Iterable[BibleEntry]) -> list[BibleEntry]:
    return [e for e in entries if e.entry_type == "open_thread" and e.source in MODEL_SOURCES]


def fulfilled_by(quest: Quest, pack: ContentPack, entries: Iterable[BibleEntry]) -> list[BibleEntry]:
    """The threads of ``entries`` that ``quest``, completed, fulfils: about someone it had the player meet, and
    about what the quest was about (issue 42: "bring Hal home" was archived when "Into the Mist", which only has
    the player meet Hal's father, was done). The giver's own names count for nothing: every promise to them has
    them."""
    people = {o.target for o in quest.objectives if o.kind == "talk"}
    people |= {o.to_npc for o in quest.objectives if o.to_npc is not None}
    told = set(keywords(" ".join([quest.title, quest.description, *(o.description for o in quest.objectives)])))
    giver = pack.npcs.get(quest.giver) if quest.giver else None
    if giver is not None:
        told -= set(keywords(" ".join([giver.id, giver.name, *giver.names])))
    return [e for e in _threads(entries) if set(e.npcs) & people and (set(keywords(e.content)) - _THREAD_WORDS) & told]


def stale(entries: Iterable[BibleEntry], turn: int) -> list[BibleEntry]:
    """The threads of ``entries`` older than :data:`THREAD_MAX_AGE_TURNS` at ``turn`` (not pinned ones)."""
    return [e for e in _threads(entries) if e.source_turn < turn - THREAD_MAX_AGE_TURNS and not e.pinned]
