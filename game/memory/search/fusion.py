"""Fusion of a hybrid search's scores: z(dense) + 0.5 z(BM25) + a prior, as arrays (see ``hybrid.py``).

``fuse`` is the dictionary form; :class:`Fused` the arrays ``HybridIndex.scores`` hands on, ranked only as far
as asked. Moved out of ``hybrid.py`` as it is (same operations in the same order: the same floats).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

KEYWORD_WEIGHT = 0.5


@dataclass
class Hit:
    id: str
    score: float
    dense: float
    keyword: float


@dataclass
class Fused:
    """Every allowed item's fused score (``ids``, ``score``, ``dense``, ``keyword`` aligned) and ``order``,
    the ranking: best first, ties by id; keyword-only, items sharing no word with the query are left out.

    ``ids`` is an object array (``id_list`` the list); ``rows`` their rows in the index's table, when it
    comes from :meth:`HybridIndex.scores`. The ranking is computed when first asked for: :meth:`selected`
    (the hits, unordered) and :meth:`hits` with a ``k`` (a partial sort) need no full sort.
    """

    ids: np.ndarray
    score: np.ndarray
    dense: np.ndarray
    keyword: np.ndarray
    boost: np.ndarray | None
    strategy: str
    fallback: str | None = None
    dense_ok: bool = False
    """Whether dense scores took part (else items sharing no word with the query are no hits)."""
    rows: np.ndarray | None = None
    _order: np.ndarray | None = field(default=None, repr=False)

    @property
    def id_list(self) -> list[str]:
        return self.ids.tolist()  # type: ignore[no-any-return]

    def selected(self) -> np.ndarray:
        """Positions of the hits, in position order (:attr:`order` holds the same, ranked)."""
        if self.dense_ok or not len(self.ids):
            return np.arange(len(self.ids))
        hit = self.keyword > 0
        if self.boost is not None:
            hit |= self.boost > 0
        return np.flatnonzero(hit)

    @property
    def order(self) -> np.ndarray:
        if self._order is None:
            self._order = self._top(None)
        return self._order

    def _top(self, k: int | None) -> np.ndarray:
        """The best ``k`` (None: all) hits' positions, best first, ties by id (code point order)."""
        chosen = self.selected()
        if k is not None and k <= 0:
            return chosen[:0]
        negative = -self.score[chosen]
        if k is not None and k < len(chosen):
            kth = np.partition(negative, k - 1)[k - 1]
            near = negative <= kth  # every one of the best k, and the ties of the k-th
            chosen, negative = chosen[near], negative[near]
        if not len(chosen):
            return chosen
        ranked = chosen[np.lexsort((np.array(self.ids[chosen].tolist(), dtype=str), negative))]
        return ranked if k is None else ranked[:k]

    def hits(self, k: int | None = None) -> list[Hit]:
        order = self.order if k is None or self._order is not None else self._top(k)
        if k is not None:
            order = order[:k]
        ids, score, dense, keyword = self.ids, self.score, self.dense, self.keyword
        return [Hit(ids[n], float(score[n]), float(dense[n]), float(keyword[n])) for n in order.tolist()]


def _z(values: np.ndarray) -> np.ndarray:
    std = float(values.std())
    return (values - values.mean()) / std if std > 1e-9 else np.zeros_like(values)


def fuse_arrays(
    ids: np.ndarray,
    dense: tuple[np.ndarray, np.ndarray] | None,
    kw: np.ndarray,
    boost: np.ndarray | None,
    strategy: str,
    fallback: str | None = None,
    rows: np.ndarray | None = None,
    floor: float | None = None,
) -> Fused:
    """z(dense) + 0.5 z(bm25) + prior over ``ids``.

    ``dense``: (positions, similarities) of the items the vector search returned (the others take the
    lowest of them, or ``floor``), None for keyword-only; ``kw`` every item's BM25 score; ``boost`` the
    prior (None: 0).
    The same operations in the same order as the dictionary-based fusion they replace: the same floats.
    """
    score = KEYWORD_WEIGHT * _z(kw) if dense is not None else _z(kw)
    dense_values = np.zeros(len(ids))
    if dense is not None:
        at, similarity = dense
        lowest = floor if floor is not None else min(similarity.tolist())
        dense_values = np.full(len(ids), lowest, dtype=np.float64)
        dense_values[at] = similarity
        score = score + _z(dense_values)
    score = score + (boost if boost is not None else np.zeros(len(ids)))
    return Fused(ids, score, dense_values, kw, boost, strategy, fallback, dense_ok=dense is not None, rows=rows)


@dataclass
class Ranked:
    """A search's hits and how they were found.

    Attributes:
        strategy: ``hybrid:<store>`` when dense scores took part, ``bm25``
            when only keywords did.
        fallback: why dense search did not run this time although it is
            configured (the embedder or the store failed), else None.
    """

    hits: list[Hit]
    strategy: str
    fallback: str | None = None

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)
