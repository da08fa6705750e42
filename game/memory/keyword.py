"""Keyword retrieval: a small incremental BM25 index.

Hand-written rather than ``bm25s`` because memory grows one document at a time
during play and ``bm25s`` rebuilds its whole index on every add; at game sizes
(hundreds to a few thousand documents) a plain dictionary index scores a query
in well under a millisecond.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from game.text import keywords


class BM25Index:
    """Okapi BM25 over documents added one at a time.

    Args:
        k1: term-frequency saturation.
        b: length normalisation.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._docs: dict[str, Counter[str]] = {}
        self._lengths: dict[str, int] = {}
        self._df: Counter[str] = Counter()
        self._postings: dict[str, set[str]] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def add(self, doc_id: str, text: str) -> None:
        if doc_id in self._docs:
            self.remove(doc_id)
        terms = Counter(keywords(text))
        self._docs[doc_id] = terms
        length = sum(terms.values())
        self._lengths[doc_id] = length
        self._total_length += length
        for term in terms:
            self._df[term] += 1
            self._postings.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: str) -> None:
        terms = self._docs.pop(doc_id, None)
        if terms is None:
            return
        self._total_length -= self._lengths.pop(doc_id)
        for term in terms:
            self._df[term] -= 1
            self._postings[term].discard(doc_id)

    def scores(self, query: str, allowed: Iterable[str] | None = None) -> dict[str, float]:
        """BM25 score of every document sharing a term with ``query`` (optionally restricted)."""
        n = len(self._docs)
        if not n:
            return {}
        allowed_set = set(allowed) if allowed is not None else None
        avg = self._total_length / n or 1.0
        out: dict[str, float] = {}
        for term, repeats in Counter(keywords(query)).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            df = self._df[term]
            idf = repeats * math.log(1 + (n - df + 0.5) / (df + 0.5))
            for doc_id in postings:
                if allowed_set is not None and doc_id not in allowed_set:
                    continue
                tf = self._docs[doc_id][term]
                norm = tf + self.k1 * (1 - self.b + self.b * self._lengths[doc_id] / avg)
                out[doc_id] = out.get(doc_id, 0.0) + idf * tf * (self.k1 + 1) / norm
        return out

    def search(self, query: str, k: int, allowed: Iterable[str] | None = None) -> list[tuple[str, float]]:
        ranked = sorted(self.scores(query, allowed).items(), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:k]
