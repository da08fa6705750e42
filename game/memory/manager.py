"""GameMemory: the three conversation layers, long-term memory and recall.

- L1 working window: the last ``window_messages`` messages (each cut to 200
  characters); the system prompt is not part of it and is always sent.
- L2 full log: every turn, append-only, also indexed as a searchable memory.
- L3 synopsis: rewritten at each consolidation, sent after the persona.
- Every ``summary_interval_turns`` turns a background consolidation summarises
  the turns since the last one (stateless narrator call, at most ~60 words),
  stores ``[Turn N] ...`` in the history collection and the memory state,
  rewrites the synopsis and extracts a Story Bible fact. A failed call is
  retried (3 attempts); if all fail, the turns stay unconsolidated and the next
  consolidation covers them too, so nothing is lost. A failed embedding leaves
  the text stored and searchable by keyword, with its vector pending.

Every history and Bible query is filtered by session id and by turn (never
after the current one), so one save's memories never reach another's prompt.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from game.memory.base import MemoryBlock, MemoryContext, MemoryItem, TurnRecord, check_window
from game.memory.bible import StoryBible
from game.memory.embedders import Embedder, Vectors
from game.memory.hybrid import HybridIndex, IndexItem
from game.memory.keyword import keywords
from game.memory.knowledge import KnowledgeBase, snippet
from game.memory.query import QueryRewriter
from game.memory.recall import (
    MEMORY_HEADER,
    Budgets,
    ScoredMemory,
    distinct,
    hybrid_score,
    make_block,
    recency,
    unit_scale,
)
from game.memory.records import BibleEntry, Episode, MemoryState, Summary
from game.memory.stores import VectorStore
from game.world.content import ContentPack
from game.world.state import GameState

log = logging.getLogger("storyecho.memory")

MESSAGE_CHARS = 200
CONTEXT_TURNS = 2
"""Turns on each side that give a turn its context (for embedding and keywords)."""
QUIET_EFFECTS = frozenset({"move_to", "rest", "achievement"})
"""Effects that do not make a turn worth remembering by themselves."""
MEMORY_CHARS = 240
"""Longest relevant-memory text shown in the prompt."""
ENTITY_PRIOR = 3.0
"""Boost, in standard deviations of the fused score, for memories of the one character a query names."""
T = TypeVar("T")


class Summarizer(Protocol):
    def summarize(self, text: str, max_words: int = 60) -> str: ...


@dataclass
class MemoryConfig:
    """Memory settings (see README, Configuration)."""

    window_messages: int = 10
    summary_interval_turns: int = 5
    recency_half_life_turns: float = 50.0
    summary_words: int = 60
    synopsis_words: int = 80
    knowledge_k: int = 3
    relevant_k: int = 6
    history_k: int = 3
    recent_summaries: int = 2
    recent_turns: int = 3
    max_attempts: int = 3
    retry_delay_s: float = 0.2
    budgets: Budgets = field(default_factory=Budgets)

    def __post_init__(self) -> None:
        check_window(self.window_messages, self.summary_interval_turns)


class GameMemory:
    """Memory for one play session of one story.

    Args:
        pack: the story (for the knowledge base and Bible rule checks).
        summarizer: the narrator's stateless summary call.
        store: vector store, or None (keyword-only).
        embedder: embedder, or None (keyword-only).
        knowledge: a prepared knowledge base to share; built on ``prepare`` if None.
        background: run consolidation and embeddings in a worker thread.
    """

    def __init__(
        self,
        pack: ContentPack | None,
        summarizer: Summarizer,
        *,
        store: VectorStore | None = None,
        embedder: Embedder | None = None,
        config: MemoryConfig | None = None,
        knowledge: KnowledgeBase | None = None,
        state: MemoryState | None = None,
        background: bool = True,
    ) -> None:
        self.pack = pack
        self.summarizer = summarizer
        self.store = store
        self.embedder = embedder
        self.config = config or MemoryConfig()
        self.state = state or MemoryState(session_id=uuid.uuid4().hex[:12])
        self.bible = StoryBible(self.state, pack) if pack else None
        self.knowledge = knowledge
        self.memories = HybridIndex("memories", store, embedder)
        self.history = HybridIndex("history", store, embedder)
        self._lock = threading.RLock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory") if background else None
        self._futures: list[Future[Any]] = []
        self._prepared = False
        self.query = QueryRewriter(pack)
        self.consolidations = 0
        self.failures: list[str] = []

    @property
    def session_id(self) -> str:
        return self.state.session_id

    # ------------------------------------------------------------ lifecycle
    def prepare(self) -> None:
        """Seed the Bible, index the knowledge base and re-index saved memories."""
        if self._prepared:
            return
        self._prepared = True
        if self.pack is not None and self.knowledge is None:
            self.knowledge = KnowledgeBase(self.pack, self.store, self.embedder)
        if self.knowledge is not None and self.knowledge.stats is None:
            self.knowledge.build()
        if self.bible is not None and not self.state.bible:
            self.bible.seed_from_content()
        self._reindex()

    def _reindex(self) -> None:
        """Index everything the state holds (after a load): text first, vectors as available."""
        items = [self._episode_item(n) for n in range(len(self.state.log))]
        items += [self._entry_item(b) for b in self.state.bible if b.status == "active"]
        self.memories.add(items, embed=False)
        self.history.add((self._summary_item(s) for s in self.state.summaries), embed=False)
        self._submit(self._embed_all)

    def flush(self, timeout: float | None = 60.0) -> None:
        """Wait for background consolidation and embedding to finish."""
        with self._lock:
            futures = list(self._futures)
        wait(futures, timeout=timeout)
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()]

    def close(self) -> None:
        self.flush()
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def _submit(self, job: Callable[[], object]) -> None:
        if self._executor is None:
            job()
            return
        future = self._executor.submit(_logged(job))
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + [future]

    # --------------------------------------------------------------- record
    def record_turn(self, record: TurnRecord, state: GameState) -> None:
        """Append the turn to L2 and L1, extract facts, and consolidate every N turns."""
        self.prepare()
        place = self.pack.nodes[record.node].name if self.pack and record.node in self.pack.nodes else record.node
        episode = Episode(
            turn=record.turn,
            action=record.action,
            narration=record.narration,
            node=place,
            npcs=self._involved(record),
            events=record.events,
            when=state.clock_text(),
            importance=60 if record.notes else 50 if any(e not in QUIET_EFFECTS for e, _ in record.applied) else 20,
        )
        with self._lock:
            self._append_episode(episode)
            self.state.window.append({"role": "user", "content": record.action[:MESSAGE_CHARS]})
            self.state.window.append({"role": "assistant", "content": record.narration[:MESSAGE_CHARS]})
            del self.state.window[: max(0, len(self.state.window) - self.config.window_messages)]
            if self.bible is not None:
                results = self.bible.from_notes(record.notes, record.turn, episode.npcs)
                results += self.bible.from_effects(record.applied, record.turn, place)
                self._index_bible_changes([entry for entry, _ in results])
            due = record.turn % self.config.summary_interval_turns == 0
        self._submit(self._embed_all)
        if due:
            self._submit(lambda: self.consolidate(record.turn))

    def _involved(self, record: TurnRecord) -> list[str]:
        """Characters the turn was about: spoken to, given to, or named (merely present does not count)."""
        involved = set(self.query.characters(record.action)[0])
        for effect, detail in record.applied:
            if effect == "talk_to":
                involved.add(detail)
            elif effect == "give_item":
                involved.add(detail.partition("->")[2])
            elif effect == "affinity_threshold":
                involved.add(detail.partition(":")[0])
        return sorted(involved)

    def remember(
        self,
        text: str,
        turn: int,
        *,
        npcs: Iterable[str] = (),
        importance: int = 40,
        segment: int = 0,
        when: str = "",
    ) -> str:
        """Store one free-standing memory (e.g. a line of a conversation loaded into memory).

        Memories of the same ``segment`` that follow each other give each other
        context, as played turns do.
        """
        with self._lock:
            key = f"mem-{len(self.state.log) + 1}"
            episode = Episode(
                turn=turn,
                action="",
                narration=text,
                node="",
                npcs=list(npcs),
                segment=segment,
                key=key,
                when=when,
                importance=importance,
            )
            self._append_episode(episode)
        return key

    def register_entity(self, entity_id: str, names: Iterable[str]) -> None:
        """Names by which queries may mention an entity (NPCs are registered from the pack)."""
        self.query.register(entity_id, names)

    def _append_episode(self, episode: Episode) -> None:
        """Log an episode and (re)index it and the neighbours whose context it changes."""
        self.state.log.append(episode)
        last = len(self.state.log) - 1
        self.memories.add((self._episode_item(n) for n in range(max(0, last - CONTEXT_TURNS), last + 1)), embed=False)

    def _episode_item(self, position: int) -> IndexItem:
        log_ = self.state.log
        episode = log_[position]
        window = [
            log_[n]
            for n in range(max(0, position - CONTEXT_TURNS), min(len(log_), position + CONTEXT_TURNS + 1))
            if log_[n].segment == episode.segment
        ]
        context = " ".join(e.text() for e in window if e is not episode)
        return IndexItem(
            episode.id,
            episode.text(),
            self._episode_meta(episode),
            context=context,
            keyword_text=" ".join(e.text() for e in window),
        )

    def _entry_item(self, entry: BibleEntry) -> IndexItem:
        return IndexItem(entry.id, _entry_text(entry), self._entry_meta(entry))

    def _summary_item(self, summary: Summary) -> IndexItem:
        return IndexItem(summary.id, summary.labelled(), self._summary_meta(summary))

    def _index_bible_changes(self, entries: list[BibleEntry]) -> None:
        drop = []
        for entry in entries:
            if entry.status == "active":
                self.memories.add([self._entry_item(entry)], embed=False)
            if entry.supersedes:
                drop.append(entry.supersedes)
        for entry in self.state.bible:
            if entry.status in ("archived", "superseded") and entry.id in self.memories.items:
                drop.append(entry.id)
        if drop:
            self.memories.remove(sorted(set(drop)))

    def embed_pending(self) -> int:
        """Embed everything still pending now (e.g. after bulk ``remember``); returns what is left."""
        self._embed_all()
        return len(self.memories.pending | self.history.pending) if self.memories.dense_ok else 0

    def _embed_all(self) -> None:
        for index in (self.memories, self.history):
            left = index.embed_pending()
            if left:
                log.info("%s: %d vectors pending", index.collection, left)
        with self._lock:
            self.state.pending_vectors = sorted(self.memories.pending | self.history.pending)
            if self.memories.dense_ok and self.embedder is not None:
                for entry in self.state.bible:
                    if entry.id in self.memories.items and entry.id not in self.memories.pending:
                        entry.embedding_model = self.embedder.model_name
                        entry.embedding_version = self.embedder.model_version

    # ---------------------------------------------------------- consolidate
    def consolidate(self, upto_turn: int) -> Summary | None:
        """Summarise the turns since the last consolidation (runs in the worker)."""
        with self._lock:
            first = self.state.last_consolidated_turn + 1
            episodes = [e for e in self.state.log if first <= e.turn <= upto_turn and e.action]
            if not episodes:
                return None
            text = "\n".join(f"{e.action}. {e.narration}" for e in episodes)
        summary_text = self._retry(lambda: self.summarizer.summarize(text, self.config.summary_words))
        if not summary_text:
            self.failures.append(f"summary of turns {first}-{upto_turn}")
            log.warning("summary of turns %d-%d failed; they stay queued for the next consolidation", first, upto_turn)
            return None
        npcs = sorted({n for e in episodes for n in e.npcs})
        summary = Summary(first_turn=first, turn=upto_turn, text=summary_text, node=episodes[-1].node, npcs=npcs)
        with self._lock:
            self.state.summaries.append(summary)
            self.state.last_consolidated_turn = upto_turn
            previous = self.state.synopsis
        self.history.add([self._summary_item(summary)], embed=False)
        synopsis = self._retry(
            lambda: self.summarizer.summarize(f"{previous} {summary_text}".strip(), self.config.synopsis_words)
        )
        with self._lock:
            if synopsis:
                self.state.synopsis = synopsis
            if self.bible is not None:
                results = self.bible.from_summary(summary_text, first, upto_turn, npcs)
                self._index_bible_changes([entry for entry, _ in results])
            self.consolidations += 1
        self._embed_all()
        return summary

    def _retry(self, call: Callable[[], T]) -> T | None:
        for attempt in range(1, self.config.max_attempts + 1):
            try:
                return call()
            except Exception as exc:  # noqa: BLE001 - any failure of the narrator call is retried
                log.warning("memory call failed (attempt %d/%d): %s", attempt, self.config.max_attempts, exc)
                if attempt < self.config.max_attempts:
                    time.sleep(self.config.retry_delay_s * attempt)
        return None

    # --------------------------------------------------------------- recall
    def recall(self, action: str, state: GameState) -> MemoryContext:
        """Memory blocks for this action, stable to dynamic, each within its budget."""
        self.prepare()
        started = time.perf_counter()
        budgets = self.config.budgets
        focus = self._focus_npcs(action, state)
        query_vector = self.memories.embed_query(action)
        with self._lock:
            active = [e for e in self.state.bible if e.status == "active" and e.source_turn <= state.turn]
            blocks, shown = self._fixed_blocks(active, focus)
            window = list(self.state.window)
            synopsis = self.state.synopsis
        if self.knowledge is not None:
            hits = self.knowledge.search(action, self.config.knowledge_k, query_vector=query_vector)
            items = [
                MemoryItem(snippet(doc.text), round(hit.score, 3), f"kb:{doc.category}:{doc.name}") for doc, hit in hits
            ]
            blocks.append(make_block("knowledge", items, budgets.knowledge))
        threads = sorted(
            (e for e in active if e.entry_type == "open_thread" and e.importance >= 30),
            key=lambda e: (-e.importance, -e.source_turn),
        )
        blocks.append(
            make_block("open_threads", [_entry_item(e, e.importance / 100) for e in threads], budgets.open_threads)
        )
        shown |= {e.id for e in threads}
        history = self._history_items(action, state, query_vector)
        relevant = self.search_memories(
            action, state, self.config.relevant_k * 2, focus=focus, exclude=shown, query_vector=query_vector
        )
        items = [MemoryItem(snippet(m.text, MEMORY_CHARS), round(m.score, 3), m.id) for m in relevant]
        blocks.append(make_block("relevant_memories", items, budgets.relevant_memories))
        blocks.append(make_block("history_recall", history, budgets.history_recall))
        blocks.append(make_block("recent_story", self._recent_items(state), budgets.recent_story))
        meta = {
            "strategy": self.memories.strategy,
            "knowledge_strategy": self.knowledge.index.strategy if self.knowledge else None,
            "store": self.store.backend if self.store is not None else None,
            "embedder": getattr(self.embedder, "model_name", None) if self.memories.dense_ok else None,
            "session": self.session_id,
            "turn": state.turn,
            "focus_npcs": sorted(focus),
            "summaries": len(self.state.summaries),
            "bible_active": len(active),
            "pending_vectors": len(self.memories.pending | self.history.pending) if self.memories.dense_ok else 0,
            "recall_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        return MemoryContext(blocks=blocks, retrieval_meta=meta, synopsis=synopsis, window=window, header=MEMORY_HEADER)

    def _fixed_blocks(self, active: list[BibleEntry], focus: set[str]) -> tuple[list[MemoryBlock], set[str]]:
        budgets = self.config.budgets

        def rank(entry: BibleEntry) -> tuple[int, int, int]:
            return (
                0 if set(entry.npcs) & focus or entry.canonical_key.startswith("character:player") else 1,
                -entry.importance,
                -entry.source_turn,
            )

        characters = sorted((e for e in active if e.entry_type == "character"), key=rank)
        rules = sorted((e for e in active if e.entry_type in ("world_rule", "item") and e.importance >= 70), key=rank)
        style = sorted((e for e in active if e.entry_type in ("style_rule", "safety_rule")), key=rank)
        blocks = [
            make_block("bible_core", [_entry_item(e, e.importance / 100) for e in characters], budgets.bible_core),
            make_block("bible_rules", [_entry_item(e, e.importance / 100) for e in rules], budgets.bible_rules),
            make_block("bible_style", [_entry_item(e, e.importance / 100) for e in style], budgets.bible_style),
        ]
        shown = {item.source for block in blocks for item in block.items}
        return blocks, shown

    def search_memories(
        self,
        query: str,
        state: GameState,
        k: int,
        *,
        focus: set[str] | None = None,
        exclude: set[str] | None = None,
        query_vector: Vectors | None = None,
    ) -> list[ScoredMemory]:
        """Hybrid-ranked Bible entries and past turns (the 'relevant memories' path).

        ``query_vector`` is the embedding of ``query`` if the caller has it;
        it is reused when the rewrite leaves the query unchanged.

        The query is rewritten first: characters it names are taken out of the
        text (their names match everything they ever said, which drowns the
        rest of the question) and become a prior instead, boosting the memories
        that involve the one character named.
        """
        focus = set(focus or ())
        exclude = exclude or set()
        named, rewritten = self.query.characters(query)
        places, rewritten = self.query.places(rewritten)
        focus |= set(named)
        with self._lock:
            entries = {e.id for e in self.state.bible if e.status == "active"}
            items = dict(self.memories.items)
        recent_cutoff = state.turn - self.config.window_messages // 2  # turns still in the L1 window are in the prompt

        def keep(doc_id: str) -> bool:
            if doc_id in exclude:
                return False
            if doc_id.startswith("bible-"):
                return doc_id in entries
            meta = items[doc_id].metadata if doc_id in items else {}
            return not meta.get("game_turn") or int(meta.get("turn", 0)) <= recent_cutoff

        def involves(doc_id: str, npcs: set[str]) -> bool:
            return bool(set(str(items[doc_id].metadata.get("npcs", "")).split(",")) & npcs)

        prior: dict[str, float] = {}
        if len(named) == 1:
            prior = {i: ENTITY_PRIOR for i in items if involves(i, set(named))}
        if len(places) == 1:  # "what did I find at the lodge?": what happened there, not what mentions lodges
            place = places[0].lower()
            for doc_id, item in items.items():
                if str(item.metadata.get("node", "")).lower() == place or place in item.text.lower():
                    prior[doc_id] = prior.get(doc_id, 0.0) + ENTITY_PRIOR
        where = {"session": self.session_id, "turn": {"$lte": state.turn}}
        vector = query_vector if rewritten == query else None
        hits = self.memories.search(rewritten or query, None, where, keep, query_vector=vector, prior=prior)
        semantic = unit_scale({h.id: h.score for h in hits})
        for doc_id in items:  # characters present pull in what involves them, even with no word in common
            if doc_id not in semantic and focus and involves(doc_id, focus) and keep(doc_id):
                meta = items[doc_id].metadata
                if meta.get("session") == self.session_id and int(meta.get("turn", 0)) <= state.turn:
                    semantic[doc_id] = 0.0
        query_terms = set(keywords(query)) - {"character", "item", "event", "thread", "player"}
        scored = []
        for doc_id, sem in semantic.items():
            meta = items[doc_id].metadata
            key_terms = set(keywords(str(meta.get("key", "")).replace(":", " ").replace("-", " ")))
            match = involves(doc_id, focus) or bool(key_terms & query_terms)
            score = hybrid_score(
                sem,
                int(meta.get("importance", 40)),
                recency(state.turn, int(meta.get("turn", 0)), self.config.recency_half_life_turns),
                match,
                meta.get("entry_type") == "open_thread",
            )
            turn = int(meta.get("turn", 0))
            scored.append(ScoredMemory(doc_id, items[doc_id].text, score, sem, turn, str(meta.get("kind"))))
        scored.sort(key=lambda m: (-m.score, -m.turn, m.id))
        return distinct(scored, k)

    def _history_items(self, action: str, state: GameState, query_vector: Any) -> list[MemoryItem]:
        with self._lock:
            summaries = [s for s in self.state.summaries if s.turn <= state.turn]
        by_id = {s.id: s for s in summaries}
        chosen: dict[str, float] = {s.id: 1.0 for s in summaries[-self.config.recent_summaries :]}
        where = {"session": self.session_id, "turn": {"$lte": state.turn}}
        for hit in self.history.search(action, self.config.history_k, where, query_vector=query_vector):
            if hit.id in by_id:
                chosen.setdefault(hit.id, round(hit.score, 3))
        ordered = sorted(chosen, key=lambda i: -by_id[i].turn)
        return [MemoryItem(by_id[i].labelled(), chosen[i], f"history:{i}") for i in ordered]

    def _recent_items(self, state: GameState) -> list[MemoryItem]:
        with self._lock:
            recent = [e for e in self.state.log if e.action and e.turn <= state.turn][-self.config.recent_turns :]
        return [
            MemoryItem(f"Turn {e.turn} ({e.action}): {'; '.join(e.events) or 'no change'}", 1.0, f"turn:{e.turn}")
            for e in recent
        ]

    def _focus_npcs(self, action: str, state: GameState) -> set[str]:
        """NPCs present at the player's place or named in the action."""
        present = set(self.pack.nodes[state.node].npcs) if self.pack and state.node in self.pack.nodes else set()
        return present | set(self.query.characters(action)[0])

    # ------------------------------------------------------------- metadata
    def _episode_meta(self, episode: Episode) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "turn": episode.turn,
            "kind": "turn" if episode.action else "note",
            "game_turn": bool(episode.action),
            "node": episode.node,
            "when": episode.when,
            "npcs": ",".join(episode.npcs),
            "importance": episode.importance,
        }

    def _entry_meta(self, entry: BibleEntry) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "turn": entry.source_turn,
            "kind": "bible",
            "entry_type": entry.entry_type,
            "key": entry.canonical_key,
            "npcs": ",".join(entry.npcs),
            "importance": entry.importance,
        }

    def _summary_meta(self, summary: Summary) -> dict[str, Any]:
        return {"session": self.session_id, "turn": summary.turn, "node": summary.node, "npcs": ",".join(summary.npcs)}


def _entry_text(entry: BibleEntry) -> str:
    if not entry.title or entry.title in entry.content or entry.content.startswith("The player"):
        return entry.content
    return f"{entry.title}: {entry.content}"


def _entry_item(entry: BibleEntry, score: float) -> MemoryItem:
    return MemoryItem(_entry_text(entry), round(score, 3), entry.id)


def _logged(job: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        try:
            return job()
        except Exception:
            log.exception("memory background job failed")
            return None

    return run
