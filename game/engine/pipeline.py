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
from collections.abc import Callable
from dataclasses import asdict

from game.engine.asking import answer, offered_instead, refused_outright
from game.engine.autopilot import Autopilot
from game.engine.claims import consequences_ahead, true_to_rules
from game.engine.prompt import compose
from game.engine.results import DebugTrace, Timer, TurnResult, rules_account, unique
from game.engine.schema import TurnOutput, TurnParseError, parse_turn
from game.engine.voice import RECENT, Voice, judge, mended
from game.language.parser import Command, parse
from game.llm.base import Narrator, NarratorError, PromptBundle
from game.memory.base import Memory, TurnRecord
from game.memory.vectors.foreground import FOREGROUND
from game.text import DEFAULT_PROMPT_BUDGET
from game.world.asked import Asked, by_meaning, story_names, story_people, understand
from game.world.choices import choices_after
from game.world.content import ContentPack
from game.world.describe import help_text, inventory_text, quests_text, status_text
from game.world.effects import Effects
from game.world.guess import ask_instead
from game.world.rules import Outcome, Reading, RejectedEffect, Rules
from game.world.rules.core import player_refused
from game.world.state import MAX_TURN, GameState

log = logging.getLogger("storyecho.engine")

MAX_ACTION_CHARS = 500
"""Longest action a player may type; a longer one is refused before it costs a turn."""
RECALLED_ACTIONS = 500
"""How far back a telling's recollection of the player's own words is checked ("you promised..."): read only when
a telling recalls one, and bounded so that a 10,000-turn game does not read its whole log for it."""


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
        meaning: Callable[[str], str | None] | None = None,
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
        self.names, self.people = story_names(pack), story_people(pack)
        """The words of the story's names (never taken for misspelt verbs) and of its people's (a line calls
        them by these)."""
        self.pending: Asked | None = None
        """What the game asked back and the next line answers (``Asked.offer``)."""
        self.queued: list[tuple[str, Asked]] = []
        """The acts of the line just played still to play, one turn each (:meth:`go_on`)."""
        self.meaning = meaning
        """The verb an unknown word means, by the game's embedder (``game.language.meaning``): offered, never
        applied on its own; None without embeddings."""

    def abandon(self) -> None:
        """Let no turn still out commit (the game closes while a narrator stalls): once this returns, the state and
        memory are final, and a turn that comes back later changes nothing."""
        with self._commit:
            self._abandoned = True

    def play(self, action: str, *, attempt: int = 0) -> TurnResult:
        """Play one player action and return what happened (``attempt``: the how-many-th retry of it this is).

        The action is read first (``game.world.asked``): a refused act, a question the rules answer and an
        offer to ask back are answered at once, at no cost; otherwise the line's first act is played, and
        :meth:`go_on` plays the others, one turn each.

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
        self.queued = []
        answered = self._answered(action)
        if isinstance(answered, TurnResult):
            return answered
        if answered is None:
            if len(action) > MAX_ACTION_CHARS:
                return self._failed(
                    command, f"That is too long for one action ({len(action)} characters; at most {MAX_ACTION_CHARS})."
                )
            answered = understand(Reading.of(action, self.names, self.people), self.state, self.pack)
            answered = by_meaning(answered, self.meaning, self.state, self.pack)
            answered = ask_instead(answered, self.state, self.pack)
            early = self._early(action, answered)
            if early is not None:
                return early
        return self._turn(answered.reading.text, answered, attempt)

    def go_on(self) -> TurnResult | None:
        """Play the next act of the line just played, as a turn of its own; None when none is left (or the line
        stopped: an act refused, a failed turn, an ending)."""
        if not self.queued or self.state.ending:
            self.queued = []
            return None
        action, asked = self.queued.pop(0)
        rest = self.queued
        result = self._turn(action, asked, 0)
        self.queued = rest if result.ok and not result.free else []
        return result

    def play_all(self, action: str) -> list[TurnResult]:
        """:meth:`play` and every :meth:`go_on` after it: the results of a whole line, one per turn."""
        results = [self.play(action)]
        while (more := self.go_on()) is not None:
            results.append(more)
        return results

    def _turn(self, action: str, asked: Asked, attempt: int) -> TurnResult:
        """Play ``asked``'s first act (or what it asks of the narrator); queue the others."""
        steps = asked.steps()
        if len(steps) > 1:
            self.queued = [(action, Asked(asked.reading, acts=step, stopped=asked.stopped)) for step in steps[1:]]
            asked = Asked(asked.reading, acts=steps[0], notes=asked.notes)
        trace = DebugTrace()
        try:
            with FOREGROUND.busy():  # background work waits (the narrator's call excepted: _call)
                result = self._play(action, asked, trace, attempt)
        except Exception as exc:
            log.exception("turn %d failed", self.state.turn + 1)
            trace.validation_errors.append(f"internal error: {type(exc).__name__}: {exc}")
            return self._failed(
                parse(action),
                f"Something went wrong with that turn ({type(exc).__name__}). Nothing changed; try again.",
                trace,
            )
        if asked.stopped and not self.queued and result.ok:  # the line's last act that can be: then why not more
            result.narration = f"{result.narration}\n{asked.stopped}".strip()
        return result

    def _early(self, action: str, asked: Asked) -> TurnResult | None:
        """The answer to a line that needs no narrator: an act refused, a question the rules answer, or the
        game asking back. None: the line is played."""
        trace = DebugTrace(reading=[c.describe() for c in asked.reading.clauses], resolved=list(asked.notes))
        trace.asked = asked.line(self.pack)
        if asked.kind == "refused":
            result = self._told(action, asked.refusal, "refused", trace)
            if asked.refused is not None:  # what the rules say of the act, for the trace and --json
                effects = Effects.model_validate(asked.refused.effects(self.state))
                result.rejected = self.rules.apply(self.state.snapshot(), effects).rejected
            return result
        if asked.kind == "answered":
            return self._told(action, asked.answer, "answered", trace)
        if asked.kind == "unsure":
            return self._ask_back(action, asked, trace)
        if (refused := refused_outright(asked, self.state, self.rules, action)) is not None:
            result = self._told(action, refused[0], "refused", trace)  # said now, at no cost
            result.rejected = refused[1]
            return result
        return None

    def _ask_back(self, action: str, asked: Asked, trace: DebugTrace) -> TurnResult:
        """The game asks back what ``asked`` offers, at no cost; the next line answers."""
        self.pending = asked
        result = self._told(action, asked.question(self.pack), "asked", trace)
        result.choices, result.asking = asked.choices(self.pack), True
        return result

    def _told(self, action: str, text: str, kind: str, trace: DebugTrace) -> TurnResult:
        """An answer given without a narrator and at no cost (``meta``: ``refused``, ``answered`` or ``asked``)."""
        result = self._free(action, text, [], [], trace)
        result.meta = kind
        return result

    def _answered(self, action: str) -> Asked | TurnResult | None:
        """The line as an answer to what the game asked back: the act picked (to play), a free result for "no",
        or None when it answers nothing (it is read as a line of its own, and the question is dropped)."""
        pending, self.pending = self.pending, None
        if pending is None:
            return None
        picked = answer(pending, action, self.pack)
        if picked is False:
            return self._told(action, "Then nothing is done.", "answered", DebugTrace())
        return picked or None

    def _play(self, action: str, asked: Asked, trace: DebugTrace, attempt: int = 0) -> TurnResult:
        reading = asked.reading
        command = asked.played(self.pack, action)
        trace.reading = [c.describe() for c in reading.clauses]
        trace.asked, trace.resolved = asked.line(self.pack), list(asked.notes)
        timer = Timer(trace.timings_ms)
        seen = self.state.snapshot()  # what the narrator is shown; the trace keeps it as it was
        timer.lap("snapshot")
        recalled = self.memory.recall(action, seen, reading)
        timer.lap("recall")
        overhead = self.narrator.prompt_overhead_tokens
        budget = self._budget(overhead)
        ahead = consequences_ahead(self.rules, seen, asked)
        bundle = compose(action, command, seen, self.pack, recalled, budget, asked=trace.asked, ahead=ahead)
        bundle.overhead_tokens, bundle.attempt = overhead, attempt
        bundle.acts, bundle.asks = asked.acts, asked.kind
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
        granted = asked.granted(seen)  # the acts read from the action: the rules carry them out
        outcome = self.rules.resolve_turn(working, output.effects, reading, granted=granted)  # unasked: refused
        timer.lap("adjudicate")
        if (offered := offered_instead(asked, outcome.rejected, seen, self.rules)) is not None:
            trace.resolved.append(offered.notes[-1])  # the narrator read an act the reader did not: asked back
            return self._ask_back(action, offered, trace)
        prose, voice = output.narration, self._judge(output.narration, reading, trace)
        if (_told(outcome) or voice.faults) and not working.ending:
            output, working, outcome, prose = self._ask_again(bundle, trace, seen, output, outcome, asked, voice)
            timer.lap("reask")
        elif voice.sentence is not None:  # the story ended on this answer: the ending stands, its words go
            prose = mended(prose, reading, self._said_before)
        prose, unfounded = true_to_rules(prose, seen, working, outcome, self.pack, self.names, self.people)
        trace.unfounded = [claim.describe(self.pack) for claim in unfounded]
        narration = "\n".join([prose, *outcome.messages]).strip()
        if outcome.free:  # refused, or a word in a fight: told, and no time passes (nothing is committed)
            return self._free(
                action, narration, output.choices, unique([*trace.first_rejected, *outcome.rejected]), trace
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
            refused=list(dict.fromkeys(r.told for r in outcome.rejected if r.told)),
        )
        result = TurnResult(
            turn=working.turn,
            action=action,
            narration=narration,
            choices=choices_after(output.choices, working, self.pack),
            state=working.snapshot(),
            applied=outcome.applied,
            rejected=unique([*trace.first_rejected, *outcome.rejected]),
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

    def _budget(self, overhead: int) -> int | None:
        """The prompt's token budget this turn: the autopilot's when it is smaller, less what the narrator adds on
        the wire (the schema, when the endpoint does not decode against it), so the prompt the model reads stays
        within it; None: no budget."""
        budget = self.prompt_budget_tokens
        if self.autopilot is not None and budget is not None:
            budget = min(budget, self.autopilot.budget)
        return None if budget is None else max(0, budget - overhead)

    def _ask_again(
        self,
        bundle: PromptBundle,
        trace: DebugTrace,
        seen: GameState,
        output: TurnOutput,
        outcome: Outcome,
        asked: Asked,
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
        reading, granted = asked.reading, asked.granted(seen)
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
            second = self.rules.resolve_turn(
                working, again.effects, reading, refused_before=told_before, granted=granted
            )
            if not _told(second) and (prose := mended(again.narration, reading, self._said_before)).strip():
                trace.dropped_notes = list(again.dropped_notes)
                return again, working, second, prose
            output, outcome = again, second
        else:
            working = seen.snapshot()
            outcome = self.rules.resolve_turn(working, output.effects, reading, granted=granted)
            if not refused and (prose := mended(output.narration, reading, self._said_before)).strip():
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
        voice = judge(prose, reading, previous, self._said_before)
        trace.spoke_for_player, trace.repeated = voice.sentence is not None, voice.repeated
        return voice

    def _said_before(self) -> list[str]:
        """The player's earlier actions (the last :data:`RECALLED_ACTIONS`), which a telling may recall."""
        return [e.action for e in self.memory.last_episodes(RECALLED_ACTIONS)]

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
            choices=choices_after([], self.state, self.pack),  # nothing changed: the choices still hold
            state=self.state.snapshot(),
            ok=False,
            error=message,
            trace=trace or DebugTrace(),
        )


_CORRECTED = "Reply with the corrected JSON object only."


def _told(outcome: Outcome) -> bool:
    """Whether the rules refused something the narrator's prose may have told as done: what the player would be
    told about (see ``RejectedEffect.told``), or an act the player did not ask for (``RejectedEffect.unasked``)."""
    return any(r.told or r.unasked for r in outcome.rejected)


def _describe(exc: Exception) -> str:
    """A narrator failure in words: its own message for a :class:`NarratorError`, else the type too."""
    return str(exc) if isinstance(exc, NarratorError) else f"{type(exc).__name__}: {exc}"
