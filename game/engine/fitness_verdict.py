"""What the fitness check measured (:class:`Fitness`), its verdict and its report, apart from the playing
(``fitness.py``), so that each criterion can be tested on figures alone.

"Plays well" is earned, never the default: :data:`CRITERIA` lists, in order, every way a model falls short,
and the first that holds gives the verdict and the setting to change. A model that answered nothing, that
proposed no effects (the rules move the player, give items and fight only through effects), whose effects the
rules refused every time, or whose summaries never landed (memory then holds only the last turns) cannot be
reported as playing well.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from game.text import redact_urls

NAMED_OK = 1 / 3
"""Below this share of turns naming the place or a person there, the narration is judged too vague."""
REPAIRS_OK = 0.2
"""Above this share of turns repaired, the verdict is "plays with repairs"."""
NEVER_OK = 0.25
"""Above this share of turns that never gave a turn, or a broken-JSON share above 0.5, the model cannot play."""
SPEAKS_OK = 0.2
"""Above this share of answered turns whose first answer spoke or decided for the player: "plays with repairs"."""
REPEATS_OK = 0.2
"""Above this share of answered turns whose first answer repeated the previous tellings: "plays with repairs"."""
STALL_LIMIT = 3
"""After this many turn calls in a row without an answer the check stops: the endpoint is down or stalled."""
NO_ENDPOINT = "nothing to test: no endpoint is configured, and the built-in narrator needs no test"


@dataclass
class Fitness:
    """What the fitness check measured (``doctor --json`` prints it)."""

    endpoint: str
    model: str
    turns: int = 0
    alone: int = 0
    """Turns the engine answered without calling the model (an act that cannot be, issue 41): not judged."""
    first_time: int = 0
    repaired: int = 0
    never: int = 0
    failed_calls: int = 0
    """Turns whose call failed (network, HTTP errors): no answer to judge."""
    answers: int = 0
    broken_answers: int = 0
    """Answers to turn calls that were not valid JSON turns as sent (repaired or not)."""
    answered: int = 0
    """Turns with a first answer from the model (the share of the two rates below is of these)."""
    spoke_for_player: int = 0
    """Answered turns whose first answer put words in the player's mouth or decided for them."""
    repeated: int = 0
    """Answered turns whose first answer repeated the previous tellings."""
    proposed: int = 0
    """Effects the model proposed in committed turns (what its answer asked the rules to do)."""
    accepted: int = 0
    """Of the effects it proposed, those the rules applied (their own consequences, such as a level, not counted)."""
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
    failed_in_row: int = 0
    """Turn calls in a row that got no answer, up to the last turn played."""
    stopped: str = ""
    """Why the check stopped before the end of its script (a stalled endpoint, the test closed), if it did."""
    no_endpoint: bool = False
    seconds: float = 0.0
    verdict: str = ""
    fix: str = ""

    @property
    def broken_share(self) -> float:
        return self.broken_answers / self.answers if self.answers else 0.0

    @property
    def speaks_share(self) -> float:
        return self.spoke_for_player / self.answered if self.answered else 0.0

    @property
    def repeats_share(self) -> float:
        return self.repeated / self.answered if self.answered else 0.0

    def as_json(self) -> dict[str, Any]:
        shares = {"broken_share": self.broken_share, "speaks_share": self.speaks_share}
        shares["repeats_share"] = self.repeats_share
        data = asdict(self) | {name: round(value, 3) for name, value in shares.items()}
        data["endpoint"] = redact_urls(self.endpoint)
        data["errors"] = [redact_urls(e) for e in self.errors]
        return data


Criterion = tuple[str, Callable[[Fitness], tuple[str, str] | None]]
"""A name, and what the verdict and the fix are when the model falls short of it (None: it does not)."""


def _answered_at_all(f: Fitness) -> tuple[str, str] | None:
    fix = "check --base-url, the model name and the key"
    if f.stopped and f.failed_calls >= STALL_LIMIT:
        why = f"{f.stopped}; the last: {f.errors[-1]}" if f.errors else f.stopped
        return f"cannot play: the endpoint did not answer ({why})", f"{fix}; a slow model needs a larger timeout_s"
    if f.turns == 0 or f.failed_calls > max(f.turns, 1) // 2:
        why = f.errors[-1] if f.errors else f.stopped or "no turn was played"
        return f"cannot play: the endpoint did not answer ({why})", fix
    return None


def _json(f: Fitness) -> tuple[str, str] | None:
    judged = max(f.turns - f.failed_calls, 1)
    if f.never / judged <= NEVER_OK and f.broken_share <= 0.5:
        return None
    fix = (
        "set openai.json_mode = 'json_schema' if the server supports it (the server then decodes against the "
        "answer's schema), or use a larger model"
        if "json_schema" not in f.json_modes
        else "the answers are broken though the server was asked to decode against the schema: check that it "
        "enforces response_format, or use a larger model"
    )
    return f"cannot play: {f.never} of {judged} turns gave no usable JSON", fix


def _context(f: Fitness) -> tuple[str, str] | None:
    if f.prompt_tokens_max and f.context and f.prompt_tokens_max > 0.9 * f.context:
        return (
            f"cannot play: prompts of {f.prompt_tokens_max} tokens fill its {f.context}-token context",
            "raise the server's context size, or lower prompt_budget_tokens",
        )
    return None


def _effects(f: Fitness) -> tuple[str, str] | None:
    if f.proposed == 0:
        fix = "use a larger model" if "json_schema" in f.json_modes else "set openai.json_mode = 'json_schema'"
        return (
            f"cannot play: it proposed no effects in {f.committed} turns (moves, items and talks happen only "
            "through effects)",
            fix + " (the game moves the player, gives items and starts talks only through the effects proposed)",
        )
    if f.accepted == 0:
        return (
            f"cannot play: the rules accepted none of the {f.proposed} effects it proposed",
            "a larger model follows the game's state better",
        )
    return None


def _stopped(f: Fitness) -> tuple[str, str] | None:
    if f.stopped:
        return f"cannot judge: {f.stopped}", "run the test to its end"
    return None


def _calls(f: Fitness) -> tuple[str, str] | None:
    if f.failed_calls:
        return "plays with repairs", f"{f.failed_calls} calls failed: raise openai.timeout_s or check the server"
    judged = max(f.turns - f.failed_calls, 1)
    if f.repaired / judged > REPAIRS_OK or f.broken_share > REPAIRS_OK:
        return "plays with repairs", "try openai.json_mode = 'json_schema' to have the server enforce the JSON"
    return None


def _refusals(f: Fitness) -> tuple[str, str] | None:
    if f.refused > f.accepted:
        return (
            "plays with repairs: the rules refused more of what it proposed than they accepted",
            "a larger model follows the game's state better",
        )
    return None


def _summaries(f: Fitness) -> tuple[str, str] | None:
    fix = "check that the server answers the summary's JSON (openai.json_mode), or use a larger model"
    if f.summaries == 0:
        tried = f"all {f.summary_failures} consolidation calls failed" if f.summary_failures else "none was made"
        return f"plays with repairs: no summary landed ({tried}); memory keeps only the last turns", fix
    if f.summary_failures:
        return f"plays with repairs: {f.summary_failures} consolidation calls failed", fix
    return None


def _manners(f: Fitness) -> tuple[str, str] | None:
    if f.speaks_share > SPEAKS_OK:
        return (
            f"plays with repairs: it speaks or decides for the player in {f.speaks_share:.0%} of turns",
            "a larger model, or a lower openai.temperature",
        )
    if f.repeats_share > REPEATS_OK:
        return (
            f"plays with repairs: it repeats its last tellings in {f.repeats_share:.0%} of turns",
            "a larger model, or a higher openai.temperature",
        )
    return None


def _scene(f: Fitness) -> tuple[str, str] | None:
    if f.named / max(f.committed, 1) < NAMED_OK:
        return (
            "plays with repairs: its narration rarely names the place or the people there",
            "a larger model, or a lower openai.temperature",
        )
    return None


CRITERIA: tuple[Criterion, ...] = (
    ("answers", _answered_at_all),
    ("valid JSON", _json),
    ("fits the context", _context),
    ("proposes effects the rules accept", _effects),
    ("played the whole script", _stopped),
    ("calls succeed first time", _calls),
    ("more effects accepted than refused", _refusals),
    ("summaries land", _summaries),
    ("leaves the player's words to the player, does not repeat", _manners),
    ("names the scene", _scene),
)
"""Every criterion of "plays well", in the order the verdict tries them (the first a model fails decides)."""


def verdict(fitness: Fitness) -> tuple[str, str]:
    """The verdict and the setting to change (empty when there is none)."""
    if fitness.no_endpoint:
        return NO_ENDPOINT, "set --preset or --base-url to test a model at an endpoint"
    for _, falls_short in CRITERIA:
        found = falls_short(fitness)
        if found is not None:
            return found
    return "plays well", ""


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(fitness: Fitness) -> str:
    """The report, as ``doctor`` prints it and the settings' "Test narrator" shows it (credentials redacted)."""
    if fitness.no_endpoint:
        return f"Verdict: {fitness.verdict}. {fitness.fix[:1].upper()}{fitness.fix[1:]}."
    f = fitness
    judged = f.turns - f.failed_calls
    median_ttft = statistics.median(f.ttft_ms) if f.ttft_ms else None
    median_rate = statistics.median(f.tokens_per_s) if f.tokens_per_s else None
    context = f"{f.context:,}" if f.context else "not reported by the endpoint"
    prompt = f"{f.prompt_tokens_max or '?'}" + (" (estimated)" if f.prompt_tokens_estimated else "")
    model = (f.model or "?").rsplit("/", 1)[-1]
    lines = [
        f"Narrator fitness: {model} at {f.endpoint} ({f.turns} turns, {f.seconds} s)",
        *([f"  stopped early    {f.stopped}"] if f.stopped else []),
        f"  JSON answers     first time {f.first_time}, after repair {f.repaired}, never {f.never}"
        + (f" (of {judged} answered turns; {f.failed_calls} calls failed)" if f.failed_calls else ""),
        f"  broken JSON      {f.broken_answers} of {f.answers} answers ({f.broken_share:.0%})",
        f"  speaks for you   {f.spoke_for_player} of {f.answered} answered turns ({f.speaks_share:.0%})",
        f"  repetition       {f.repeated} of {f.answered} answered turns ({f.repeats_share:.0%})",
        f"  rules            {f.proposed} effects proposed: {f.accepted} accepted, {f.refused} refused",
        f"  names the scene  {f.named} of {f.committed} turns name the place or a person there",
        f"  consolidation    {f.summaries} summaries, {f.summary_failures} failed",
        f"  first token      median {_ms(median_ttft)}, p95 {_ms(percentile(f.ttft_ms, 0.95))}",
        f"  tokens/s         median {_rate(median_rate)}, p95 {_rate(percentile(f.tokens_per_s, 0.95))}"
        " (generating, after the first token)",
        f"  prompt tokens    max {prompt}; model context {context}",
        f"  JSON mode        {', '.join(f'{m} ({n})' for m, n in Counter(f.json_modes).most_common()) or '-'}",
        f"Verdict: {f.verdict}" + (f". Fix: {f.fix}" if f.fix else ""),
    ]
    return redact_urls("\n".join(lines))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"
