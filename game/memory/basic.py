"""A small, dependency-free memory: L1 window, L2 log and keyword recall.

This is the memory the headless game uses until the full memory layer (Chroma
history, Story Bible, embedded knowledge base) is wired in. It is real, not a
stub: the working window keeps the last ``window_messages`` messages, the log
keeps every turn, and recall ranks knowledge entries and logged turns by
keyword overlap, so a question about something said 50 turns ago still finds
it. ``retrieval_meta.strategy`` is ``keyword``.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from game.llm.tokens import estimate_tokens
from game.memory.base import MemoryBlock, MemoryContext, MemoryItem, TurnRecord
from game.world.content import ContentPack
from game.world.state import GameState

_STOPWORD_TEXT = """
a an the and or but of to in on at for with from by is are was were be been it its this that
these those i you he she we they me my your his her our their what where who whom why how when
which do does did can could will would should about into there here as if so not no yes all
any some just then than too very have has had am go look
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
MESSAGE_CHARS = 200


def keywords(text: str) -> list[str]:
    """Lower-case content words of ``text`` (crude plural folding)."""
    words = re.findall(r"[a-z0-9#']+", text.lower())
    out = []
    for word in words:
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word and word not in STOPWORDS:
            out.append(word)
    return out


class KeywordIndex:
    """Tiny TF-IDF-style ranker over short documents."""

    def __init__(self) -> None:
        self.docs: list[tuple[str, str, Counter[str]]] = []
        self.df: Counter[str] = Counter()

    def add(self, text: str, source: str) -> None:
        terms = Counter(keywords(text))
        self.docs.append((text, source, terms))
        self.df.update(terms.keys())

    def search(self, query: str, k: int) -> list[MemoryItem]:
        query_terms = set(keywords(query))
        if not query_terms:
            return []
        n = len(self.docs)
        scored: list[tuple[float, int]] = []
        for index, (_, _, terms) in enumerate(self.docs):
            score = sum(math.log(1 + n / self.df[t]) for t in query_terms if t in terms)
            if score > 0:
                scored.append((score / math.sqrt(1 + len(terms) / 20), index))
        scored.sort(key=lambda pair: (-pair[0], -pair[1]))
        top = scored[0][0] if scored else 1.0
        return [MemoryItem(self.docs[i][0], round(s / top, 3), self.docs[i][1]) for s, i in scored[:k]]


class BasicMemory:
    """L1 window + L2 log + keyword recall over the log and the story's knowledge."""

    def __init__(self, pack: ContentPack, window_messages: int = 10, knowledge_k: int = 3, history_k: int = 4) -> None:
        if window_messages < 2:
            raise ValueError("window_messages must be at least 2 (one turn)")
        self.pack = pack
        self.window_messages = window_messages
        self.knowledge_k = knowledge_k
        self.history_k = history_k
        self.window: list[dict[str, str]] = []
        self.log: list[TurnRecord] = []
        self._knowledge = KeywordIndex()
        for entry in pack.knowledge:
            self._knowledge.add(f"{entry.title}: {entry.content}", f"knowledge:{entry.id}")
        self._history = KeywordIndex()

    def recall(self, action: str, state: GameState) -> MemoryContext:
        blocks = [
            self._block("knowledge", "Lore (knowledge base)", "kb", self._knowledge.search(action, self.knowledge_k)),
            self._block("history_recall", "Recalled history", "L2", self._history_hits(action)),
            self._block("recent_story", "Recent events", "L2", self._recent_events()),
        ]
        meta = {"strategy": "keyword", "log_turns": len(self.log), "window_messages": len(self.window)}
        return MemoryContext(blocks=blocks, retrieval_meta=meta, window=list(self.window))

    def _history_hits(self, action: str) -> list[MemoryItem]:
        recent_turns = {r.turn for r in self.log[-3:]}
        hits = self._history.search(action, self.history_k + 3)
        return [h for h in hits if int(h.source.split(":")[1]) not in recent_turns][: self.history_k]

    def _recent_events(self) -> list[MemoryItem]:
        out = []
        for record in self.log[-3:]:
            events = "; ".join(record.events) or "no change"
            out.append(MemoryItem(f"Turn {record.turn} ({record.action}): {events}", 1.0, f"turn:{record.turn}"))
        return out

    @staticmethod
    def _block(name: str, title: str, layer: str, items: list[MemoryItem]) -> MemoryBlock:
        block = MemoryBlock(name=name, title=title, layer=layer, items=items)
        block.tokens = estimate_tokens(block.render())
        return block

    def record_turn(self, record: TurnRecord, state: GameState) -> None:
        self.log.append(record)
        self._history.add(f"Turn {record.turn}: player: {record.action} | {record.narration}", f"turn:{record.turn}")
        self.window.append({"role": "user", "content": record.action[:MESSAGE_CHARS]})
        self.window.append({"role": "assistant", "content": record.narration[:MESSAGE_CHARS]})
        del self.window[: max(0, len(self.window) - self.window_messages)]
