"""What a hybrid index embeds, in which space: an item's vector, a query's, and the check that the embedder's
model is still the one whose collection the index uses.

An item with context (a turn and its neighbours) is embedded twice, alone and with its context, and stored as the
mean of the two unit vectors (``hybrid.py``'s ranking, measured in ``docs/memory.md``). A query is embedded alone;
a batch of queries fails as one, and a failure is a reason to rank by keywords, never an error. Apart from
``hybrid.py`` because it is a question of the embedder and the texts, not of the index's bookkeeping.
"""

from __future__ import annotations

import logging

import numpy as np

from game.memory.search.indexing import CONTEXT_SEPARATOR, IndexItem
from game.memory.vectors.embedders import Embedder, EmbedderUnavailable, EmbeddingSpace, Vectors, space_of

log = logging.getLogger("storyecho.memory")

QueryVector = tuple[Vectors | None, str | None]
"""A query's vector, or None and why it failed (None when nothing was asked)."""


def same_space(embedder: Embedder | None, space: EmbeddingSpace | None, collection: str) -> None:
    """Refuse to embed when the embedder's model changed since the index chose its ``collection`` (of ``space``)."""
    if embedder is not None and space is not None and space_of(embedder) != space:
        raise EmbedderUnavailable(
            f"the embedder is now {space_of(embedder).label()}, not {space.label()} "
            f"whose collection {collection!r} this index uses"
        )


def item_vectors(embedder: Embedder, items: list[IndexItem]) -> Vectors:
    """One vector per item: the item's text alone, averaged with the text and its context when it has one."""
    texts = [i.text for i in items]
    with_context = [n for n, i in enumerate(items) if i.context]
    texts += [items[n].text + CONTEXT_SEPARATOR + items[n].context for n in with_context]
    encoded = embedder.embed(texts)
    vectors = np.array(encoded[: len(items)], dtype=np.float32)
    for row, n in enumerate(with_context):
        vectors[n] = (vectors[n] + encoded[len(items) + row]) / 2
    return vectors


def query_vectors(
    embedder: Embedder | None, space: EmbeddingSpace | None, collection: str, queries: list[str]
) -> list[QueryVector]:
    """Each query's vector, embedded in one batch (a blank query, or no ``embedder``: none). Any fault of the
    embedder fails every query of the batch, with the reason, for keyword search."""
    wanted = [n for n, query in enumerate(queries) if query.strip()]
    out: list[QueryVector] = [(None, None)] * len(queries)
    if not wanted or embedder is None:
        return out
    try:
        same_space(embedder, space, collection)
        vectors = embedder.embed([queries[n] for n in wanted])
        for n, vector in zip(wanted, vectors, strict=True):
            out[n] = (vector, None)
    except Exception as exc:  # noqa: BLE001 - any embedder fault (or a wrong answer) means keywords
        log.warning("query embedding failed, keyword search only: %s", exc)
        failed: QueryVector = (None, f"query embedding failed: {exc}")
        return [failed if n in wanted else (None, None) for n in range(len(queries))]
    return out
