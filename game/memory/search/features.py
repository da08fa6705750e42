"""What recall ranks with, kept row by row between turns: the memories' features and the summaries by turn.

:class:`MemoryFeatures` mirrors each indexed memory's ranking terms into numpy
arrays aligned with the index's metadata table and updated from its journal of
changes; :class:`SummaryIndex` keeps the append-only summaries by id and turn.
Both are read and updated under the owning lock only (``retrieval.py``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from game.memory.search.recall import (
    W_IMPORTANCE,
    W_MATCH,
    W_OPEN_THREAD,
    W_RECENCY,
    W_SEMANTIC,
    ScoredMemory,
    copy_signature,
    distinct,
    hybrid_score,
    recency,
    score_parts,
)
from game.text import keywords


class MemoryFeatures:
    """What ranking reads of each indexed memory, row-aligned with the index's metadata table.

    The relevant-memories ranking scores every memory a query may see (10,000 and more in a long game).
    Scoring them one by one in Python cost ~150 ms a turn; here the per-item terms (importance, turn,
    open thread, NPCs, key words) are kept in numpy arrays on the rows of the index's table, updated
    only for the items the index says changed (:meth:`HybridIndex.changes`), and :meth:`best` scores
    every candidate at once, then computes the exact score of the few that can reach the top with the
    same functions as before (:func:`hybrid_score`, :func:`score_parts`), so the ranking is the one the
    item-by-item loop gave (``tests/test_memory_ranking.py`` holds them equal). Read and updated under
    the index's lock only.
    """

    GROW = 1024

    def __init__(self) -> None:
        self._index: object = None
        self._token: tuple[int, int, int] | None = None
        self._inactive: tuple[Collection[str], tuple[int, int, int] | None, set[str]] | None = None
        self._reset()

    def _reset(self) -> None:
        self.size = 0
        self.importance = np.zeros(0)
        self.turn = np.zeros(0)
        self.game_turn = np.zeros(0, dtype=bool)
        self.thread = np.zeros(0, dtype=bool)
        self.bible = np.zeros(0, dtype=bool)
        self.session: list[Any] = []
        self.npcs: list[frozenset[str]] = []
        self.key_terms: list[frozenset[str]] = []
        self.node: list[str] = []
        self.copy = np.zeros(0, dtype=np.int64)
        """A number per :func:`copy_signature` of the row's text: near-copies share it (see :meth:`best`)."""
        self._copy_numbers: dict[str, int] = {}
        self.by_npc: dict[str, set[int]] = {}
        self.by_term: dict[str, set[int]] = {}
        self._arrays: dict[tuple[str, str], np.ndarray] = {}
        """Cached row arrays of ``by_npc`` / ``by_term`` entries, dropped when the entry changes."""
        self._bible_rows: set[int] = set()
        self.by_node: dict[str, set[int]] = {}
        """Rows of the memories of each place (lower case)."""
        self._nodeless: dict[int, str] = {}
        """Rows of the memories with no place of their own, and their text in lower case (see :meth:`at_place`)."""

    def sync(self, index: Any) -> MemoryFeatures:
        """Bring the rows up to date with ``index`` (a :class:`HybridIndex`, its lock held); returns self."""
        if index is not self._index:
            self._index, self._token, self._inactive = index, None, None
        token, changed = index.changes(self._token)
        rows_of, items = index.table.rows, index.items
        if changed is None:  # first use, or the table was renumbered
            self._reset()
            changed = list(items)
        for doc_id in dict.fromkeys(changed):
            row = rows_of.get(doc_id)
            item = items.get(doc_id)
            if row is not None and item is not None:
                self._set(doc_id, item, row)
        self._token = token
        return self

    def _set(self, doc_id: str, item: Any, row: int) -> None:
        while row >= self.size:
            self.size += 1
            self.session.append(None)
            self.npcs.append(frozenset())
            self.key_terms.append(frozenset())
            self.node.append("")
        if row >= len(self.turn):
            size = max(row + 1, len(self.turn) + self.GROW)
            self.importance = np.resize(self.importance, size)
            self.turn = np.resize(self.turn, size)
            self.game_turn = np.resize(self.game_turn, size)
            self.thread = np.resize(self.thread, size)
            self.bible = np.resize(self.bible, size)
            self.copy = np.resize(self.copy, size)
        for npc in self.npcs[row]:
            self.by_npc.get(npc, set()).discard(row)
            self._arrays.pop(("npc", npc), None)
        for term in self.key_terms[row]:
            self.by_term.get(term, set()).discard(row)
            self._arrays.pop(("term", term), None)
        meta = item.metadata
        numbers = self._copy_numbers
        self.copy[row] = numbers.setdefault(copy_signature(item.text), len(numbers))
        self.importance[row] = int(meta.get("importance", 40))
        self.turn[row] = int(meta.get("turn", 0))
        self.game_turn[row] = bool(meta.get("game_turn"))
        self.thread[row] = meta.get("entry_type") == "open_thread"
        self.bible[row] = doc_id.startswith("bible-")
        (self._bible_rows.add if self.bible[row] else self._bible_rows.discard)(row)
        self.session[row] = meta.get("session")
        self.npcs[row] = frozenset(str(meta.get("npcs", "")).split(","))
        self.key_terms[row] = frozenset(keywords(str(meta.get("key", "")).replace(":", " ").replace("-", " ")))
        self.by_node.get(self.node[row], set()).discard(row)
        self.node[row] = node = str(meta.get("node", "")).lower()
        if node:
            self.by_node.setdefault(node, set()).add(row)
            self._nodeless.pop(row, None)
        else:
            self._nodeless[row] = item.text.lower()
        for npc in self.npcs[row]:
            self.by_npc.setdefault(npc, set()).add(row)
            self._arrays.pop(("npc", npc), None)
        for term in self.key_terms[row]:
            self.by_term.setdefault(term, set()).add(row)
            self._arrays.pop(("term", term), None)

    def _rows(self, kind: str, key: str) -> np.ndarray:
        """The rows of ``by_npc[key]`` (kind "npc") or ``by_term[key]`` ("term") as an array (cached)."""
        found = self._arrays.get((kind, key))
        if found is None:
            rows = (self.by_npc if kind == "npc" else self.by_term).get(key, set())
            found = self._arrays[(kind, key)] = np.fromiter(rows, dtype=np.int64, count=len(rows))
        return found

    def late(self, cutoff: int, ids: list[str | None]) -> set[str]:
        """Played turns (not Bible entries) of the index after ``cutoff`` (still in the L1 window)."""
        size = self.size
        rows = np.flatnonzero(self.game_turn[:size] & (self.turn[:size] > cutoff) & ~self.bible[:size])
        return {doc_id for row in rows.tolist() if (doc_id := ids[row]) is not None}

    def inactive_bible(self, entries: Collection[str], ids: list[str | None]) -> set[str]:
        """Bible entries of the index that are not among ``entries`` (the active ones); the last answer again
        while the rows and ``entries`` (the same object: recall's kept Story Bible view) are unchanged."""
        kept = self._inactive
        if kept is not None and kept[0] is entries and kept[1] == self._token:
            return kept[2]
        found = {doc_id for row in self._bible_rows if (doc_id := ids[row]) is not None and doc_id not in entries}
        self._inactive = (entries, self._token, found)
        return found

    def at_place(self, place: str, ids: list[str | None]) -> list[str]:
        """Memories of ``place`` (lower case): turns played there, facts (no place of their own) that name it."""
        out = [doc_id for row in sorted(self.by_node.get(place, ())) if (doc_id := ids[row]) is not None]
        for row, text in sorted(self._nodeless.items()):
            doc_id = ids[row]
            if doc_id is not None and place in text:
                out.append(doc_id)
        return out

    def involving(
        self, npcs: set[str], ranked: np.ndarray, drop: set[str], session: str, turn: int, table: Any
    ) -> np.ndarray:
        """Rows of the live memories involving one of ``npcs`` that are not ``ranked`` rows nor ``drop`` ids
        and belong to ``session`` up to ``turn``."""
        found = [self._rows("npc", npc) for npc in npcs]
        rows = np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
        if not len(rows):
            return rows
        ids = table.ids
        out = np.zeros(self.size, dtype=bool)
        out[rows] = True
        out[ranked] = False
        out &= self.turn[: self.size] <= turn
        rows = np.flatnonzero(out)
        return np.array(
            [r for r in rows.tolist() if (i := ids[r]) is not None and i not in drop and self.session[r] == session],
            dtype=np.int64,
        )

    def best(
        self,
        rows: np.ndarray,
        semantic: np.ndarray,
        items: dict[str, Any],
        ids: list[str | None],
        turn: int,
        focus: set[str],
        query_terms: set[str],
        half_life: float,
        k: int,
    ) -> list[ScoredMemory]:
        """The best ``k`` distinct memories of ``rows`` (``semantic``: their scaled similarity, aligned)."""
        if not len(rows):
            return []
        match = np.zeros(self.size, dtype=bool)
        for npc in focus:
            match[self._rows("npc", npc)] = True
        for term in query_terms:
            match[self._rows("term", term)] = True
        age = np.maximum(0, turn - self.turn[rows])
        fresh = np.power(0.5, age / half_life) if half_life > 0 else np.ones(len(rows))
        approx = (
            W_SEMANTIC * semantic
            + W_IMPORTANCE * self.importance[rows] / 100
            + W_RECENCY * fresh
            + W_MATCH * match[rows]
            + W_OPEN_THREAD * self.thread[rows]
        )
        margin = 1e-9  # far above the rounding difference of numpy's and Python's arithmetic (~1e-16)
        copies = self.copy[rows]
        size = max(32, 3 * k)
        while True:
            floor = self._floor(approx, copies, size) - margin
            chosen = np.flatnonzero(approx >= floor)
            # of near-copies only those within reach of the best of them can be the one distinct() keeps
            best_copy = np.full(len(self._copy_numbers), -np.inf)
            np.maximum.at(best_copy, copies[chosen], approx[chosen])
            chosen = chosen[approx[chosen] >= best_copy[copies[chosen]] - 2 * margin]
            scored = [
                self._scored(str(ids[row]), row, float(semantic[n]), items, turn, focus, query_terms, half_life)
                for n, row in zip(chosen.tolist(), rows[chosen].tolist(), strict=True)
            ]
            scored.sort(key=lambda m: (-m.score, -m.turn, m.id))
            top = distinct(scored, k)
            # what was left out scores below floor + margin (exactly); what was taken must score above it
            if floor == -np.inf or (len(top) == k and top[-1].score > floor + 2 * margin):
                return top
            size *= 4

    @staticmethod
    def _floor(approx: np.ndarray, copies: np.ndarray, size: int) -> float:
        """The approximate score of the ``size``-th best memory counting near-copies once (-inf: fewer).

        A game repeats itself ("look" a hundred times): counting every copy, the best 32 could be one room
        description 32 times, and :meth:`best` scored exactly four times as many again and again."""
        if size >= len(approx):
            return -np.inf
        wanted = min(len(approx), 4 * size)
        while True:
            top = np.argpartition(-approx, wanted - 1)[:wanted] if wanted < len(approx) else np.arange(len(approx))
            top = top[np.argsort(-approx[top], kind="stable")]
            _, first = np.unique(copies[top], return_index=True)
            if len(first) >= size:
                return float(approx[top[np.sort(first)[size - 1]]])
            if wanted >= len(approx):
                return -np.inf
            wanted = min(len(approx), 4 * wanted)

    def _scored(
        self,
        doc_id: str,
        row: int,
        sem: float,
        items: dict[str, Any],
        turn: int,
        focus: set[str],
        query_terms: set[str],
        half_life: float,
    ) -> ScoredMemory:
        """One memory's score, exactly as the item-by-item ranking computed it."""
        meta = items[doc_id].metadata
        match = bool(self.npcs[row] & focus) or bool(self.key_terms[row] & query_terms)
        terms = (
            sem,
            int(meta.get("importance", 40)),
            recency(turn, int(meta.get("turn", 0)), half_life),
            match,
            meta.get("entry_type") == "open_thread",
        )
        return ScoredMemory(
            doc_id,
            items[doc_id].text,
            hybrid_score(*terms),
            sem,
            int(meta.get("turn", 0)),
            str(meta.get("kind")),
            score_parts(*terms),
        )


class SummaryIndex:
    """The summaries of a memory state (append-only), by id and by turn, extended as they are appended."""

    def __init__(self) -> None:
        self._list: list[Any] | None = None
        self._by_id: dict[str, Any] = {}
        self._turns = np.zeros(0)
        self._seen = 0

    def sync(self, summaries: list[Any]) -> SummaryIndex:
        """Bring up to date with ``summaries`` (read under the memory lock); returns self."""
        if summaries is not self._list or len(summaries) < self._seen:  # another state (a restore)
            self._list, self._by_id, self._seen = summaries, {}, 0
            self._turns = np.zeros(0)
        if len(summaries) > self._seen:
            new = summaries[self._seen :]
            for summary in new:
                self._by_id[summary.id] = summary  # the last one of an id, as a dict built in order keeps
            self._turns = np.concatenate([self._turns, np.array([s.turn for s in new], dtype=np.float64)])
            self._seen = len(summaries)
        return self

    def count(self, turn: int) -> int:
        """How many summaries are of ``turn`` or before."""
        return int(np.count_nonzero(self._turns <= turn))

    def latest(self, turn: int, count: int) -> list[Any]:
        """The last ``count`` summaries (in list order) of ``turn`` or before."""
        assert self._list is not None
        rows = np.flatnonzero(self._turns <= turn)
        return [self._list[row] for row in rows[-count:].tolist()]  # as a list slice: -0 is everything

    def get(self, summary_id: str, turn: int) -> Any:
        """The summary of that id (the last one, in list order, of ``turn`` or before), or None."""
        found = self._by_id.get(summary_id)
        if found is not None and found.turn <= turn:
            return found
        assert self._list is not None
        rows = np.flatnonzero(self._turns <= turn)[::-1].tolist()
        return next((self._list[row] for row in rows if self._list[row].id == summary_id), None)
