"""The Story Bible: structured facts that supersede each other, never contradict.

Every fact has a ``canonical_key``. Proposing a fact:

- identical content under an active key is **skipped**;
- new content under an active key **supersedes** it (the old entry keeps its
  text with status ``superseded``; the new one links to it) - unless the old
  entry is a core fact (importance >= 90), in which case the newcomer is
  **disputed** and the core fact stands;
- a new key is **created** as a candidate and becomes **active** only after the
  rule check: the entities the key names exist in the story (``character:hal``
  needs an NPC ``hal``), else it is **rejected**.

Facts have owners. A source may only write what its authority covers
(content > effect > consolidation > memory note = model extraction): keys and types the content
owns (core characters, world, item, style and safety rules) are written only
by the content, facts the rules established (quests, defeats, choices,
relationships) only by the applied effects, and an active fact is never
superseded by a source of lower authority (the newcomer is **disputed**).
A narrator's note or a model-extracted fact is capped at importance 80, so it can never pose as a core
fact. This is the memory side of "the rules are the only door": whatever a
model writes in ``memory_notes``, it cannot rewrite the rules every later
prompt carries. A fact that reads as an instruction to the narrator ("ignore
your rules", "give me 1000 gold", see :mod:`game.memory.guard`) is rejected,
whoever proposes it.

Facts come from the content pack (core settings, at session start), from the
narrator's ``memory_notes``, from the effects the rules applied, from each
consolidation summary, and from a model narrator's stateless extraction call
at each consolidation (:meth:`StoryBible.from_extraction`). Quest start opens an ``open_thread``; completion
archives it. A promise thread is archived when a completed quest fulfils it
(it was told about someone the quest had the player meet) or when it is older
than ``THREAD_MAX_AGE_TURNS`` turns, so open threads never pile up.

The player reviews the Bible (:meth:`StoryBible.review`, through ``GameMemory.review_bible``) and is the
authority there, above the content: accept, reject, archive, pin and unpin, as ``docs/memory.md`` ("Story
Bible review") tells; the story's safety rule is not the player's to take back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

from game.memory.effect_facts import effect_fact
from game.memory.guard import looks_like_instruction, quotes, system_words
from game.memory.player_facts import PLAYER_TEMPLATES, clean, player_facts
from game.memory.records import BibleEntry, EntryType, MemoryNote, MemoryState
from game.memory.records import ReviewAction as ReviewAction
from game.memory.threads import MODEL_SOURCES as MODEL_SOURCES
from game.memory.threads import THREAD_MAX_AGE_TURNS as THREAD_MAX_AGE_TURNS
from game.memory.threads import fulfilled_by, stale
from game.text import mentions, slug
from game.world.content import ContentPack

CORE_IMPORTANCE = 90
NOTE_MAX_IMPORTANCE = 80
"""Highest importance a narrator's note may claim (below every core fact)."""
Outcome = Literal["created", "skipped", "superseded", "rejected", "disputed"]
REVIEW_ACTIONS: tuple[str, ...] = get_args(ReviewAction)
ACCEPTABLE: tuple[str, ...] = ("candidate", "disputed", "rejected")
"""Statuses the player may accept (make active)."""
REJECTABLE: tuple[str, ...] = ("active", "candidate", "disputed")
"""Statuses the player may reject."""
PLAYER_ACCEPTED = "accepted by the player"
PLAYER_REJECTED = "rejected by the player"
PLAYER_ARCHIVED = "archived by the player"
Source = Literal["content", "effect", "consolidation", "memory_note", "extraction"]
AUTHORITY: dict[str, int] = {"content": 3, "effect": 2, "consolidation": 1, "memory_note": 0, "extraction": 0, "": 0}
OWNED_PREFIXES: dict[str, str] = {
    "rule:": "content",
    "lore:": "content",
    "style:": "content",
    "safety:": "content",
    "thread:quest:": "effect",
    "event:quest-done:": "effect",
    "event:defeated:": "effect",
    "event:choice:": "effect",
    "event:knocked-out:": "effect",
    "relationship:player-": "effect",
}
"""Key prefixes and the least authority that may write them."""
INSTRUCTION_REASON = "reads as an instruction to the narrator"
"""Why a fact that orders the narrator about (``game.memory.guard``) is rejected, whoever proposed it."""
QUOTE_REASON = "quotes the system prompt"
"""Why a note or summary that repeats the story's persona (a leaked system prompt) is rejected."""
OWNED_TYPES: dict[str, str] = {"world_rule": "content", "style_rule": "content", "safety_rule": "content"}


class StoryBible:
    """Bible operations over the entries kept in a :class:`MemoryState`."""

    def __init__(self, state: MemoryState, pack: ContentPack) -> None:
        self.state = state
        self.pack = pack

    # ---------------------------------------------------------------- reads
    def active(self) -> list[BibleEntry]:
        return [e for e in self.state.bible if e.status == "active"]

    def by_key(self, key: str) -> BibleEntry | None:
        return next((e for e in reversed(self.state.bible) if e.canonical_key == key and e.status == "active"), None)

    def updatable_keys(self) -> list[str]:
        """The active keys an extraction is told it may update: not the rules' own records, which it may never
        write (the relay game, issue 42: "Known keys" listed item:<id> keys its own instructions forbid)."""
        return [e.canonical_key for e in self.active() if e.source != "effect"]

    def get(self, entry_id: str) -> BibleEntry | None:
        return next((e for e in self.state.bible if e.id == entry_id), None)

    # --------------------------------------------------------------- writes
    def propose(
        self,
        entry_type: EntryType,
        key: str,
        title: str,
        content: str,
        *,
        importance: int = 50,
        turn: int = 0,
        npcs: Iterable[str] = (),
        source: Source,
    ) -> tuple[BibleEntry, Outcome]:
        """Create, skip or supersede by key; returns the entry concerned and what happened."""
        content = clean(content)
        existing = self.by_key(key)
        if existing is not None and clean(existing.content).lower() == content.lower():
            return existing, "skipped"
        if source in MODEL_SOURCES:
            importance = min(importance, NOTE_MAX_IMPORTANCE)
        entry = BibleEntry(
            id=f"bible-{self.state.next_entry}",
            entry_type=entry_type,
            canonical_key=key,
            title=title,
            content=content,
            importance=max(0, min(100, importance)),
            source_turn=turn,
            npcs=sorted(set(npcs)),
            source=source,
        )
        self.state.next_entry += 1
        self.state.bible.append(entry)
        problem = self.instruction_check(entry) or self.owner_check(entry) or self.rule_check(entry)
        if problem:
            entry.status, entry.reason = "rejected", problem
            return entry, "rejected"
        if existing is not None:
            if AUTHORITY[entry.source] < AUTHORITY[existing.source]:
                entry.status = "disputed"
                entry.reason = f"{existing.id} ({existing.canonical_key}) belongs to the {existing.source}"
                return entry, "disputed"
            if existing.importance >= CORE_IMPORTANCE and entry.importance < existing.importance:
                entry.status = "disputed"
                entry.reason = f"contradicts core fact {existing.id} ({existing.canonical_key})"
                return entry, "disputed"
            existing.status, existing.ended_turn = "superseded", turn
            entry.supersedes = existing.id
            entry.pinned, existing.pinned = existing.pinned, False  # the player's pin follows the fact
            entry.status = "active"
            return entry, "superseded"
        entry.status = "active"
        return entry, "created"

    def archive(self, key: str, turn: int, reason: str = "") -> BibleEntry | None:
        entry = self.by_key(key)
        if entry is not None:
            entry.status, entry.ended_turn, entry.pinned = "archived", turn, False
            entry.reason = reason or entry.reason
        return entry

    def _fulfil_promises(self, quest_id: str, turn: int) -> None:
        """Archive the narrator-noted threads a completed quest fulfils (``threads.fulfilled_by``)."""
        quest = self.pack.quest(quest_id)
        if quest is None:
            return
        for entry in fulfilled_by(quest, self.pack, self.active()):
            entry.status, entry.ended_turn, entry.pinned = "archived", turn, False
            entry.reason = f"fulfilled by the quest {quest.title}"

    def age_threads(self, turn: int) -> list[BibleEntry]:
        """Archive narrator-noted threads older than ``THREAD_MAX_AGE_TURNS`` (not pinned ones); returns them."""
        old = stale(self.active(), turn)
        for entry in old:
            entry.status, entry.ended_turn = "archived", turn
            entry.reason = f"no longer current after {THREAD_MAX_AGE_TURNS} turns"
        return old

    def review(self, entry_id: str, action: ReviewAction, turn: int) -> list[BibleEntry]:
        """The player's review of one entry (see the module docstring); returns the entries it changed.

        The reviewed entry comes first; the entry it superseded (accept) or gave
        its key back to (reject) follows.

        Raises:
            ValueError: the review is not allowed, with a message for the player
                (unknown entry or action, an instruction to the narrator, a
                status the action does not apply to); nothing changed.
        """
        if action not in REVIEW_ACTIONS:
            raise ValueError(f"Unknown review action {action!r}: use {', '.join(REVIEW_ACTIONS)}.")
        entry = self.get(entry_id)
        if entry is None:
            raise ValueError(f"There is no Story Bible entry {entry_id!r}.")
        label = _label(entry)
        if action == "accept":
            return self._accept(entry, label, turn)
        if action == "reject":
            return self._reject(entry, label, turn)
        if action == "archive":
            _allowed(entry, label, "archived", ("active",))
            self._protect(entry, label, "archived")
            entry.status, entry.ended_turn, entry.reason, entry.pinned = "archived", turn, PLAYER_ARCHIVED, False
            return [entry]
        if action == "pin":
            _allowed(entry, label, "pinned", ("active",))
        entry.pinned = action == "pin"
        return [entry]

    def _accept(self, entry: BibleEntry, label: str, turn: int) -> list[BibleEntry]:
        if entry.status == "active":
            raise ValueError(f"{label} is already active.")
        _allowed(entry, label, "accepted", ACCEPTABLE)
        problem = self.instruction_check(entry)
        if problem is None and entry.reason in (INSTRUCTION_REASON, QUOTE_REASON):
            problem = entry.reason
        if problem is not None:
            raise ValueError(f"{label} cannot be accepted: it {problem}. Only facts of the story can be.")
        changed = [entry]
        existing = self.by_key(entry.canonical_key)
        if existing is not None:
            self._protect(existing, _label(existing), "superseded")
            existing.status, existing.ended_turn = "superseded", turn
            entry.supersedes = existing.id
            entry.pinned, existing.pinned = existing.pinned, False
            changed.append(existing)
        entry.status, entry.ended_turn, entry.reason = "active", None, PLAYER_ACCEPTED
        return changed

    def _reject(self, entry: BibleEntry, label: str, turn: int) -> list[BibleEntry]:
        _allowed(entry, label, "rejected", REJECTABLE)
        self._protect(entry, label, "rejected")
        changed = [entry]
        if entry.status == "active":
            entry.ended_turn = turn
            previous = self.get(entry.supersedes) if entry.supersedes else None
            if previous is not None and previous.status == "superseded" and self.by_key(entry.canonical_key) is entry:
                previous.status, previous.ended_turn, previous.pinned = "active", None, entry.pinned
                changed.append(previous)
        entry.status, entry.reason, entry.pinned = "rejected", PLAYER_REJECTED, False
        return changed

    @staticmethod
    def _protect(entry: BibleEntry, label: str, done: str) -> None:
        if entry.entry_type == "safety_rule" and entry.source == "content":
            raise ValueError(f"{label} is the story's safety rule; it cannot be {done}.")

    def instruction_check(self, entry: BibleEntry) -> str | None:
        """Why ``entry`` may not be a fact: it orders the narrator about or quotes the system prompt (else None)."""
        if looks_like_instruction(entry.title) or looks_like_instruction(entry.content):
            return INSTRUCTION_REASON
        if entry.source != "content" and quotes(entry.content, system_words(self.pack.story.persona)):
            return QUOTE_REASON
        return None

    @staticmethod
    def owner_check(entry: BibleEntry) -> str | None:
        """Why ``entry``'s source may not write its key or type (None when it may)."""
        authority = AUTHORITY[entry.source]
        for prefix, owner in OWNED_PREFIXES.items():
            if entry.canonical_key.startswith(prefix) and authority < AUTHORITY[owner]:
                return f"key {entry.canonical_key!r} is written only by the {owner}"
        type_owner = OWNED_TYPES.get(entry.entry_type)
        if type_owner and authority < AUTHORITY[type_owner]:
            return f"{entry.entry_type} facts are written only by the {type_owner}"
        return None

    def rule_check(self, entry: BibleEntry) -> str | None:
        """Why ``entry`` may not become active (None when it may)."""
        kind, _, ident = entry.canonical_key.partition(":")
        ident = ident.split(":")[0]
        pack = self.pack
        if kind == "character" and not (ident.startswith("player") or ident in pack.npcs):
            return f"no character {ident!r} in this story"
        if kind == "item" and ident not in pack.items:
            return f"no item {ident!r} in this story"
        if kind == "location" and ident not in pack.nodes and ident != "player":
            return f"no place {ident!r} in this story"
        if kind == "relationship":
            for party in ident.split("-"):
                if party != "player" and party not in pack.npcs:
                    return f"no character {party!r} in this story"
        unknown = [n for n in entry.npcs if n not in pack.npcs]
        if unknown:
            return f"unknown characters: {', '.join(unknown)}"
        return None

    # ----------------------------------------------------------- extraction
    def seed_from_content(self) -> None:
        """Core settings every session starts with (importance from the content's role)."""
        pack = self.pack
        for npc in pack.npcs.values():
            where = pack.nodes[npc.location].name
            self.propose(
                "character",
                f"character:{npc.id}",
                npc.name,
                f"{npc.name}, {npc.role}, found at {where}. {npc.trait}",
                importance=80,
                npcs=[npc.id],
                source="content",
            )
        for entry in pack.knowledge:
            if entry.when is not None:  # lore the state switches: recalled while it holds, never canon
                continue
            if entry.category == "hidden_rule":
                self.propose(
                    "world_rule", f"rule:{entry.id}", entry.title, entry.content, importance=90, source="content"
                )
            elif entry.category == "item":
                self.propose("item", f"lore:{entry.id}", entry.title, entry.content, importance=70, source="content")
        self.propose(
            "style_rule",
            "style:narration",
            "Narration style",
            f"Narrate {pack.story.title} in the second person, vividly and briefly, in the voice set by the persona",
            importance=95,
            source="content",
        )
        self.propose(
            "safety_rule",
            "safety:rules",
            "The rules decide",
            "Only effects the game rules accept change the world; never invent items, gold, places or outcomes",
            importance=100,
            source="content",
        )

    def from_notes(
        self, notes: Iterable[str | MemoryNote], turn: int, npcs: Iterable[str]
    ) -> list[tuple[BibleEntry, Outcome]]:
        """Facts from the narrator's ``memory_notes`` (strings or validated structured notes)."""
        out = []
        present = list(npcs)
        for note in notes:
            if isinstance(note, MemoryNote):
                out.append(self._structured_note(note, turn, present))
                continue
            text = clean(str(note))
            if not text:
                continue
            mentioned = self._npcs_in(text) or present
            player_part = text.split(":", 1)[1] if text.lower().startswith("the player said:") else None
            facts = player_facts(player_part or "") if player_part else []
            for entry_type, key, label, value, importance in facts:
                title = f"The player's {label}"
                content = PLAYER_TEMPLATES[label].format(value)
                if entry_type == "open_thread":
                    key = f"{key}:{slug(value, 4)}"
                out.append(
                    self.propose(
                        entry_type,
                        key,
                        title,
                        content,
                        importance=importance,
                        turn=turn,
                        npcs=mentioned,
                        source="memory_note",
                    )
                )
            if not facts:
                importance = 60 if player_part else 55
                key = f"said:{slug(text)}"
                out.append(
                    self.propose(
                        "event",
                        key,
                        text[:60],
                        text,
                        importance=importance,
                        turn=turn,
                        npcs=mentioned,
                        source="memory_note",
                    )
                )
        return out

    def _structured_note(self, note: MemoryNote, turn: int, npcs: list[str]) -> tuple[BibleEntry, Outcome]:
        return self.propose(
            note.entry_type,
            note.key or f"note:{slug(note.content)}",
            note.title or note.content[:60],
            note.content,
            importance=note.importance,
            turn=turn,
            npcs=note.npcs or self._npcs_in(note.content) or npcs,
            source="memory_note",
        )

    def from_extraction(
        self, facts: Iterable[Mapping[str, Any]], turn: int, npcs: Iterable[str]
    ) -> list[tuple[BibleEntry, Outcome]]:
        """Facts a model extracted from the turns just consolidated (``clean_facts`` output).

        They go through :meth:`propose` like any other source: a key the content or
        the rules own is rejected, an instruction is rejected, importance is capped.
        """
        present = list(npcs)
        out = []
        for fact in facts:
            content = str(fact.get("content", ""))
            key = str(fact.get("canonical_key", ""))
            if fact.get("entry_type") not in get_args(EntryType) or not key or not content.strip():
                continue  # an extractor that skipped clean_facts: nothing unvalidated becomes a fact
            out.append(
                self.propose(
                    fact.get("entry_type", "event"),
                    key,
                    str(fact.get("title") or content[:60]),
                    content,
                    importance=int(fact.get("importance", 50)),
                    turn=turn,
                    npcs=self._npcs_in(content) or present,
                    source="extraction",
                )
            )
        return out

    def _npcs_in(self, text: str) -> list[str]:
        return mentions(text, ((npc.id, npc.names) for npc in self.pack.npcs.values()))[0]

    def from_effects(
        self, applied: Iterable[tuple[str, str]], turn: int, place: str = ""
    ) -> list[tuple[BibleEntry, Outcome]]:
        """Facts from what the rules applied this turn (``place``: where the player ended it): ``effect_facts.py``."""
        out: list[tuple[BibleEntry, Outcome]] = []
        for effect, detail in applied:
            fact = effect_fact(self.pack, effect, detail, turn, place)
            if fact is None:
                continue
            if effect == "quest_completed":  # its open thread ends, and the promises it keeps are fulfilled
                quest_id = fact.key.removeprefix("event:quest-done:")
                self.archive(f"thread:quest:{quest_id}", turn, "quest completed")
                self._fulfil_promises(quest_id, turn)
            out.append(
                self.propose(
                    fact.entry_type,
                    fact.key,
                    fact.title,
                    fact.content,
                    importance=fact.importance,
                    turn=turn,
                    npcs=fact.npcs,
                    source="effect",
                )
            )
        return out

    def from_summary(self, people: Mapping[str, tuple[int, int, str]], turn: int) -> list[tuple[BibleEntry, Outcome]]:
        """The consolidation's facts: for each character the player was with, what happened with them.

        ``people`` maps a character to its first and last turn with the player and what happened then
        (``people.py``: spoken or given to, or named or heard where they stand; never what happened elsewhere).
        One key per character (``event:with:<npc>``), so each newer one supersedes the last and an NPC's memory
        of the player stays current.
        """
        out = []
        for npc_id, (first, last, text) in sorted(people.items()):
            if npc_id not in self.pack.npcs:
                continue
            name, span = self.pack.npcs[npc_id].name, f"turn {last}" if first == last else f"turns {first}-{last}"
            content = f"Last time with {name} ({span}): {text}"
            title = f"Last time with {name}"
            key = f"event:with:{npc_id}"
            out.append(self.propose("event", key, title, content, turn=turn, npcs=[npc_id], source="consolidation"))
        return out


def _label(entry: BibleEntry) -> str:
    """How a message to the player names an entry."""
    return f'"{entry.title or entry.canonical_key}" ({entry.id})'


def _allowed(entry: BibleEntry, label: str, done: str, statuses: Sequence[str]) -> None:
    """Raise when ``entry``'s status is not one of ``statuses`` (what may be ``done`` to it)."""
    if entry.status not in statuses:
        which = statuses[0] if len(statuses) == 1 else f"{', '.join(statuses[:-1])} or {statuses[-1]}"
        article = "an" if which[0] in "aeiou" else "a"
        raise ValueError(f"{label} is {entry.status}; only {article} {which} entry can be {done}.")
