"""Keyword retrieval: a small incremental BM25 index.

Hand-written rather than ``bm25s`` because memory grows one document at a time
during play and ``bm25s`` rebuilds its whole index on every add.

Each document has a row; each term keeps its postings (row -> term frequency)
and, cached until the term's postings change, the same as two numpy arrays, so
scoring a query is a few vectorised operations per query term rather than a
Python loop over every document that holds it: over the 11,000 memories of a
10,000-turn game (each indexed with its neighbouring turns), 26-34 ms per query
item by item, about 2 ms this way (``bench/turn_overhead.py``). The scores are
the same numbers, computed with the same operations in the same order
(``tests/test_memory_ranking.py`` holds them equal to the item-by-item formula).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator

import numpy as np

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
        self._rows: dict[str, int] = {}
        """Row of each document id ever added (a removed document keeps its row for when it comes back)."""
        self._ids: list[str] = []
        self._lengths = np.zeros(64)
        self._df: Counter[str] = Counter()
        self._postings: dict[str, dict[int, int]] = {}
        """term -> {row: term frequency} of the documents holding it."""
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """term -> (rows, term frequencies) of its postings, cached until they change."""
        self._stale: set[str] = set()
        """Terms whose arrays (built for a query) an add or a remove dropped: what :meth:`warm` builds again."""
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def add(self, doc_id: str, text: str) -> None:
        terms = Counter(keywords(text))
        if doc_id in self._docs:
            self._replace(doc_id, terms)
            return
        row = self._rows.get(doc_id)
        if row is None:
            row = self._rows[doc_id] = len(self._ids)
            self._ids.append(doc_id)
            if row >= len(self._lengths):
                self._lengths = np.resize(self._lengths, 2 * len(self._lengths))
        self._docs[doc_id] = terms
        length = sum(terms.values())
        self._lengths[row] = length
        self._total_length += length
        for term, tf in terms.items():
            self._df[term] += 1
            self._postings.setdefault(term, {})[row] = tf
            self._drop_arrays(term)

    def _replace(self, doc_id: str, terms: Counter[str]) -> None:
        """A new text for ``doc_id``: only the terms whose frequency changed are touched.

        A played turn is indexed with its neighbours as context, so each turn indexes the two before it
        again with a slightly longer context: most of their terms keep their frequency, and dropping them
        all (as a remove and an add did) made the next query build the arrays of every common word again."""
        row = self._rows[doc_id]
        old = self._docs[doc_id]
        length = sum(terms.values())
        self._total_length += length - int(self._lengths[row])
        self._lengths[row] = length
        self._docs[doc_id] = terms
        for term in old.keys() - terms.keys():
            self._df[term] -= 1
            del self._postings[term][row]
            self._drop_arrays(term)
        for term, tf in terms.items():
            before = old.get(term)
            if before == tf:
                continue
            if before is None:
                self._df[term] += 1
            self._postings.setdefault(term, {})[row] = tf
            self._drop_arrays(term)

    def _drop_arrays(self, term: str) -> None:
        """The postings of ``term`` changed: its arrays, if built, are built again by the next query or
        :meth:`warm` (only terms a query asked for: arrays of the whole vocabulary would double the postings'
        memory)."""
        if self._arrays.pop(term, None) is not None:
            self._stale.add(term)

    def remove(self, doc_id: str) -> None:
        terms = self._docs.pop(doc_id, None)
        if terms is None:
            return
        row = self._rows[doc_id]
        self._total_length -= int(self._lengths[row])
        for term in terms:
            self._df[term] -= 1
            del self._postings[term][row]
            self._drop_arrays(term)

    def _term(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        arrays = self._arrays.get(term)
        if arrays is None:
            postings = self._postings[term]
            rows = np.fromiter(postings.keys(), dtype=np.int64, count=len(postings))
            tfs = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
            arrays = self._arrays[term] = (rows, tfs)
        return arrays

    def warm(self, limit: int | None = None) -> int:
        """Build again the arrays of up to ``limit`` (None: all) terms whose postings changed since a query
        built them, ahead of the next query that needs them (the memory worker does it after a turn is
        recorded: each turn changes the postings of the common words, and building those arrays at query
        time took up to 1.5 ms of a turn's recall). Returns how many were built."""
        built = 0
        while self._stale and (limit is None or built < limit):
            term = self._stale.pop()
            if self._postings.get(term) and term not in self._arrays:
                self._term(term)
                built += 1
        return built

    def row(self, doc_id: str) -> int:
        """The row of ``doc_id`` (added once at least): the position of its score in :meth:`score_array`."""
        return self._rows[doc_id]

    def score_array(self, query: str) -> np.ndarray | None:
        """Every row's BM25 score for ``query`` (0 for a document sharing no term, or removed); None when empty.

        A document's score is the number :meth:`scores` gives it, restricted or not (same operations, same order).
        """
        if not self._docs:
            return None
        total = np.zeros(len(self._ids))
        for rows, contribution in self._contributions(query, None):
            total[rows] += contribution
        return total

    def scores(self, query: str, allowed: Iterable[str] | None = None) -> dict[str, float]:
        """BM25 score of every document sharing a term with ``query`` (optionally restricted)."""
        if not self._docs:
            return {}
        mask = None
        if allowed is not None:
            mask = np.zeros(len(self._ids), dtype=bool)
            rows_of = self._rows
            wanted = [rows_of[i] for i in allowed if i in self._docs]
            mask[np.array(wanted, dtype=np.int64)] = True
        total = np.zeros(len(self._ids))
        touched = np.zeros(len(self._ids), dtype=bool)
        for rows, contribution in self._contributions(query, mask):
            total[rows] += contribution
            touched[rows] = True
        ids = self._ids
        return {ids[row]: float(total[row]) for row in np.flatnonzero(touched).tolist()}

    def _contributions(self, query: str, mask: np.ndarray | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Per query term: the rows holding it (within ``mask``) and what it adds to their scores."""
        n = len(self._docs)
        avg = self._total_length / n or 1.0
        k1, b = self.k1, self.b
        for term, repeats in Counter(keywords(query)).items():
            if not self._postings.get(term):
                continue
            df = self._df[term]
            idf = repeats * math.log(1 + (n - df + 0.5) / (df + 0.5))
            rows, tfs = self._term(term)
            if mask is not None:
                keep = mask[rows]
                rows, tfs = rows[keep], tfs[keep]
            # the item-by-item formula's operations, in its order: the same floats
            norm = tfs + k1 * (1 - b + b * self._lengths[rows] / avg)
            yield rows, idf * tfs * (k1 + 1) / norm

    def search(self, query: str, k: int, allowed: Iterable[str] | None = None) -> list[tuple[str, float]]:
        ranked = sorted(self.scores(query, allowed).items(), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:k]
