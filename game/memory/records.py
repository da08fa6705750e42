"""The memory's own data: what a save stores, and what vectors point at.

Text is the source of truth; vectors are an index. Everything here is plain
pydantic data so the save can hold it and the index can be rebuilt from it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

EntryType = Literal[
    "character",
    "relationship",
    "location",
    "world_rule",
    "item",
    "event",
    "open_thread",
    "style_rule",
    "safety_rule",
]
EntryStatus = Literal["candidate", "active", "superseded", "disputed", "archived", "rejected"]


class BibleEntry(BaseModel):
    """One structured fact of the Story Bible."""

    id: str
    entry_type: EntryType
    canonical_key: str = Field(description="e.g. 'item:moonlight_harp', 'character:player'")
    title: str
    content: str
    importance: int = Field(50, ge=0, le=100)
    status: EntryStatus = "candidate"
    source_turn: int = 0
    supersedes: str | None = None
    npcs: list[str] = []
    source: str = Field("", description="memory_note, effect, consolidation or content")
    reason: str = Field("", description="why the entry was rejected or disputed")
    embedding_model: str | None = None
    embedding_version: str | None = None


class Episode(BaseModel):
    """One played turn (the L2 log entry)."""

    turn: int
    action: str
    narration: str
    node: str = Field(description="Name of the place it happened")
    npcs: list[str] = []
    events: list[str] = []
    when: str = Field("", description="When it happened (in-game clock, or a real date)")
    importance: int = Field(40, ge=0, le=100, description="Eventless turns 20, turns that changed things 50")
    segment: int = Field(0, description="Stretch of time the episode belongs to; context never crosses segments")
    key: str = Field("", description="Id of a free-standing memory (empty for a played turn)")

    @property
    def id(self) -> str:
        return self.key or f"turn-{self.turn}"

    def text(self) -> str:
        if not self.action:
            return self.narration
        where = f" at {self.node}" if self.node else ""
        return f"Turn {self.turn}{where}: player: {self.action} | {self.narration}"


class Summary(BaseModel):
    """A consolidation summary of several turns, ``[Turn N] ...``."""

    first_turn: int
    turn: int
    text: str
    node: str = ""
    npcs: list[str] = []

    @property
    def id(self) -> str:
        return f"summary-{self.turn}"

    def labelled(self) -> str:
        return f"[Turn {self.turn}] {self.text}"


class MemoryState(BaseModel):
    """Everything memory keeps for one play session (saved with the game)."""

    session_id: str
    window: list[dict[str, str]] = []
    log: list[Episode] = []
    synopsis: str = ""
    summaries: list[Summary] = []
    bible: list[BibleEntry] = []
    last_consolidated_turn: int = 0
    next_entry: int = 1
    pending_vectors: list[str] = Field(default=[], description="ids whose embedding failed and is retried")
