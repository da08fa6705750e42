"""What memory hands to the prompt: named blocks of scored items.

The engine depends only on :class:`Memory`; implementations live beside this
module. Every block says which layer it came from and how many tokens it costs,
so the debug panel and the ``--json`` trace can show exactly what was injected
and why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from game.language.reading import Reading
from game.world.state import GameState

if TYPE_CHECKING:
    from game.memory.bible import ReviewAction
    from game.memory.records import BibleEntry, Episode, MemoryNote, MemoryState


@dataclass
class MemoryItem:
    """One recalled item: its text, how well it ranked, and where it came from.

    Attributes:
        text: what the prompt shows.
        score: the rank score (higher is better), rounded to 3 decimals.
        source: its id (``bible-12``, ``turn-7``, ``history:summary-5``, ``kb:npc:Garrick``).
        parts: what the score is made of, weights applied, so that ``score == sum(parts.values())``
            up to rounding (each part is rounded to 3 decimals too):

            - relevant memories (``retrieval.py``): ``semantic`` (0.5 x the fused dense + keyword
              similarity, min-max scaled over the hits, place prior included), ``importance``
              (0.3 x importance/100), ``recency`` (0.2 x the recency decay), and the bonuses
              ``match`` (0.1: a character in focus or a query word in its key) and
              ``open_thread`` (0.05), present only when earned;
            - knowledge and history hits: ``semantic`` (the fused hybrid score itself);
            - the latest summaries and the recent turns, shown whatever the query: ``recency`` 1.0;
            - Story Bible blocks, which are not ranked by the query: ``importance`` (importance/100).

            - characters of the Story Bible: ``named`` (this turn's action names them) or ``met`` (the
              player has talked to them); the player and the people present are ``required``.

            Empty for items built elsewhere (a test, a narrator's own context).
        required: the prompt budget never cuts it (the player's own facts, the people present).
        left_out: what of its source the text does not show (a lore entry longer than a prompt shows of one,
            :data:`~game.memory.search.knowledge.SNIPPET_CHARS`): the prompt records it as cut, with why.
        why: why it is here, in words, when its score alone does not say (a lore entry: the key that fired it,
            constant, sticky, recursion from another entry, meaning; issue 44).
    """

    text: str
    score: float
    source: str
    parts: dict[str, float] = field(default_factory=dict)
    required: bool = False
    left_out: str = ""
    why: str = ""


@dataclass
class MemoryBlock:
    """A named section of recalled memory.

    Attributes:
        name: section id, e.g. ``pinned``, ``knowledge`` or ``history_recall``.
        title: heading printed in the prompt.
        layer: where it came from (``L1``, ``L2``, ``L3``, ``bible``, ``kb``, ``history``).
        items: the kept items, best first.
        tokens: estimated tokens of the rendered block.
        cut: items the prompt budget left out (``game/engine/prompt.py``).
    """

    name: str
    title: str
    layer: str
    items: list[MemoryItem] = field(default_factory=list)
    tokens: int = 0
    cut: list[MemoryItem] = field(default_factory=list)

    def render(self) -> str:
        if not self.items:
            return ""
        return f"## {self.title}\n" + "\n".join(f"- {item.text}" for item in self.items)


@dataclass
class MemoryContext:
    blocks: list[MemoryBlock] = field(default_factory=list)
    retrieval_meta: dict[str, Any] = field(default_factory=dict)
    synopsis: str = ""
    window: list[dict[str, str]] = field(default_factory=list)
    header: str = ""

    def block(self, name: str) -> MemoryBlock | None:
        return next((b for b in self.blocks if b.name == name), None)

    def all_items(self) -> list[MemoryItem]:
        return [item for block in self.blocks for item in block.items]


@dataclass
class TurnRecord:
    """One played turn, as memory records it (the L2 log entry)."""

    turn: int
    action: str
    narration: str
    node: str
    events: list[str]
    npcs: list[str]
    applied: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str | MemoryNote] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """What the rules refused of the turn's acts, as the player was told: a summary never tells it as done."""


class Memory(Protocol):
    """The engine's view of memory: recall before narrating, record after, restore from a save."""

    def recall(self, action: str, state: GameState, reading: Reading | None = None) -> MemoryContext:
        """Memory blocks for ``action`` (``reading``: the action read, when the caller has it) as of
        ``state.turn``."""
        ...

    def record_turn(self, record: TurnRecord, state: GameState) -> list[str]:
        """Record a played turn, all or nothing (raises and changes nothing on failure).

        Returns:
            Why memory notes were not kept.
        """
        ...

    def restore(self, state: MemoryState) -> None:
        """Continue from a saved memory state, rebuilding indexes without re-embedding what is unchanged."""
        ...

    def mark(self) -> MemoryState:
        """The memory state as it stands, frozen (``MemoryState.frozen``): ``restore(mark.thawed())`` returns to it
        (undo, redo, retry; a branch saves it)."""
        ...

    def export_json(self, *, complete: bool = True, parted: bool = False) -> bytes:
        """The memory state as JSON for a save (``complete``: consolidated and embedded first; ``parted``: as a
        save writes it, ``export.Parted``)."""
        ...

    def export_later(self) -> Callable[[], bytes]:
        """``export_json(complete=False, parted=True)`` as of now, computed when the returned callable is first
        called (on another thread); memory changes only after that."""
        ...

    @property
    def session_id(self) -> str:
        """The play session the memory belongs to."""
        ...

    def last_episodes(self, count: int) -> list[Episode]:
        """The last ``count`` played turns of the full log (copies), oldest first."""
        ...

    def bible_entries(self) -> list[BibleEntry]:
        """Every Story Bible entry, all statuses (copies: edit through :meth:`review_bible`)."""
        ...

    def review_bible(self, entry_id: str, action: ReviewAction, turn: int) -> BibleEntry:
        """The player's review of one Story Bible entry (raises ``ValueError`` with a message when refused)."""
        ...

    def closing(self, grace_s: float = 3.0) -> None:
        """The game is closing: from now on no wait for background work (a summary under way, embeddings) lasts
        past ``grace_s`` seconds, and :meth:`close` abandons what is still running then."""
        ...

    def close(self) -> None:
        """Finish background work (consolidation, embeddings)."""
        ...
