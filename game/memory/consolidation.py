"""A consolidation's work on the turns since the last one: what it reads, what it asks, the summary it makes.

``GameMemory.consolidate`` (the memory worker) gathers a :class:`Batch` under
memory's lock, asks the summarizer outside it (:func:`ask`: the summary, the
synopsis and, from a model narrator, Story Bible facts; each call retried),
then commits :func:`make_summary`'s result under the lock again, unless a save
was loaded meanwhile. No sentence that orders the narrator about or quotes its
system prompt is summarised or kept (``guard.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from game.memory.bible import Outcome, StoryBible
from game.memory.guard import strip_instructions
from game.memory.records import BibleEntry, Episode, MemoryState, Summary
from game.memory.settings import MemoryConfig
from game.text import clip

log = logging.getLogger("storyecho.memory")

T = TypeVar("T")


class Summarizer(Protocol):
    def summarize(self, text: str, max_words: int = 60) -> str: ...


@runtime_checkable
class FactExtractor(Protocol):
    """A summarizer that can also extract Story Bible facts (a model narrator, see ``OpenAINarrator``)."""

    def extract_facts(self, text: str, known_keys: Iterable[str] = ()) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Batch:
    """What a consolidation of turns ``first`` to ``upto`` reads, as of memory ``generation``."""

    generation: int
    first: int
    upto: int
    episodes: list[Episode]
    text: str
    """The turns as the summary reads them (``Turn N at PLACE: ...``)."""
    previous: str
    """The synopsis before this consolidation."""
    facts_first: int
    """The first turn the fact extraction reads (an earlier failed extraction's turns are read again)."""
    facts_text: str
    known: list[str]
    """The active Story Bible keys, for the extraction."""


@dataclass(frozen=True)
class Answers:
    summary: str
    synopsis: str | None
    facts: list[dict[str, Any]] | None
    """None: the extraction failed (or was not asked)."""


def gather(
    state: MemoryState, known: list[str], config: MemoryConfig, persona: str, generation: int, upto: int
) -> Batch | None:
    """The batch of the turns since the last consolidation up to ``upto`` (call under memory's lock); None for none."""
    first = state.last_consolidated_turn + 1
    episodes = [e for e in state.log if first <= e.turn <= upto and e.action]
    if not episodes:
        return None
    facts_first = min(state.facts_from or first, first)
    facts_text = "\n".join(
        strip_instructions(f"Turn {e.turn}: {e.action}. {e.narration}", persona)
        for e in state.log
        if facts_first <= e.turn <= upto and e.action
    )[-config.facts_chars :]
    text = "\n".join(strip_instructions(e.text(), persona) for e in episodes)
    return Batch(generation, first, upto, episodes, text, state.synopsis, facts_first, facts_text, known)


def ask(
    summarizer: Summarizer, extractor: FactExtractor | None, batch: Batch, config: MemoryConfig, persona: str
) -> Answers | None:
    """The summarizer's answers for ``batch``; None when the summary failed (the turns stay queued)."""
    answer = retry(lambda: summarizer.summarize(batch.text, config.summary_words), config)
    summary = clip(strip_instructions(answer or "", persona), config.summary_chars)
    if not summary:
        return None
    synopsis = retry(lambda: summarizer.summarize(f"{batch.previous} {summary}".strip(), config.synopsis_words), config)
    facts = retry(lambda: extractor.extract_facts(batch.facts_text, batch.known), config) if extractor else None
    return Answers(summary, synopsis, facts)


def make_summary(batch: Batch, answers: Answers, config: MemoryConfig, persona: str) -> Summary:
    synopsis = clip(strip_instructions(answers.synopsis or "", persona), config.synopsis_chars)
    return Summary(
        first_turn=batch.first,
        turn=batch.upto,
        text=answers.summary,
        node=batch.episodes[-1].node,
        npcs=sorted({n for e in batch.episodes for n in e.npcs}),
        synopsis=synopsis or batch.previous,
    )


def extracted(
    bible: StoryBible,
    state: MemoryState,
    failures: list[str],
    facts: list[dict[str, Any]] | None,
    batch: Batch,
    npcs: list[str],
) -> list[tuple[BibleEntry, Outcome]]:
    """Apply an extraction answer to the Bible (under memory's lock); a failed one (None) leaves its turns queued
    for the next consolidation (``state.facts_from``) and is noted in ``failures``."""
    first, upto = batch.facts_first, batch.upto
    if facts is None:
        state.facts_from = first
        failures.append(f"story bible extraction of turns {first}-{upto}")
        log.warning("fact extraction of turns %d-%d failed; retried at the next consolidation", first, upto)
        return []
    state.facts_from = None
    return list(bible.from_extraction(facts, upto, npcs))


def retry(call: Callable[[], T], config: MemoryConfig) -> T | None:
    """``call()``, tried ``config.max_attempts`` times; None when every attempt failed."""
    for attempt in range(1, config.max_attempts + 1):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - any failure of the narrator call is retried
            log.warning("memory call failed (attempt %d/%d): %s", attempt, config.max_attempts, exc)
            if attempt < config.max_attempts:
                time.sleep(config.retry_delay_s * attempt)
    return None
