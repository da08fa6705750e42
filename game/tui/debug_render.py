"""The memory debug panel's tabs as Rich text: bars, charts and the text of each tab.

Each ``render_*`` function draws one tab of the panel from a
:class:`~game.tui.debug_data.DebugData`; :func:`share_bars` and
:func:`session_chart` draw the Tokens tab's bars, each prompt block in its own
colour (:func:`block_colour`, the same whatever the turn). Everything a model
or a player wrote goes through :func:`~game.tui.text.safe`: shown, never
parsed as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

from game.engine.prompt import FIXED_BLOCKS_AFTER_MEMORY, FIXED_BLOCKS_BEFORE_MEMORY, SYSTEM_BLOCKS
from game.text import estimate_tokens
from game.tui.debug_data import DebugData, ShareRow, compact
from game.tui.text import plain, safe

# --------------------------------------------------------------------- colours
_ADDED_LATER = ("author_note", "voice")
"""Blocks added after the colours were set (issue 44): last, so that every other block keeps its colour."""
_KNOWN_BLOCKS = (
    "system",
    "window",
    *(name for name in SYSTEM_BLOCKS if name not in _ADDED_LATER),  # the engine's own order, not a copy of it
    *(name for name in FIXED_BLOCKS_BEFORE_MEMORY if name not in _ADDED_LATER),
    "knowledge",
    "open_threads",
    "relevant_memories",
    "history_recall",
    "recent_story",
    *FIXED_BLOCKS_AFTER_MEMORY,
    *_ADDED_LATER,
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


# ------------------------------------------------------------ bars and charts
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


# ---------------------------------------------------------------------- title
def render_title(data: DebugData, position: int, count: int) -> Text:
    """The panel's title: turn ``position`` (1-based) of ``count``, its prompt size and budget, the action."""
    head = Text()
    head.append(f"Turn {position} of {count}", style="bold")
    head.append(f" · T{data.turn} ")
    if not data.ok:
        head.append("FAILED ", style="bold red")
    head.append(f"{data.prompt_tokens}")
    if data.budget_tokens is not None:
        head.append(f"/{data.budget_tokens}")
    head.append(f" tok ({safe(data.token_source)}) · ")
    head.append("> " + safe(data.action), style="italic")
    return head


# ----------------------------------------------------------------------- tabs
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
            if item.why:
                out.append("     why: " + safe(item.why) + "\n", style="green")
            out.append("     " + safe(item.text) + "\n")
        for item in block.cut:
            out.append(f"  ✂ cut: {safe(item.cut_by)} ", style="red")
            if item.scored:
                out.append(item.score_text() + "  ", style="dim cyan")
            out.append(safe(item.source) + "\n", style="dim")
            out.append("     " + safe(item.text) + "\n", style="dim")
        out.append("\n")
    if data.lore_held:
        out.append("Imported lore whose keys were seen but that did not fire\n", style="bold")
        for entry, why in data.lore_held:
            out.append(f"  ✗ {safe(entry)}: ", style="yellow")
            out.append(safe(why) + "\n")
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
    sent = next((c["response_format"] for c in data.usage if c.get("response_format")), "")
    if sent:  # the bytes sent beside the messages: a model reads this too
        out.append_text(_heading(f"Sent beside the messages: response_format ({estimate_tokens(sent)} tok)", "bold"))
        out.append(safe(sent) + "\n\n")
    return out


def _bullets(out: Text, title: str, lines: Sequence[str], mark: str, style: str = "", end: str = "\n") -> None:
    """A section of ``lines``, each after ``mark``, then ``end`` (nothing at all when there are none)."""
    if not lines:
        return
    out.append_text(_heading(title))
    for line in lines:
        out.append(f" {mark} " + safe(line) + "\n", style=style)
    out.append(end)


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
    flags += [f for f, on_ in (("spoke for the player", data.spoke_for_player), ("repeated", data.repeated)) if on_]
    if data.narration_replaced:
        flags.append("narration replaced by the rules' account")
    flags += [f"left out {claim}" for claim in data.unfounded]
    _field(out, "Answer", ", ".join(flags) or "used as given")
    out.append("\n")
    out.append_text(_heading("Narration (what the player read)"))
    out.append(safe(data.narration) + "\n\n")
    out.append_text(_heading("Raw model output"))
    out.append(safe(data.raw_output or "(none)") + "\n\n")
    if data.repair_output:
        out.append_text(_heading("Second answer (repair or asked again)"))
        out.append(safe(data.repair_output) + "\n\n")
    _bullets(
        out, "How the action was read", [*data.reading, *data.resolved, *([data.asked] if data.asked else [])], "•"
    )
    _bullets(out, "Validation errors", data.validation_errors, "•", "yellow")
    _rejections(out, "Refused by the rules", data.rejected)
    _rejections(out, "Refused in the first answer (then asked again)", data.first_rejected)
    _bullets(out, "Applied effects", [f"{effect} {detail}" for effect, detail in data.applied], "✓", "green")
    _bullets(out, "Memory notes proposed", data.memory_notes, "•")
    _bullets(out, "Dropped memory notes", data.dropped_notes, "✗", "yellow")
    _bullets(out, "Notices", data.notices, "•", end="")
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
    if data.autopilot:
        out.append_text(_heading("Memory autopilot (turn_time_target_s)"))
        out.append(safe(data.autopilot) + "\n\n")
    out.append_text(_heading(f"Narrator calls ({len(data.usage)})"))
    if not data.usage:
        out.append("No usage reported (the scripted narrator, or a model that gives none).\n", style="italic")
    for index, call in enumerate(data.usage, 1):
        out.append(f" call {index}: ", style="bold")
        out.append(safe(compact({k: v for k, v in call.items() if k != "response_format"})) + "\n")
    if data.usage:
        totals: dict[str, float] = {}
        for call in data.usage:
            for key, value in call.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and "token" in key:
                    totals[key] = totals.get(key, 0) + value
        if totals:
            out.append(" total: ", style="bold")
            out.append(safe(compact(totals)) + "\n")
    out.append("\n")
    out.append_text(_heading("Retrieval"))
    for key, value in data.retrieval_meta.items():
        _field(out, safe(key), compact(value))
    return out
