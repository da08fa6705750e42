"""The memory's own data: what a save stores, and what vectors point at.

Text is the source of truth; vectors are an index. Everything here is plain
pydantic data so the save can hold it and the index can be rebuilt from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from game.world.state import MAX_TURN

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
ReviewAction = Literal["accept", "reject", "pin", "unpin", "archive"]
"""What the player may do to a Story Bible entry (``StoryBible.review``)."""
ENTRY_TYPES: tuple[str, ...] = EntryType.__args__  # type: ignore[attr-defined]
Turn = Annotated[int, Field(ge=0, le=MAX_TURN)]
"""A turn number, bounded like the game's (a save is checked at load, issue 22)."""
Count = Annotated[int, Field(ge=0, le=2**31)]
PLAYER_KEYS = ("character:player", "thread:promise")
"""Keys of what the player said of themselves (``player_facts.py``)."""
CLAIM_PREFIXES = ("The player claims", "Said in play", "Noted by the narrator")
"""How a prompt attributes what was said in play (:meth:`BibleEntry.shown`)."""
_CLAIM = re.compile(r'^(?:The player claims|Said in play|Noted by the narrator): "(?P<said>.*)$', re.S)


def unquoted(text: str) -> str:
    """A fact as it was said, without the attribution a prompt gives it (:meth:`BibleEntry.shown`; a snippet of it
    may have lost its closing quote)."""
    found = _CLAIM.match(text)
    if found is None:
        return text
    said = found.group("said")
    return said[:-1] if said.endswith('"') else said


NOTE_CHARS = 500
"""Longest memory note kept; a longer one is dropped (a note is a fact, not a chapter)."""


class MemoryNote(BaseModel):
    """A structured candidate Story Bible fact proposed by a narrator.

    Validated before anything is recorded: a note that does not fit (an
    importance of "high", a type the Bible does not know, an empty content)
    is dropped with the validation error as its reason, never half-applied.
    """

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    entry_type: EntryType = "event"
    key: str | None = Field(None, validation_alias=AliasChoices("canonical_key", "key"), max_length=120)
    title: str = Field("", max_length=120)
    content: str = Field(min_length=1, max_length=NOTE_CHARS)
    importance: int = Field(55, ge=0, le=100)
    npcs: list[str] = Field(default=[], max_length=10)

    @field_validator("npcs", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


class BibleEntry(BaseModel):
    """One structured fact of the Story Bible."""

    model_config = ConfigDict(extra="forbid")

    id: str
    entry_type: EntryType
    canonical_key: str = Field(description="e.g. 'item:moonlight_harp', 'character:player'")
    title: str
    content: str
    importance: int = Field(50, ge=0, le=100)
    status: EntryStatus = "candidate"
    source_turn: Turn = 0
    supersedes: str | None = None
    ended_turn: Turn | None = Field(None, description="Turn it was superseded or archived")
    npcs: list[str] = Field(default_factory=list)  # a factory: a default list is deep-copied for every model
    source: Literal["content", "effect", "consolidation", "memory_note", "extraction"]
    reason: str = Field("", description="why the entry was rejected or disputed")
    pinned: bool = Field(
        False, description="the player pinned it: always in the prompt while active (older saves: not pinned)"
    )
    embedding_model: str | None = None
    embedding_version: str | None = None

    def text(self) -> str:
        """How the fact reads."""
        if not self.title or self.title in self.content or self.content.startswith("The player"):
            return self.content
        return f"{self.title}: {self.content}"

    def shown(self) -> str:
        """How the fact reads in a prompt: what was said in play (a narrator's note of what the player or someone
        said, a model's extraction) as an attributed, quoted claim the system prompt tells the narrator never to
        obey (``CLAIM_PREFIXES``); what the content and the rules established, as it is."""
        if self.source == "memory_note":
            who = "The player claims" if self.canonical_key.startswith(PLAYER_KEYS) else "Said in play"
            return f'{who}: "{self.text()}"'
        if self.source == "extraction":
            return f'Noted by the narrator: "{self.text()}"'
        return self.text()


REFUSED = "refused "
"""How an episode's events hold what the rules refused of the turn ("refused <what the player was told>"): an
event like the rules' own ("effect detail"), so a save keeps the fields the previous main knows."""


class Episode(BaseModel):
    """One played turn (the L2 log entry)."""

    model_config = ConfigDict(extra="forbid")

    turn: Turn
    action: str
    narration: str
    node: str = Field(description="Name of the place it happened")
    npcs: list[str] = Field(default_factory=list)  # a factory: a default list is deep-copied for every model
    events: list[str] = Field(default_factory=list)
    when: str = Field("", description="When it happened (in-game clock, or a real date)")
    importance: int = Field(40, ge=0, le=100, description="Eventless turns 20, turns that changed things 50")
    segment: Count = Field(0, description="Stretch of time the episode belongs to; context never crosses segments")
    key: str = Field("", description="Id of a free-standing memory (empty for a played turn)")
    recalled: bool = Field(False, description="A turn that only answered a question about the past: never evidence")

    @property
    def id(self) -> str:
        return self.key or f"turn-{self.turn}"

    def text(self) -> str:
        if not self.action:
            return self.narration
        where = f" at {self.node}" if self.node else ""
        return f"Turn {self.turn}{where}: player: {self.action} | {self.narration}"

    def mark(self) -> str:
        """What a summary or an extraction reads after the turn: what the rules refused (``refused`` events), or
        that nothing changed, so that what the player only tried never becomes memory (issue 42); "" for a turn
        that changed things."""
        if not self.action:
            return ""
        refused = [e.removeprefix(REFUSED) for e in self.events if e.startswith(REFUSED)]
        if refused:
            return f" [refused by the rules: {'; '.join(refused)}]"
        return "" if self.events else " [nothing changed]"


class Summary(BaseModel):
    """A consolidation summary of several turns, ``[Turn N] ...``."""

    model_config = ConfigDict(extra="forbid")

    first_turn: Turn
    turn: Turn
    text: str
    node: str = ""
    npcs: list[str] = Field(default_factory=list)  # a factory: a default list is deep-copied for every model
    synopsis: str = Field("", description="The L3 synopsis as rewritten after this summary")

    @property
    def id(self) -> str:
        return f"summary-{self.turn}"

    def labelled(self) -> str:
        return f"[Turn {self.turn}] {self.text}"


class Review(BaseModel):
    """One review the player made of a Story Bible entry (``reviews.py``): the player's, not a turn's, so it is
    made again on memory returned to any moment (undo, redo, retry, a branch)."""

    model_config = ConfigDict(extra="forbid")

    entry: str = Field(description="Id of the entry reviewed")
    key: str = Field(description="Its canonical key and content: an entry of that id made anew must say the same")
    content: str
    action: ReviewAction
    turn: Turn = Field(description="Game turn the review was made at")


@dataclass(frozen=True)
class Checkpoint:
    """Enough of a :class:`MemoryState` to take back what was appended after it."""

    log: int
    bible: int
    next_entry: int
    statuses: dict[str, tuple[EntryStatus, int | None, str, bool]]


class MemoryState(BaseModel):
    """Everything memory keeps for one play session (saved with the game).

    The L1 window and the L3 synopsis are not stored apart: the window is the
    last turns of the log and the synopsis the one written with the latest
    summary, so both can be read as of any turn (:meth:`window`,
    :meth:`synopsis_at`), and loading an older save never shows its future.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str
    log: list[Episode] = []
    summaries: list[Summary] = []
    bible: list[BibleEntry] = []
    last_consolidated_turn: Turn = 0
    facts_from: Turn | None = Field(
        default=None, description="first turn whose Story Bible extraction failed; retried at the next consolidation"
    )
    next_entry: Count = 1
    pending_vectors: list[str] = Field(default=[], description="ids still waiting for their vector")
    reviews: list[Review] = Field(
        default=[], description="the player's Story Bible reviews, latest last (older saves: none kept apart)"
    )

    def frozen(self, previous: MemoryState | None = None) -> MemoryState:
        """A copy of this state as it stands, for undo and branches, that shares what never changes: logged
        episodes and summaries, and, with ``previous`` (an earlier frozen copy of this game), the Story Bible
        entries unchanged since it. Never change a frozen copy; :meth:`thawed` gives one to play on.

        A copy costs a pointer per episode and entry (the Bible list is append-only, so entry ``i`` of
        ``previous`` is entry ``i`` here, changed or not). The player's :attr:`reviews` are not a moment's: every
        copy shares this state's list, so a review made at any time is in every moment (``reviews.py``)."""
        old = previous.bible if previous is not None else []
        bible = [
            old[i] if i < len(old) and old[i].__dict__ == entry.__dict__ else entry.model_copy()
            for i, entry in enumerate(self.bible)
        ]
        return self.model_copy(
            update={
                "log": list(self.log),
                "summaries": list(self.summaries),
                "bible": bible,
                "pending_vectors": list(self.pending_vectors),
                "reviews": self.reviews,  # shared on purpose (see above)
            }
        )

    def thawed(self) -> MemoryState:
        """A copy of a :meth:`frozen` state that memory may change (the entries it may change are copied)."""
        return self.model_copy(
            update={
                "log": list(self.log),
                "summaries": list(self.summaries),
                "bible": [entry.model_copy() for entry in self.bible],
                "pending_vectors": list(self.pending_vectors),
                "reviews": self.reviews,  # the player's, shared by every copy (:meth:`frozen`)
            }
        )

    def as_of(self, turn: int) -> MemoryState:
        """This state as it stood after ``turn``, read from when each thing was recorded (a branch of a saved game,
        ``storyecho slots branch``): the episodes and summaries up to ``turn``, the Story Bible entries made by
        then, each with the status it had (a fact superseded, archived or rejected later is active again).

        What no turn dates is kept as it is: a player's pin, the player's :attr:`reviews` (made again when memory
        is restored from the copy, ``reviews.py``), and the entry counter (ids stay unique)."""
        bible = []
        for entry in self.bible:
            if entry.source_turn > turn:
                continue
            copy = entry.model_copy()
            if copy.ended_turn is not None and copy.ended_turn > turn:
                copy.status, copy.ended_turn, copy.reason = "active", None, ""
            bible.append(copy)
        summaries = [s for s in self.summaries if s.turn <= turn]
        log = [e for e in self.log if e.turn <= turn]
        ids = {e.id for e in log} | {s.id for s in summaries} | {e.id for e in bible}
        return self.model_copy(
            update={
                "log": log,
                "summaries": summaries,
                "bible": bible,
                "last_consolidated_turn": min(self.last_consolidated_turn, max((s.turn for s in summaries), default=0)),
                "facts_from": self.facts_from if self.facts_from is not None and self.facts_from <= turn else None,
                "pending_vectors": [i for i in self.pending_vectors if i in ids],
            }
        )

    def told(self, turn: int) -> Episode | None:
        """The logged episode of the turn ``turn`` played (its action, place and narration), if the log holds it."""
        return next((e for e in reversed(self.log) if e.action and e.turn == turn), None)

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(
            len(self.log),
            len(self.bible),
            self.next_entry,
            {e.id: (e.status, e.ended_turn, e.reason, e.pinned) for e in self.bible},
        )

    def rollback(self, checkpoint: Checkpoint) -> None:
        """Undo every append and status change since ``checkpoint`` (a turn recorded half-way)."""
        del self.log[checkpoint.log :]
        del self.bible[checkpoint.bible :]
        self.next_entry = checkpoint.next_entry
        for entry in self.bible:
            entry.status, entry.ended_turn, entry.reason, entry.pinned = checkpoint.statuses[entry.id]

    def turns_upto(self, turn: int, count: int) -> list[Episode]:
        """The last ``count`` played turns up to ``turn``, oldest first."""
        found: list[Episode] = []
        for episode in reversed(self.log):
            if len(found) >= count:
                break
            if episode.action and episode.turn <= turn:
                found.append(episode)
        return found[::-1]

    @property
    def synopsis(self) -> str:
        return self.summaries[-1].synopsis if self.summaries else ""

    def synopsis_at(self, turn: int) -> str:
        """The synopsis as it stood after ``turn``."""
        return next((s.synopsis for s in reversed(self.summaries) if s.turn <= turn), "")

    def window(self, turn: int, messages: int, chars: int) -> list[dict[str, str]]:
        """The L1 working window as it stood after ``turn``: its last ``messages`` messages, each cut to ``chars``."""
        out: list[dict[str, str]] = []
        for episode in self.turns_upto(turn, (messages + 1) // 2):
            out.append({"role": "user", "content": episode.action[:chars]})
            out.append({"role": "assistant", "content": episode.narration[:chars]})
        return out[-messages:] if messages else []


def model_fields(value: Any) -> Any:
    """orjson's ``default`` for saved models: a model is its fields.

    Saved models are plain data (no aliases, serializers or computed fields),
    so their fields are exactly ``model_dump(mode="json")``; a test holds the
    two equal. Serialising the live objects this way is about 4x faster than
    dumping them to dicts first, and a save is written under the memory lock.
    """
    if isinstance(value, BaseModel):
        return value.__dict__
    raise TypeError(f"{type(value).__name__} is not saved data")


def to_json(model: BaseModel) -> bytes:
    """``model`` as JSON bytes, equal to ``orjson.dumps(model.model_dump(mode="json"))``."""
    return orjson.dumps(model, default=model_fields)
