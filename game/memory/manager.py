"""GameMemory: the three conversation layers, long-term memory, consolidation (``docs/memory.md``).

L1 is the working window (read from the log as of the turn played; the system prompt is sent apart), L2 the
append-only log, also indexed for search, L3 the synopsis. Every ``summary_interval_turns`` turns the worker
(``worker.py``) consolidates the turns since the last time (``consolidation.py``). Recall is ``retrieval.py``;
the Story Bible and its review rules are ``bible.py``; the vectors a rebuilt index lacks are ``restore.py``'s
jobs. Invariants, each with a test:

- **A turn is atomic.** :meth:`record_turn` changes the memory state entirely or not at all (an error reaches the
  engine, which then does not commit the turn).
- **Consolidation keeps up.** The summary of turns N-4..N exists before turn N+5 is recalled, whatever the play
  speed: recall waits for it at the interval (backpressure). A played turn is embedded once, when the turns that
  give it context exist (``CONTEXT_TURNS``); queued embedding jobs coalesce.
- **Memory belongs to one session and one moment.** Vector ids carry the session id, every query is filtered by
  session and turn, and the window, synopsis and Bible are read as of the turn recalled; a consolidation started
  before a load discards its result (:attr:`GameMemory.generation`).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, wait
from typing import Any

import orjson

from game.language.reading import Reading
from game.memory.base import MemoryContext, TurnRecord
from game.memory.bible import ReviewAction, StoryBible
from game.memory.consolidation import MAX_BATCHES, FactExtractor, Summarizer, ask, commit, gather, settled
from game.memory.effect_facts import own_notes
from game.memory.export import LaterExport, StateEncoder
from game.memory.guard import system_words
from game.memory.records import BibleEntry, Episode, MemoryState, Summary
from game.memory.restore import VectorJobs
from game.memory.reviews import keep, reapply
from game.memory.search.embedding import Progress, note_pending
from game.memory.search.hybrid import HybridIndex
from game.memory.search.indexing import entry_item, episode_items, latest_episode_items, summary_item
from game.memory.search.knowledge import KnowledgeBase
from game.memory.search.query import QueryRewriter
from game.memory.search.recall import ScoredMemory
from game.memory.search.retrieval import MemoryRecall
from game.memory.settings import MemoryConfig
from game.memory.turns import episode_of
from game.memory.vectors.embedders import Embedder, Vectors
from game.memory.vectors.foreground import FOREGROUND
from game.memory.vectors.stores import VectorStore
from game.memory.worker import CLOSE_GRACE_S, Worker
from game.world.content import ContentPack
from game.world.state import GameState

log = logging.getLogger("storyecho.memory")

FREEZE_FROM = 2000
"""A restored log this long has its objects frozen for the garbage collector (``gc.freeze``): the ~180,000
objects of a 10,000-turn game made a full collection take ~0.5 s in the middle of a turn, once in ~25 turns
(``bench/turn_overhead.py``); frozen, a collection scans only what was made since."""


class GameMemory:
    """Memory for one play session of one ``pack``: ``summarizer`` is the narrator's stateless summary call;
    without ``store`` or ``embedder`` search is by keyword only; ``knowledge`` a prepared base to share (else built
    by :meth:`prepare`); ``state`` a saved memory state to resume; ``background`` runs work on a worker thread."""

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
        self._worker = Worker(background)
        self._consolidating: dict[int, Future[Any]] = {}
        self._vectors = VectorJobs(self)
        """Embeds what the indexes lack: a rebuild's backlog, each turn's vectors (``restore.py``)."""
        self._later: LaterExport | None = None  # the export export_later() promised, until taken
        self._encoder = StateEncoder()
        self._mark: MemoryState | None = None  # the last mark(): the next one shares its unchanged entries
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
        if self.bible is not None:
            reapply(state, self.bible)  # the player's reviews hold on any moment returned to (``reviews.py``)
        self.memories = HybridIndex("memories", self.store, self.embedder, namespace=state.session_id)
        self.history = HybridIndex("history", self.store, self.embedder, namespace=state.session_id)
        self._vectors.reset()

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def lock(self) -> threading.RLock:
        """Guards the memory state against the background worker (reentrant)."""
        return self._lock

    @property
    def worker(self) -> Worker:
        """Runs this state's background jobs (a load hands the loaded state's to a new one)."""
        return self._worker

    def prepare(self, progress: Progress | None = None) -> None:
        """Seed the Bible, index the knowledge base and re-index saved memories (once).

        ``progress(label, done, total)`` is called in this thread: "Indexing lore" over the knowledge documents,
        then ``restore.RESTORE_LABEL`` over the memories the store lacks, embedded here before returning (without a
        callback, in the worker: the first recall waits for them when they are few, ``restore.py``).
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
        unchanged text are reused, so only what is missing is embedded, in the background (:meth:`_reindex`).
        Nothing recorded after the save is recalled: it is not in ``state``.
        """
        self._export_first()
        self._flush_store()
        gc.unfreeze()  # what an earlier restore froze (the state replaced here among it) may be collected again
        with self._lock:
            self._consolidating.clear()
            self._use(state)
            self._warm_turn = None
            # the old worker finishes what it is doing alone, and is let go
            old, self._worker = self._worker, Worker(self._worker.background)
            old.abandon()
        self._prepared = False
        self.prepare(progress)
        if len(state.log) >= FREEZE_FROM:
            gc.collect()  # what is garbage now is freed first, not frozen with the rest
            gc.freeze()

    def _reindex(self, progress: Progress | None = None) -> None:
        """Index everything the state holds: text at once, vectors from the store, or embedded (now with
        ``progress``, reporting each batch; else in the background: ``restore.py``, which says when the first
        recall waits for them and when the indexes rank by keywords meanwhile)."""
        with self._lock:
            session, log_ = self.session_id, self.state.log
            items = episode_items(log_, session)
            items += [entry_item(b, session) for b in self.state.bible if b.status == "active"]
            summaries = [summary_item(s, session) for s in self.state.summaries]
        self.memories.add(items, embed=False)
        self.history.add(summaries, embed=False)
        self.memories.adopt_stored()
        self.history.adopt_stored()
        latest = max((e.turn for e in log_), default=0)
        self._vectors.start(progress, lambda: self._schedule_warm(latest))  # the first recall's own work, meanwhile

    def _resume_consolidation(self) -> None:
        """Queue the consolidation a save was made before (an autosave does not wait for it)."""
        with self._lock:
            last = max((e.turn for e in self.state.log if e.action), default=0)
            due = last - last % self.config.summary_interval_turns
            if due <= self.state.last_consolidated_turn or due in self._consolidating:
                return
        self._start_consolidation(due)

    def _start_consolidation(self, upto_turn: int) -> None:
        future = self._worker.submit(lambda: self.consolidate(upto_turn))
        if future is not None:
            with self._lock:
                self._consolidating[upto_turn] = future

    def wait_for_consolidation(self, timeout: float | None = 60.0) -> None:
        """Let every consolidation already started finish (a full save waits for them)."""
        with self._lock:
            running = list(self._consolidating.values())
        with FOREGROUND.waiting():
            wait(running, timeout=timeout)

    def mark(self) -> MemoryState:
        """The state frozen for undo and branches (``MemoryState.frozen``); ``restore(mark.thawed())`` returns."""
        with self._lock:
            self._mark = self.state.frozen(self._mark)
            return self._mark

    def export_state(self, *, complete: bool = True) -> dict[str, Any]:
        """The memory state as JSON-ready data, for a save. ``complete`` first finishes consolidation and embeds
        everything pending (loading it embeds nothing); without it (an autosave) a consolidation still running
        is saved as not done, and loading queues it again."""
        return orjson.loads(self.export_json(complete=complete))  # type: ignore[no-any-return]

    def export_json(self, *, complete: bool = True, parted: bool = False) -> bytes:
        """:meth:`export_state` as JSON bytes; with ``parted``, as a save writes it (``export.Parted``: the log and
        the summaries past their sealed parts, and the parts)."""
        if complete:
            self.flush()
        with self._lock:  # one consistent view: the worker appends under the same lock
            note_pending(self.state, self.memories, self.history)  # a restore's chunks leave the list to the save
            return self._encoder.encode_parted(self.state) if parted else self._encoder.encode(self.state)

    def export_later(self) -> Callable[[], bytes]:
        """``take``: ``export_json(complete=False, parted=True)`` of memory as it stands now, computed once, later,
        on the thread that asks first (an autosave's writer, ``GameSession.autosave``). The next change to memory takes
        it first if nobody has, so it is memory as of this call (plus background work that landed meanwhile)."""
        export = LaterExport(lambda: self.export_json(complete=False, parted=True))
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
        with FOREGROUND.waiting():  # called in a turn (a load), the background it waits for must run
            self._worker.wait(timeout)
            self._vectors.embed(force=True)
            self._flush_store()

    def _flush_store(self) -> None:  # wait for the store's queued writes (a store writing behind, mirror.py)
        if self.store is not None:
            self.store.flush()

    def closing(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """The game is closing: every wait for background work ends within ``grace_s`` s; then it is abandoned."""
        self._worker.closing(grace_s)

    def close(self) -> None:
        self.flush()
        self._worker.shutdown()  # bounded after closing(): a summary stalled on the endpoint is abandoned
        if self.store is not None:
            self.store.close()

    def record_turn(self, record: TurnRecord, state: GameState) -> list[str]:
        """Append the turn to L2, take its Story Bible facts and consolidate every N turns; returns why memory
        notes were not kept (rejected or disputed). All or nothing: on an error the state is as it was."""
        self.prepare()
        episode = episode_of(record, self.pack, self.query, state.clock_text(), self.config.narration_chars)
        refused: list[str] = []
        self._export_first()
        with self._lock:
            checkpoint = self.state.checkpoint()
            try:
                self.state.log.append(episode)
                changed: list[BibleEntry] = []
                if self.bible is not None:
                    said = [] if episode.recalled else own_notes(record.notes, record.applied, self.pack)
                    notes = self.bible.from_notes(said, record.turn, episode.npcs)
                    refused = [
                        f"{e.canonical_key}: {o} ({e.reason})" for e, o in notes if o in ("rejected", "disputed")
                    ]
                    results = notes + self.bible.from_effects(record.applied, record.turn, episode.node)
                    made = {entry.id for entry in self.state.bible[checkpoint.bible :]}  # ids an undo may reuse
                    changed = [entry for entry, _ in results] + reapply(self.state, self.bible, made)
            except Exception:
                log.warning("recording turn %d failed; memory is left as it was", record.turn)
                self.state.rollback(checkpoint)
                self.bible_version += 1
                raise
            self.memories.add(latest_episode_items(self.state.log, self.session_id), embed=False)
            self._index_bible_changes(changed)
            due = record.turn % self.config.summary_interval_turns == 0
        self._vectors.schedule()
        if due:
            self._start_consolidation(record.turn)
        self._schedule_warm(record.turn)
        return refused

    def _schedule_warm(self, turn: int) -> None:
        """Queue one :meth:`MemoryRecall.warm` for the next recall (at ``turn``), after the jobs this turn
        queued (its consolidation changes the Story Bible); queued ones coalesce into the latest turn's.
        Only with a worker: without one the recall does the same work when it needs it."""
        if not self._worker.background:
            return
        with self._lock:
            self._warm_turn = turn
        with contextlib.suppress(RuntimeError):  # the worker is shut down (after close): nothing to prepare for
            self._worker.submit_once("warm", self._warm_job)

    def _warm_job(self) -> None:
        with self._lock:
            turn, self._warm_turn = self._warm_turn, None
        if turn is not None:
            self._recall.warm(turn)

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
        """Store one free-standing memory (a line of a conversation loaded into memory). Memories of one
        ``segment`` that follow each other give each other context, as turns do (vectors: :meth:`embed_pending`)."""
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

    def bible_entries(self) -> list[BibleEntry]:
        """Every Story Bible entry, all statuses, in the order proposed (copies: edit through :meth:`review_bible`)."""
        with self._lock:
            return [entry.model_copy(deep=True) for entry in self.state.bible]

    def review_bible(self, entry_id: str, action: ReviewAction, turn: int) -> BibleEntry:
        """The player's review of one Story Bible entry at game ``turn`` (the rules: ``StoryBible.review``);
        returns a copy of the entry after it. The change is indexed at once and saved with the memory state.

        Raises:
            ValueError: the review is not allowed, with a message for the player; nothing changed.
        """
        self._export_first()
        with self._lock:
            if self.bible is None:
                raise ValueError("This game has no Story Bible.")
            changed = self.bible.review(entry_id, action, turn)
            keep(self.state, changed[0], action, turn)
            self._index_bible_changes(changed)
            reviewed = changed[0].model_copy(deep=True)
        self._vectors.schedule()
        return reviewed

    def embed_pending(self) -> int:
        """Embed everything pending now (after bulk ``remember``); returns what is left."""
        self._vectors.embed(force=True)
        return len(self.memories.pending_ids() | self.history.pending_ids()) if self.memories.dense_ok else 0

    def consolidate(self, upto_turn: int) -> Summary | None:
        """Summarise the turns not consolidated up to ``upto_turn``, oldest first, in bounded batches (at most
        ``MAX_BATCHES``; a failed one stays queued): runs in the worker, ``consolidation.py``. The last summary."""
        persona = system_words(self.pack.story.persona) if self.pack else ""
        extractor = self.summarizer if isinstance(self.summarizer, FactExtractor) else None
        made: Summary | None = None
        generation = self.generation
        for _ in range(MAX_BATCHES):
            with self._lock:
                known = self.bible.updatable_keys() if self.bible is not None else []
                batch = gather(self.state, known, self.config, persona, self.generation, upto_turn)
            asked = ask(self.summarizer, extractor, batch, self.config, persona) if batch is not None else None
            with self._lock:
                answers = settled(batch, asked, self.generation, self.failures) if batch is not None else None
                if batch is None or answers is None:
                    break
                made, changed = commit(self.state, self.bible, batch, answers, self.config, persona, self.failures)
                self.history.add([summary_item(made, self.session_id)], embed=False)
                self.bible_version += 1
                self._index_bible_changes(changed)
                self.consolidations += 1
            if batch.upto >= upto_turn:
                break
        self._vectors.embed(generation=generation)
        return made

    def _await_consolidation(self, playing_turn: int) -> float:
        """Wait for every consolidation the turn about to be played must see; returns the ms waited.

        Consolidation of turns N-4..N may run while turns N+1..N+4 are played; turn N+5 waits for it. The first
        recall after :meth:`prepare` also waits for the vectors the store lacked, unless they are many (those come
        in the background: ``restore.py``)."""
        limit = playing_turn - self.config.summary_interval_turns
        with self._lock:
            due = [f for turn, f in self._consolidating.items() if turn <= limit]
            restoring = self._vectors.due()
            if restoring is not None:
                due.append(restoring)
            for turn in [t for t, f in self._consolidating.items() if t <= limit and f.done()]:
                del self._consolidating[turn]
        if not due or all(f.done() for f in due):
            return 0.0
        started = time.perf_counter()
        with FOREGROUND.waiting():
            wait(due, timeout=self.config.consolidation_wait_s)
        return round((time.perf_counter() - started) * 1000, 2)

    def recall(self, action: str, state: GameState, reading: Reading | None = None) -> MemoryContext:
        """Memory blocks for this action (``reading``: the action read, if the caller has it) as of ``state.turn``,
        stable to dynamic, each within its budget."""
        self.prepare()
        waited = self._await_consolidation(state.turn + 1)
        context = self._recall.recall(action, state, reading)
        context.retrieval_meta["wait_ms"] = waited
        with self._lock:
            context.retrieval_meta["restoring"] = self._vectors.left()  # a load's vectors not embedded yet
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
            return self.state.window(turn, self.config.window_messages, self.config.window_chars)
