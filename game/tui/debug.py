"""The memory debug panel (F12): what the narrator was shown on a turn, and why.

:class:`DebugScreen` is pushed over the play screen. For one turn of the
session (the latest; ``[`` and ``]`` step through the earlier ones) it shows,
in tabs that fit an 80x24 terminal and work without a mouse:

- **Blocks**: every memory section in recall order (the Story Bible and the
  L3 synopsis go in the system prompt, the L1 window after it, the other
  recalled blocks in the user prompt), each item with its
  source, score and score parts, and what was cut, by the block's own budget
  or by the prompt budget;
- **Tokens**: each part of the prompt as a coloured bar of its share, and the
  prompt of every turn of the session stacked block by block;
- **Prompt**: the system prompt and every message sent, the composed user
  prompt among them;
- **Output**: the narration, the model's raw answers, validation errors and
  repairs, effects the rules refused and why, dropped memory notes;
- **Timings**: time per stage, tokens per narrator call (cached ones too),
  and the retrieval metadata;
- **Bible**: the Story Bible (:class:`BibleView`), to filter, accept, reject,
  pin and archive entries.

Everything a model or a player wrote (narration, prompts, raw output, memory
and Bible texts) is shown as plain text: Rich/Textual markup is never parsed
(``[@click=app.quit]`` is just text) and control characters are made visible
(an ANSI escape shows as ``\\x1b[31m``). Building the view reads the turn's trace
only: the panel never searches memory.

:class:`DebugData` turns a :class:`TurnResult` into the plain rows the panel
draws, so the figures can be checked without reading the screen.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from game.engine.prompt import FIXED_BLOCKS_AFTER_MEMORY, FIXED_BLOCKS_BEFORE_MEMORY, SYSTEM_BLOCKS
from game.text import estimate_tokens, visible
from game.tui.text import plain

if TYPE_CHECKING:
    from game.engine.pipeline import TurnResult
    from game.engine.session import GameSession
    from game.memory.base import MemoryItem
    from game.memory.bible import ReviewAction
    from game.memory.records import BibleEntry

log = logging.getLogger("storyecho.tui.debug")


# ------------------------------------------------------------------ plain text
def safe(value: object) -> str:
    """``value`` as text with every control character but newline and tab written out (ESC as ``\\x1b``)."""
    return visible(value if isinstance(value, str) else str(value))


# --------------------------------------------------------------------- colours
_KNOWN_BLOCKS = (
    "system",
    "window",
    *SYSTEM_BLOCKS,  # the engine's own order, not a copy of it
    *FIXED_BLOCKS_BEFORE_MEMORY,
    "knowledge",
    "open_threads",
    "relevant_memories",
    "history_recall",
    "recent_story",
    *FIXED_BLOCKS_AFTER_MEMORY,
)
_PALETTE = (
    "grey62",
    "steel_blue1",
    "bright_white",
    "cyan",
    "gold1",
    "yellow",
    "green",
    "red",
    "grey42",
    "bold bright_yellow",
    "magenta",
    "orchid",
    "plum2",
    "bright_green",
    "dark_orange",
    "deep_sky_blue1",
    "medium_purple1",
    "bright_blue",
    "grey50",
    "turquoise2",
    "light_coral",
    "chartreuse3",
    "hot_pink",
)


def block_colour(name: str) -> str:
    """A stable colour for a prompt block (the same in every bar and chart, whatever the turn)."""
    if name in _KNOWN_BLOCKS:
        return _PALETTE[_KNOWN_BLOCKS.index(name) % len(_PALETTE)]
    return _PALETTE[sum(map(ord, name)) % len(_PALETTE)]


# ------------------------------------------------------------------------ data
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


def _item(item: MemoryItem, cut_by: str = "") -> ItemRow:
    return ItemRow(item.text, item.source, item.score, dict(item.parts), cut_by)


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
    prompt_cut: list[tuple[str, str, str, int, str]]
    """(block, source, text, tokens, why) of everything the prompt budget cut."""
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

    @property
    def estimated_tokens(self) -> int:
        return sum(row.tokens for row in self.shares)

    def block(self, name: str) -> BlockRow | None:
        return next((b for b in self.blocks if b.name == name), None)

    def share(self, name: str) -> ShareRow | None:
        return next((s for s in self.shares if s.name == name), None)

    @classmethod
    def from_result(cls, result: TurnResult) -> DebugData:
        trace = result.trace
        prompt = trace.prompt
        memory = trace.memory if trace.memory is not None else (prompt.memory if prompt is not None else None)
        prompt_cut = [(c.block, c.source, c.text, c.tokens, c.reason) for c in prompt.cut] if prompt else []
        blocks: list[BlockRow] = []
        if memory is not None:
            for block in memory.blocks:
                why = {(s, t): reason for b, s, t, _, reason in prompt_cut if b == block.name}
                cut = [_item(i, why.get((i.source, i.text), "prompt budget")) for i in block.cut]
                blocks.append(
                    BlockRow(block.name, block.title, block.layer, block.tokens, [_item(i) for i in block.items], cut)
                )
            window_items = [ItemRow(m["content"], m["role"], 0.0, scored=False) for m in memory.window]
            window_cut = [
                ItemRow(t, s, 0.0, cut_by=why, scored=False) for b, s, t, _, why in prompt_cut if b == "window"
            ]
            if window_items or window_cut:
                window_tokens = sum(estimate_tokens(i.text) for i in window_items)
                title = "L1 working window (chat messages before the user prompt)"
                blocks.append(BlockRow("window", title, "L1", window_tokens, window_items, window_cut))
            if memory.synopsis:
                item = ItemRow(memory.synopsis, "synopsis", 0.0, scored=False)
                title = "L3 synopsis (in the system prompt)"
                blocks.append(BlockRow("synopsis", title, "L3", estimate_tokens(memory.synopsis), [item], []))
        tokens = block_tokens(result)
        return cls(
            turn=result.turn,
            action=result.action,
            ok=result.ok,
            error=result.error,
            meta=result.meta,
            has_prompt=prompt is not None,
            blocks=blocks,
            shares=shares(tokens),
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
            rejected=[(r.effect, str(r.value), r.reason) for r in result.rejected],
            first_rejected=[(r.effect, str(r.value), r.reason) for r in trace.first_rejected],
            applied=[(a.effect, str(a.detail)) for a in result.applied],
            dropped_notes=list(trace.dropped_notes),
            memory_notes=[n if isinstance(n, str) else _compact(n) for n in result.memory_notes],
            notices=list(result.notices),
            retrieval_meta=dict(memory.retrieval_meta) if memory is not None else {},
            timings_ms=dict(trace.timings_ms),
            usage=[dict(u) for u in trace.usage],
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


def _compact(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_compact(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ------------------------------------------------------------------- rendering
BAR_WIDTH = 30
CHART_WIDTH = 40
_FILL = ("█", "▓")


def share_bars(rows: Sequence[ShareRow], width: int = BAR_WIDTH) -> Text:
    """A row per prompt part: name, a bar of its share in the block's colour, tokens and percent."""
    out = Text()
    name_width = max((len(r.name) for r in rows), default=0)
    for row in rows:
        filled = round(row.share * width)
        if row.tokens and not filled:
            filled = 1
        out.append(f"{row.name:<{name_width}} ", style="bold")
        out.append("█" * filled, style=block_colour(row.name))
        out.append("·" * (width - filled), style="grey30")
        out.append(f" {row.tokens:>5} tok {row.share * 100:5.1f}%\n")
    return out


def stacked_bar(counts: Mapping[str, int], scale: float, width: int = CHART_WIDTH) -> Text:
    """One stacked bar: a run of each block's colour, in alternating fills so runs part without colour too."""
    out = Text()
    used = 0
    for index, (name, count) in enumerate(counts.items()):
        cells = round(count * scale)
        if count and not cells:
            cells = 1
        cells = min(cells, width - used)
        if cells <= 0:
            continue
        out.append(_FILL[index % 2] * cells, style=block_colour(name))
        used += cells
    return out


def session_chart(series: Sequence[tuple[int, Mapping[str, int]]], current: int | None = None) -> Text:
    """Prompt tokens of every turn, stacked block by block, with a legend; row ``current`` (0-based) is marked."""
    if not series:
        return plain("No prompts yet.\n", "italic")
    top = max((sum(c.values()) for _, c in series), default=0) or 1
    scale = CHART_WIDTH / top
    out = Text()
    for row, (turn, counts) in enumerate(series):
        out.append("▶" if row == current else " ", style="bold yellow")
        out.append(f"T{turn:<4}")
        out.append_text(stacked_bar(counts, scale))
        out.append(f" {sum(counts.values())}\n")
    names: list[str] = []
    for _, counts in series:
        names += [n for n in counts if n not in names]
    out.append("\n")
    for name in names:
        out.append("██", style=block_colour(name))
        out.append(f" {name}  ")
    out.append("\n")
    return out


def _heading(text: str, style: str = "bold underline") -> Text:
    return Text(text + "\n", style=style)


def _field(out: Text, label: str, value: object) -> None:
    out.append(f"{label}: ", style="bold")
    out.append(safe(value) + "\n")


def render_blocks(data: DebugData) -> Text:
    """Every memory section with its items, scores and cuts, after a one-line overview."""
    out = Text()
    if not data.blocks:
        out.append("This turn recalled no memory.\n", style="italic")
        return out
    kept = sum(len(b.items) for b in data.blocks)
    cut = sum(len(b.cut) for b in data.blocks)
    memory_tokens = sum(b.tokens for b in data.blocks)
    out.append(f"{len(data.blocks)} sections · {kept} items kept · {cut} cut · {memory_tokens} tok of memory", "bold")
    if data.prompt_cut:
        cut_tokens = sum(c[3] for c in data.prompt_cut)
        out.append(f" · the prompt budget cut {len(data.prompt_cut)} ({cut_tokens} tok)", style="bold red")
    out.append("\n\n")
    for block in data.blocks:
        share = data.share(block.name)
        out.append("■ ", style=block_colour(block.name))
        out.append(safe(block.name), style="bold")
        out.append(f"  {safe(block.title)}  [{safe(block.layer)}]")
        if not block.items and not block.cut:
            out.append(" · empty\n\n", style="italic dim")
            continue
        out.append("\n")
        out.append(f"  {block.tokens} tok", style="dim")
        if share is not None and share.tokens:
            out.append(f" ({share.share * 100:.1f}% of the prompt)", style="dim")
        out.append(f" · {len(block.items)} kept · {len(block.cut)} cut\n", style="dim")
        if not block.items:
            out.append("   (all of it cut)\n", style="italic dim")
        for index, item in enumerate(block.items, 1):
            out.append(f" {index:>2}. ", style="bold")
            if item.scored:
                out.append(item.score_text() + "  ", style="cyan")
            out.append(safe(item.source) + "\n", style="dim")
            out.append("     " + safe(item.text) + "\n")
        for item in block.cut:
            out.append(f"  ✂ cut: {safe(item.cut_by)} ", style="red")
            if item.scored:
                out.append(item.score_text() + "  ", style="dim cyan")
            out.append(safe(item.source) + "\n", style="dim")
            out.append("     " + safe(item.text) + "\n", style="dim")
        out.append("\n")
    return out


def render_tokens(data: DebugData, series: Sequence[tuple[int, Mapping[str, int]]], current: int | None = None) -> Text:
    out = _heading("Prompt by part (estimated)")
    out.append_text(share_bars(data.shares))
    out.append(f"\nparts (estimated): {data.estimated_tokens} tok · prompt: {data.prompt_tokens} tok ")
    out.append(f"({safe(data.token_source)})")
    if data.budget_tokens is not None:
        out.append(f" · budget {data.budget_tokens} tok")
    if data.overhead_tokens:
        out.append(f" · schema on the wire {data.overhead_tokens} tok")
    out.append("\n\n")
    out.append_text(_heading("Prompt tokens per turn, block by block"))
    out.append_text(session_chart(series, current))
    return out


def render_prompt(data: DebugData) -> Text:
    out = _heading(f"System prompt ({estimate_tokens(data.system)} tok)")
    out.append(safe(data.system) + "\n\n")
    composed = False
    for index, message in enumerate(data.messages[1:], 1):
        content, role = message.get("content", ""), message.get("role", "?")
        if not composed and content == data.user and role == "user":
            label, composed = "user prompt (composed)", True
        elif not composed:
            label = f"L1 window, {role}"
        else:
            label = f"{role}, asked again"
        out.append_text(_heading(f"Message {index}: {safe(label)} ({estimate_tokens(content)} tok)", "bold"))
        out.append(safe(content) + "\n\n")
    return out


def _rejections(out: Text, title: str, rows: Sequence[tuple[str, str, str]]) -> None:
    if not rows:
        return
    out.append_text(_heading(title))
    for effect, value, reason in rows:
        out.append(f" ✗ {safe(effect)} {safe(value)}: ", style="red")
        out.append(safe(reason) + "\n")
    out.append("\n")


def render_output(data: DebugData) -> Text:
    out = Text()
    status = "ok" if data.ok else f"FAILED: {data.error}"
    _field(out, "Turn", status)
    flags = [f for f, on_ in (("repaired", data.repaired), ("asked again", data.reasked)) if on_]
    if data.narration_replaced:
        flags.append("narration replaced by the rules' account")
    _field(out, "Answer", ", ".join(flags) or "used as given")
    out.append("\n")
    out.append_text(_heading("Narration (what the player read)"))
    out.append(safe(data.narration) + "\n\n")
    out.append_text(_heading("Raw model output"))
    out.append(safe(data.raw_output or "(none)") + "\n\n")
    if data.repair_output:
        out.append_text(_heading("Second answer (repair or asked again)"))
        out.append(safe(data.repair_output) + "\n\n")
    if data.validation_errors:
        out.append_text(_heading("Validation errors"))
        for error in data.validation_errors:
            out.append(" • " + safe(error) + "\n", style="yellow")
        out.append("\n")
    _rejections(out, "Refused by the rules", data.rejected)
    _rejections(out, "Refused in the first answer (then asked again)", data.first_rejected)
    if data.applied:
        out.append_text(_heading("Applied effects"))
        for effect, detail in data.applied:
            out.append(f" ✓ {safe(effect)} {safe(detail)}\n", style="green")
        out.append("\n")
    if data.memory_notes:
        out.append_text(_heading("Memory notes proposed"))
        for note in data.memory_notes:
            out.append(" • " + safe(note) + "\n")
        out.append("\n")
    if data.dropped_notes:
        out.append_text(_heading("Dropped memory notes"))
        for note in data.dropped_notes:
            out.append(" ✗ " + safe(note) + "\n", style="yellow")
        out.append("\n")
    if data.notices:
        out.append_text(_heading("Notices"))
        for notice in data.notices:
            out.append(" • " + safe(notice) + "\n")
    return out


def render_timings(data: DebugData) -> Text:
    out = _heading("Time per stage")
    top = max(data.timings_ms.values(), default=0.0) or 1.0
    width = max((len(s) for s in data.timings_ms), default=0)
    for stage, ms in data.timings_ms.items():
        out.append(f"{safe(stage):<{width}} ", style="bold")
        cells = max(1, round(ms / top * BAR_WIDTH)) if ms > 0 else 0
        out.append("█" * cells, style="steel_blue1")
        out.append(" " * (BAR_WIDTH - cells))
        out.append(f" {ms:9.1f} ms\n")
    out.append(f"{'total':<{width}} {' ' * BAR_WIDTH} {sum(data.timings_ms.values()):9.1f} ms\n\n", style="bold")
    out.append_text(_heading(f"Narrator calls ({len(data.usage)})"))
    if not data.usage:
        out.append("No usage reported (the scripted narrator, or a model that gives none).\n", style="italic")
    for index, call in enumerate(data.usage, 1):
        out.append(f" call {index}: ", style="bold")
        out.append(safe(_compact(call)) + "\n")
    if data.usage:
        totals: dict[str, float] = {}
        for call in data.usage:
            for key, value in call.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and "token" in key:
                    totals[key] = totals.get(key, 0) + value
        if totals:
            out.append(" total: ", style="bold")
            out.append(safe(_compact(totals)) + "\n")
    out.append("\n")
    out.append_text(_heading("Retrieval"))
    for key, value in data.retrieval_meta.items():
        _field(out, safe(key), _compact(value))
    return out


# --------------------------------------------------------------------- widgets
BIBLE_FILTERS = ("all", "candidate", "active", "disputed", "superseded", "archived", "rejected", "pinned")


class BibleView(Vertical):
    """The Story Bible as a table: ``f`` filters by status; ``a``/``r``/``p``/``x`` review the selected entry.

    Reviews go through ``GameMemory.review_bible(entry_id, action, turn)``; a
    refusal (ValueError) is shown as a notification.
    """

    DEFAULT_CSS = """
    BibleView { height: 1fr; }
    BibleView #bible-status { height: 1; padding: 0 1; background: $boost; }
    BibleView #bible-table { height: 1fr; }
    BibleView #bible-detail { height: auto; max-height: 6; padding: 0 1; border-top: solid $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "review('accept')", "Accept"),
        Binding("r", "review('reject')", "Reject"),
        Binding("p", "pin", "Pin/unpin"),
        Binding("x", "review('archive')", "Archive"),
        Binding("f", "next_filter", "Filter"),
    ]
    COLUMNS = ("status", "pin", "imp", "title", "key", "source", "turn")

    def __init__(self, session: GameSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self.status_filter = "all"
        self._shown: list[BibleEntry] = []

    def compose(self) -> ComposeResult:
        yield Static(id="bible-status")
        yield DataTable[Text](id="bible-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="bible-detail")

    def on_mount(self) -> None:
        table = self.table
        for column in self.COLUMNS:
            table.add_column(column, key=column)
        self.refresh_entries()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#bible-table", DataTable)

    # ---------------------------------------------------------------- data
    def entries(self) -> list[BibleEntry]:
        """Every Bible entry (copies), all statuses."""
        return self.session.engine.memory.bible_entries()

    def visible_entries(self) -> list[BibleEntry]:
        """The entries the filter lets through, in Bible order."""
        entries = self.entries()
        if self.status_filter == "all":
            return entries
        if self.status_filter == "pinned":
            return [e for e in entries if e.pinned]
        return [e for e in entries if e.status == self.status_filter]

    def selected_entry(self) -> BibleEntry | None:
        table = self.table
        if not self._shown or not table.is_valid_row_index(table.cursor_row):
            return None
        return self._shown[table.cursor_row]

    def refresh_entries(self, keep: str | None = None) -> None:
        """Re-read the Bible and redraw the table, the cursor staying on entry ``keep`` (or the selected one)."""
        if keep is None:
            selected = self.selected_entry() if self.is_mounted and self._shown else None
            keep = selected.id if selected is not None else None
        table = self.table
        table.clear()
        self._shown = self.visible_entries()
        for entry in self._shown:
            pinned = entry.pinned
            table.add_row(
                plain(entry.status, _STATUS_STYLE.get(entry.status, "")),
                plain("●" if pinned else "", "bold yellow"),
                plain(entry.importance),
                plain(_clip(entry.title or entry.content, 30)),
                plain(_clip(entry.canonical_key, 26)),
                plain(entry.source),
                plain(entry.source_turn),
                key=entry.id,
            )
        counts: dict[str, int] = {}
        for entry in self.entries():
            counts[entry.status] = counts.get(entry.status, 0) + 1
        status = Text()
        status.append(f"filter: {self.status_filter} ", style="bold")
        status.append(f"({len(self._shown)} shown) · ")
        status.append(" ".join(f"{s} {n}" for s, n in counts.items()), style="dim")
        status.append(" · f filter, a/r/p/x review", style="dim")
        self.query_one("#bible-status", Static).update(status)
        if keep is not None:
            index = next((i for i, e in enumerate(self._shown) if e.id == keep), None)
            if index is not None:
                table.move_cursor(row=index)
        self._show_detail()

    def _show_detail(self) -> None:
        entry = self.selected_entry()
        detail = Text()
        if entry is None:
            detail.append("No entry." if not self._shown else "", style="italic")
        else:
            detail.append(f"{safe(entry.id)} · {safe(entry.entry_type)} · {safe(entry.canonical_key)}", style="bold")
            extra = [f"importance {entry.importance}", f"turn {entry.source_turn}", entry.source]
            if entry.supersedes:
                extra.append(f"supersedes {entry.supersedes}")
            if entry.ended_turn is not None:
                extra.append(f"ended turn {entry.ended_turn}")
            if entry.npcs:
                extra.append("npcs " + ", ".join(entry.npcs))
            detail.append(" · " + safe(" · ".join(extra)) + "\n", style="dim")
            detail.append(safe(entry.text()))
            if entry.reason:
                detail.append("\nreason: " + safe(entry.reason), style="yellow")
        self.query_one("#bible-detail", Static).update(detail)

    @on(DataTable.RowHighlighted, "#bible-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    # ------------------------------------------------------------- actions
    def review(self, action: ReviewAction) -> BibleEntry | None:
        """Review the selected entry (``accept``, ``reject``, ``pin``, ``unpin``, ``archive``); None when refused."""
        entry = self.selected_entry()
        if entry is None:
            self.notify("No Bible entry selected.", severity="warning", markup=False)
            return None
        try:
            changed = self.session.engine.memory.review_bible(entry.id, action, self.session.engine.state.turn)
        except ValueError as exc:
            self.notify(str(exc), title="Not changed", severity="warning", markup=False)
            return None
        except Exception as exc:  # a failed review is told, never ends the game
            log.exception("review_bible %s %s failed", entry.id, action)
            self.notify(f"Review failed: {type(exc).__name__}: {exc}", severity="error", markup=False)
            return None
        self.refresh_entries(keep=entry.id)
        self.notify(f"{entry.id}: {action} done.", markup=False)
        return changed

    def action_review(self, action: ReviewAction) -> None:
        self.review(action)

    def action_pin(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            self.notify("No Bible entry selected.", severity="warning", markup=False)
            return
        self.review("unpin" if entry.pinned else "pin")

    def action_next_filter(self) -> None:
        self.status_filter = BIBLE_FILTERS[(BIBLE_FILTERS.index(self.status_filter) + 1) % len(BIBLE_FILTERS)]
        self.refresh_entries()

    def set_filter(self, status: str) -> None:
        """Show only entries of ``status`` (one of ``BIBLE_FILTERS``)."""
        if status not in BIBLE_FILTERS:
            raise ValueError(f"unknown filter {status!r}; one of {', '.join(BIBLE_FILTERS)}")
        self.status_filter = status
        self.refresh_entries()


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


_STATUS_STYLE = {
    "candidate": "yellow",
    "active": "green",
    "superseded": "dim",
    "disputed": "red",
    "archived": "dim",
    "rejected": "red dim",
}

TABS = ("blocks", "tokens", "prompt", "output", "timings", "bible")


class DebugScreen(Screen[None]):
    """The memory debug panel for the turns of ``session`` (``session.history``; ``history`` if the session has none).

    Keys: ``[``/``]`` step to the previous/next turn, ``1``-``6`` pick a tab,
    Escape or F12 close. In the Bible tab: ``f`` filter, ``a`` accept,
    ``r`` reject, ``p`` pin/unpin, ``x`` archive.
    """

    DEFAULT_CSS = """
    DebugScreen { layout: vertical; }
    DebugScreen #debug-title { height: auto; max-height: 2; padding: 0 1; background: $boost; }
    DebugScreen TabbedContent { height: 1fr; }
    DebugScreen TabbedContent > ContentSwitcher { height: 1fr; }
    DebugScreen TabPane { height: 1fr; padding: 0; }
    DebugScreen VerticalScroll { height: 1fr; }
    DebugScreen .debug-body { width: 100%; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f12", "close", "Close", show=False),
        Binding("left_square_bracket", "step(-1)", "Prev turn", key_display="["),
        Binding("right_square_bracket", "step(1)", "Next turn", key_display="]"),
        *(Binding(str(i), f"tab('{tab}')", tab.title(), show=False) for i, tab in enumerate(TABS, 1)),
    ]
    TITLE = "Memory debug"

    def __init__(self, session: GameSession) -> None:
        super().__init__()
        self.session = session
        self.results: list[TurnResult] = []
        self.index = -1
        self.data: DebugData | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="debug-title")
        with TabbedContent(initial="blocks"):
            for tab in TABS[:-1]:
                with TabPane(tab.title(), id=tab), VerticalScroll(id=f"{tab}-scroll"):
                    yield Static(id=f"{tab}-body", classes="debug-body")
            with TabPane("Bible", id="bible"):
                yield BibleView(self.session, id="bible-view")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def on_screen_resume(self) -> None:
        """Back on top (a dialog closed, or pushed again): show the turns played since."""
        if self.is_mounted:
            self.reload()

    # ---------------------------------------------------------------- data
    def reload(self) -> None:
        """Re-read the session's turns: stay on the turn on view, or on the latest when that was on view."""
        at_end = self.index == len(self.results) - 1
        self.results = traced(self.session.history)
        if at_end or not 0 <= self.index < len(self.results):
            self.index = len(self.results) - 1
        self.show(self.index)

    def show(self, index: int) -> None:
        """Show the ``index``-th traced turn (0-based; clamped)."""
        title = self.query_one("#debug-title", Static)
        if not self.results:
            self.index, self.data = -1, None
            title.update(Text("Memory debug · no turns played yet in this session · Esc close", style="bold"))
            message = plain("No turn yet: play one, then open this panel again (F12).", "italic")
            for tab in TABS[:-1]:
                self.query_one(f"#{tab}-body", Static).update(message)
            return
        self.index = max(0, min(index, len(self.results) - 1))
        result = self.results[self.index]
        data = self.data = DebugData.from_result(result)
        head = Text()
        head.append(f"Turn {self.index + 1} of {len(self.results)}", style="bold")
        head.append(f" · T{data.turn} ")
        if not data.ok:
            head.append("FAILED ", style="bold red")
        head.append(f"{data.prompt_tokens}")
        if data.budget_tokens is not None:
            head.append(f"/{data.budget_tokens}")
        head.append(f" tok ({safe(data.token_source)}) · ")
        head.append("> " + safe(data.action), style="italic")
        title.update(head)
        series = tokens_by_turn(self.session, self.results)
        bodies = {
            "blocks": render_blocks(data),
            "tokens": render_tokens(data, series, self.index if len(series) == len(self.results) else None),
            "prompt": render_prompt(data),
            "output": render_output(data),
            "timings": render_timings(data),
        }
        for tab, body in bodies.items():
            self.query_one(f"#{tab}-body", Static).update(body)

    def body_text(self, tab: str) -> str:
        """The plain text the ``tab`` tab shows (``blocks``, ``tokens``, ``prompt``, ``output``, ``timings``)."""
        content = self.query_one(f"#{tab}-body", Static).content
        return content.plain if isinstance(content, Text) else str(content)

    # ------------------------------------------------------------- actions
    def action_step(self, delta: int) -> None:
        if not self.results:
            return
        target = self.index + delta
        if not 0 <= target < len(self.results):
            self.app.bell()
            return
        self.show(target)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "bible":
            view = self.query_one(BibleView)
            view.refresh_entries()
            view.table.focus()

    def action_close(self) -> None:
        if self.is_current:
            self.dismiss()
