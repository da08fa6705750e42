"""GameMemory: the three conversation layers, long-term memory, consolidation.

- L1 working window: the last ``window_messages`` messages (each cut to 200
  characters), read from the L2 log as of the turn being played; the system
  prompt is not part of it and is always sent.
- L2 full log: every turn, append-only, also indexed as a searchable memory.
- L3 synopsis: rewritten at each consolidation, sent after the persona.
- Every ``summary_interval_turns`` turns a background consolidation summarises
  the turns since the last one (stateless narrator call, at most ~60 words),
  stores ``[Turn N] ...`` in the history collection and the memory state,
  rewrites the synopsis and extracts Story Bible facts. A failed call is
  retried (3 attempts); if all fail, the turns stay unconsolidated and the next
  consolidation covers them too, so nothing is lost. A failed embedding leaves
  the text stored and searchable by keyword, with its vector pending.

Invariants (each has a test):

- **A turn is atomic.** :meth:`record_turn` changes the memory state entirely
  or not at all: if anything fails half-way, what it appended is taken back
  and the error reaches the engine, which then does not commit the turn.
- **Consolidation keeps up.** The summary of turns N-4..N exists, in the state
  and in the store, before turn N+5 is recalled, whatever the play speed:
  consolidation runs in the background while the next turns are played and
  recall waits for it at the interval (backpressure) if it has not finished.
  Vectors lag by a bounded number of turns: a played turn is embedded once,
  when the turns that give it context exist (``CONTEXT_TURNS`` later), not
  re-embedded every time a neighbour arrives; queued embedding jobs coalesce
  into one batch.
- **Memory belongs to one session and one moment.** Vector ids carry the
  session id (``hybrid.py``), every query is filtered by session and turn, and
  the window, synopsis and Bible are read as of the turn being recalled.

Recall itself (blocks, ranking) lives in ``retrieval.py``.

The player reviews the Story Bible through :meth:`GameMemory.bible_entries`
and :meth:`GameMemory.review_bible` (accept, reject, pin, unpin, archive; the
rules are in ``bible.py``), under the same lock as the background worker; a
review is re-indexed like any other Bible change and saved with the memory
state.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import orjson

from game.memory.base import MemoryContext, TurnRecord
from game.memory.bible import Outcome, ReviewAction, StoryBible
from game.memory.consolidation import FactExtractor, Summarizer, ask, gather, make_summary
from game.memory.embedders import Embedder, Vectors
from game.memory.foreground import FOREGROUND
from game.memory.guard import system_words
from game.memory.hybrid import HybridIndex
from game.memory.indexing import CONTEXT_TURNS, entry_item, episode_item, latest_episode_items, summary_item
from game.memory.knowledge import KnowledgeBase
from game.memory.query import QueryRewriter
from game.memory.recall import ScoredMemory
from game.memory.records import BibleEntry, Episode, MemoryState, Summary, model_fields, to_json
from game.memory.retrieval import MemoryRecall
from game.memory.settings import MemoryConfig
from game.memory.stores import VectorStore
from game.text import clip
from game.world.conditions import npcs_at
from game.world.content import ContentPack
from game.world.state import GameState

log = logging.getLogger("storyecho.memory")

MESSAGE_CHARS = 200
QUIET_EFFECTS = frozenset({"move_to", "rest", "achievement"})
"""Effects that do not make a turn worth remembering by themselves."""
Progress = Callable[[str, int, int], None]
"""A loading-progress callback: ``progress(label, done, total)``."""
RESTORE_LABEL = "Restoring memories"
EMBED_BATCH = 32
"""Texts embedded per batch when :meth:`GameMemory.prepare` reports progress."""
FREEZE_FROM = 2000
"""A restored log this long has its objects frozen for the garbage collector (``gc.freeze``): the ~180,000
objects of a 10,000-turn game made a full collection take ~0.5 s in the middle of a turn, once in ~25 turns
(``bench/turn_overhead.py``); frozen, a collection scans only what was made since."""


class GameMemory:
    """Memory for one play session of one story.

    Args:
        pack: the story (for the knowledge base and Bible rule checks).
        summarizer: the narrator's stateless summary call.
        store: vector store, or None (keyword-only).
        embedder: embedder, or None (keyword-only).
        knowledge: a prepared knowledge base to share; built on ``prepare`` if None.
        state: a saved memory state to resume (see also :meth:`restore`).
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
        self.knowledge = knowledge
        self.query = QueryRewriter(pack)
        self._lock = threading.RLock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory") if background else None
        self._futures: list[Future[Any]] = []
        self._consolidating: dict[int, Future[Any]] = {}
        self._restoring: Future[Any] | None = None
        self._later: _LaterExport | None = None
        """The export :meth:`export_later` promised, until taken."""
        self._log_json: list[tuple[Episode, orjson.Fragment]] = []
        """Each log episode as saved JSON (episodes never change once logged)."""
        self._embed_queued = False
        self._prepared = False
        self.bible_version = 0
        """Changes with every change to the Story Bible (recall keeps what it derives from it until then)."""
        self._warm_turn: int | None = None
        """The turn of the queued warm-up of recall (see :meth:`_schedule_warm`), None when none is queued."""
        self.consolidations = 0
        self.failures: list[str] = []
        self.generation = 0
        """Which memory state the memory holds: each :meth:`restore` starts a new one, and a consolidation started
        for an older one discards its result (a save loaded while a slow model was summarising)."""
        self._use(state or MemoryState(session_id=uuid.uuid4().hex[:12]))
        self._recall = MemoryRecall(self)

    def _use(self, state: MemoryState) -> None:
        self.generation += 1
        self.bible_version += 1
        self.state = state
        self.bible = StoryBible(state, self.pack) if self.pack else None
        self.memories = HybridIndex("memories", self.store, self.embedder, namespace=state.session_id)
        self.history = HybridIndex("history", self.store, self.embedder, namespace=state.session_id)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def lock(self) -> threading.RLock:
        """Guards the memory state against the background worker (reentrant)."""
        return self._lock

    # ------------------------------------------------------------ lifecycle
    def prepare(self, progress: Progress | None = None) -> None:
        """Seed the Bible, index the knowledge base and re-index saved memories.

        Args:
            progress: called as ``progress(label, done, total)`` while indexing, in
                the calling thread: ``("Indexing lore", done, total)`` over the
                knowledge documents (at the start, after each embedding batch, and
                at the end), then ``("Restoring memories", done, total)`` over
                the memories the vector store lacks, if there are any to embed.
                With a callback, that embedding happens here, before ``prepare``
                returns; without one, in the background worker (the first recall
                waits for it). Nothing is reported when memory was prepared already.
        """
        if self._prepared:
            return
        self._prepared = True
        if self.pack is not None and self.knowledge is None:
            self.knowledge = KnowledgeBase(self.pack, self.store, self.embedder)
        if self.knowledge is not None and self.knowledge.stats is None:
            self.knowledge.build(progress=progress)
        if self.bible is not None and not self.state.bible:
            self.bible.seed_from_content()
            self.bible_version += 1
        self._reindex(progress)
        self._resume_consolidation()

    def restore(self, state: MemoryState, progress: Progress | None = None) -> None:
        """Continue from a saved memory state (a loaded save).

        A load never waits for the current state's background work: a consolidation still asking a slow model
        keeps running on its own, its result discarded (:attr:`generation`), and the loaded state's work goes
        to a new worker. The indexes are rebuilt from ``state``; vectors the store already holds for an
        unchanged text are reused, so only what is missing is embedded. Nothing recorded after the save is
        recalled: it is not in ``state``.
        """
        self._export_first()
        self._flush_store()
        gc.unfreeze()  # what an earlier restore froze (the state replaced here among it) may be collected again
        with self._lock:
            self._consolidating.clear()
            self._use(state)
            self._futures = []
            self._embed_queued = False
            self._warm_turn = None
            if self._executor is not None:  # the old worker finishes what it is doing alone, and is let go
                old, self._executor = self._executor, ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory")
                old.shutdown(wait=False, cancel_futures=True)
        self._prepared = False
        self.prepare(progress)
        if len(state.log) >= FREEZE_FROM:
            gc.collect()  # what is garbage now is freed first, not frozen with the rest
            gc.freeze()

    def _reindex(self, progress: Progress | None = None) -> None:
        """Index everything the state holds: text at once, vectors from the store or embedded later.

        With ``progress``, what the store lacks is embedded now, in batches, reporting each.
        """
        with self._lock:
            session, log_ = self.session_id, self.state.log
            items = [episode_item(log_, n, session) for n in range(len(log_))]
            items += [entry_item(b, session) for b in self.state.bible if b.status == "active"]
            summaries = [summary_item(s, session) for s in self.state.summaries]
        self.memories.add(items, embed=False)
        self.history.add(summaries, embed=False)
        self.memories.adopt_stored()
        self.history.adopt_stored()
        if not (self.memories.pending_ids() or self.history.pending_ids()):
            return
        # what the store lacks (a new game's seeded Bible, a save whose vectors were lost with a damaged
        # index) is embedded in full before the first recall, which waits for it: recall after a rebuild
        # is the recall the intact index gave
        if progress is not None and self.memories.dense_ok:
            self._embed_reporting(RESTORE_LABEL, progress)
        else:
            future = self._submit(lambda: self._embed(force=True))
            if future is not None:
                with self._lock:
                    self._restoring = future

    def _resume_consolidation(self) -> None:
        """Queue the consolidation a save was made before (an autosave does not wait for it)."""
        with self._lock:
            last = max((e.turn for e in self.state.log if e.action), default=0)
            due = last - last % self.config.summary_interval_turns
            if due <= self.state.last_consolidated_turn or due in self._consolidating:
                return
        future = self._submit(lambda: self.consolidate(due))
        if future is not None:
            with self._lock:
                self._consolidating[due] = future

    def wait_for_consolidation(self, timeout: float | None = 60.0) -> None:
        """Let every consolidation already started finish (a full save waits for them)."""
        with self._lock:
            running = list(self._consolidating.values())
        with FOREGROUND.waiting():
            wait(running, timeout=timeout)

    def export_state(self, *, complete: bool = True) -> dict[str, Any]:
        """The memory state as JSON-ready data, for a save.

        Args:
            complete: first finish consolidation and embed everything pending,
                so the save holds the summary that was due and loading it
                embeds nothing. Without it (an autosave), a consolidation
                still running is left queued: the save records the turns it
                covers as not consolidated yet, and loading queues it again.
        """
        return orjson.loads(self.export_json(complete=complete))  # type: ignore[no-any-return]

    def export_json(self, *, complete: bool = True) -> bytes:
        """:meth:`export_state` as JSON bytes (what a save writes)."""
        if complete:
            self.flush()
        with self._lock:  # one consistent view: the worker appends under the same lock
            log_ = self.state.log
            cached = self._log_json
            kept = 0  # the log is append-only and an episode never changes: reuse what was encoded
            while kept < len(cached) and kept < len(log_) and cached[kept][0] is log_[kept]:
                kept += 1
            del cached[kept:]
            cached += [(e, orjson.Fragment(to_json(e))) for e in log_[kept:]]
            fields = dict(self.state.__dict__, log=[fragment for _, fragment in cached])
            return orjson.dumps(fields, default=model_fields)

    def export_later(self) -> Callable[[], bytes]:
        """``export_json(complete=False)`` of memory as it stands now, taken later on another thread.

        Returns ``take``, which computes the bytes once (later calls return them, or raise what the export
        raised). Until it is taken, the next change to memory (:meth:`record_turn`, :meth:`restore`,
        :meth:`remember`, :meth:`review_bible`) takes it first, on its own thread: what ``take`` returns is
        memory as of this call (plus any background consolidation or embedding that landed meanwhile,
        which a save holds consistently either way). An autosave calls it at the end of a turn and writes
        on a writer thread (``GameSession.autosave``), so the turn does not wait for the export.
        """
        export = _LaterExport(self)
        with self._lock:
            self._later = export
        return export.take

    def _export_first(self) -> None:
        """Take the export :meth:`export_later` promised before memory changes (its failure is the taker's)."""
        with self._lock:  # taken outside it: the export takes its own lock, then this one
            export, self._later = self._later, None
        if export is not None:
            with contextlib.suppress(Exception):
                export.take()

    def flush(self, timeout: float | None = 60.0) -> None:
        """Finish background consolidation, embed everything still pending, and wait for the store's queued writes."""
        with self._lock:
            futures = list(self._futures)
        with FOREGROUND.waiting():  # called in a turn (a load), the background it waits for must run
            wait(futures, timeout=timeout)
            with self._lock:
                self._futures = [f for f in self._futures if not f.done()]
            self._embed(force=True)
            self._flush_store()

    def _flush_store(self) -> None:
        """Wait for the store's queued writes (a store writing behind, ``mirror.py``)."""
        if self.store is not None:
            self.store.flush()

    def close(self) -> None:
        self.flush()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        if self.store is not None:
            self.store.close()

    def _submit(self, job: Callable[[], object]) -> Future[Any] | None:
        if self._executor is None:
            job()
            return None
        future = self._executor.submit(_logged(job))
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + [future]
        return future

    def _schedule_embedding(self) -> None:
        """Queue one embedding job unless one is already waiting (queued jobs coalesce into one batch)."""
        with self._lock:
            if self._embed_queued and self._executor is not None:
                return
            self._embed_queued = True
        self._submit(self._embed_job)

    def _embed_job(self) -> None:
        with self._lock:
            self._embed_queued = False
        self._embed()

    # --------------------------------------------------------------- record
    def record_turn(self, record: TurnRecord, state: GameState) -> list[str]:
        """Append the turn to L2, extract facts, and consolidate every N turns.

        All or nothing: if anything fails, the memory state is as it was and
        the error is raised.

        Returns:
            Why memory notes were not kept (rejected or disputed by the Story Bible).
        """
        self.prepare()
        place = self.pack.nodes[record.node].name if self.pack and record.node in self.pack.nodes else record.node
        episode = Episode(
            turn=record.turn,
            action=record.action,
            narration=clip(record.narration, self.config.narration_chars),
            node=place,
            npcs=self._involved(record),
            events=record.events,
            when=state.clock_text(),
            importance=60 if record.notes else 50 if any(e not in QUIET_EFFECTS for e, _ in record.applied) else 20,
        )
        refused: list[str] = []
        self._export_first()
        with self._lock:
            checkpoint = self.state.checkpoint()
            try:
                self.state.log.append(episode)
                changed: list[BibleEntry] = []
                if self.bible is not None:
                    notes = self.bible.from_notes(record.notes, record.turn, episode.npcs)
                    refused = [
                        f"{entry.canonical_key}: {outcome} ({entry.reason})"
                        for entry, outcome in notes
                        if outcome in ("rejected", "disputed")
                    ]
                    results = notes + self.bible.from_effects(record.applied, record.turn, place)
                    changed = [entry for entry, _ in results]
            except Exception:
                log.warning("recording turn %d failed; memory is left as it was", record.turn)
                self.state.rollback(checkpoint)
                self.bible_version += 1
                raise
            self.memories.add(latest_episode_items(self.state.log, self.session_id), embed=False)
            self._index_bible_changes(changed)
            due = record.turn % self.config.summary_interval_turns == 0
        self._schedule_embedding()
        if due:
            future = self._submit(lambda: self.consolidate(record.turn))
            if future is not None:
                with self._lock:
                    self._consolidating[record.turn] = future
        self._schedule_warm(record.turn)
        return refused

    def _schedule_warm(self, turn: int) -> None:
        """Queue one :meth:`MemoryRecall.warm` for the next recall (at ``turn``), after the jobs this turn
        queued (its consolidation changes the Story Bible); queued ones coalesce into the latest turn's.
        Only with a worker: without one the recall does the same work when it needs it."""
        if self._executor is None:
            return
        with self._lock:
            queued = self._warm_turn is not None
            self._warm_turn = turn
        if not queued:
            try:
                self._submit(self._warm_job)
            except RuntimeError:  # the worker is shut down (after close): nothing to prepare for
                with self._lock:
                    self._warm_turn = None

    def _warm_job(self) -> None:
        with self._lock:
            turn, self._warm_turn = self._warm_turn, None
        if turn is not None:
            self._recall.warm(turn)

    def _companions(self, episodes: list[Episode]) -> list[str]:
        """The people the player was with in ``episodes``: present where a turn was played, or spoken or given to
        (someone the player only named is not)."""
        pack = self.pack
        if pack is None:
            return []
        places = {node.name: node.id for node in pack.nodes.values()}
        found: set[str] = set()
        for episode in episodes:
            node = places.get(episode.node)
            if node is not None:
                found.update(npcs_at(pack, node))
            for event in episode.events:
                effect, _, detail = event.partition(" ")
                if effect == "talk_to":
                    found.add(detail)
                elif effect == "give_item":
                    found.add(detail.partition("->")[2])
        return sorted(found & set(pack.npcs))

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
        context, as played turns do. Vectors come with :meth:`embed_pending`.
        """
        self._export_first()
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
            self.state.log.append(episode)
            self.memories.add(latest_episode_items(self.state.log, self.session_id), embed=False)
        return key

    def register_entity(self, entity_id: str, names: Iterable[str]) -> None:
        """Names by which queries may mention an entity (NPCs are registered from the pack)."""
        self.query.register(entity_id, names)

    def _index_bible_changes(self, entries: list[BibleEntry]) -> None:
        """Index the entries that are active; take every entry that no longer is out of the index."""
        if entries:
            self.bible_version += 1
        active = [entry_item(entry, self.session_id) for entry in entries if entry.status == "active"]
        if active:
            self.memories.add(active, embed=False)
        indexed = self.memories.items
        drop = [entry.id for entry in self.state.bible if entry.status != "active" and entry.id in indexed]
        if drop:
            self.memories.remove(sorted(set(drop)))

    def last_episodes(self, count: int) -> list[Episode]:
        """The last ``count`` played turns of the full log (copies), oldest first."""
        with self._lock:
            return [e.model_copy() for e in self.state.log[-count:]] if count > 0 else []

    # --------------------------------------------------------- bible review
    def bible_entries(self) -> list[BibleEntry]:
        """Every Story Bible entry, all statuses, in the order they were proposed (copies: edit through
        :meth:`review_bible`)."""
        with self._lock:
            return [entry.model_copy(deep=True) for entry in self.state.bible]

    def review_bible(self, entry_id: str, action: ReviewAction, turn: int) -> BibleEntry:
        """The player's review of one Story Bible entry; returns (a copy of) the entry after it.

        ``accept`` makes a candidate, disputed or rejected entry active (it
        supersedes the active entry of its key), ``reject`` takes back an
        active, candidate or disputed one, ``archive`` retires an active one,
        ``pin``/``unpin`` keep an active entry in every prompt or stop doing so
        (see ``bible.py``). ``turn`` is the game turn of the review (the
        ``ended_turn`` of what it ends). The change is indexed for search at
        once and saved with the memory state.

        Raises:
            ValueError: the review is not allowed (unknown entry, accepting an
                instruction to the narrator, pinning an inactive entry, ...),
                with a message for the player; nothing changed.
        """
        self._export_first()
        with self._lock:
            if self.bible is None:
                raise ValueError("This game has no Story Bible.")
            changed = self.bible.review(entry_id, action, turn)
            self._index_bible_changes(changed)
            reviewed = changed[0].model_copy(deep=True)
        self._schedule_embedding()
        return reviewed

    # ------------------------------------------------------------ embedding
    def _unready(self) -> set[str]:
        """Played turns whose context is not complete yet (embedded once the turns after them exist)."""
        with self._lock:
            recent = [e for e in self.state.log[-CONTEXT_TURNS:] if e.action]
        return {e.id for e in recent}

    def _embed(self, *, force: bool = False) -> None:
        """Embed what is pending (with ``force``, also turns whose context is still incomplete)."""
        with self._lock:  # one view of the log and the pending ids: a turn appended meanwhile is not "ready"
            skip = set() if force else self._unready()
            batches = [(index, sorted(index.pending_ids() - skip)) for index in (self.memories, self.history)]
        for index, ready in batches:
            if ready:
                index.embed_pending(ready)
        self._note_pending()

    def _embed_reporting(self, label: str, progress: Progress) -> None:
        """Embed everything pending now, in batches, calling ``progress(label, done, total)`` at the start and
        after each batch (a batch that fails stays pending and counts as done)."""
        with self._lock:
            batches = [(index, sorted(index.pending_ids())) for index in (self.memories, self.history)]
        total = sum(len(ids) for _, ids in batches)
        done = 0
        progress(label, done, total)
        for index, ids in batches:
            for start in range(0, len(ids), EMBED_BATCH):
                chunk = ids[start : start + EMBED_BATCH]
                index.embed_pending(chunk)
                done += len(chunk)
                progress(label, done, total)
        self._note_pending()

    def _note_pending(self) -> None:
        """Record in the state which ids still wait for a vector, and which model embedded the Bible entries."""
        pending = self.memories.pending_ids() | self.history.pending_ids()
        with self._lock:
            self.state.pending_vectors = sorted(pending)
            if self.memories.dense_ok and self.embedder is not None:
                for entry in self.state.bible:
                    if entry.id in self.memories.items and entry.id not in pending:
                        entry.embedding_model = self.embedder.model_name
                        entry.embedding_version = self.embedder.model_version

    def embed_pending(self) -> int:
        """Embed everything still pending now (e.g. after bulk ``remember``); returns what is left."""
        self._embed(force=True)
        return len(self.memories.pending_ids() | self.history.pending_ids()) if self.memories.dense_ok else 0

    # ---------------------------------------------------------- consolidate
    def consolidate(self, upto_turn: int) -> Summary | None:
        """Summarise the turns since the last consolidation (runs in the worker; ``consolidation.py``)."""
        persona = system_words(self.pack.story.persona) if self.pack else ""
        extractor = self.summarizer if isinstance(self.summarizer, FactExtractor) else None
        with self._lock:
            known = [e.canonical_key for e in self.bible.active()] if self.bible is not None else []
            batch = gather(self.state, known, self.config, persona, self.generation, upto_turn)
        if batch is None:
            return None
        answers = ask(self.summarizer, extractor, batch, self.config, persona)
        if answers is None:
            self.failures.append(f"summary of turns {batch.first}-{upto_turn}")
            log.warning(
                "summary of turns %d-%d failed; they stay queued for the next consolidation", batch.first, upto_turn
            )
            return None
        summary = make_summary(batch, answers, self.config, persona)
        with self._lock:
            if batch.generation != self.generation:  # a save was loaded meanwhile: another timeline's summary
                log.info("summary of turns %d-%d discarded: another memory state was loaded", batch.first, upto_turn)
                return None
            self.state.summaries.append(summary)
            self.state.last_consolidated_turn = upto_turn
            self.history.add([summary_item(summary, self.session_id)], embed=False)
            if self.bible is not None:
                companions = self._companions(batch.episodes)
                results = self.bible.from_summary(summary.text, batch.first, upto_turn, companions)
                if extractor is not None:
                    results += self._extracted(answers.facts, batch.facts_first, upto_turn, summary.npcs)
                self.bible.age_threads(upto_turn)
                self.bible_version += 1
                self._index_bible_changes([entry for entry, _ in results])
            self.consolidations += 1
        self._embed()
        return summary

    def _extracted(
        self, facts: list[dict[str, Any]] | None, first: int, upto_turn: int, npcs: list[str]
    ) -> list[tuple[BibleEntry, Outcome]]:
        """Apply an extraction answer; a failed one leaves its turns queued for the next consolidation."""
        assert self.bible is not None
        if facts is None:
            self.state.facts_from = first
            self.failures.append(f"story bible extraction of turns {first}-{upto_turn}")
            log.warning("fact extraction of turns %d-%d failed; retried at the next consolidation", first, upto_turn)
            return []
        self.state.facts_from = None
        return list(self.bible.from_extraction(facts, upto_turn, npcs))

    def _await_consolidation(self, playing_turn: int) -> float:
        """Wait for every consolidation the turn about to be played must see; returns the ms waited.

        Consolidation of turns N-4..N may run while turns N+1..N+4 are played;
        turn N+5 waits for it. The first recall after :meth:`prepare` also
        waits for the vectors the store lacked to be embedded.
        """
        limit = playing_turn - self.config.summary_interval_turns
        with self._lock:
            due = [f for turn, f in self._consolidating.items() if turn <= limit]
            if self._restoring is not None:
                due.append(self._restoring)
                self._restoring = None if self._restoring.done() else self._restoring
            for turn in [t for t, f in self._consolidating.items() if t <= limit and f.done()]:
                del self._consolidating[turn]
        if not due or all(f.done() for f in due):
            return 0.0
        started = time.perf_counter()
        with FOREGROUND.waiting():
            wait(due, timeout=self.config.consolidation_wait_s)
        return round((time.perf_counter() - started) * 1000, 2)

    # --------------------------------------------------------------- recall
    def recall(self, action: str, state: GameState) -> MemoryContext:
        """Memory blocks for this action as of ``state.turn``, stable to dynamic, each within its budget."""
        self.prepare()
        waited = self._await_consolidation(state.turn + 1)
        context = self._recall.recall(action, state)
        context.retrieval_meta["wait_ms"] = waited
        return context

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
        """Hybrid-ranked Bible entries and past turns (the 'relevant memories' path); see ``retrieval.py``."""
        return self._recall.search_memories(query, state, k, focus=focus, exclude=exclude, query_vector=query_vector)

    def window(self, turn: int) -> list[dict[str, str]]:
        """The L1 window as of ``turn``."""
        with self._lock:
            return self.state.window(turn, self.config.window_messages, MESSAGE_CHARS)


class _LaterExport:
    """One :meth:`GameMemory.export_later`: computed once, by whichever thread asks first."""

    def __init__(self, memory: GameMemory) -> None:
        self._memory = memory
        self._lock = threading.Lock()
        self._result: bytes | None = None
        self._error: Exception | None = None

    def take(self) -> bytes:
        with self._lock:
            if self._result is None and self._error is None:
                try:
                    self._result = self._memory.export_json(complete=False)
                except Exception as exc:  # noqa: BLE001 - kept and raised to every taker
                    self._error = exc
            if self._error is not None:
                raise self._error
            assert self._result is not None
            return self._result


def _logged(job: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        FOREGROUND.wait_idle()  # a turn's recall or record under way goes first (foreground.py)
        try:
            return job()
        except Exception:
            log.exception("memory background job failed")
            return None

    return run
