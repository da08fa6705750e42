"""A consolidation's work on the turns since the last one: what it reads, what it asks, the summary it makes.

``GameMemory.consolidate`` (the memory worker) gathers a :class:`Batch` under
memory's lock, asks the summarizer outside it (:func:`ask`: the summary, the
synopsis and, from a model narrator, Story Bible facts; each call retried),
then commits it (:func:`commit`) under the lock again, unless a save was loaded
meanwhile (:func:`settled`). No sentence that orders the narrator about or
quotes its system prompt is summarised or kept (``guard.py``), and a turn that
only answered a question about the past is never read (``people.evidence``).

**Bounded batches.** A batch holds the oldest unsummarised turns that fit
:data:`BATCH_TOKENS` (``estimate_tokens``), so no request grows with the game:
after failures the backlog is worked through oldest first, up to
:data:`MAX_BATCHES` batches per consolidation (a longer backlog waits for the
next one, five turns later: each consolidation takes more turns than an
interval adds, so it catches up). A batch that fails stays queued, and the
consolidation stops there. The Story Bible extraction reads its own backlog
(an earlier failed extraction's turns, ``state.facts_from``) the same way,
oldest first within the same budget. The synopsis request is the last
synopsis and one summary, both clipped (``synopsis_chars``, ``summary_chars``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from game.memory.bible import Outcome, StoryBible
from game.memory.guard import strip_instructions
from game.memory.people import evidence, people
from game.memory.records import BibleEntry, Episode, MemoryState, Summary
from game.memory.settings import MemoryConfig
from game.text import clip, estimate_tokens

log = logging.getLogger("storyecho.memory")

T = TypeVar("T")

BATCH_TOKENS = 1000
"""Most tokens of turns one summary or extraction request reads (``estimate_tokens`` of its text): about three
intervals of an average game (~60 tokens a turn), so a model with a 2,048-token context fits it, its
instructions and its answer."""
MAX_BATCHES = 3
"""Most batches one consolidation summarises (each a summary, a synopsis and an extraction call)."""


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
    facts_upto: int
    """The last turn the extraction reads (before ``upto`` when its backlog is longer than a batch)."""
    place: str
    """Where the last turn of the batch was played."""


@dataclass(frozen=True)
class Answers:
    summary: str
    synopsis: str | None
    facts: list[dict[str, Any]] | None
    """None: the extraction failed (or was not asked)."""
    extracting: bool = False
    """Whether an extraction was asked (its failure is then queued)."""


def _within(lines: list[tuple[int, str]], tokens: int, chars: int) -> list[tuple[int, str]]:
    """The first of ``lines`` (turn, text; oldest first) that fit ``tokens`` and ``chars`` together: at least
    the first, cut to fit."""
    kept: list[tuple[int, str]] = []
    used = length = 0
    for turn, line in lines:
        cost, size = estimate_tokens(line) + 1, len(line) + 1
        if kept and (used + cost > tokens or length + size > chars):
            break
        kept.append((turn, line))
        used, length = used + cost, length + size
    while len(kept) > 1 and estimate_tokens("\n".join(line for _, line in kept)) > tokens:
        kept.pop()  # the estimate of the whole can exceed the sum of its lines'
    if len(kept) == 1:
        turn, line = kept[0][0], kept[0][1][:chars]
        while estimate_tokens(line) > tokens:
            line = line[: len(line) * 9 // 10]
        kept = [(turn, line)]
    return kept


def gather(
    state: MemoryState, known: list[str], config: MemoryConfig, persona: str, generation: int, upto: int
) -> Batch | None:
    """The next batch: the oldest turns not consolidated, up to ``upto``, that fit :data:`BATCH_TOKENS` (call under
    memory's lock); None when there are none."""
    first = state.last_consolidated_turn + 1
    backlog = [e for e in state.log if first <= e.turn <= upto and e.action]
    if not backlog:
        return None
    lines = [(e.turn, strip_instructions(e.text() + e.mark(), persona)) for e in backlog if evidence(e)]
    taken = _within(lines, BATCH_TOKENS, BATCH_TOKENS * 8)
    end = upto if len(taken) == len(lines) else taken[-1][0]
    episodes = [e for e in backlog if e.turn <= end and evidence(e)]
    facts_first = min(state.facts_from or first, first)
    unread = [
        (e.turn, strip_instructions(f"Turn {e.turn}: {e.action}. {e.narration}{e.mark()}", persona))
        for e in state.log
        if facts_first <= e.turn <= end and evidence(e)
    ]
    facts = _within(unread, BATCH_TOKENS, config.facts_chars)
    facts_upto = facts[-1][0] if len(facts) < len(unread) else end
    place = [e for e in backlog if e.turn <= end][-1].node
    return Batch(
        generation,
        first,
        end,
        episodes,
        "\n".join(line for _, line in taken),
        state.synopsis,
        facts_first,
        "\n".join(line for _, line in facts),
        known,
        facts_upto,
        place,
    )


def ask(
    summarizer: Summarizer, extractor: FactExtractor | None, batch: Batch, config: MemoryConfig, persona: str
) -> Answers | None:
    """The summarizer's answers for ``batch``; None when the summary failed (the turns stay queued)."""
    if batch.text:
        answer = retry(lambda: summarizer.summarize(batch.text, config.summary_words), config)
        summary = clip(strip_instructions(answer or "", persona), config.summary_chars)
        if not summary:
            return None
        synopsis = retry(
            lambda: summarizer.summarize(f"{batch.previous} {summary}".strip(), config.synopsis_words), config
        )
    else:  # only recollections: nothing happened to ask about
        summary, synopsis = f"At {batch.place}, the player thought back on earlier events; nothing new happened.", None
    facts: list[dict[str, Any]] | None = None
    if extractor is not None and batch.facts_text:
        facts = retry(lambda: extractor.extract_facts(batch.facts_text, batch.known), config)
    elif extractor is not None:
        facts = []
    return Answers(summary, synopsis, facts, extractor is not None)


def settled(batch: Batch, answers: Answers | None, generation: int, failures: list[str]) -> Answers | None:
    """``answers`` when they are to be committed (call under memory's lock); None when the summary failed (noted
    in ``failures``) or another memory state was loaded meanwhile (a summary of another timeline)."""
    span = f"{batch.first}-{batch.upto}"
    if answers is None:
        failures.append(f"summary of turns {span}")
        log.warning("summary of turns %s failed; they stay queued for the next consolidation", span)
        return None
    if batch.generation != generation:
        log.info("summary of turns %s discarded: another memory state was loaded", span)
        return None
    return answers


def commit(
    state: MemoryState,
    bible: StoryBible | None,
    batch: Batch,
    answers: Answers,
    config: MemoryConfig,
    persona: str,
    failures: list[str],
) -> tuple[Summary, list[BibleEntry]]:
    """Keep a batch's summary (under memory's lock): the summary, the turns consolidated, and the Story Bible's
    facts (what happened with each person the player was with, ``people.py``; the extraction's); returns the
    summary and the Bible entries changed."""
    summary = make_summary(batch, answers, config, persona)
    state.summaries.append(summary)
    state.last_consolidated_turn = batch.upto
    if bible is None:
        return summary, []
    met = people(bible.pack, batch.episodes, config.summary_words)
    clean = {npc: (a, b, strip_instructions(text, persona)) for npc, (a, b, text) in met.items()}
    results = bible.from_summary({npc: told for npc, told in clean.items() if told[2]}, batch.upto)
    if answers.extracting:
        results += extracted(bible, state, failures, answers.facts, batch, summary.npcs)
    bible.age_threads(batch.upto)
    return summary, [entry for entry, _ in results]


def make_summary(batch: Batch, answers: Answers, config: MemoryConfig, persona: str) -> Summary:
    synopsis = clip(strip_instructions(answers.synopsis or "", persona), config.synopsis_chars)
    return Summary(
        first_turn=batch.first,
        turn=batch.upto,
        text=answers.summary,
        node=batch.place,
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
    for the next consolidation (``state.facts_from``) and is noted in ``failures``, and turns a long backlog did
    not fit in the request stay queued too."""
    first, upto = batch.facts_first, batch.facts_upto
    if facts is None:
        state.facts_from = first
        failures.append(f"story bible extraction of turns {first}-{upto}")
        log.warning("fact extraction of turns %d-%d failed; retried at the next consolidation", first, upto)
        return []
    state.facts_from = upto + 1 if upto < batch.upto else None
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
