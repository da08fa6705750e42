"""``storyecho doctor --llm openai``: can the model at this endpoint play?

Players who bring their own endpoint cannot tell whether their model can play: answers that are not JSON and
grammars silently ignored are the most common complaints about local models. This plays a short scripted
session against the endpoint, :data:`SCRIPT` (13 turns over both stories: a place the player cannot go, so
the rules refuse a move; turn 5 of each story consolidates, so the summary call is tried too) through the real
engine, with keyword memory and no save, so it writes nothing anywhere (the key included), and reports:

- the turns whose first answer was valid JSON, that needed a repair (local, or the model asked again), or
  never gave a turn; and of every answer to a turn call, the share that was not valid JSON;
- the effects the rules accepted and refused; the turns whose narration names the place or a person there;
- time to first token and tokens per second (median and p95), prompt tokens against the model's context when
  the endpoint reports it, and the JSON mode that worked;
- a verdict, "plays well", "plays with repairs" or "cannot play: ...", with the setting to change.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from game.engine.pipeline import TurnPipeline, TurnResult
from game.engine.schema import TurnParseError, parse_turn
from game.llm.openai_compat import OpenAINarrator
from game.llm.settings import OpenAISettings
from game.memory.manager import GameMemory
from game.text import estimate_tokens, mentions
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import GameState, new_game

SCRIPT: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fantasy_001", ("look", "go east", "talk to garrick", "go north", "ask garrick about hal", "go west", "look")),
    ("scifi_001", ("talk to the voice", "ask the voice about memories", "go west", "go east", "talk to echo7", "look")),
)
"""(story, actions): "go north" from Garrick's lodge and "go west" from the pod bay name no exit, so a model
that moves the player there is refused by the rules; the fifth turn of each story is a consolidation."""
NAMED_OK = 1 / 3
"""Below this share of turns naming the place or a person there, the narration is judged too vague."""
REPAIRS_OK = 0.2
"""Above this share of turns repaired, the verdict is "plays with repairs"."""
NEVER_OK = 0.25
"""Above this share of turns that never gave a turn, or a broken-JSON share above 0.5, the model cannot play."""


@dataclass
class Fitness:
    """What the fitness check measured (``doctor --json`` prints it)."""

    endpoint: str
    model: str
    turns: int = 0
    first_time: int = 0
    repaired: int = 0
    never: int = 0
    failed_calls: int = 0
    """Turns whose call failed (network, HTTP errors): no answer to judge."""
    answers: int = 0
    broken_answers: int = 0
    """Answers to turn calls that were not valid JSON turns as sent (repaired or not)."""
    accepted: int = 0
    refused: int = 0
    named: int = 0
    """Committed turns whose model narration names the place or a person there."""
    committed: int = 0
    summaries: int = 0
    summary_failures: int = 0
    ttft_ms: list[float] = field(default_factory=list)
    tokens_per_s: list[float] = field(default_factory=list)
    prompt_tokens_max: int | None = None
    prompt_tokens_estimated: bool = False
    """The endpoint did not report prompt tokens: the game's own estimate is shown."""
    context: int | None = None
    json_modes: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    verdict: str = ""
    fix: str = ""

    @property
    def broken_share(self) -> float:
        return self.broken_answers / self.answers if self.answers else 0.0

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {"broken_share": round(self.broken_share, 3)}


def check_endpoint(
    settings: OpenAISettings,
    packs: Callable[[str], ContentPack] = lambda story: load_pack(content_root() / story),
    *,
    prompt_budget_tokens: int | None = None,
    progress: Callable[[str], None] | None = None,
    on_turn: Callable[[TurnResult, GameState, TurnPipeline], None] | None = None,
    script: Iterable[tuple[str, tuple[str, ...]]] = SCRIPT,
) -> Fitness:
    """Play :data:`SCRIPT` against the endpoint of ``settings`` and judge it (never raises on what the
    endpoint does; a narrator that cannot even be built is reported as "cannot play").

    ``progress`` is told each turn before it is played; ``on_turn`` gets each result, the state before it and
    the engine after it."""
    from game.llm.base import NarratorError

    started = time.perf_counter()
    fitness = Fitness(endpoint=settings.base_url or settings.preset or "", model=settings.model or "")
    narrator: OpenAINarrator | None = None
    for story, actions in script:
        pack = packs(story)
        try:
            narrator = OpenAINarrator(settings, pack, on_text=_ignore)  # streamed, as the game's screen asks
        except NarratorError as exc:
            fitness.errors.append(str(exc))
            break
        fitness.endpoint = narrator.endpoint.shown
        memory = GameMemory(pack, narrator, background=False)
        engine = TurnPipeline(pack, new_game(pack, seed=1), narrator, memory, prompt_budget_tokens=prompt_budget_tokens)
        for action in actions:
            if progress is not None:
                progress(f"{pack.story.title}: {action}")
            before = engine.state
            result = engine.play(action)
            _judge(fitness, result, pack, before.node)
            if on_turn is not None:
                on_turn(result, before, engine)
        fitness.summaries += len(memory.state.summaries)
        fitness.summary_failures += len(memory.failures)
        memory.close()
    if narrator is not None:
        fitness.model = narrator.last_call.model if narrator.last_call is not None else fitness.model
        fitness.context = narrator.model_context()
    fitness.seconds = round(time.perf_counter() - started, 1)
    fitness.verdict, fitness.fix = verdict(fitness)
    return fitness


def _judge(fitness: Fitness, result: TurnResult, pack: ContentPack, node_before: str) -> None:
    trace = result.trace
    fitness.turns += 1
    answers = [a for a in (trace.raw_output, trace.repair_output) if a]
    fitness.answers += len(answers)
    fitness.broken_answers += sum(not _clean_json(a) for a in answers)
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
    errors = trace.validation_errors
    if not result.ok:
        if any(e.startswith("narrator error") for e in errors):
            fitness.failed_calls += 1
            fitness.errors.append(errors[-1])
        else:
            fitness.never += 1
        return
    fitness.committed += 1
    if trace.repaired:  # repaired locally, or the model was asked again
        fitness.repaired += 1
    else:
        fitness.first_time += 1
    fitness.accepted += len(result.applied)
    fitness.refused += len(result.rejected)
    if _names_someone(_model_narration(answers), pack, {node_before, result.state.node}):
        fitness.named += 1


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


def verdict(fitness: Fitness) -> tuple[str, str]:
    """The verdict and the setting to change (empty when there is none)."""
    turns = max(fitness.turns, 1)
    if fitness.turns == 0 or fitness.failed_calls > turns // 2:
        why = fitness.errors[-1] if fitness.errors else "no turn was played"
        return f"cannot play: the endpoint did not answer ({why})", "check --base-url, the model name and the key"
    judged = max(fitness.turns - fitness.failed_calls, 1)
    if fitness.never / judged > NEVER_OK or fitness.broken_share > 0.5:
        fix = (
            "set openai.json_mode = 'json_schema' if the server supports it (the server then decodes against the "
            "answer's schema), or use a larger model"
            if "json_schema" not in fitness.json_modes
            else "the answers are broken though the server was asked to decode against the schema: check that it "
            "enforces response_format, or use a larger model"
        )
        return f"cannot play: {fitness.never} of {judged} turns gave no usable JSON", fix
    if fitness.prompt_tokens_max and fitness.context and fitness.prompt_tokens_max > 0.9 * fitness.context:
        return (
            f"cannot play: prompts of {fitness.prompt_tokens_max} tokens fill its {fitness.context}-token context",
            "raise the server's context size, or lower prompt_budget_tokens",
        )
    committed = max(fitness.committed, 1)
    if fitness.failed_calls:
        return "plays with repairs", f"{fitness.failed_calls} calls failed: raise openai.timeout_s or check the server"
    if fitness.repaired / judged > REPAIRS_OK or fitness.broken_share > REPAIRS_OK:
        return "plays with repairs", "try openai.json_mode = 'json_schema' to have the server enforce the JSON"
    if fitness.refused > fitness.accepted:
        return (
            "plays with repairs: the rules refused more of what it proposed than they accepted",
            "a larger model follows the game's state better",
        )
    if fitness.named / committed < NAMED_OK:
        return (
            "plays with repairs: its narration rarely names the place or the people there",
            "a larger model, or a lower openai.temperature",
        )
    return "plays well", ""


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(fitness: Fitness) -> str:
    """The report, as ``doctor`` prints it."""
    judged = fitness.turns - fitness.failed_calls
    median_ttft = statistics.median(fitness.ttft_ms) if fitness.ttft_ms else None
    median_rate = statistics.median(fitness.tokens_per_s) if fitness.tokens_per_s else None
    context = f"{fitness.context:,}" if fitness.context else "not reported by the endpoint"
    prompt = f"{fitness.prompt_tokens_max or '?'}" + (" (estimated)" if fitness.prompt_tokens_estimated else "")
    model = (fitness.model or "?").rsplit("/", 1)[-1]
    lines = [
        f"Narrator fitness: {model} at {fitness.endpoint} ({fitness.turns} turns, {fitness.seconds} s)",
        f"  JSON answers     first time {fitness.first_time}, after repair {fitness.repaired}, never {fitness.never}"
        + (f" (of {judged} answered turns; {fitness.failed_calls} calls failed)" if fitness.failed_calls else ""),
        f"  broken JSON      {fitness.broken_answers} of {fitness.answers} answers ({fitness.broken_share:.0%})",
        f"  rules            {fitness.accepted} effects accepted, {fitness.refused} refused",
        f"  names the scene  {fitness.named} of {fitness.committed} turns name the place or a person there",
        f"  consolidation    {fitness.summaries} summaries, {fitness.summary_failures} failed",
        f"  first token      median {_ms(median_ttft)}, p95 {_ms(percentile(fitness.ttft_ms, 0.95))}",
        f"  tokens/s         median {_rate(median_rate)}, p95 {_rate(percentile(fitness.tokens_per_s, 0.95))}"
        " (generating, after the first token)",
        f"  prompt tokens    max {prompt}; model context {context}",
        f"  JSON mode        {', '.join(f'{m} ({n})' for m, n in Counter(fitness.json_modes).most_common()) or '-'}",
        f"Verdict: {fitness.verdict}" + (f". Fix: {fitness.fix}" if fitness.fix else ""),
    ]
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"
