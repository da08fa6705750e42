"""``storyecho doctor --llm openai``: can the model at this endpoint play?

Players who bring their own endpoint cannot tell whether their model can play: answers that are not JSON and
grammars silently ignored are the most common complaints about local models. This plays a short scripted
session against the endpoint, :data:`SCRIPT` (13 turns over both stories: a place the player cannot go, so
the rules refuse a move; turn 5 of each story consolidates, so the summary call is tried too) through the real
engine, with keyword memory and no save, so it writes nothing anywhere (the key included), and reports
(``fitness_verdict.py``: the figures, the criteria of the verdict, the report):

- the turns whose first answer was valid JSON, that needed a repair (local, or the model asked again), or
  never gave a turn; and of every answer to a turn call, the share that was not valid JSON;
- the shares of answered turns whose first answer spoke for the player, or repeated the last tellings;
- the effects the model proposed, and of those the ones the rules accepted and refused; the turns whose
  narration names the place or a person there; the summaries that landed;
- time to first token and tokens per second (median and p95), prompt tokens against the model's context when
  the endpoint reports it, and the JSON mode that worked;
- a verdict, "plays well", "plays with repairs" or "cannot play: ...", with the setting to change.

It cannot hang on a dead endpoint: after :data:`STALL_LIMIT` turn calls in a row without an answer it stops and
says why, and ``stop`` (the settings' test window closed) ends it before the next turn. No URL it shows holds
the credentials of the base URL (``game.text.redact_urls``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable

from game.engine.fitness_verdict import STALL_LIMIT, Fitness, report, verdict
from game.engine.pipeline import TurnPipeline
from game.engine.results import DebugTrace, TurnResult
from game.engine.schema import TurnParseError, parse_turn
from game.llm.openai_compat import OpenAINarrator
from game.llm.settings import OpenAISettings
from game.memory.manager import GameMemory
from game.text import estimate_tokens, mentions, redact_urls, shown_url
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.loader import content_root, load_pack
from game.world.state import GameState, new_game

__all__ = ["SCRIPT", "STALL_LIMIT", "Fitness", "check_endpoint", "no_test_needed", "report", "verdict"]

SCRIPT: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fantasy_001", ("look", "go east", "talk to garrick", "look north", "ask garrick about hal", "go west")),
    (
        "scifi_001",
        ("talk to the voice", "ask the voice about memories", "look west", "go east", "talk to echo7", "look", "look"),
    ),
)
"""(story, actions): "look north" from Garrick's lodge and "look west" from the pod bay ask for no move (and name
no exit), so a model that moves the player there is refused by the rules; a refusal costs no turn (issue 35), so
the scifi story has one more look: the fifth turn that counts of each story is a consolidation."""
NARRATOR_EFFECTS = frozenset(Effects.model_fields)
"""The effects a model proposes (the rules' own consequences, a level or an objective, are not its)."""

OnTurn = Callable[[TurnResult, GameState, TurnPipeline], None]


def no_test_needed(llm: str | None, settings: OpenAISettings) -> str | None:
    """What the settings' "Test narrator" says instead of testing, when no endpoint is described (None: test it).

    The check tests an OpenAI-compatible endpoint; without a preset or a base URL there is none, and the game
    plays with the built-in narrator (``auto``, ``scripted``) or llama.cpp (``local``)."""
    if settings.preset or settings.base_url:
        return None
    if llm == "local":
        return (
            "The local narrator (llama.cpp) is not an endpoint: 'storyecho doctor' checks that it runs here. "
            "To test a model at an endpoint, choose a preset or enter a base URL."
        )
    return (
        "The built-in narrator needs no test: it plays from the story's own content, offline, and always can. "
        "To test a model at an endpoint, choose a preset or enter a base URL."
    )


def check_endpoint(
    settings: OpenAISettings,
    packs: Callable[[str], ContentPack] = lambda story: load_pack(content_root() / story),
    *,
    prompt_budget_tokens: int | None = None,
    progress: Callable[[str], None] | None = None,
    on_turn: OnTurn | None = None,
    script: Iterable[tuple[str, tuple[str, ...]]] = SCRIPT,
    stop: threading.Event | None = None,
) -> Fitness:
    """Play :data:`SCRIPT` against the endpoint of ``settings`` and judge it (never raises on what the
    endpoint does; a narrator that cannot even be built is reported as "cannot play").

    ``progress`` is told each turn before it is played; ``on_turn`` gets each result, the state before it and
    the engine after it; once ``stop`` is set no other turn is played."""
    from game.llm.base import NarratorError

    started = time.perf_counter()
    shown = shown_url(settings.base_url) if settings.base_url else settings.preset or ""
    fitness = Fitness(endpoint=shown, model=settings.model or "")
    narrator: OpenAINarrator | None = None
    if not settings.preset and not settings.base_url:
        fitness.no_endpoint = True
    for story, actions in [] if fitness.no_endpoint else script:
        pack = packs(story)
        try:
            narrator = OpenAINarrator(settings, pack, on_text=_ignore)  # streamed, as the game's screen asks
        except NarratorError as exc:
            fitness.errors.append(redact_urls(str(exc)))
            break
        fitness.endpoint = narrator.endpoint.shown
        _play(fitness, narrator, pack, actions, prompt_budget_tokens, progress, on_turn, stop)
        if fitness.stopped:
            break
    if narrator is not None:
        fitness.model = narrator.last_call.model if narrator.last_call is not None else fitness.model
        if fitness.committed:  # an endpoint that never answered is not asked for its model list too
            fitness.context = narrator.model_context()
    fitness.seconds = round(time.perf_counter() - started, 1)
    fitness.verdict, fitness.fix = verdict(fitness)
    return fitness


def _play(
    fitness: Fitness,
    narrator: OpenAINarrator,
    pack: ContentPack,
    actions: tuple[str, ...],
    prompt_budget_tokens: int | None,
    progress: Callable[[str], None] | None,
    on_turn: OnTurn | None,
    stop: threading.Event | None,
) -> None:
    """Play one story's ``actions``; stop after :data:`STALL_LIMIT` failed calls in a row, or once ``stop`` is set."""
    memory = GameMemory(pack, narrator, background=False)
    engine = TurnPipeline(pack, new_game(pack, seed=1), narrator, memory, prompt_budget_tokens=prompt_budget_tokens)
    try:
        for action in actions:
            if stop is not None and stop.is_set():
                fitness.stopped = "the test was closed before its end"
                return
            if progress is not None:
                progress(f"{pack.story.title}: {action}")
            before = engine.state
            result = engine.play(action)
            if result.meta in ("refused", "answered", "asked") and not result.trace.usage:
                fitness.turns, fitness.alone = fitness.turns + 1, fitness.alone + 1  # the engine's answer alone
                continue  # (an act that cannot be, issue 41): nothing of the model's to judge
            _judge(fitness, result, pack, before.node)
            if on_turn is not None:
                on_turn(result, before, engine)
            if fitness.failed_in_row >= STALL_LIMIT:
                fitness.stopped = f"the check stopped after {STALL_LIMIT} turn calls in a row failed"
                return
    finally:
        fitness.summaries += len(memory.state.summaries)
        fitness.summary_failures += len(memory.failures)
        memory.close()


def _judge(fitness: Fitness, result: TurnResult, pack: ContentPack, node_before: str) -> None:
    trace = result.trace
    fitness.turns += 1
    answers = [a for a in (trace.raw_output, trace.repair_output) if a]
    fitness.answers += len(answers)
    fitness.broken_answers += sum(not _clean_json(a) for a in answers)
    _measure(fitness, trace, answers)
    if trace.raw_output:  # the model answered: its first answer is judged for its manners
        fitness.answered += 1
        fitness.spoke_for_player += trace.spoke_for_player
        fitness.repeated += trace.repeated
    errors = trace.validation_errors
    failed_call = not result.ok and any(e.startswith("narrator error") for e in errors)
    fitness.failed_in_row = fitness.failed_in_row + 1 if failed_call else 0
    if not result.ok:
        if failed_call:
            fitness.failed_calls += 1
            fitness.errors.append(redact_urls(errors[-1]))
        else:
            fitness.never += 1
        return
    fitness.committed += 1
    if trace.repaired:  # repaired locally, or the model was asked again
        fitness.repaired += 1
    else:
        fitness.first_time += 1
    proposed = _proposed(answers)
    fitness.proposed += len(proposed)
    # what the model proposed and the rules applied (the acts the engine read from the action apply whatever the
    # model proposes, issue 41: they are not the model's)
    fitness.accepted += sum(a.effect in NARRATOR_EFFECTS and a.effect in proposed for a in result.applied)
    fitness.refused += len(result.rejected)
    if _names_someone(_model_narration(answers), pack, {node_before, result.state.node}):
        fitness.named += 1


def _measure(fitness: Fitness, trace: DebugTrace, answers: list[str]) -> None:
    """The JSON mode, times and prompt size of each call of the turn."""
    for usage, answer in zip(trace.usage, [*answers, "", ""], strict=False):
        mode = str(usage.get("json_mode"))
        fitness.json_modes[mode] = fitness.json_modes.get(mode, 0) + 1
        ttft, elapsed = usage.get("time_to_first_token_ms"), usage.get("elapsed_ms")
        tokens = usage.get("completion_tokens")
        if not isinstance(tokens, int):  # a server that reports no usage while streaming: the answer's estimate
            tokens = estimate_tokens(answer)
        if isinstance(ttft, float | int) and isinstance(elapsed, float | int):
            fitness.ttft_ms.append(float(ttft))
            if tokens > 0 and elapsed - ttft >= 1:
                fitness.tokens_per_s.append(tokens / ((elapsed - ttft) / 1000))
        prompt = usage.get("prompt_tokens")
        if isinstance(prompt, int):
            fitness.prompt_tokens_max = max(prompt, fitness.prompt_tokens_max or 0)
        elif trace.prompt is not None:
            estimate = trace.prompt.tokens + trace.prompt.overhead_tokens  # the schema sent with it included
            fitness.prompt_tokens_max = max(estimate, fitness.prompt_tokens_max or 0)
            fitness.prompt_tokens_estimated = True


def _proposed(answers: list[str]) -> set[str]:
    """The effects the model's first usable answer proposed (each field it set)."""
    for answer in answers:
        try:
            return set(parse_turn(answer)[0].effects.model_dump(exclude_defaults=True))
        except TurnParseError:
            continue
    return set()


def _ignore(text: str) -> None:
    """Where streamed narration goes (nowhere: the check only times it)."""


def _clean_json(answer: str) -> bool:
    """Whether ``answer`` is a valid turn as sent (no repair needed)."""
    try:
        json.loads(answer)
        _, repaired = parse_turn(answer)
    except (ValueError, TurnParseError):
        return False
    return not repaired


def _model_narration(answers: list[str]) -> str:
    for answer in reversed(answers):
        try:
            return parse_turn(answer)[0].narration
        except TurnParseError:
            continue
    return ""


def _names_someone(narration: str, pack: ContentPack, nodes: set[str]) -> bool:
    """Whether ``narration`` names one of ``nodes`` or a person there (a name's longest word will do)."""
    names = [pack.nodes[n].name for n in nodes if n in pack.nodes]
    names += [pack.npcs[p].name for n in nodes if n in pack.nodes for p in pack.nodes[n].npcs if p in pack.npcs]
    candidates = [(name, [name, *[w for w in re.findall(r"[\w'-]+", name) if len(w) >= 5]]) for name in names]
    return bool(mentions(narration, candidates)[0])
