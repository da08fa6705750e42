"""Memory's settings and the L1 window's one rule, importable without the memory modules (settings check it)."""

from __future__ import annotations

from dataclasses import dataclass


def check_window(window_messages: int, summary_interval_turns: int) -> None:
    """The consolidation interval must fit in the L1 window, so no turn leaves it unsummarised.

    Raises:
        ValueError: naming both settings.
    """
    if window_messages < 2:
        raise ValueError("window_messages must be at least 2 (one turn)")
    if summary_interval_turns > window_messages // 2:
        raise ValueError(
            f"summary_interval_turns ({summary_interval_turns}) exceeds the turns the working window holds "
            f"({window_messages // 2}); raise window_messages or lower the interval"
        )


ROOMY = {"window_chars": 1200, "relevant_k": 8, "history_k": 4, "knowledge_k": 4, "recent_summaries": 3}
"""What memory offers a narrator with room to read it (an endpoint's prompt budget of :data:`ROOMY_BUDGET` tokens
and more; issue 42: with the small models' figures the five-turn summaries reached 0 of 42 prompts of a capable
model and the window kept one exchange cut to 200 characters). The prompt's budget still decides, by value, what
of it is sent."""
ROOMY_BUDGET = 4000
"""The prompt budget from which memory offers :data:`ROOMY` figures."""


@dataclass
class MemoryConfig:
    """Memory settings (``[memory]`` in storyecho.toml: ``game/config.py``)."""

    window_messages: int = 10
    summary_interval_turns: int = 5
    recency_half_life_turns: float = 50.0
    summary_words: int = 60
    synopsis_words: int = 80
    summary_chars: int = 480
    facts_chars: int = 6000
    """Most recent text one Story Bible extraction call reads (a retried range can be long)."""
    """Character budgets of what memory keeps, whatever a model or a player wrote (a 10,000-character "word")."""
    synopsis_chars: int = 640
    narration_chars: int = 1200
    knowledge_k: int = 3
    relevant_k: int = 6
    history_k: int = 3
    recent_summaries: int = 2
    recent_turns: int = 3
    window_chars: int = 200
    """Characters of each window message the prompt keeps (a telling is 2-5 sentences, 300-900 characters)."""
    max_attempts: int = 3
    retry_delay_s: float = 0.2
    consolidation_wait_s: float = 60.0
    """Longest recall waits at the interval for an unfinished consolidation."""

    def __post_init__(self) -> None:
        check_window(self.window_messages, self.summary_interval_turns)
