"""Issue 32, item 4: a consolidation after failures works through the backlog in bounded batches.

Was: after summary failures the next summary request held every turn since the last summary, so it grew with
the game (about 16,000 tokens by turn 200 when the summarizer kept failing), and a small-context model, once
behind, could never catch up. Now no request (summary, synopsis or Story Bible extraction) holds more than
``BATCH_TOKENS``, the backlog is summarised oldest first, and a failed batch stays queued.
"""

from __future__ import annotations

import random
from pathlib import Path

from game.engine.pipeline import TurnPipeline
from game.llm.base import NarratorError
from game.llm.scripted import ScriptedNarrator
from game.memory.consolidation import BATCH_TOKENS, MAX_BATCHES
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from game.text import estimate_tokens
from game.world.state import new_game
from tests.conftest import MISTY_OPENING

WALKTHROUGH = Path(__file__).parent / "walkthroughs" / "fantasy_001__victory.txt"


def two_hundred_actions() -> list[str]:
    """The victory walkthrough's first 53 actions (fights, quests, talk: to the throne's door, out of a fight, where
    a question costs no turn), then the opening's questions and moves, more than 200 turns of them (a move refused
    there costs none either: ``play`` counts the turns played)."""
    lines = [line.strip() for line in WALKTHROUGH.read_text().splitlines()]
    walk = [line for line in lines if line and not line.startswith("#")]
    return walk[:53] + MISTY_OPENING * 40


class FaultySummarizer:
    """Fault injection only: wraps the real scripted narrator (its digest writes every summary and synopsis that
    does not fail) and records the size of each request. ``summarize`` fails a call on a seeded coin flip (about
    half of them) or, when ``context`` is set, whenever the request is longer than that many tokens (a
    small-context model), or while ``down``. ``extract_facts`` (the model narrator's Story Bible call, which the
    scripted narrator has not got) always fails: the worst case for the extraction's backlog."""

    def __init__(self, inner: ScriptedNarrator, *, seed: int | None = None, context: int | None = None) -> None:
        self.inner = inner
        self.coin = random.Random(seed) if seed is not None else None
        self.context = context
        self.down = False
        self.turn = 0
        self.requests: list[tuple[int, int]] = []
        """(the game turn it was made after, its tokens), each summary or synopsis request."""
        self.extractions: list[tuple[int, int]] = []

    def summarize(self, text: str, max_words: int = 60) -> str:
        tokens = estimate_tokens(text)
        self.requests.append((self.turn, tokens))
        if self.down or (self.coin is not None and self.coin.random() < 0.5):
            raise NarratorError("summary backend down")
        if self.context is not None and tokens > self.context:
            raise NarratorError("the request does not fit the model's context")
        return self.inner.summarize(text, max_words)

    def extract_facts(self, text: str, known_keys=()) -> list[dict]:
        self.extractions.append((self.turn, estimate_tokens(text)))
        raise NarratorError("extraction backend down")


def play(fantasy, summarizer: FaultySummarizer, turns: int = 200, down_until: int = 0) -> GameMemory:
    """Play ``turns`` turns (the summarizer down until turn ``down_until``), checking every request's size."""
    config = MemoryConfig(max_attempts=1, retry_delay_s=0)
    memory = GameMemory(fantasy, summarizer, config=config, background=False)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    for action in two_hundred_actions():
        if engine.state.turn == turns:
            break
        summarizer.turn = engine.state.turn + 1
        summarizer.down = summarizer.turn <= down_until
        engine.play(action)
        largest = max((tokens for _, tokens in summarizer.requests), default=0)
        assert largest <= BATCH_TOKENS, (engine.state.turn, largest)  # at every turn, not only at the end
    assert engine.state.turn == turns
    return memory


def covered(memory: GameMemory) -> list[int]:
    """The turns the summaries cover, in order (each once: no gap, no overlap)."""
    return [t for s in memory.state.summaries for t in range(s.first_turn, s.turn + 1)]


def test_summary_requests_stay_under_the_budget_when_the_summarizer_fails_half_the_time(fantasy):
    faulty = FaultySummarizer(ScriptedNarrator(fantasy), seed=7)
    memory = play(fantasy, faulty)
    failed = [f for f in memory.failures if f.startswith("summary of")]
    assert len(failed) >= 10  # the summarizer did fail, often
    assert all(tokens <= BATCH_TOKENS for _, tokens in faulty.extractions)
    assert max(tokens for _, tokens in faulty.extractions) > BATCH_TOKENS // 2  # it read a full batch
    # the backlog is summarised, oldest first, with no turn lost or summarised twice
    last = memory.state.last_consolidated_turn
    assert covered(memory) == list(range(1, last + 1))
    assert last >= 190
    for _ in range(10):  # what is still queued goes at the next consolidations
        memory.consolidate(200)
    assert covered(memory) == list(range(1, 201))
    assert max(tokens for _, tokens in faulty.requests) <= BATCH_TOKENS


def test_a_small_context_model_catches_up_after_an_outage(fantasy):
    """Was: the request after a 40-turn outage no longer fit the model; every later one failed too."""
    faulty = FaultySummarizer(ScriptedNarrator(fantasy), context=BATCH_TOKENS)
    memory = play(fantasy, faulty, turns=120, down_until=40)
    failed = [f for f in memory.failures if f.startswith("summary of turns 1-")]
    assert len(failed) >= 40 // memory.config.summary_interval_turns  # every consolidation of the outage
    assert max(tokens for _, tokens in faulty.requests) <= BATCH_TOKENS
    assert covered(memory) == list(range(1, 121))  # caught up: every turn summarised once, in order


def test_a_long_backlog_is_worked_through_a_few_batches_per_consolidation(fantasy):
    faulty = FaultySummarizer(ScriptedNarrator(fantasy))
    memory = play(fantasy, faulty, turns=120, down_until=120)
    assert memory.state.summaries == []
    faulty.down = False
    before = len(faulty.requests)
    memory.consolidate(120)
    made = memory.state.summaries
    assert 1 < len(made) <= MAX_BATCHES  # several bounded batches, then the rest waits for the next one
    assert covered(memory) == list(range(1, made[-1].turn + 1)) and made[-1].turn < 120
    assert all(tokens <= BATCH_TOKENS for _, tokens in faulty.requests[before:])
    while memory.state.last_consolidated_turn < 120:
        memory.consolidate(120)
    assert covered(memory) == list(range(1, 121))
