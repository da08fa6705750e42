"""The narrator interface and the prompt it receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from game.memory.base import MemoryContext
from game.world.parser import Command
from game.world.rules import RejectedEffect
from game.world.state import GameState


@dataclass
class PromptBlock:
    name: str
    text: str
    tokens: int


@dataclass
class PromptCut:
    """Something the prompt budget left out.

    Attributes:
        block: the memory block (or ``window``) it came from.
        source: the item's source id (or the message's role).
        text: what was cut.
        tokens: its estimated size.
        reason: why (what it was worth to the turn, for how many tokens).
    """

    block: str
    source: str
    text: str
    tokens: int
    reason: str = ""


@dataclass
class PromptBundle:
    """Everything one narrator call gets.

    LLM narrators send ``messages`` (system prompt, L1 window, composed user
    prompt). The scripted narrator cannot read prose, so it reads the same
    turn's structured context instead: ``command``, ``state`` and ``memory``.

    Attributes:
        repair_error: set on the one repair attempt; the validation error of
            the previous answer, which the narrator should fix.
        refused: set when a turn whose effects the rules partly refused is
            asked again, so the narration never tells what did not happen.
    """

    system: str
    user: str
    messages: list[dict[str, str]]
    blocks: list[PromptBlock]
    tokens: int
    action: str
    command: Command
    state: GameState
    memory: MemoryContext
    repair_error: str | None = None
    previous_output: str | None = None
    refused: list[RejectedEffect] = field(default_factory=list)
    """Set when the turn is asked again: the effects the rules refused, with why."""
    token_source: str = "estimate"
    budget_tokens: int | None = None
    cut: list[PromptCut] = field(default_factory=list)
    overhead_tokens: int = 0
    """What the narrator adds to every prompt on the wire (the answer schema), kept out of the budget for memory."""


class NarratorError(Exception):
    """The narrator could not answer (network fault, timeout, backend error)."""


class Narrator(Protocol):
    """Turns a prompt into the raw text of a JSON turn."""

    @property
    def name(self) -> str:
        """Which narrator this is (``scripted``, a preset name, ``local``)."""
        ...

    def narrate(self, bundle: PromptBundle) -> str:
        """Return the model's raw answer (expected: one JSON object)."""
        ...

    def summarize(self, text: str, max_words: int = 60) -> str:
        """Stateless summary of ``text`` in at most ``max_words`` words."""
        ...
