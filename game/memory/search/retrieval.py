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

import time
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from game.language.reading import Reading
from game.memory.base import MemoryBlock, MemoryContext, MemoryItem
from game.memory.events import EventRecord
from game.memory.search.activation import LoreActivation
from game.memory.search.answers import answers
from game.memory.search.bible_view import BibleView, BibleViews, active_at, characters_block
from game.memory.search.features import MemoryFeatures, SummaryIndex
from game.memory.search.knowledge import KnowledgeDoc, snippet
from game.memory.search.lore_recall import lore_items, played
from game.memory.search.lore_scan import Choice, Verdict
from game.memory.search.question import Question, asked_characters, read_question
from game.memory.search.recall import (
    MEMORY_HEADER,
    ScoredMemory,
    make_block,
    rounded,
)
from game.memory.vectors.embedders import Vectors
from game.text import keywords
from game.world.lore_state import lore_gate
from game.world.state import GameState

if TYPE_CHECKING:
    import threading

    from game.memory.records import BibleEntry, MemoryState
    from game.memory.search.hybrid import HybridIndex
    from game.memory.search.knowledge import KnowledgeBase
    from game.memory.search.query import QueryRewriter
    from game.memory.settings import MemoryConfig
    from game.memory.vectors.embedders import Embedder
    from game.memory.vectors.stores import VectorStore
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


def _copy(block: MemoryBlock) -> MemoryBlock:
    """A block of its own (its lists copied): a kept block is handed out again next turn."""
    return replace(block, items=list(block.items), cut=list(block.cut))


class MemoryRecall:
    """Assembles recall for a memory (its state, indexes and settings: :class:`RecallSource`)."""

    def __init__(self, memory: RecallSource) -> None:
        self.memory = memory
        self._features = MemoryFeatures()
        self._summaries = SummaryIndex()
        self._bible = BibleViews()
        self._record = EventRecord()
        self._lore: LoreActivation | None = None
        self._lore_verdicts: list[Verdict] = []

    def recall(self, action: str, state: GameState, reading: Reading | None = None) -> MemoryContext:
        """The blocks of one turn's prompt; ``reading`` is the action read (``Reading.of``), when the caller has
        it. A question about the past is read into its parts (``question.py``) and what answers it
        (``answers.py``) goes first among the relevant memories."""
        memory = self.memory
        config = memory.config
        started = time.perf_counter()
        turn = state.turn
        asked = read_question(reading if reading is not None else action, memory.query)
        characters = asked_characters(asked, action, memory.query)
        focus = self._focus_npcs(action, state, characters)
        places = memory.query.places(characters[1])
        rewritten = places[1] or action  # what search_memories searches: the action without the names it holds
        rewrite: tuple[Vectors | None, str | None] | None = None
        if rewritten != action:  # both embedded in one batch (see HybridIndex.embeddings)
            (query_vector, _), rewrite = memory.memories.embeddings([action, rewritten])
        else:
            query_vector = memory.memories.embed_query(action)
        with memory.lock:
            view = self.bible_view(turn)
            active = view.active
            cast = characters_block(view, memory.pack, state, set(characters[0]))
            shown = set(view.shown) | {item.source for item in cast.items}
            blocks = [_copy(view.pinned), cast]
            window = memory.window(turn)
            synopsis = memory.state.synopsis_at(turn)
            summaries = self._summaries.sync(memory.state.summaries).count(turn)
        recent = self._recent_items(state)
        pending, lag = self._vector_lag(turn)
        strategies: dict[str, str] = {}
        fallbacks: dict[str, str] = {}
        held: list[dict[str, str]] = []
        lore = self._lore_choice(action, state)
        if memory.knowledge is not None or lore is not None:
            blocks.append(self._knowledge_block(action, state, query_vector, strategies, fallbacks, held, lore))
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
        if asked is not None and asked.about_past:
            relevant = self._answered(asked, turn, view.active, relevant)
        blocks.append(make_block("relevant_memories", _relevant_items(relevant, view.claims)))
        blocks.append(make_block("history_recall", history))
        blocks.append(make_block("recent_story", recent))
        meta: dict[str, Any] = {
            "strategy": strategies.get("memories", memory.memories.strategy),
            "strategies": strategies,
            "fallback": "; ".join(f"{name}: {why}" for name, why in fallbacks.items()) or None,
            "knowledge_strategy": strategies.get("knowledge"),
            **({"lore_held": held} if held else {}),
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
        if self._lore_verdicts:
            meta["lore"] = [v.as_json() for v in self._lore_verdicts]
        return MemoryContext(blocks=blocks, retrieval_meta=meta, synopsis=synopsis, window=window, header=MEMORY_HEADER)

    def _answered(
        self, asked: Question, turn: int, active: list[BibleEntry], relevant: list[ScoredMemory]
    ) -> list[ScoredMemory]:
        """``relevant`` with what answers ``asked`` first (each memory once)."""
        memory = self.memory
        with memory.lock:
            log = memory.state.log
            record = self._record.sync(memory.pack, log)
            found = answers(asked, memory.pack, log, active, turn=turn, record=record)
        ids = {m.id for m in found}
        return [*found, *(m for m in relevant if m.id not in ids)][: max(len(relevant), len(found))]

    def _lore_choice(self, action: str, state: GameState) -> Choice | None:
        """The imported lore the turn fires (``activation.py``); None when the story has none."""
        self._lore_verdicts = []
        if self._lore is None:
            self._lore = LoreActivation(self.memory.pack)
        if not self._lore:
            return None
        memory = self.memory
        with memory.lock:
            if self._lore.timed_rules:
                log = played(memory.state.log, state.turn)
            else:
                log = played(memory.state.turns_upto(state.turn, self._lore.turns_needed), state.turn)
        return self._lore.at(log, action, state)

    def _knowledge_block(
        self,
        action: str,
        state: GameState,
        query_vector: Any,
        strategies: dict[str, str],
        fallbacks: dict[str, str],
        held: list[dict[str, str]],
        lore: Choice | None = None,
    ) -> MemoryBlock:
        """The imported lore ``lore`` fired, then the knowledge base's hits for ``action``: the entries whose
        condition over the game's state holds (``lore_state.py``; those held back go into ``held``, with why), and
        the entries constant while theirs holds."""
        memory = self.memory
        pack = memory.pack

        def gate(doc: KnowledgeDoc) -> str | None:
            return lore_gate(doc.when, state, pack) if pack is not None else None

        found = None
        if memory.knowledge is not None:
            found = memory.knowledge.search(action, memory.config.knowledge_k, query_vector=query_vector, gate=gate)
            strategies["knowledge"] = found.strategy
            if found.fallback:
                fallbacks["knowledge"] = found.fallback
            held += [{"source": f"kb:{doc.category}:{doc.name}", "why": why} for doc, why in found.held]
        if lore is not None and self._lore is not None and pack is not None:
            items, self._lore_verdicts = lore_items(lore, self._lore, pack.id, found or [])
            return make_block("knowledge", items)
        assert memory.knowledge is not None
        chosen = {doc.id for doc, _ in found or []}
        constant = [d for d in memory.knowledge.constants() if d.id not in chosen and gate(d) is None]
        items = []
        for doc, hit in [*((d, None) for d in constant), *(found or [])]:
            score = round(hit.score, 3) if hit is not None else 1.0
            shown = snippet(doc.text)
            left_out = doc.text[len(shown) - 1 :].strip() if shown != doc.text else ""
            parts = {"semantic": score} if hit is not None else {"state": score}  # constant while its state holds
            items.append(MemoryItem(shown, score, f"kb:{doc.category}:{doc.name}", parts, left_out=left_out))
        return make_block("knowledge", items)

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
            self.bible_view(turn)
            self._summaries.sync(memory.state.summaries)
            memories, history = memory.memories, memory.history  # a restore may replace them meanwhile
        for index in (memories, history):
            while True:  # a few terms at a time: a recall waiting for the index's lock waits for a few only
                with index.lock:
                    if index.bm25.warm(WARM_TERMS) < WARM_TERMS:
                        break
        with memories.lock:
            self._features.sync(memories)

    def bible_view(self, turn: int) -> BibleView:
        """What recall shows of the Story Bible at ``turn`` (call under memory's lock): ``BibleViews.at``."""
        return self._bible.at(self.memory.state.bible, self.memory.bible_version, turn)

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
    """Min-max scale fused scores to [0, 1] (all 1.0 when they are all equal), to weigh them against importance
    and recency."""
    if not len(scores):
        return scores
    low, high = float(scores.min()), float(scores.max())
    span = high - low
    return (scores - low) / span if span > 1e-9 else np.ones(len(scores))


def _relevant_items(relevant: list[ScoredMemory], claims: Mapping[str, BibleEntry]) -> list[MemoryItem]:
    """The relevant memories as the prompt shows them: what was said in play as a quoted claim, and the best
    answer to a question about the past required, never cut (issue 42): it is the turn's point."""
    texts = [claims[m.id].shown() if m.id in claims else m.text for m in relevant]
    return [
        MemoryItem(
            snippet(text, MEMORY_CHARS), round(m.score, 3), m.id, rounded(m.parts), required=n == 0 and _answer(m)
        )
        for n, (text, m) in enumerate(zip(texts, relevant, strict=True))
    ]


def _answer(memory: ScoredMemory) -> bool:
    """Whether ``memory`` answers the question asked (``answers.py`` found it), rather than the search."""
    return "question" in memory.parts
