"""The narrator interface and the prompt it receives."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import Field, dataclass, field
from typing import Any, ClassVar, Protocol

from game.language.parser import Command
from game.memory.base import MemoryContext
from game.world.acts import Act
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
    required_tokens: int = 0
    """What the prompt carries whatever the budget (persona, answer format, place, quests, action, pinned facts):
    the budget beyond it is memory's."""
    acts: tuple[Act, ...] = ()
    """What the engine read the action to ask (issue 41): the act this turn carries out, resolved to ids. The
    rules apply it whatever the narrator proposes; ``command`` is its parse in the story's names."""
    asks: str = ""
    """What kind of thing the action asks (``Asked.kind``): ``acts``, ``open`` (left to the narrator), ``nothing``
    (a question, a look, a negation...): a narrator proposes no act for the player then."""
    attempt: int = 0
    """How many times the player asked for another telling of this turn (``retry``): a model samples with a
    seed of its own for each, the scripted narrator words it differently."""


class NarratorError(Exception):
    """The narrator could not answer (network fault, timeout, backend error)."""


TextCallback = Callable[[str], None]
"""Where a narrator streams narration text as it is produced."""


class CallRecord(Protocol):
    """One model call as a narrator measured it: a dataclass (the debug trace keeps it as a dict).

    Attributes:
        prompt_tokens: the prompt's tokens as the model counted them (None: not reported).
    """

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def prompt_tokens(self) -> int | None: ...


class Narrator(Protocol):
    """Turns a prompt into the raw text of a JSON turn.

    Besides :meth:`narrate` and :meth:`summarize`, every narrator declares what
    it can do, so no caller probes for it: streaming (:attr:`on_text`), the
    measurements of its last call (:attr:`last_call`) and what it adds to each
    prompt (:attr:`prompt_overhead_tokens`). A narrator without one of these
    keeps the defaults of :class:`NarratorBase`. Story Bible fact extraction is
    the capability of a :class:`FactExtractingNarrator`.
    """

    on_text: TextCallback | None
    """Streaming: called with narration text as it is produced (None: nobody listens).
    A narrator that does not stream never calls it."""

    @property
    def name(self) -> str:
        """Which narrator this is (``scripted``, a preset name, ``local``)."""
        ...

    @property
    def prompt_overhead_tokens(self) -> int:
        """Tokens the narrator adds to each turn's prompt on the wire (the answer schema); 0 when none."""
        ...

    @property
    def last_call(self) -> CallRecord | None:
        """The measurements of the last model call (None: no model call made, or a narrator that makes none)."""
        ...

    def narrate(self, bundle: PromptBundle) -> str:
        """Return the model's raw answer (expected: one JSON object)."""
        ...

    def summarize(self, text: str, max_words: int = 60) -> str:
        """Stateless summary of ``text`` in at most ``max_words`` words."""
        ...


class FactExtractingNarrator(Narrator, Protocol):
    """A narrator that also extracts Story Bible facts (memory's ``FactExtractor``)."""

    dropped_facts: list[str]
    """Why facts of the last :meth:`extract_facts` answer were dropped."""

    def extract_facts(self, text: str, known_keys: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Stateless Story Bible extraction from ``text`` (``known_keys``: entries it may update)."""
        ...


class NarratorBase:
    """The declared capabilities of a narrator that lacks them: no streaming, no measured calls, no overhead."""

    on_text: TextCallback | None = None
    """Set by whoever shows the narration; a narrator that does not stream ignores it."""
    last_call: CallRecord | None = None
    prompt_overhead_tokens: int = 0
