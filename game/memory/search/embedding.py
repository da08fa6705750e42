"""Embedding what memory's indexes hold without a vector: the ids asked for, or all of them with progress reported
(a new game whose store lacked its seeded Story Bible). Which ids, when and in which job is the keeper's
(``game/memory/restore.py``: a load's backlog a chunk per background job)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from game.memory.records import MemoryState
from game.memory.search.hybrid import HybridIndex

Progress = Callable[[str, int, int], None]
"""A loading-progress callback: ``progress(label, done, total)`` ("Indexing lore", 31, 58)."""
EMBED_BATCH = 32
"""Texts embedded per batch when progress is reported."""


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
    """Record in ``state`` which ids still wait for a vector (what a save says; call under memory's lock). Without
    vectors (keyword memory) none does: every id of the game listed in every save made its autosave grow with the
    game (issue 43: long games stay savable)."""
    pending = [index.pending_ids() for index in (memories, history) if index.dense_ok]
    state.pending_vectors = sorted(set().union(*pending))


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
