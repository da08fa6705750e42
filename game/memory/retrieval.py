"""Recall: the memory blocks one turn's prompt receives, as of that turn.

Everything is read as of ``state.turn``: the L1 window and the L3 synopsis
from the log and the summaries up to that turn, Bible entries that were
active then, history and memories filtered by session and turn. Ranking
helpers and block budgets live in ``recall.py``; the hybrid search in
``hybrid.py``.

``retrieval_meta`` says what actually ran: ``strategy`` is the strategy of
this recall's memory search (``hybrid:<store>``, or ``bm25`` when the
embedder or the store failed and search fell back to keywords, with the
reason in ``fallback``), ``strategies`` the same for each index, and
``pending_vectors`` / ``vector_lag_turns`` how far the vector index trails
the text.

Every item carries its score's parts (``MemoryItem.parts``, see
``base.py``). Story Bible entries the player pinned
(:meth:`GameMemory.review_bible`) form the first block, ``pinned``: whole,
and never cut by the prompt budget; the other blocks leave them out.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from game.memory.base import MemoryBlock, MemoryContext, MemoryItem
from game.memory.bible import MODEL_SOURCES
from game.memory.embedders import Vectors
from game.memory.features import MemoryFeatures, SummaryIndex
from game.memory.knowledge import snippet
from game.memory.recall import (
    MEMORY_HEADER,
    ScoredMemory,
    make_block,
    rounded,
)
from game.memory.records import BibleEntry
from game.text import keywords
from game.world.conditions import npcs_at
from game.world.state import GameState

if TYPE_CHECKING:
    import threading

    from game.memory.embedders import Embedder
    from game.memory.hybrid import HybridIndex
    from game.memory.knowledge import KnowledgeBase
    from game.memory.query import QueryRewriter
    from game.memory.records import MemoryState
    from game.memory.settings import MemoryConfig
    from game.memory.stores import VectorStore
    from game.world.content import ContentPack


class RecallSource(Protocol):
    """What recall reads from memory (``manager.GameMemory``): its state, indexes and settings.

    Declared here so that recall does not import the manager that owns it (no import cycle).
    """

    pack: ContentPack | None
    config: MemoryConfig
    state: MemoryState
    query: QueryRewriter
    memories: HybridIndex
    history: HybridIndex
    knowledge: KnowledgeBase | None
    store: VectorStore | None
    embedder: Embedder | None
    bible_version: int

    @property
    def session_id(self) -> str: ...

    @property
    def lock(self) -> threading.RLock: ...

    def window(self, turn: int) -> list[dict[str, str]]: ...


WARM_TERMS = 16
"""Keyword arrays :meth:`MemoryRecall.warm` builds under one hold of an index's lock."""
MEMORY_CHARS = 240
"""Longest relevant-memory text shown in the prompt."""
PLACE_PRIOR = 3.0
"""Boost, in standard deviations of the fused score, for memories of the one place a query names.

Measured with ``bench/game_memory.py --place-prior 0``: without it two of the
twelve probes ("what did I pick up at the hunter's lodge?", "what did I find on
the Fogbound Path?") are no longer injected after 110 turns (100% -> 83%).

A character prior of the same kind was measured as doing nothing and removed:
LoCoMo recall@10 0.811 with and without it (recall@25 0.878 with, 0.887
without), and the same game probes with and without it after 110 and after
300 unrelated turns. A character a query names still leaves the query text and
joins the focus (the type/key match of the score).
"""


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
class _BibleView:
    """:meth:`MemoryRecall._bible_view`: the active entries and the blocks made of them, valid for turns
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


def _copy(block: MemoryBlock) -> MemoryBlock:
    """A block of its own (its lists copied): a kept block is handed out again next turn."""
    return replace(block, items=list(block.items), cut=list(block.cut))


class MemoryRecall:
    """Assembles recall for a memory (its state, indexes and settings: :class:`RecallSource`)."""

    def __init__(self, memory: RecallSource) -> None:
        self.memory = memory
        self._features = MemoryFeatures()
        self._summaries = SummaryIndex()
        self._bible: _BibleView | None = None
        self._sections: dict[str, tuple[list[tuple[str, int, str, str]], MemoryBlock]] = {}
        """Each Story Bible section's last block and what it was made of (see :meth:`_section`)."""

    def recall(self, action: str, state: GameState) -> MemoryContext:
        memory = self.memory
        config = memory.config
        started = time.perf_counter()
        turn = state.turn
        characters = memory.query.characters(action)
        focus = self._focus_npcs(action, state, characters)
        places = memory.query.places(characters[1])
        rewritten = places[1] or action  # what search_memories searches: the action without the names it holds
        rewrite: tuple[Vectors | None, str | None] | None = None
        if rewritten != action:  # both embedded in one batch (see HybridIndex.embeddings)
            (query_vector, _), rewrite = memory.memories.embeddings([action, rewritten])
        else:
            query_vector = memory.memories.embed_query(action)
        with memory.lock:
            view = self._bible_view(turn)
            active = view.active
            cast = self._characters(view, state, set(characters[0]))
            shown = set(view.shown) | {item.source for item in cast.items}
            blocks = [_copy(view.pinned), cast]
            window = memory.window(turn)
            synopsis = memory.state.synopsis_at(turn)
            summaries = self._summaries.sync(memory.state.summaries).count(turn)
        recent = self._recent_items(state)
        pending, lag = self._vector_lag(turn)
        strategies: dict[str, str] = {}
        fallbacks: dict[str, str] = {}
        if memory.knowledge is not None:
            found = memory.knowledge.search(action, config.knowledge_k, query_vector=query_vector)
            strategies["knowledge"] = found.strategy
            if found.fallback:
                fallbacks["knowledge"] = found.fallback
            items = [
                MemoryItem(
                    snippet(doc.text),
                    round(hit.score, 3),
                    f"kb:{doc.category}:{doc.name}",
                    {"semantic": round(hit.score, 3)},
                )
                for doc, hit in found
            ]
            blocks.append(make_block("knowledge", items))
        blocks.append(_copy(view.threads))
        shown |= view.thread_ids
        history = self._history_items(action, state, query_vector, strategies, fallbacks)
        relevant = self.search_memories(
            action,
            state,
            config.relevant_k * 2,
            focus=focus,
            exclude=shown,
            query_vector=query_vector,
            strategies=strategies,
            fallbacks=fallbacks,
            active=view.active_ids,
            characters=characters,
            places=places,
            embedded=rewrite,
        )
        claims = view.claims
        items = [
            MemoryItem(
                snippet(claims[m.id].shown() if m.id in claims else m.text, MEMORY_CHARS),
                round(m.score, 3),
                m.id,
                rounded(m.parts),
            )
            for m in relevant
        ]
        blocks.append(make_block("relevant_memories", items))
        blocks.append(make_block("history_recall", history))
        blocks.append(make_block("recent_story", recent))
        meta: dict[str, Any] = {
            "strategy": strategies.get("memories", memory.memories.strategy),
            "strategies": strategies,
            "fallback": "; ".join(f"{name}: {why}" for name, why in fallbacks.items()) or None,
            "knowledge_strategy": strategies.get("knowledge"),
            "store": memory.store.backend if memory.store is not None else None,
            "embedder": memory.embedder.model_name if memory.embedder and memory.memories.dense_ok else None,
            "session": memory.session_id,
            "turn": turn,
            "focus_npcs": sorted(focus),
            "summaries": summaries,
            "bible_active": len(active),
            "pinned": len(view.pinned.items),
            "pending_vectors": pending,
            "vector_lag_turns": lag,
            "recall_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        return MemoryContext(blocks=blocks, retrieval_meta=meta, synopsis=synopsis, window=window, header=MEMORY_HEADER)

    def warm(self, turn: int) -> None:
        """Prepare what the next recall at ``turn`` reads whatever the action: the Story Bible view, the
        summaries, the memory features and the keyword arrays of the words the last turn changed.

        The memory worker calls it after a turn is recorded (``GameMemory.record_turn``), off the turn's
        thread: the player reads and types meanwhile, so a recall finds them ready and only does what
        depends on the action. Whatever is not ready yet (the worker still busy), the recall does itself,
        as it did before: the same locks guard both.
        """
        memory = self.memory
        with memory.lock:
            self._bible_view(turn)
            self._summaries.sync(memory.state.summaries)
            memories, history = memory.memories, memory.history  # a restore may replace them meanwhile
        for index in (memories, history):
            while True:  # a few terms at a time: a recall waiting for the index's lock waits for a few only
                with index.lock:
                    if index.bm25.warm(WARM_TERMS) < WARM_TERMS:
                        break
        with memories.lock:
            self._features.sync(memories)

    def _bible_view(self, turn: int) -> _BibleView:
        """What recall shows of the Story Bible at ``turn`` (call under memory's lock), kept while it holds:
        until the Bible changes (``GameMemory.bible_version``) or ``turn`` reaches the next turn at which an
        entry starts or stops being active (a save's future entries, an older turn's superseded ones).
        Measured with ``bench/turn_overhead.py`` (1,023 active entries): 2-3 ms a turn it no longer spends."""
        memory = self.memory
        bible = memory.state.bible
        key = (memory.bible_version, id(bible), len(bible))
        view = self._bible
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
        self._bible = view = _BibleView(
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

    def _characters(self, view: _BibleView, state: GameState, named: set[str]) -> MemoryBlock:
        """The characters this turn needs: the player's own facts and the people present (required), the people
        the action names, and those the player has met (the prompt budget weighs the last two by value).

        Anyone else's entry is left to relevant_memories, which finds it when the turn is about them.
        """
        pack = self.memory.pack
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

    def _vector_lag(self, turn: int) -> tuple[int, int]:
        """Texts waiting for a vector, and how many turns old the oldest of them is."""
        memory = self.memory
        if not memory.memories.dense_ok:
            return 0, 0
        lags = [turn - t for index in (memory.memories, memory.history) for t in index.pending_turns()]
        return len(lags), max(lags, default=0)

    def search_memories(
        self,
        query: str,
        state: GameState,
        k: int,
        *,
        focus: set[str] | None = None,
        exclude: set[str] | None = None,
        query_vector: Vectors | None = None,
        strategies: dict[str, str] | None = None,
        fallbacks: dict[str, str] | None = None,
        active: Collection[str] | None = None,
        characters: tuple[list[str], str] | None = None,
        places: tuple[list[str], str] | None = None,
        embedded: tuple[Vectors | None, str | None] | None = None,
    ) -> list[ScoredMemory]:
        """Hybrid-ranked Bible entries and past turns (the 'relevant memories' path).

        ``query_vector`` is the embedding of ``query`` if the caller has it;
        it is reused when the rewrite leaves the query unchanged.

        The query is rewritten first: characters and places it names are taken
        out of the text (their names match everything they ever said or every
        turn spent there, which drowns the rest of the question). A named
        character joins the focus (a match in the score); a named place becomes
        a prior on what happened there.

        ``active`` is the ids of the Story Bible entries active at ``state.turn``, ``characters``
        ``memory.query.characters(query)``, ``places`` ``memory.query.places`` of its rewritten text and
        ``embedded`` ``memory.memories.embedding`` of the query's final rewrite, when the caller has them.
        """
        memory = self.memory
        focus = set(focus or ())
        exclude = exclude or set()
        named, rewritten = characters if characters is not None else memory.query.characters(query)
        places_named, rewritten = places if places is not None else memory.query.places(rewritten)
        focus |= set(named)
        turn = state.turn
        if active is None:
            with memory.lock:
                active = {e.id for e in memory.state.bible if active_at(e, turn)}
        entries = active
        index = memory.memories
        text = rewritten or query
        vector = query_vector if text == query and text.strip() else None  # a blank query is no meaning
        if vector is None and embedded is None:
            embedded = index.embedding(text)  # outside the lock: it may take a while
        recent_cutoff = turn - memory.config.window_messages // 2  # turns still in the L1 window are in the prompt
        where = {"session": memory.session_id, "turn": {"$lte": turn}}
        query_terms = set(keywords(query)) - {"character", "item", "event", "thread", "player"}
        # one consistent view of the index (the worker adds and replaces items meanwhile): the features are
        # brought up to date with the items, then every allowed item is scored and ranked as arrays
        with index.lock:
            items = index.items
            table = self._features.sync(index)
            ids_of = index.table.ids
            # what keep() was, item by item: the excluded ids, Bible entries not active then, turns in the window
            drop = set(exclude) | table.inactive_bible(entries, ids_of) | table.late(recent_cutoff, ids_of)
            prior: dict[str, float] = {}
            if len(places_named) == 1:  # "what did I find at the lodge?": what happened there, not what mentions it
                # a turn counts where it happened (not because its exits name the place); a fact, where it says
                prior = dict.fromkeys(table.at_place(places_named[0].lower(), ids_of), PLACE_PRIOR)
            fused = index.scores(text, where, query_vector=vector, prior=prior, drop=drop, embedded=embedded)
            if strategies is not None:
                strategies["memories"] = fused.strategy
            if fallbacks is not None and fused.fallback:
                fallbacks["memories"] = fused.fallback
            hits = fused.selected()  # the ranking below does not depend on their order
            semantic = _unit_scale(fused.score[hits])
            rows = fused.rows[hits] if fused.rows is not None else np.zeros(0, dtype=np.int64)
            if focus:  # characters present pull in what involves them, even with no word in common
                extra = table.involving(focus, rows, drop, memory.session_id, turn, index.table)
                if len(extra):
                    rows = np.concatenate([rows, extra])
                    semantic = np.concatenate([semantic, np.zeros(len(extra))])
            return table.best(
                rows, semantic, items, ids_of, turn, focus, query_terms, memory.config.recency_half_life_turns, k
            )

    def _history_items(
        self,
        action: str,
        state: GameState,
        query_vector: Any,
        strategies: dict[str, str],
        fallbacks: dict[str, str],
    ) -> list[MemoryItem]:
        memory = self.memory
        turn = state.turn
        with memory.lock:
            known = self._summaries.sync(memory.state.summaries)
            recent = known.latest(turn, memory.config.recent_summaries)
            by_id = {s.id: known.get(s.id, turn) for s in recent}
        chosen: dict[str, float] = dict.fromkeys(by_id, 1.0)
        parts: dict[str, dict[str, float]] = {i: {"recency": 1.0} for i in chosen}  # the latest, whatever the query
        where = {"session": memory.session_id, "turn": {"$lte": turn}}
        ranked = memory.history.search(action, memory.config.history_k, where, query_vector=query_vector)
        strategies["history"] = ranked.strategy
        if ranked.fallback:
            fallbacks["history"] = ranked.fallback
        for hit in ranked:
            if hit.id not in chosen:
                with memory.lock:
                    found = known.get(hit.id, turn)
                if found is not None:
                    by_id[hit.id] = found
                    chosen[hit.id] = round(hit.score, 3)
                    parts[hit.id] = {"semantic": chosen[hit.id]}
        ordered = sorted(chosen, key=lambda i: -by_id[i].turn)
        return [MemoryItem(by_id[i].labelled(), chosen[i], f"history:{i}", parts[i]) for i in ordered]

    def _recent_items(self, state: GameState) -> list[MemoryItem]:
        memory = self.memory
        with memory.lock:
            recent = memory.state.turns_upto(state.turn, memory.config.recent_turns)
        return [
            MemoryItem(
                f"Turn {e.turn} (player: {e.action}): {'; '.join(e.events) or 'no change'}",
                1.0,
                f"turn:{e.turn}",
                {"recency": 1.0},
            )
            for e in recent
        ]

    def _focus_npcs(self, action: str, state: GameState, characters: tuple[list[str], str] | None = None) -> set[str]:
        """NPCs present at the player's place or named in the action."""
        pack = self.memory.pack
        present = set(pack.nodes[state.node].npcs) if pack and state.node in pack.nodes else set()
        named = characters[0] if characters is not None else self.memory.query.characters(action)[0]
        return present | set(named)


def _unit_scale(scores: np.ndarray) -> np.ndarray:
    """:func:`unit_scale` over an array (min-max to [0, 1]; all 1.0 when they are all equal)."""
    if not len(scores):
        return scores
    low, high = float(scores.min()), float(scores.max())
    span = high - low
    return (scores - low) / span if span > 1e-9 else np.ones(len(scores))


def entry_item(entry: BibleEntry, score: float) -> MemoryItem:
    """A Story Bible entry as an item of a block that is not ranked by the query (score: its importance)."""
    return MemoryItem(entry.shown(), round(score, 3), entry.id, {"importance": round(score, 3)})
