"""The turn pipeline: parse, snapshot, recall, compose, narrate, validate,
adjudicate, record.

The pipeline works on a snapshot of the state and only swaps it in when the
whole turn succeeded, so a failed turn (narrator down, unparseable answer)
leaves the game exactly as it was and tells the player why.

Invariants (each has a test in ``tests/test_turn_atomicity.py``):

- a turn commits game state and memory together or neither: memory records
  the turn all or nothing, and the new state is swapped in only after that;
- nothing a narrator returns, and nothing that fails inside a turn, ends the
  program: :meth:`TurnPipeline.play` never raises;
- the trace holds what the narrator was shown (a snapshot), not the live
  state the rules then change; the rules alone advance the turn and the clock.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from game.engine.autopilot import Autopilot
from game.engine.prompt import compose
from game.engine.schema import TurnOutput, TurnParseError, parse_turn
from game.engine.voice import RECENT, Voice, judge, mended
from game.llm.base import Narrator, NarratorError, PromptBundle
from game.memory.base import Memory, MemoryContext, TurnRecord
from game.memory.vectors.foreground import FOREGROUND
from game.text import DEFAULT_PROMPT_BUDGET
from game.world.choices import choices_after
from game.world.content import ContentPack
from game.world.describe import help_text, inventory_text, node_text, npc_now, quests_text, status_text
from game.world.intent import nothing_to_fight
from game.world.parser import Command, parse
from game.world.rules import AppliedEffect, Outcome, Reading, RejectedEffect, Rules
from game.world.rules.core import player_refused
from game.world.state import MAX_TURN, GameState

log = logging.getLogger("storyecho.engine")

MAX_ACTION_CHARS = 500
"""Longest action a player may type; a longer one is refused before it costs a turn."""


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
    reading: list[str] = field(default_factory=list)
    """How the action was read (``Clause.describe``): which clauses bind, and why an act was not asked for."""
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
    trace: DebugTrace = field(default_factory=DebugTrace)


class _Timer:
    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.mark = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round((now - self.mark) * 1000, 3)
        self.mark = now


class TurnPipeline:
    """Plays turns of one story for one game state."""

    def __init__(
        self,
        pack: ContentPack,
        state: GameState,
        narrator: Narrator,
        memory: Memory,
        *,
        prompt_budget_tokens: int | None = DEFAULT_PROMPT_BUDGET,
        autopilot: Autopilot | None = None,
    ) -> None:
        self.pack = pack
        self.state = state
        self.narrator = narrator
        self.memory = memory
        self.rules = Rules(pack)
        self.prompt_budget_tokens = prompt_budget_tokens
        self.autopilot = autopilot
        """Sizes the budget to the narrator's speed (``turn_time_target_s``); None: the budget is fixed."""
        self._commit = threading.Lock()
        self._abandoned = False

    def abandon(self) -> None:
        """Let no turn still out commit (the game closes while a narrator stalls): once this returns, the state and
        memory are final, and a turn that comes back later changes nothing."""
        with self._commit:
            self._abandoned = True

    def play(self, action: str, *, attempt: int = 0) -> TurnResult:
        """Play one player action and return what happened (``attempt``: the how-many-th retry of it this is).

        Never raises: whatever the narrator answers and whatever fails inside
        the turn, the result is either a committed turn (game state and memory
        together) or a failed one that changed nothing and says why.
        """
        command = parse(action)
        if command.is_meta:
            return self._meta(command)
        if self.state.ending:
            return self._failed(
                command, "The story has ended. 'undo' takes the ending back; or load a save, or start a new game."
            )
        if self.state.turn >= MAX_TURN:  # the most turns a save holds (issue 33): the game stays loadable
            return self._failed(
                command, f"This game has reached its last turn ({MAX_TURN:,}); load a save or start anew."
            )
        if not action.strip():
            return self._failed(command, "Type an action, or 'help'.")
        if (nothing := nothing_to_fight(command, self.state, self.pack)) is not None:
            return self._meta(command, nothing)  # no turn for a swing at empty air
        if len(action) > MAX_ACTION_CHARS:
            return self._failed(
                command, f"That is too long for one action ({len(action)} characters; at most {MAX_ACTION_CHARS})."
            )
        reading = Reading.of(action)  # read once: the narrator's command and the intent check share it
        trace = DebugTrace()
        try:
            with FOREGROUND.busy():  # background work waits (the narrator's call excepted: _call)
                return self._play(action, reading, trace, attempt)
        except Exception as exc:
            log.exception("turn %d failed", self.state.turn + 1)
            trace.validation_errors.append(f"internal error: {type(exc).__name__}: {exc}")
            return self._failed(
                command,
                f"Something went wrong with that turn ({type(exc).__name__}). Nothing changed; try again.",
                trace,
            )

    def _play(self, action: str, reading: Reading, trace: DebugTrace, attempt: int = 0) -> TurnResult:
        command = reading.command
        trace.reading = [c.describe() for c in reading.clauses]
        timer = _Timer(trace.timings_ms)
        seen = self.state.snapshot()  # what the narrator is shown; the trace keeps it as it was
        timer.lap("snapshot")
        recalled = self.memory.recall(action, seen, reading)
        timer.lap("recall")
        # a narrator that adds text on the wire (the schema, when the endpoint does not decode against it)
        # leaves that much less room for memory, so the prompt the model reads stays within the budget
        overhead = self.narrator.prompt_overhead_tokens
        budget = self.prompt_budget_tokens
        if self.autopilot is not None and budget is not None:
            budget = min(budget, self.autopilot.budget)
        budget = None if budget is None else max(0, budget - overhead)
        bundle = compose(action, command, seen, self.pack, recalled, budget)
        bundle.overhead_tokens, bundle.attempt = overhead, attempt
        trace.prompt, trace.memory = bundle, bundle.memory  # what the prompt holds, after the budget
        timer.lap("compose")
        output = self._narrate(bundle, trace)
        timer.lap("narrate")
        if self.autopilot is not None:
            trace.autopilot = self.autopilot.observe(trace.timings_ms["narrate"] / 1000, bundle.required_tokens)
        if output is None:
            reason = trace.validation_errors[-1] if trace.validation_errors else "no answer"
            return self._failed(
                command, f"The narrator's answer could not be used ({reason}). Nothing changed; try again.", trace
            )
        trace.dropped_notes = list(output.dropped_notes)
        working = seen.snapshot()
        outcome = self.rules.resolve_turn(working, output.effects, reading)  # an act the player did not ask: refused
        timer.lap("adjudicate")
        prose, voice = output.narration, self._judge(output.narration, reading, trace)
        if (_told(outcome) or voice.faults) and not working.ending:
            output, working, outcome, prose = self._ask_again(bundle, trace, seen, output, outcome, reading, voice)
            timer.lap("reask")
        elif voice.sentence is not None:  # the story ended on this answer: the ending stands, its words go
            prose = mended(prose, reading)
        narration = "\n".join([prose, *outcome.messages]).strip()
        if outcome.free:  # refused, or a word in a fight: told, and no time passes (nothing is committed)
            return self._free(
                action, narration, output.choices, _unique([*trace.first_rejected, *outcome.rejected]), trace
            )
        record = TurnRecord(
            turn=working.turn,
            action=action,
            narration=narration,
            node=working.node,
            events=[f"{a.effect} {a.detail}" for a in outcome.applied],
            npcs=list(self.pack.nodes[working.node].npcs),
            applied=[(a.effect, a.detail) for a in outcome.applied],
            notes=list(output.memory_notes),
        )
        result = TurnResult(
            turn=working.turn,
            action=action,
            narration=narration,
            choices=choices_after(output.choices, working, self.pack),
            state=working.snapshot(),
            applied=outcome.applied,
            rejected=_unique([*trace.first_rejected, *outcome.rejected]),
            memory_notes=[n if isinstance(n, str) else n.model_dump() for n in output.memory_notes],
            trace=trace,
        )
        with self._commit:
            if self._abandoned:
                return self._failed(command, "The game closed during this turn. Nothing changed.", trace)
            trace.dropped_notes += self.memory.record_turn(record, working)  # all or nothing; raises on failure
            timer.lap("record")
            self.state = working  # the commit: nothing after this can fail
        return result

    def _ask_again(
        self,
        bundle: PromptBundle,
        trace: DebugTrace,
        seen: GameState,
        output: TurnOutput,
        outcome: Outcome,
        reading: Reading,
        voice: Voice,
    ) -> tuple[TurnOutput, GameState, Outcome, str]:
        """The narrator proposed what the rules refused, or its prose spoke for the player or repeated the last
        turns (``voice``): ask once more, telling it why (same prompt, no new recall).

        Returns the answer, state and outcome to use and the prose to show: the
        new answer's narration when the rules accept all it proposes (less any
        sentence that still speaks for the player), else the rules' own account
        of what happened, so the player never reads about a move, an item or a
        reward the rules did not grant, nor words they did not say.
        """
        refused = _told(outcome)
        told_before = player_refused(outcome.rejected)  # the player's act was refused: nothing of it costs time
        trace.first_rejected, trace.reasked = list(outcome.rejected) if refused else [], True
        bundle.refused = list(trace.first_rejected)
        told = (
            "The game rules refused: "
            + "; ".join(f"{r.effect} {r.value}: {r.reason}" for r in outcome.rejected)
            + ". Tell only what the rules allow, without those effects."
        )
        bundle.messages = [
            *bundle.messages,
            {"role": "assistant", "content": trace.raw_output[:2000]},
            {
                "role": "user",
                "content": " ".join(filter(None, [told if refused else "", voice.why(), _CORRECTED])),
            },
        ]
        again = None
        try:
            raw = self._call(bundle, trace)
            if isinstance(raw, str):
                trace.repair_output = raw
                again, _ = parse_turn(raw)
        except Exception as exc:  # noqa: BLE001 - a failed second answer keeps the first, told by the rules
            trace.validation_errors.append(f"asking again failed: {_describe(exc)}")
        if again is not None:
            working = seen.snapshot()
            second = self.rules.resolve_turn(working, again.effects, reading, refused_before=told_before)
            if not _told(second) and (prose := mended(again.narration, reading)).strip():
                trace.dropped_notes = list(again.dropped_notes)
                return again, working, second, prose
            output, outcome = again, second
        else:
            working = seen.snapshot()
            outcome = self.rules.resolve_turn(working, output.effects, reading)
            if not refused and (prose := mended(output.narration, reading)).strip():
                return output, working, outcome, prose  # no second answer: the first, less what it said for them
        trace.narration_replaced = True
        return output, working, outcome, rules_account(outcome, seen, working, self.pack)

    def _judge(self, prose: str, reading: Reading, trace: DebugTrace) -> Voice:
        """Whether the first answer speaks for the player or repeats the last tellings (``voice.py``), in the trace.

        Repetition is judged for a model only (a narrator whose calls are measured, ``Narrator.last_call``): the
        scripted narrator makes no model call, and asking a deterministic narrator again tells the same words.
        """
        model = self.narrator.last_call is not None
        previous = [e.narration for e in self.memory.last_episodes(RECENT)] if model else []
        voice = judge(prose, reading, previous)
        trace.spoke_for_player, trace.repeated = voice.sentence is not None, voice.repeated
        return voice

    def _call(self, bundle: PromptBundle, trace: DebugTrace) -> str:
        """One narrator call; what it cost goes into the trace, and reported prompt tokens replace the estimate."""
        try:
            with FOREGROUND.waiting():  # the model's generation: the memory worker and writers' time
                return self.narrator.narrate(bundle)
        finally:
            call = self.narrator.last_call
            if call is not None:
                usage = asdict(call)
                trace.usage.append(usage)
                if isinstance(usage.get("prompt_tokens"), int) and trace.prompt is not None:
                    trace.prompt.tokens, trace.prompt.token_source = usage["prompt_tokens"], "model"

    def _narrate(self, bundle: PromptBundle, trace: DebugTrace) -> TurnOutput | None:
        try:
            raw = self._call(bundle, trace)
            if not isinstance(raw, str):
                raise NarratorError(f"the narrator returned {type(raw).__name__}, not text")
            trace.raw_output = raw
        except Exception as exc:  # noqa: BLE001 - any narrator failure fails the turn, never the game
            log.warning("narrator failed: %s", exc)
            trace.validation_errors.append(f"narrator error: {_describe(exc)}")
            return None
        try:
            output, trace.repaired = parse_turn(trace.raw_output)
            return output
        except TurnParseError as exc:
            trace.validation_errors.append(str(exc))
            log.info("invalid turn JSON, asking once more: %s", exc)
        bundle.repair_error = trace.validation_errors[-1]
        bundle.previous_output = trace.raw_output
        bundle.messages = [
            *bundle.messages,
            {"role": "assistant", "content": trace.raw_output[:2000]},
            {
                "role": "user",
                "content": f"That answer was invalid: {bundle.repair_error}. "
                "Reply with the corrected JSON object only.",
            },
        ]
        try:
            repaired = self._call(bundle, trace)
            trace.repair_output = repaired if isinstance(repaired, str) else ""
            output, _ = parse_turn(repaired)
        except TurnParseError as exc:
            trace.validation_errors.append(str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - as above
            trace.validation_errors.append(f"narrator error: {_describe(exc)}")
            return None
        trace.repaired = True
        return output

    def _meta(self, command: Command, answer: str | None = None) -> TurnResult:
        """A line answered without a turn: ``answer``, or the help, inventory, quests or status it asks for."""
        texts = {
            "help": help_text(self.pack),
            "inventory": inventory_text(self.state, self.pack),
            "quests": quests_text(self.state, self.pack),
            "status": status_text(self.state, self.pack),
        }
        return TurnResult(
            turn=self.state.turn,
            action=command.text,
            narration=answer if answer is not None else texts.get(command.verb, ""),
            choices=choices_after([], self.state, self.pack),  # what to try stays on screen
            state=self.state.snapshot(),
            meta=command.verb,
        )

    def _free(
        self, action: str, narration: str, proposed: list[str], rejected: list[RejectedEffect], trace: DebugTrace
    ) -> TurnResult:
        """A turn that cost no time (``Outcome.free``): told, but the state and memory stay as they were, so the
        turn counter, the clock, the enemies and the autosave cadence do not move."""
        return TurnResult(
            turn=self.state.turn,
            action=action,
            narration=narration,
            choices=choices_after(proposed, self.state, self.pack),
            state=self.state.snapshot(),
            rejected=rejected,
            trace=trace,
            free=True,
        )

    def _failed(self, command: Command, message: str, trace: DebugTrace | None = None) -> TurnResult:
        return TurnResult(
            turn=self.state.turn,
            action=command.text,
            narration=message,
            choices=[],
            state=self.state.snapshot(),
            ok=False,
            error=message,
            trace=trace or DebugTrace(),
        )


_CORRECTED = "Reply with the corrected JSON object only."


def _unique(rejected: list[RejectedEffect]) -> list[RejectedEffect]:
    """Each refusal once (a refusal of the first answer the second answer repeated is one refusal)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in rejected:
        key = (r.effect, repr(r.value))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _told(outcome: Outcome) -> bool:
    """Whether the rules refused something the narrator's prose may have told as done: what the player would be
    told about (see ``RejectedEffect.told``), or an act the player did not ask for (``RejectedEffect.unasked``)."""
    return any(r.told or r.unasked for r in outcome.rejected)


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


def _describe(exc: Exception) -> str:
    """A narrator failure in words: its own message for a :class:`NarratorError`, else the type too."""
    return str(exc) if isinstance(exc, NarratorError) else f"{type(exc).__name__}: {exc}"
