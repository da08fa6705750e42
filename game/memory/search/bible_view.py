"""What recall shows of the Story Bible at a turn: the active entries and the blocks made of them, kept while the
Bible and the turn's window of validity hold (``retrieval.py`` asks for it every turn)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from game.memory.base import MemoryBlock, MemoryItem
from game.memory.bible import MODEL_SOURCES
from game.memory.records import BibleEntry
from game.memory.search.recall import make_block
from game.world.conditions import npcs_at
from game.world.content import ContentPack
from game.world.state import GameState

CANDIDATES = 12
"""Most open threads, and most characters met (not present, not named), recall offers the prompt budget: more
than a prompt holds (2-6 of each at the default budget), so a long game's hundred threads cost the budget's
choice nothing."""
NAMED_VALUE = 0.95
"""Value of the Story Bible entry of a character this turn's action names (the prompt budget's scale: a
relevant memory's hybrid score, 0-1.15)."""
MET_VALUE = 0.4
"""Value of a character the player has met, plus 0.2 x importance/100: kept over a weak memory, cut for a
good one."""


def _character_rank(entry: BibleEntry) -> tuple[int, int, int]:
    """The player's own facts first, then by importance, the latest first."""
    return (0 if entry.canonical_key.startswith("character:player") else 1, -entry.importance, -entry.source_turn)


def active_at(entry: BibleEntry, turn: int) -> bool:
    """Whether ``entry`` was an active fact after ``turn``."""
    if entry.source_turn > turn:
        return False
    if entry.status == "active":
        return True
    return entry.status in ("superseded", "archived") and entry.ended_turn is not None and entry.ended_turn > turn


@dataclass(frozen=True)
class BibleView:
    """:meth:`BibleViews.at`: the active entries and the blocks made of them, valid for turns
    ``first`` to ``horizon`` (excluded) while ``key`` (the Bible's version) holds."""

    key: tuple[int, int, int]
    first: int
    horizon: int
    active: list[BibleEntry]
    active_ids: frozenset[str]
    pinned: MemoryBlock
    characters: list[BibleEntry]
    """Active character entries that are not pinned (the player's first, then by importance)."""
    shown: frozenset[str]
    """Entries recall never searches: the pinned ones (in their own block) and the style and safety rules."""
    threads: MemoryBlock
    thread_ids: frozenset[str]
    claims: dict[str, BibleEntry]
    """Active entries said in play (:data:`MODEL_SOURCES`), by id: recalled, they read as quoted claims."""


class BibleViews:
    """The last view of the Story Bible and each section's last block, made again only when they change."""

    def __init__(self) -> None:
        self._view: BibleView | None = None
        self._sections: dict[str, tuple[list[tuple[str, int, str, str]], MemoryBlock]] = {}
        """Each Story Bible section's last block and what it was made of (see :meth:`_section`)."""

    def at(self, bible: list[BibleEntry], version: int, turn: int) -> BibleView:
        """What recall shows of the Story Bible at ``turn`` (call under memory's lock), kept while it holds:
        until the Bible changes (``version``: ``GameMemory.bible_version``) or ``turn`` reaches the next turn at
        which an entry starts or stops being active (a save's future entries, an older turn's superseded ones).
        Measured with ``bench/turn_overhead.py`` (1,023 active entries): 2-3 ms a turn it no longer spends."""
        key = (version, id(bible), len(bible))
        view = self._view
        if view is not None and view.key == key and view.first <= turn < view.horizon:
            return view
        # one pass over the Bible (1,100 entries in bench/turn_overhead.py's game, where most turns change it):
        # what is active at ``turn``, by the section that shows it, and the next turn at which that changes
        active: list[BibleEntry] = []
        pinned: list[BibleEntry] = []
        characters: list[BibleEntry] = []
        unsaid: list[str] = []
        threads: list[BibleEntry] = []
        claims: dict[str, BibleEntry] = {}
        horizon = sys.maxsize
        for entry in bible:
            started, status, ended = entry.source_turn, entry.status, entry.ended_turn
            if started > turn:
                horizon = min(horizon, started)
            if status in ("superseded", "archived") and ended is not None and ended > turn:
                horizon = min(horizon, ended)
            elif status != "active":
                continue
            if started > turn:
                continue
            active.append(entry)  # active_at(entry, turn)
            if entry.source in MODEL_SOURCES:
                claims[entry.id] = entry
            kind = entry.entry_type
            if entry.pinned:
                pinned.append(entry)
            elif kind == "character":
                characters.append(entry)
            elif kind in ("style_rule", "safety_rule"):
                unsaid.append(entry.id)  # the persona and the answer format say them (prompt.py)
            elif kind == "open_thread" and entry.importance >= 30:
                threads.append(entry)
            # world and item rules are lore: recalled by relevance (relevant_memories), not in every prompt
        characters.sort(key=_character_rank)
        threads = sorted(threads, key=lambda e: (-e.importance, -e.source_turn))[:CANDIDATES]  # the rest: searched
        self._view = view = BibleView(
            key=key,
            first=turn,
            horizon=horizon,
            active=active,
            active_ids=frozenset(e.id for e in active),
            pinned=self._section("pinned", pinned),
            characters=characters,
            shown=frozenset([*(e.id for e in pinned), *unsaid]),
            threads=self._section("open_threads", threads),
            thread_ids=frozenset(e.id for e in threads),
            claims=claims,
        )
        return view

    def _section(self, name: str, entries: list[BibleEntry]) -> MemoryBlock:
        """The block of Story Bible ``entries`` (ranked), the one made last time when they are the same.

        Most turns change the Bible (a place visited, a fact noted) but not the entries of a given section, and
        making a section's items (105 threads in ``bench/turn_overhead.py``'s game) was most of a view's
        rebuild. An entry's item is made of its id, importance, title and content, which a change never edits
        in place (a new entry supersedes it), so those four say when a block holds."""
        key = [(e.id, e.importance, e.title, e.content) for e in entries]
        kept = self._sections.get(name)
        if kept is not None and kept[0] == key:
            return kept[1]
        block = make_block(name, [entry_item(e, e.importance / 100) for e in entries])
        self._sections[name] = (key, block)
        return block


def characters_block(view: BibleView, pack: ContentPack | None, state: GameState, named: set[str]) -> MemoryBlock:
    """The characters this turn needs: the player's own facts and the people present (required), the people
    the action names, and those the player has met (the prompt budget weighs the last two by value).

    Anyone else's entry is left to relevant_memories, which finds it when the turn is about them.
    """
    present = set(npcs_at(pack, state.node)) if pack is not None and state.node in pack.nodes else set()
    items = []
    met = 0
    for entry in view.characters:
        subject = entry.canonical_key.removeprefix("character:")
        npc = subject if pack is not None and subject in pack.npcs else None
        if subject.startswith("player") or npc in present:
            part, value, required = "required", 1.0, True
        elif npc in named:
            part, value, required = "named", NAMED_VALUE, False
        elif (npc is None or state.has_flag(f"talked:{npc}")) and met < CANDIDATES:
            part, value, required = "met", MET_VALUE + 0.2 * entry.importance / 100, False
            met += 1
        else:
            continue
        value = round(value, 3)
        items.append(MemoryItem(entry.shown(), value, entry.id, {part: value}, required=required))
    return make_block("bible_core", items)


def entry_item(entry: BibleEntry, score: float) -> MemoryItem:
    """A Story Bible entry as an item of a block that is not ranked by the query (score: its importance)."""
    return MemoryItem(entry.shown(), round(score, 3), entry.id, {"importance": round(score, 3)})
