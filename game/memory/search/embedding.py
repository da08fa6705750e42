"""Embedding what memory's indexes hold without a vector: in the background a chunk at a time, or all of it with
progress reported (a new game whose store lacked its seeded Story Bible).

A load rebuilds the indexes from the save at once (their text, for keywords) and takes every vector the store
holds; what the store lacks is its :class:`Backlog`. The largest save a load accepts can lack 30,000 vectors
(minutes of embedding on two cores), so a backlog over ``RESTORE_WAIT`` is embedded by a chain of background jobs
of ``EMBED_CHUNK`` items each, newest first, with the turns played meanwhile ahead of it: no turn waits for it,
and a consolidation queued behind the chain runs between two chunks (``GameMemory._embed``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from game.memory.records import MemoryState
from game.memory.search.hybrid import HybridIndex

Progress = Callable[[str, int, int], None]
"""A loading-progress callback: ``progress(label, done, total)`` ("Indexing lore", 31, 58)."""
EMBED_BATCH = 32
"""Texts embedded per batch when progress is reported."""
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


def embed(batches: Sequence[tuple[HybridIndex, list[str]]]) -> None:
    """Embed each index's listed pending ids."""
    for index, ids in batches:
        if ids:
            index.embed_pending(ids)


def embed_reporting(batches: Sequence[tuple[HybridIndex, list[str]]], label: str, progress: Progress) -> None:
    """:func:`embed`, in batches, calling ``progress(label, done, total)`` at the start and after each batch (a
    batch that fails stays pending and counts as done)."""
    total = sum(len(ids) for _, ids in batches)
    done = 0
    progress(label, done, total)
    for index, ids in batches:
        for start in range(0, len(ids), EMBED_BATCH):
            chunk = ids[start : start + EMBED_BATCH]
            index.embed_pending(chunk)
            done += len(chunk)
            progress(label, done, total)


def note_pending(state: MemoryState, memories: HybridIndex, history: HybridIndex) -> None:
    """Record in ``state`` which ids still wait for a vector (what a save says; call under memory's lock)."""
    state.pending_vectors = sorted(memories.pending_ids() | history.pending_ids())


def note_models(
    state: MemoryState, memories: HybridIndex, model: tuple[str, str] | None, embedded: Collection[str] | None = None
) -> None:
    """With ``model`` (name, version) and vectors working, record which model embedded each Story Bible entry
    that has its vector now (of those in ``embedded`` when given: a chunk of a restore stamps its own, not every
    entry of the largest save each time). Call under memory's lock."""
    if not memories.dense_ok or model is None:
        return
    pending = memories.pending_ids()
    for entry in state.bible:
        if (embedded is None or entry.id in embedded) and entry.id in memories.items and entry.id not in pending:
            entry.embedding_model, entry.embedding_version = model
