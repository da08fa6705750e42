"""What a call to an OpenAI-compatible endpoint cost, as the server reported it, and how it went."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai.types import CompletionUsage


@dataclass
class CallStats:
    """What one call cost and how it went (the debug trace shows it).

    Attributes:
        attempts: HTTP requests made (retries and a JSON-mode fallback included).
        cached_tokens: prompt tokens the server served from its cache, when it says.
        json_mode: the mode of the request that answered (or of the last one).
        time_to_first_token_ms: from the start of the call (retries included) to the first text.
        error: why the call failed (None when it answered).
    """

    purpose: str
    model: str
    attempts: int = 0
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    json_mode: str = "prompt"
    schema_in_prompt: bool = False
    response_format: str = ""
    """The ``response_format`` sent beside the messages, as JSON (empty: none): the debug panel shows it."""
    elapsed_ms: float = 0.0
    time_to_first_token_ms: float | None = None
    error: str | None = None


def read_usage(usage: CompletionUsage, stats: CallStats) -> None:
    """Put what the server reported of a call's tokens into ``stats``."""
    # the SDK builds usage without validating it: a field the server left out is None, not an error
    stats.prompt_tokens = usage.prompt_tokens
    stats.completion_tokens = usage.completion_tokens
    details = usage.prompt_tokens_details
    cached = details.cached_tokens if details is not None else None
    if cached is None:  # DeepSeek reports its context cache its own way, a field the SDK does not know
        cached = (usage.model_extra or {}).get("prompt_cache_hit_tokens")
    stats.cached_tokens = cached if isinstance(cached, int) else None
