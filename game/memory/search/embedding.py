"""Embedding what memory's indexes hold without a vector: the ready part in the background, or all of it with
progress reported (a load that found the store lacking vectors)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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


def note_pending(
    state: MemoryState, memories: HybridIndex, history: HybridIndex, model: tuple[str, str] | None
) -> None:
    """Record in ``state`` which ids still wait for a vector and, with ``model`` (name, version) and vectors
    working, which model embedded each Story Bible entry (call under memory's lock)."""
    pending = memories.pending_ids() | history.pending_ids()
    state.pending_vectors = sorted(pending)
    if memories.dense_ok and model is not None:
        for entry in state.bible:
            if entry.id in memories.items and entry.id not in pending:
                entry.embedding_model, entry.embedding_version = model
