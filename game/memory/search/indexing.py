"""What memory indexes for each record: its text, the context that helps find it, its metadata.

A played turn is indexed with its neighbouring turns as context (``CONTEXT_TURNS``
on each side, never across segments), so appending a turn changes the context
of the ones before it; a Bible entry and a summary are indexed alone. Metadata
carries the session and the turn every query filters on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from game.memory.records import BibleEntry, Episode, Summary

CONTEXT_SEPARATOR = " | context: "
"""Between an item and its context in the text embedded for it (``hybrid.HybridIndex``)."""


@dataclass
class IndexItem:
    """What is indexed for one id.

    Attributes:
        text: the item itself (what recall shows).
        context: neighbouring text that helps find it ("" for none).
        keyword_text: what BM25 indexes (defaults to text + context).
    """

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    context: str = ""
    keyword_text: str | None = None


CONTEXT_TURNS = 2
"""Turns on each side that give a turn its context (for embedding and keywords)."""


SCAN = 50
"""How far back and ahead an episode's context is looked for past turns that only recalled (never evidence)."""


def _neighbours(log: list[Episode], position: int, step: int) -> list[Episode]:
    """Up to ``CONTEXT_TURNS`` episodes of the same segment on one side, skipping turns that only recalled."""
    segment = log[position].segment
    stop = max(-1, position - SCAN) if step < 0 else min(len(log), position + SCAN)
    found = (log[n] for n in range(position + step, stop, step) if not log[n].recalled)
    return [e for e in islice(found, CONTEXT_TURNS) if e.segment == segment]


def episode_item(log: list[Episode], position: int, session: str) -> IndexItem:
    """What is indexed for ``log[position]`` (a turn that only recalled the past is never indexed: see
    :func:`episode_items`)."""
    episode = log[position]
    before, after = _neighbours(log, position, -1), _neighbours(log, position, 1)
    window = [*reversed(before), episode, *after]
    context = " ".join(e.text() for e in window if e is not episode)
    return IndexItem(
        episode.id,
        episode.text(),
        episode_meta(episode, session),
        context=context,
        keyword_text=" ".join(e.text() for e in window),
    )


def episode_items(log: list[Episode], session: str) -> list[IndexItem]:
    """Every episode that is evidence: a turn that only answered a question about the past is not."""
    return [episode_item(log, n, session) for n in range(len(log)) if not log[n].recalled]


def latest_episode_items(log: list[Episode], session: str) -> list[IndexItem]:
    """The newest episode and the ones before it whose context it just changed (none when it only recalled)."""
    last = len(log) - 1
    if last < 0 or log[last].recalled:
        return []
    earlier = [n for n in range(last - 1, max(-1, last - SCAN), -1) if not log[n].recalled][:CONTEXT_TURNS]
    return [episode_item(log, n, session) for n in [*reversed(earlier), last]]


def entry_item(entry: BibleEntry, session: str) -> IndexItem:
    meta = {
        "session": session,
        "turn": entry.source_turn,
        "kind": "bible",
        "entry_type": entry.entry_type,
        "key": entry.canonical_key,
        "npcs": ",".join(entry.npcs),
        "importance": entry.importance,
    }
    return IndexItem(entry.id, entry.text(), meta)


def summary_item(summary: Summary, session: str) -> IndexItem:
    meta = {"session": session, "turn": summary.turn, "node": summary.node, "npcs": ",".join(summary.npcs)}
    return IndexItem(summary.id, summary.labelled(), meta)


def episode_meta(episode: Episode, session: str) -> dict[str, Any]:
    return {
        "session": session,
        "turn": episode.turn,
        "kind": "turn" if episode.action else "note",
        "game_turn": bool(episode.action),
        "node": episode.node,
        "when": episode.when,
        "npcs": ",".join(episode.npcs),
        "importance": episode.importance,
    }
