"""Ranking and block assembly for recall.

Blocks go from stable to dynamic; recall only finds and scores, the prompt
budget (``game/engine/prompt.py``) decides what of it the narrator receives:

    pinned            Story Bible entries the player pinned: always injected, whole
    bible_core        characters: the player and the people present (never cut), those the action
                      names, those the player has met
    knowledge         knowledge-base hits (k=3, 300-character snippets)
    open_threads      unresolved threads (importance >= 30)
    relevant_memories hybrid-scored Bible entries (world and item lore among them) and past turns
    history_recall    recent summaries plus vector hits, newest first
    recent_story      what the rules did in the last turns

The Story Bible's style and safety rules are not recalled: the persona and the
answer format say them once (``prompt.py``).

Relevant memories score ``0.5 semantic + 0.3 importance + 0.2 recency + 0.1
type/key match + 0.05 open thread``; recency halves every
``recency_half_life_turns`` game turns; each item keeps these terms in
``MemoryItem.parts`` (:func:`score_parts`), so the debug panel can show why it
ranked where it did. Items a fixed section already shows are not repeated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from game.memory.base import MemoryBlock, MemoryItem
from game.text import estimate_tokens

MEMORY_HEADER = "Memory: established facts of this story. Stay consistent with them; never contradict them."

W_SEMANTIC = 0.5
W_IMPORTANCE = 0.3
W_RECENCY = 0.2
W_MATCH = 0.1
W_OPEN_THREAD = 0.05


TITLES = {
    "pinned": "Story Bible: pinned by the player",
    "bible_core": "Story Bible: characters",
    "knowledge": "Lore (knowledge base)",
    "open_threads": "Open threads",
    "relevant_memories": "Relevant memories",
    "history_recall": "History (summaries)",
    "recent_story": "Recent events",
}
LAYERS = {
    "pinned": "bible",
    "bible_core": "bible",
    "knowledge": "kb",
    "open_threads": "bible",
    "relevant_memories": "bible+L2",
    "history_recall": "history",
    "recent_story": "L2",
}


def score_parts(semantic: float, importance: int, recency: float, match: bool, open_thread: bool) -> dict[str, float]:
    """The weighted terms of a relevant memory's score (:func:`hybrid_score` is their sum).

    ``semantic``, ``importance`` and ``recency`` are always there; the bonuses
    ``match`` and ``open_thread`` only when earned.
    """
    parts = {
        "semantic": W_SEMANTIC * semantic,
        "importance": W_IMPORTANCE * importance / 100,
        "recency": W_RECENCY * recency,
    }
    if match:
        parts["match"] = W_MATCH
    if open_thread:
        parts["open_thread"] = W_OPEN_THREAD
    return parts


def hybrid_score(semantic: float, importance: int, recency: float, match: bool, open_thread: bool) -> float:
    return (
        W_SEMANTIC * semantic
        + W_IMPORTANCE * importance / 100
        + W_RECENCY * recency
        + W_MATCH * float(match)
        + W_OPEN_THREAD * float(open_thread)
    )


def rounded(parts: dict[str, float]) -> dict[str, float]:
    """Score parts as an item shows them (3 decimals, like its score)."""
    return {name: round(value, 3) for name, value in parts.items()}


def recency(current_turn: int, turn: int, half_life_turns: float) -> float:
    if half_life_turns <= 0:
        return 1.0
    return float(0.5 ** (max(0, current_turn - turn) / half_life_turns))


@lru_cache(maxsize=4096)
def _tokens(text: str) -> int:
    """:func:`estimate_tokens`, remembered: the Story Bible's blocks repeat the same entries every turn."""
    return estimate_tokens(text)


def make_block(name: str, items: list[MemoryItem]) -> MemoryBlock:
    """A block of ``items`` (best first); the prompt budget decides how many of them the prompt holds."""
    block = MemoryBlock(name=name, title=TITLES.get(name, name), layer=LAYERS.get(name, "memory"), items=items)
    block.tokens = _tokens(block.render()) if items else 0
    return block


@dataclass
class ScoredMemory:
    """A ranked memory: ``score`` is the sum of ``parts`` (see :func:`score_parts`), ``semantic`` the scaled
    similarity before its weight."""

    id: str
    text: str
    score: float
    semantic: float
    turn: int
    kind: str
    parts: dict[str, float] = field(default_factory=dict)


_TURN_PREFIX = re.compile(r"^Turn \d+(?: at [^:]*)?: ")


def copy_signature(text: str) -> str:
    """What two near-copies of a memory share (see :func:`distinct`): its text without the turn prefix,
    lower case, spaces collapsed, its first 100 characters."""
    return " ".join(_TURN_PREFIX.sub("", text).lower().split())[:100]


def distinct(ranked: list[ScoredMemory], k: int) -> list[ScoredMemory]:
    """The best ``k`` memories, skipping near-copies of one already taken.

    Games repeat themselves ("look", walking the same path): without this, ten
    copies of one room description crowd out the one turn that mattered.
    """
    seen: set[str] = set()
    out = []
    for memory in ranked:
        signature = copy_signature(memory.text)
        if signature in seen:
            continue
        seen.add(signature)
        out.append(memory)
        if len(out) == k:
            break
    return out
