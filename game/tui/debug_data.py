"""What the memory debug panel (F12) shows for a turn, as plain rows: no widgets, no styling.

:class:`DebugData` turns a :class:`TurnResult` into the rows the panel draws
(memory sections with their items, scores and cuts; each prompt part's share;
the prompt, the model's answers and what the rules refused), so the figures
can be checked without reading the screen. It reads the turn's trace only: it
never searches memory. :func:`tokens_by_turn` gives the session's prompt
sizes, part by part, for the chart of every turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from game.engine.prompt import SYSTEM_BLOCKS
from game.text import estimate_tokens

if TYPE_CHECKING:
    from game.engine.results import DebugTrace, TurnResult
    from game.engine.session import GameSession
    from game.memory.base import MemoryContext, MemoryItem


@dataclass(frozen=True)
class ItemRow:
    """One memory item as the panel shows it."""

    text: str
    source: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    """Score components (semantic, importance, recency, bonus...) when memory reports them."""
    cut_by: str = ""
    """For a cut item: why the prompt budget cut it (what it was worth, for how many tokens); empty when kept."""
    scored: bool = True
    """False for what is sent whole, unranked (window messages, the synopsis)."""
    why: str = ""
    """Why it is here, in words (an imported lore entry: the key that fired it, constant, sticky, meaning)."""

    def score_text(self) -> str:
        """The score with its parts, e.g. ``0.712 = semantic 0.400 + importance 0.210 + recency 0.102``."""
        if not self.scored:
            return ""
        text = f"{self.score:.3f}"
        if self.parts:
            text += " = " + " + ".join(f"{name} {value:.3f}" for name, value in self.parts.items())
        return text


@dataclass(frozen=True)
class BlockRow:
    """One memory section of a turn's context, in prompt order."""

    name: str
    title: str
    layer: str
    tokens: int
    items: list[ItemRow]
    cut: list[ItemRow]


@dataclass(frozen=True)
class ShareRow:
    """One part of the prompt and its share of the whole (``system``, ``window`` or a user-prompt block)."""

    name: str
    tokens: int
    share: float


PromptCutRow = tuple[str, str, str, int, str]
"""(block, source, text, tokens, why) of something the prompt budget cut."""


def _item(item: MemoryItem, cut_by: str = "") -> ItemRow:
    return ItemRow(item.text, item.source, item.score, dict(item.parts), cut_by, why=item.why)


def memory_blocks(memory: MemoryContext, prompt_cut: Sequence[PromptCutRow]) -> list[BlockRow]:
    """The recalled blocks in prompt order, each cut item with why, then the L1 window and the L3 synopsis."""
    blocks: list[BlockRow] = []
    for block in memory.blocks:
        why = {(s, t): reason for b, s, t, _, reason in prompt_cut if b == block.name}
        cut = [_item(i, why.get((i.source, i.text), "prompt budget")) for i in block.cut]
        blocks.append(
            BlockRow(block.name, block.title, block.layer, block.tokens, [_item(i) for i in block.items], cut)
        )
    window_items = [ItemRow(m["content"], m["role"], 0.0, scored=False) for m in memory.window]
    window_cut = [ItemRow(t, s, 0.0, cut_by=why, scored=False) for b, s, t, _, why in prompt_cut if b == "window"]
    if window_items or window_cut:
        window_tokens = sum(estimate_tokens(i.text) for i in window_items)
        title = "L1 working window (chat messages before the user prompt)"
        blocks.append(BlockRow("window", title, "L1", window_tokens, window_items, window_cut))
    if memory.synopsis:
        item = ItemRow(memory.synopsis, "synopsis", 0.0, scored=False)
        title = "L3 synopsis (in the system prompt)"
        blocks.append(BlockRow("synopsis", title, "L3", estimate_tokens(memory.synopsis), [item], []))
    return blocks


def block_tokens(result: TurnResult) -> dict[str, int]:
    """Tokens of each part of a turn's prompt, in prompt order: the system prompt's blocks, the L1 window, then
    the user prompt's blocks (a prompt without system blocks counts its system prompt as one part, ``system``)."""
    prompt = result.trace.prompt
    if prompt is None:
        return {}
    window = prompt.memory.window if prompt.memory is not None else []
    counts: dict[str, int] = {}
    for block in prompt.blocks:
        counts[block.name] = counts.get(block.name, 0) + block.tokens
    return with_window(counts, sum(estimate_tokens(m["content"]) for m in window), estimate_tokens(prompt.system))


def with_window(counts: Mapping[str, int], window: int, system: int) -> dict[str, int]:
    """Per-block ``counts`` with the L1 window put where it is sent: after the system prompt's blocks."""
    lead = {name: tokens for name, tokens in counts.items() if name in SYSTEM_BLOCKS} or {"system": system}
    rest = {name: tokens for name, tokens in counts.items() if name not in lead}
    return {**lead, "window": window, **rest}


def shares(tokens: Mapping[str, int]) -> list[ShareRow]:
    """Each part's share of the total, in the given order."""
    total = sum(tokens.values())
    return [ShareRow(name, count, count / total if total else 0.0) for name, count in tokens.items()]


@dataclass
class DebugData:
    """What the panel shows for one turn, as plain rows (built from the turn's trace only, cheap)."""

    turn: int
    action: str
    ok: bool
    error: str | None
    meta: str | None
    has_prompt: bool
    blocks: list[BlockRow]
    """Memory sections: the recalled blocks in prompt order, then the L1 window and the L3 synopsis (sent before)."""
    shares: list[ShareRow]
    prompt_tokens: int
    """The prompt's size as the trace reports it (the model's count when it gave one)."""
    token_source: str
    budget_tokens: int | None
    overhead_tokens: int
    system: str
    messages: list[dict[str, str]]
    user: str
    prompt_cut: list[PromptCutRow]
    """Everything the prompt budget cut."""
    narration: str
    raw_output: str
    repair_output: str
    validation_errors: list[str]
    repaired: bool
    reasked: bool
    narration_replaced: bool
    rejected: list[tuple[str, str, str]]
    first_rejected: list[tuple[str, str, str]]
    applied: list[tuple[str, str]]
    dropped_notes: list[str]
    memory_notes: list[str]
    notices: list[str]
    retrieval_meta: dict[str, Any]
    timings_ms: dict[str, float]
    usage: list[dict[str, Any]]
    autopilot: str = ""
    """What the memory autopilot did after this turn, with the budget the turn was composed with."""
    spoke_for_player: bool = False
    repeated: bool = False
    unfounded: list[str] = field(default_factory=list)
    """Sentences of the telling left out: they claimed an act the rules did not carry out."""
    reading: list[str] = field(default_factory=list)
    """How the action was read: each clause's mood, polarity, kind of act and whether it binds."""
    asked: str = ""
    """What the engine read the action to ask, as the narrator's prompt says it."""
    resolved: list[str] = field(default_factory=list)
    """How each clause that asks for an act was found in the world."""

    @property
    def estimated_tokens(self) -> int:
        return sum(row.tokens for row in self.shares)

    def block(self, name: str) -> BlockRow | None:
        return next((b for b in self.blocks if b.name == name), None)

    @property
    def lore_held(self) -> list[tuple[str, str]]:
        """(entry, why) of each imported lore entry whose keys the turn's text held but that did not fire."""
        verdicts = self.retrieval_meta.get("lore") or []
        return [(str(v["entry"]), str(v["why"])) for v in verdicts if isinstance(v, dict) and not v.get("fired")]

    def share(self, name: str) -> ShareRow | None:
        return next((s for s in self.shares if s.name == name), None)

    @classmethod
    def from_result(cls, result: TurnResult) -> DebugData:
        trace = result.trace
        prompt = trace.prompt
        memory = trace.memory if trace.memory is not None else (prompt.memory if prompt is not None else None)
        prompt_cut = [(c.block, c.source, c.text, c.tokens, c.reason) for c in prompt.cut] if prompt else []
        return cls(
            turn=result.turn,
            action=result.action,
            ok=result.ok,
            error=result.error,
            meta=result.meta,
            has_prompt=prompt is not None,
            blocks=memory_blocks(memory, prompt_cut) if memory is not None else [],
            shares=shares(block_tokens(result)),
            prompt_tokens=prompt.tokens if prompt is not None else 0,
            token_source=prompt.token_source if prompt is not None else "estimate",
            budget_tokens=prompt.budget_tokens if prompt is not None else None,
            overhead_tokens=prompt.overhead_tokens if prompt is not None else 0,
            system=prompt.system if prompt is not None else "",
            messages=[dict(m) for m in prompt.messages] if prompt is not None else [],
            user=prompt.user if prompt is not None else "",
            prompt_cut=prompt_cut,
            narration=result.narration,
            raw_output=trace.raw_output,
            repair_output=trace.repair_output,
            validation_errors=list(trace.validation_errors),
            repaired=trace.repaired,
            reasked=trace.reasked,
            narration_replaced=trace.narration_replaced,
            spoke_for_player=trace.spoke_for_player,
            repeated=trace.repeated,
            unfounded=list(trace.unfounded),
            reading=list(trace.reading),
            asked=trace.asked,
            resolved=list(trace.resolved),
            rejected=[(r.effect, str(r.value), r.reason) for r in result.rejected],
            first_rejected=[(r.effect, str(r.value), r.reason) for r in trace.first_rejected],
            applied=[(a.effect, str(a.detail)) for a in result.applied],
            dropped_notes=list(trace.dropped_notes),
            memory_notes=[n if isinstance(n, str) else compact(n) for n in result.memory_notes],
            notices=list(result.notices),
            retrieval_meta=dict(memory.retrieval_meta) if memory is not None else {},
            timings_ms=dict(trace.timings_ms),
            usage=[dict(u) for u in trace.usage],
            autopilot=_autopilot(trace),
        )


def traced(results: Iterable[TurnResult]) -> list[TurnResult]:
    """The results worth a debug view: turns that composed a prompt (not meta commands or refused input)."""
    return [r for r in results if r.trace.prompt is not None]


def tokens_by_turn(session: GameSession, results: Sequence[TurnResult]) -> list[tuple[int, dict[str, int]]]:
    """Prompt tokens per part for each traced turn of ``results``, in prompt order.

    The prompt's blocks come from ``session.prompt_tokens_by_block()`` (one row
    per traced turn of its history, as ``results`` are), with the L1 window
    added from each turn's trace after the system prompt's blocks (when the
    two disagree, the session's rows as they are).
    """
    turns = traced(results)
    series = session.prompt_tokens_by_block()
    if len(series) != len(turns):
        return series
    out = []
    for (turn, counts), result in zip(series, turns, strict=True):
        own = block_tokens(result)
        out.append((turn, with_window(counts, own.get("window", 0), own.get("system", 0))))
    return out


def compact(value: object) -> str:
    """A mapping, list or number on one line: ``a=1, b=[2, 3.5]`` (memory notes, usage, retrieval metadata)."""
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={compact(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "[" + ", ".join(compact(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _autopilot(trace: DebugTrace) -> str:
    if not trace.autopilot:
        return ""
    composed = trace.prompt.budget_tokens if trace.prompt is not None else None
    return f"composed within {composed} tokens; {trace.autopilot}" if composed else trace.autopilot
