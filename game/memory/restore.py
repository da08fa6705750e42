"""Restoring a rebuilt memory's vectors: the jobs that embed what its indexes lack (issue 43, item 7).

A load or an undo rebuilds memory's indexes from the saved state at once (their text, for keywords) and takes every
vector the store holds; what the store lacks is the rebuild's :class:`Backlog`. The largest save a load accepts can
lack 30,000 vectors, minutes of embedding on two cores, and its first turn used to wait for them all (36 to 40 s).
So a backlog over ``RESTORE_WAIT`` is embedded by a chain of worker jobs of ``EMBED_CHUNK`` items each, newest
first, that no turn waits for, while its indexes rank by keywords (``search/restoring.py``); a smaller one is
embedded in one job that the first recall waits for, so recall is the intact index's from the first turn.

The vectors of the turns played meanwhile go through the same chain, ahead of the backlog (:meth:`Backlog.take`),
and a consolidation queued behind it runs between two chunks. A job queued for a state left behind (a later load
or undo: ``GameMemory.generation``) does nothing. This is the keeper's scheduling, apart from ``manager.py``'s
layers and turns; the embedding calls themselves are ``search/embedding.py``'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Protocol

from game.memory.search.embedding import Progress, embed, embed_reporting, note_models, note_pending
from game.memory.search.hybrid import HybridIndex
from game.memory.search.indexing import CONTEXT_TURNS

if TYPE_CHECKING:
    from game.memory.records import MemoryState
    from game.memory.vectors.embedders import Embedder
    from game.memory.worker import Worker

RESTORE_LABEL = "Restoring memories"
"""What loading progress says while a rebuild's vectors are embedded before the game goes on."""
EMBED_CHUNK = 32
"""Items embedded per background job (a turn with its context is two texts: about 0.5 s on two cores)."""
RESTORE_WAIT = 256
"""A rebuild lacking at most this many vectors (a new game's seeded Story Bible, an autosave's last turns, the
lost index of a 100-turn game: about 2 s here) is embedded in one job, which the first recall waits for, so recall
is the intact index's from the first turn (``tests/reliability/test_processes.py``). A larger one goes a chunk
per job, and nothing waits for it: the largest save lacks up to 30,000."""

Batches = list[tuple[HybridIndex, list[str]]]


class Backlog:
    """The items of ``indexes`` waiting for a vector when they were rebuilt (a load, an undo), taken a chunk at a
    time: what was added since first (the turns played meanwhile), then the backlog's newest turns (recall weighs
    recency, and the latest turns are the likeliest to be asked about). Call its methods under memory's lock."""

    def __init__(self, indexes: Sequence[HybridIndex]) -> None:
        self._indexes = [index for index in indexes if index.dense_ok]
        order: list[tuple[int, int, str]] = []
        for n, index in enumerate(self._indexes):
            with index.lock:
                items = index.items
                order += [(int(items[i].metadata.get("turn", 0)), n, i) for i in index.pending if i in items]
        order.sort()
        self._left = [(n, doc_id) for _, n, doc_id in order]
        """Oldest first: :meth:`take` pops the newest from the end."""
        self._waiting: list[set[str]] = [set() for _ in self._indexes]
        for n, doc_id in self._left:
            self._waiting[n].add(doc_id)

    def __len__(self) -> int:
        """Items of the rebuild not taken yet."""
        return len(self._left)

    def take(self, skip: Collection[str], size: int) -> Batches:
        """Up to ``size`` pending ids per chunk, by index: the pending ids added since the rebuild (less ``skip``:
        turns whose context is not complete yet), then the rebuild's newest. An id taken that fails to embed
        stays pending, and is taken again with the later ones."""
        chosen: list[list[str]] = [[] for _ in self._indexes]
        room = size
        pending = []
        for n, index in enumerate(self._indexes):
            left = index.pending_ids()
            pending.append(left)
            fresh = sorted(left - self._waiting[n] - set(skip))[:room]
            chosen[n] += fresh
            room -= len(fresh)
        while room > 0 and self._left:
            n, doc_id = self._left.pop()
            self._waiting[n].discard(doc_id)
            if doc_id in pending[n]:
                chosen[n].append(doc_id)
                room -= 1
        return [(index, ids) for index, ids in zip(self._indexes, chosen, strict=True) if ids]


class RestoreSource(Protocol):
    """What the restore jobs read from memory (``manager.GameMemory``), declared here so that this module does not
    import the keeper that owns it (no import cycle)."""

    state: MemoryState
    memories: HybridIndex
    history: HybridIndex
    embedder: Embedder | None
    generation: int

    @property
    def lock(self) -> threading.RLock: ...

    @property
    def worker(self) -> Worker: ...


class VectorJobs:
    """The embedding jobs of one memory (``memory``): a rebuild's backlog, and each turn's vectors once its context
    is complete. Every read of memory's state is under its lock; the embedding itself is outside it."""

    def __init__(self, memory: RestoreSource) -> None:
        self._memory = memory
        self._backlog = Backlog(())
        self._restoring: Future[Any] | None = None
        """The embedding of what a rebuild lacked, when little (:meth:`start`): the first recall waits for it."""

    def reset(self) -> None:
        """Memory holds new indexes (a new state): what they lack from now on is taken from them."""
        with self._memory.lock:
            self._backlog = Backlog((self._memory.memories, self._memory.history))

    def start(self, progress: Progress | None, meanwhile: Callable[[], None]) -> None:
        """Embed what the indexes lack once rebuilt (the vectors the store held adopted): now with ``progress``,
        reporting each batch; else in the background, newest first.

        The first recall waits for it when it is at most ``RESTORE_WAIT`` items (a new game's seeded Bible, an
        autosave's last turns, a lost index of a short game). More than that is embedded a chunk per background
        job, and nothing waits for it: until most of an index has its vectors it ranks by keywords and says so
        (``HybridIndex.restored``), and ``meanwhile`` (the first recall's own work) is queued ahead of the chunks.
        """
        memory = self._memory
        if not (memory.memories.pending_ids() or memory.history.pending_ids()):
            return
        if progress is not None and memory.memories.dense_ok:
            self.embed(progress=progress)
            return
        self.reset()
        whole = len(self._backlog) <= RESTORE_WAIT
        if not whole:
            memory.memories.restored()
            memory.history.restored()
            meanwhile()
        generation = memory.generation
        future = memory.worker.submit(lambda: self.embed(force=whole, generation=generation))
        if future is not None and whole:
            with memory.lock:
                self._restoring = future

    def due(self) -> Future[Any] | None:
        """The small rebuild's embedding the next recall waits for (:meth:`start`), forgotten once done; call
        under memory's lock."""
        future = self._restoring
        if future is not None and future.done():
            self._restoring = None
        return future

    def left(self) -> int:
        """The rebuild's items not taken yet (a turn's ``retrieval_meta["restoring"]``); call under memory's lock."""
        return len(self._backlog)

    def schedule(self) -> None:
        """Queue an embedding job for the state memory holds now (a job queued before a load does nothing)."""
        generation = self._memory.generation
        self._memory.worker.submit_once("embed", lambda: self.embed(generation=generation))  # queued jobs coalesce

    def embed(self, *, force: bool = False, progress: Progress | None = None, generation: int | None = None) -> None:
        """Embed what is pending: the turns whose context is complete, or with ``force`` (or ``progress``,
        reported as ``RESTORE_LABEL``) everything.

        In the background one chunk (``EMBED_CHUNK``) per job: what is left goes in a later job, behind what was
        queued meanwhile (a consolidation, a warm-up), so a rebuild's backlog never holds the worker for minutes.
        ``force`` embeds it all here, chunk after chunk, until the game is closing (``Worker.closing``): what is
        left then is saved as pending, and the next load embeds it. A job queued for an older ``generation`` (before
        a load or an undo) does nothing: the state it was for is gone, and the new one queued its own."""
        memory = self._memory
        if progress is not None:
            with memory.lock:
                batches = [(index, sorted(index.pending_ids())) for index in (memory.memories, memory.history)]
            embed_reporting(batches, RESTORE_LABEL, progress)
            self._note_embedded(memory.generation, None)
            return
        while True:
            with memory.lock:  # one view of the log and the pending ids: a turn appended meanwhile is not "ready"
                if generation is not None and generation != memory.generation:
                    return
                generation = memory.generation
                # a played turn whose context is not complete yet is embedded once the turns after it exist
                skip = set() if force else {e.id for e in memory.state.log[-CONTEXT_TURNS:] if e.action}
                chunk = self._backlog.take(skip, EMBED_CHUNK)
                left = len(self._backlog)
            embed(chunk)
            taken = {doc_id for _, ids in chunk for doc_id in ids}
            landed = taken - {doc_id for index, _ in chunk for doc_id in index.pending_ids()}
            if not self._note_embedded(generation, taken if left else None) or not landed:
                return  # another state was loaded meanwhile (its own jobs embed what it lacks), or the embedder
                # or store failed (what it left pending is taken again by the next turn's job)
            if not force and memory.worker.background:
                self.schedule()
                return
            if force and memory.worker.past_deadline():
                return

    def _note_embedded(self, generation: int, embedded: set[str] | None) -> bool:
        """Record what landed (``embedded``; None: every entry, once a rebuild's backlog is in) unless the state
        changed since ``generation``; whether it was recorded."""
        memory = self._memory
        embedder = memory.embedder
        model = (embedder.model_name, embedder.model_version) if embedder is not None else None
        with memory.lock:
            if generation != memory.generation:
                return False
            note_models(memory.state, memory.memories, model, embedded)
            if embedded is None:
                note_pending(memory.state, memory.memories, memory.history)
            return True
