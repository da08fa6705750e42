"""The narrators' settings: plain pydantic models, importable without a narrator's libraries.

``game.config`` builds the player's settings from these before the title
screen shows, so this module imports nothing but pydantic and the standard
library (the narrator modules re-export what they use).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from game.llm.presets import PRESETS, preset_names
from game.text import DEFAULT_PROMPT_BUDGET

JsonMode = Literal["auto", "json_schema", "json_object", "prompt"]


class OpenAISettings(BaseModel):
    """Settings of an OpenAI-compatible narrator (``[openai]`` in the config file).

    Attributes:
        preset: a known endpoint (:data:`PRESETS`) whose defaults fill what is unset.
        base_url: the API root; overrides the preset's.
        api_key_env: NAME of the environment variable holding the key.
        api_key: the key itself (prefer the environment); never printed.
        model: the model name; overrides the preset's.
        json_mode: ``auto`` (the preset's best, falling back on a 400),
            ``json_schema``, ``json_object`` or ``prompt`` (no response_format).
        context_tokens: the model's context window, in tokens.
        cost: how much prompt a turn may spend (``low``: 2,450 tokens, as for local models; ``normal``: 6,000;
            ``high``: 16,000), within the context less the answer; ``prompt_budget_tokens`` set overrides it.
    """

    model_config = ConfigDict(extra="forbid")

    preset: str | None = None
    base_url: str | None = Field(None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    api_key: SecretStr | None = None
    model: str | None = Field(None, min_length=1)
    temperature: float = Field(0.8, ge=0, le=2)
    max_tokens: int = Field(600, ge=16, le=32768)
    timeout_s: float = Field(60.0, gt=0, le=600)
    max_attempts: int = Field(3, ge=1, le=10)
    json_mode: JsonMode = "auto"
    context_tokens: int = Field(8192, ge=2048, le=2_000_000)
    cost: Literal["low", "normal", "high"] = "normal"

    def prompt_budget(self) -> int:
        """The prompt budget for this endpoint (issue 42: a capable model was given the small local models' 2,450
        tokens, and memory got a median of 282): what ``cost`` allows, within the model's context less the
        answer. ``low`` keeps the local models' figure."""
        room = self.context_tokens - self.max_tokens - ANSWER_MARGIN_TOKENS
        return max(MIN_PROMPT_BUDGET, min(room, COST_BUDGETS[self.cost]))

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PRESETS:
            raise ValueError(f"unknown preset {value!r}: one of {preset_names()}")
        return value


ANSWER_MARGIN_TOKENS = 256
"""Context kept free beyond the answer's ``max_tokens`` (the chat template's markup, an estimate's error)."""
MIN_PROMPT_BUDGET = 1000
"""The least budget a prompt gets, whatever the context says (the parts every prompt carries)."""
COST_BUDGETS = {"low": DEFAULT_PROMPT_BUDGET, "normal": 6000, "high": 16000}
"""Prompt tokens an endpoint's turn may take, by the player's ``cost`` setting: the prompt is most of what a turn
costs on a paid endpoint, and most of its latency on a local server."""


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """All cores but one (at least one).

    llama.cpp's threads wait for each other at every step of the graph;
    when another process (or the game's own memory worker) takes a core, a
    thread per core stalls the whole model: measured on 2 cores with the
    other one busy, SmolLM2 generated 4 tokens/s with 2 threads and 42 with 1.
    """
    return max(1, _cores() - 1)


class LocalSettings(BaseModel):
    """Settings of the local narrator.

    Attributes:
        model_path: a GGUF file; unset, the bundled model ``bundled`` found on
            disk through its installed package (never downloaded).
        bundled: which bundled model to use when ``model_path`` is unset.
        n_threads: CPU threads for generation and prompt processing (default:
            all cores but one, see :func:`default_threads`).
        n_ctx: context window in tokens (prompt and answer).
        n_gpu_layers: layers offloaded to a GPU (0: CPU only; -1: all).
        max_tokens: the most tokens of one answer in ``full`` mode.
        temperature: sampling temperature.
        mode: ``full`` (the model writes the JSON turn under a grammar) or
            ``prose`` (the scripted narrator decides, the model rewrites its prose).
        seed: sampling seed, for repeatable runs.
    """

    model_config = ConfigDict(extra="forbid")

    model_path: Path | None = None
    bundled: Literal["smollm2", "gemma3"] = "smollm2"
    n_threads: int = Field(default_factory=default_threads, ge=1, le=256)
    n_ctx: int = Field(4096, ge=512, le=131_072)
    n_gpu_layers: int = Field(0, ge=-1)
    max_tokens: int = Field(400, ge=16, le=8192)
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    mode: Literal["full", "prose"] = "prose"
    seed: int = 0
