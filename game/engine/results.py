"""What a turn returns: the result a front end renders and the trace the debug panel shows.

:class:`TurnResult` is what the Textual game and the headless CLI render (``game/engine/report.py`` turns it into
the ``--json`` line); :class:`DebugTrace` is everything the debug panel shows of one turn. :func:`joined` shows the
turns of one line of several acts as one result.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from game.llm.base import PromptBundle
from game.memory.base import MemoryContext
from game.world.content import ContentPack
from game.world.describe import node_text, npc_now
from game.world.rules import AppliedEffect, Outcome, RejectedEffect
from game.world.state import GameState


@dataclass
class DebugTrace:
    """Everything the debug panel shows about one turn."""

    prompt: PromptBundle | None = None
    memory: MemoryContext | None = None
    raw_output: str = ""
    repair_output: str = ""
    validation_errors: list[str] = field(default_factory=list)
    repaired: bool = False
    dropped_notes: list[str] = field(default_factory=list)
    """Memory notes not kept: malformed (dropped by validation) or refused by the Story Bible, with why."""
    first_rejected: list[RejectedEffect] = field(default_factory=list)
    """What the rules refused in the narrator's first answer, when the turn was asked again because of it."""
    reasked: bool = False
    narration_replaced: bool = False
    """The answer still proposed refused effects: the player read the rules' own account instead."""
    unfounded: list[str] = field(default_factory=list)
    """Sentences of the telling left out because they claimed an act the rules did not carry out (``claims.py``)."""
    reading: list[str] = field(default_factory=list)
    """How the action was read (``Clause.describe``): which clauses bind, and why an act was not asked for."""
    asked: str = ""
    """What the engine read the action to ask, as the narrator's prompt says it (``Asked.line``)."""
    resolved: list[str] = field(default_factory=list)
    """How each clause that asks for an act was resolved against the world (``Asked.notes``)."""
    spoke_for_player: bool = False
    """The first answer spoke or decided for the player (``voice.speaks_for_player``): asked again, then dropped."""
    repeated: bool = False
    """The first answer repeated the last tellings (``voice.repeats``, a model's only): asked again once."""
    usage: list[dict[str, Any]] = field(default_factory=list)
    """What each narrator call of the turn cost, as the model reported it (tokens, cached tokens, attempts, ms)."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    autopilot: str = ""
    """What the memory autopilot made of this turn's narrator time (``autopilot.py``), when it is on."""


@dataclass
class TurnResult:
    """The outcome of one player action, rendered by the TUI or the CLI."""

    turn: int
    action: str
    narration: str
    choices: list[str]
    state: GameState
    ok: bool = True
    meta: str | None = None
    error: str | None = None
    applied: list[AppliedEffect] = field(default_factory=list)
    rejected: list[RejectedEffect] = field(default_factory=list)
    memory_notes: list[str | dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """What the game tells the player beside the story (an autosave that failed, a save loaded from its backup)."""
    free: bool = False
    """The action was answered at no cost (refused, or a word in a fight): the turn did not advance."""
    asking: bool = False
    """The game asks the player back ("Do you mean: take the Healing Herb?"): the next line answers, and
    ``choices`` are the answers (yes and no, or the acts to pick from)."""
    trace: DebugTrace = field(default_factory=DebugTrace)


def joined(results: list[TurnResult]) -> TurnResult:
    """The turns of one line of several acts as one result to show: each telling in order, what each applied and
    refused, and the state, choices and trace of the last (the debug panel keeps each turn in the session's
    history)."""
    last = results[-1]
    return replace(
        last,
        action=results[0].action,
        narration="\n\n".join(r.narration for r in results if r.narration),
        applied=[a for r in results for a in r.applied],
        rejected=[x for r in results for x in r.rejected],
        notices=[n for r in results for n in r.notices],
        ok=all(r.ok for r in results),
        free=all(r.free for r in results),
    )


def by_block(results: list[TurnResult]) -> list[tuple[int, dict[str, int]]]:
    """Prompt tokens per block for each of ``results`` that composed a prompt, in their order (the debug panel's
    chart, ``GameSession.prompt_tokens_by_block``).

    Each is ``(turn, {block name: tokens})`` with the blocks in prompt order
    (``PromptBlock.tokens``, estimated; memory blocks hold what the prompt
    budget left of them). ``turn`` is the turn the prompt was composed for:
    the result's turn for a played turn; for a failed one, the turn it tried
    to play (which a retry then shares). Meta commands and input refused
    before a prompt was composed have no entry.
    """
    out = []
    for result in results:
        prompt = result.trace.prompt
        if prompt is not None:
            out.append((prompt.state.turn + 1, {block.name: block.tokens for block in prompt.blocks}))
    return out


def answered(action: str, verb: str, message: str, ok: bool, state: GameState) -> TurnResult:
    """The result of a command a session answers itself (``verb``: save, load, undo...): no turn is played."""
    return TurnResult(
        turn=state.turn,
        action=action,
        narration=message,
        choices=[],
        state=state.snapshot(),
        ok=ok,
        meta=verb,
        error=None if ok else message,
    )


def unique(rejected: list[RejectedEffect]) -> list[RejectedEffect]:
    """Each refusal once (a refusal of the first answer the second answer repeated is one refusal)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in rejected:
        key = (r.effect, repr(r.value))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def rules_account(outcome: Outcome, before: GameState, after: GameState, pack: ContentPack) -> str:
    """What happened, told by the rules alone: where you are now, whom you spoke to, and what was refused.

    The rules' own messages (items taken, objectives, combat) follow it in the
    narration as on every turn.
    """
    lines = []
    if after.node != before.node:
        lines.append(node_text(after, pack))
    for applied in outcome.applied:
        if applied.effect == "talk_to" and applied.detail in pack.npcs:
            greeting, _ = npc_now(pack.npcs[applied.detail], after)
            lines.append(f'{pack.npcs[applied.detail].name}: "{greeting}"')
    lines += list(dict.fromkeys(r.told for r in outcome.rejected if r.told))
    if not lines and not outcome.messages:  # nothing happened (what the narrator told was not asked): where you are
        lines.append(node_text(after, pack))
    return "\n".join(lines)
