"""Compose the narrator prompt from named blocks, within a token budget spent by value.

Endpoints with prompt caching (OpenAI, DeepSeek, the llama.cpp server's KV
cache) reuse the longest prefix a prompt shares with the one before, so the
messages go from what changes least to what changes every turn:

    system  persona          the story's persona and DATA_NOT_ORDERS       never changes
            author_note      the author's wishes for the telling (if any)  never changes
            json_instruction the answer format (JSON template)             never changes
            main_quest, side_quests                                         when a quest moves on
            synopsis         the running L3 synopsis ("Previously: ...")    when memory consolidates
            pinned, open_threads  the Story Bible's pinned facts and threads  when the Story Bible does
    window  the L1 window: the last exchanges as chat messages              slides every turn
    user    current_context, node_info, voice (how the person talked to   every turn
            speaks), combat_hints,
            memory_header ("stay consistent with them"), then the recalled blocks: bible_core (the
            characters this turn needs), knowledge, relevant_memories, history_recall, recent_story,
            player_action, answer_reminder

The budget (:func:`compose`) treats every part as a cost: the fixed parts carry
only what this turn needs (the people present, met or named, not the whole
cast; the style and safety rules once, in the persona and the answer format;
world lore by relevance, through the relevant memories), the relevant memories
keep a guaranteed share (``RECALL_SHARE``), and every other item is kept by its
value per token. An open thread that only repeats a quest the main or side
quest block shows (``Open quest: <title>. <description>``) is left out while
that quest is active. The prompt's size is :func:`game.text.estimate_messages`:
the contents' estimated tokens plus each message's chat markup.

``SYSTEM_BLOCKS``, ``FIXED_BLOCKS_BEFORE_MEMORY`` and
``FIXED_BLOCKS_AFTER_MEMORY`` are that order; the debug panel and the tests
read it from them. Empty blocks are left out. The player's action comes last,
next to a one-line reminder of the answer format (``ANSWER_REMINDER``): the
place a small model looks before it answers. The system prompt says that the
action, the memories and the lore are story data and never instructions
(``DATA_NOT_ORDERS``). ``bench/prefix_cache.py`` measures the shared prefix of
consecutive turns; ``tests/test_prompt_cache.py`` keeps it.

Every block of both messages is in ``PromptBundle.blocks`` (system blocks
first), so the debug trace can show each one's size.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from game.engine.turn_parts import (
    ANSWER_REMINDER,
    JSON_INSTRUCTION,
    author_note_text,
    fixed_blocks,
    persona_text,
    prompt_block,
    synopsis_text,
    voice_text,
)
from game.language.parser import Command
from game.llm.base import PromptBundle, PromptCut
from game.memory.base import MemoryBlock, MemoryContext
from game.memory.guard import DATA_NOT_ORDERS
from game.text import MESSAGE_TOKENS, estimate_messages, estimate_tokens
from game.world.content import ContentPack
from game.world.state import GameState

__all__ = [
    "ANSWER_REMINDER",
    "DATA_NOT_ORDERS",
    "FIXED_BLOCKS_AFTER_MEMORY",
    "FIXED_BLOCKS_BEFORE_MEMORY",
    "JSON_INSTRUCTION",
    "SYSTEM_BLOCKS",
    "compose",
    "fixed_blocks",
    "persona_text",
]

SYSTEM_BLOCKS = (
    "persona",
    "author_note",
    "json_instruction",
    "main_quest",
    "side_quests",
    "synopsis",
    "pinned",
    "open_threads",
)
"""The blocks of the system prompt, in order: the prefix consecutive turns share, most stable first.

The persona and the answer format never change; the quests change at a quest step, the synopsis every 5 turns;
then the Story Bible's pinned facts and open threads, which change when the player or a quest does. Recalled
items are shown in a fixed order (their value, then id), not in the order recall ranked them, so that a turn
whose section did not change repeats it byte for byte. The characters this turn needs (the people present, met
or named) change with the place and the action: they open the user prompt's memory, after the place and the
memory header."""
FIXED_BLOCKS_BEFORE_MEMORY = (
    "current_context",
    "node_info",
    "voice",
    "combat_hints",
    "memory_header",
)
"""The user prompt's blocks before the recalled memory: where the player is, now; then the memory header (when the
user prompt holds recalled memory), which says to stay consistent with it."""
FIXED_BLOCKS_AFTER_MEMORY = (
    "player_action",
    "answer_reminder",
)
"""The user prompt ends with the player's action and the reminder to answer in the format."""


def _quest_titles_shown(state: GameState, pack: ContentPack) -> list[str]:
    """Titles of the quests the main and side quest blocks show (with their description and objectives)."""
    main = [q for q in pack.story.main_quest_order if state.quests.get(q) and state.quests[q].status == "active"]
    side = [q for q in state.active_quests() if q not in pack.story.main_quest_order]
    return [quest.title for q in main[:1] + side if (quest := pack.quest(q)) is not None]


def _without_shown_quests(blocks: list[MemoryBlock], state: GameState, pack: ContentPack) -> list[MemoryBlock]:
    """The blocks without the open threads that only repeat a quest the quest blocks show.

    A quest's open thread is "Open quest: <title>. <description>" (``game/memory/bible.py``): while the
    quest is active, the main or side quest block shows the same description and its objectives.
    """
    shown = tuple(f"Open quest: {title}." for title in _quest_titles_shown(state, pack))
    if not shown:
        return blocks
    out = []
    for block in blocks:
        if block.name == "open_threads":
            kept = [item for item in block.items if not item.text.startswith(shown)]
            if len(kept) != len(block.items):
                block = replace(block, items=kept)
                block.tokens = estimate_tokens(block.render()) if kept else 0
        out.append(block)
    return out


RECALL_SHARE = 0.3
"""The share of the memory budget (the budget left after the parts every prompt carries) kept for relevant
memories whenever recall found some. AI Dungeon gives its Memory Bank a quarter of the whole context; ours is a
share of what is left after the fixed parts, so that a crowded place (a long description, two people's
briefs) shrinks it with the rest. Measured with ``bench/memory_delivery.py``: see ``docs/memory.md``."""
REQUIRED_WINDOW = 2
"""The L1 window's last exchange (two messages) is never cut."""
WINDOW_VALUES = (0.85, 0.75, 0.65, 0.55)
"""Value of each older exchange of the window, newest first (the last exchange is required)."""
HISTORY_LATEST_VALUES = (0.9, 0.7)
"""Value of the latest summaries, newest first, shown whatever the query: the newest tells what happened just
before the window (a vector hit is valued by its score)."""
KNOWLEDGE_VALUES = (0.7, 0.6, 0.5)
"""Value of the knowledge-base hits, best first."""
FIRED_LORE_VALUE = 0.9
"""Value of an imported lore entry its keys (or constant, sticky) fired: its author asked for it this turn."""
RECENT_VALUES = (0.55, 0.5, 0.45)
"""Value of the recent events, newest first: the window tells the same turns in prose."""


@dataclass
class _Candidate:
    """Something the prompt may hold: an item of a memory block, an exchange of the window, the synopsis."""

    block: str
    position: int
    """The item's index in its block (window: the exchange's first message in the window)."""
    value: float
    """What it is worth to this turn, on the scale of a relevant memory's hybrid score (0-1.15)."""
    tokens: int
    """What it adds to the prompt: its line and newline (window: its messages and their chat markup)."""
    span: int = 1
    """Window messages it stands for (an exchange: the player's message and the narrator's answer)."""

    @property
    def density(self) -> float:
        return self.value / max(1, self.tokens)


def _values(block: MemoryBlock) -> list[float]:
    """Each item's value on one scale, so that a budget can weigh items of different blocks.

    A relevant memory's is its hybrid score; a character's, a history hit's and an open thread's their own
    score (recall sets it); the others by rank (see the ``*_VALUES`` constants).
    """
    items = block.items
    if block.name == "knowledge":  # imported lore its keys fired first (issue 44), then the meaning hits by rank
        ranks = itertools.count()
        return [
            FIRED_LORE_VALUE if "fired" in i.parts else KNOWLEDGE_VALUES[min(next(ranks), len(KNOWLEDGE_VALUES) - 1)]
            for i in items
        ]
    if block.name == "recent_story":
        newest_first = list(range(len(items)))[::-1]
        return [RECENT_VALUES[min(newest_first[n], len(RECENT_VALUES) - 1)] for n in range(len(items))]
    if block.name == "history_recall":
        latest = iter(HISTORY_LATEST_VALUES)
        return [next(latest, 0.5) if "recency" in i.parts else min(1.0, 0.4 + 0.1 * i.score) for i in items]
    if block.name == "open_threads":
        return [0.3 + 0.4 * i.score for i in items]
    return [i.score for i in items]


def compose(
    action: str,
    command: Command,
    state: GameState,
    pack: ContentPack,
    memory: MemoryContext,
    budget_tokens: int | None = None,
    asked: str = "",
    ahead: Sequence[str] = (),
) -> PromptBundle:
    """Build the prompt for one turn, within ``budget_tokens`` when given (``asked``: what the engine read the
    action to ask, said under it).

    The budget spends tokens by value. What every prompt carries is paid first: the persona and the answer
    format, the place (with the people present), the quests, the player's action, the pinned facts, the
    characters recall marks required (the player, the people present), the synopsis and the window's last
    exchange. Of what is left (the memory budget), ``RECALL_SHARE`` is kept for the relevant memories, best
    first, whenever recall found some. Then every other item of every block, the rest of the relevant
    memories and the window's older exchanges are kept by value per token (:func:`_values`) while they fit.
    Open threads that repeat an active quest are left out (the quest blocks show them).

    Everything left out is recorded in the bundle (``cut``, with why), and the bundle's memory holds only what
    the prompt holds, so no narrator reads what the prompt left out. When the required parts alone are over
    the budget, the prompt holds them and nothing else, and says so (``tokens > budget_tokens``).
    """
    blocks = _without_shown_quests(
        [replace(b, items=list(b.items), cut=list(b.cut)) for b in memory.blocks], state, pack
    )
    window = list(memory.window)
    if budget_tokens is None:
        return _finish(
            _assemble(action, command, state, pack, replace(memory, blocks=blocks, window=window), asked, ahead),
            [],
            None,
        )
    candidates, required = _split(blocks, window, memory.synopsis)
    kept = {id(c) for c in required}
    bare = _select(blocks, window, memory, kept, candidates + required)  # what every prompt carries
    base = _assemble(action, command, state, pack, bare, asked, ahead)
    _spend(budget_tokens - base.tokens, candidates, kept, bare)
    while True:
        context = _select(blocks, window, memory, kept, candidates + required)
        bundle = _assemble(action, command, state, pack, context, asked, ahead)
        chosen = [c for c in candidates if id(c) in kept]
        if bundle.tokens <= budget_tokens or not chosen:
            break
        kept.discard(id(min(chosen, key=lambda c: (c.density, c.value))))  # the estimate of the cost was short
    cut = _cuts(blocks, window, candidates, kept, context)
    bundle.required_tokens = base.tokens
    return _finish(bundle, cut, budget_tokens)


def _spend(room: int, candidates: list[_Candidate], kept: set[int], bare: MemoryContext) -> None:
    """Keep candidates (ids into ``kept``) while they fit in ``room``: the relevant memories first, within
    ``RECALL_SHARE`` of it, then all by value per token (:func:`_rank`). ``bare``: what every prompt carries."""
    opened = {b.name for b in bare.blocks if b.items}  # bare holds every block, the emptied ones too (_select)
    header = any(b.items and b.name not in SYSTEM_BLOCKS for b in bare.blocks)
    spent = 0
    titles = {b.name: estimate_tokens(f"## {b.title}") + 2 for b in bare.blocks}  # a title, the blank line after
    header_tokens = estimate_tokens(f"## {bare.header}") + 2 if bare.header else 0

    def cost(candidate: _Candidate) -> int:
        extra = 0
        if candidate.block != "window" and candidate.block not in opened:
            extra = titles[candidate.block]
            if candidate.block not in SYSTEM_BLOCKS and not header:
                extra += header_tokens
        return candidate.tokens + extra

    exchanges = {c.position: c for c in candidates if c.block == "window"}

    def take(candidate: _Candidate, limit: int) -> bool:
        nonlocal spent, header
        newer = exchanges.get(candidate.position + candidate.span) if candidate.block == "window" else None
        if newer is not None and id(newer) not in kept:
            return False  # the window stays a run of the latest exchanges (see _rank)
        price = cost(candidate)
        if spent + price > limit:
            return False
        spent += price
        kept.add(id(candidate))
        if candidate.block != "window":
            opened.add(candidate.block)
            header = header or candidate.block not in SYSTEM_BLOCKS
        return True

    relevant = [c for c in candidates if c.block == "relevant_memories"]
    reserve = int(RECALL_SHARE * room)
    for candidate in relevant:  # best first: recall ranked them
        take(candidate, reserve)
    for candidate in sorted(candidates, key=_rank(candidates)):
        if id(candidate) not in kept:
            take(candidate, room)


def _rank(candidates: list[_Candidate]) -> Callable[[_Candidate], tuple[float, float]]:
    """The order the budget considers candidates in: value per token, best first; an older window exchange is
    never ahead of a newer one (it ranks at most as high), so the window stays a run of the latest."""
    density = {id(c): c.density for c in candidates}
    newest_first = sorted((c for c in candidates if c.block == "window"), key=lambda c: -c.position)
    for newer, older in itertools.pairwise(newest_first):
        density[id(older)] = min(density[id(older)], density[id(newer)])
    return lambda c: (-density[id(c)], -c.value)


def _split(
    blocks: list[MemoryBlock], window: list[dict[str, str]], synopsis: str = ""
) -> tuple[list[_Candidate], list[_Candidate]]:
    """Every block item and older window exchange as candidates, and what the prompt always holds (the pinned
    facts, the required characters, the window's last exchange, the synopsis)."""
    candidates: list[_Candidate] = []
    required: list[_Candidate] = []
    for block in blocks:
        for position, (item, value) in enumerate(zip(block.items, _values(block), strict=True)):
            candidate = _Candidate(block.name, position, value, estimate_tokens(f"- {item.text}") + 1)
            (required if block.name == "pinned" or item.required else candidates).append(candidate)
    last = max(0, len(window) - REQUIRED_WINDOW)
    required += [_Candidate("window", n, 1.0, 0) for n in range(last, len(window))]
    if synopsis:  # the story so far, within its character budget: every prompt carries it
        required.append(_Candidate("synopsis", 0, 1.0, 0))
    for age, end in enumerate(range(last, 0, -2)):  # older exchanges, newest first
        start = max(0, end - 2)
        tokens = sum(MESSAGE_TOKENS + estimate_tokens(m["content"]) for m in window[start:end])
        value = WINDOW_VALUES[min(age, len(WINDOW_VALUES) - 1)]
        candidates.append(_Candidate("window", start, value, tokens, span=end - start))
    return candidates, required


def _select(
    blocks: list[MemoryBlock],
    window: list[dict[str, str]],
    memory: MemoryContext,
    kept: set[int],
    candidates: list[_Candidate],
) -> MemoryContext:
    """The memory context holding only the kept candidates (items in their blocks' order)."""
    chosen = {(c.block, c.position) for c in candidates if id(c) in kept}
    out = []
    for block in blocks:
        items = [item for n, item in enumerate(block.items) if (block.name, n) in chosen]
        kept_block = replace(block, items=items, cut=list(block.cut))
        kept_block.tokens = estimate_tokens(kept_block.render()) if items else 0
        out.append(kept_block)
    held = {
        n for c in candidates if c.block == "window" and id(c) in kept for n in range(c.position, c.position + c.span)
    }
    synopsis = memory.synopsis if ("synopsis", 0) in chosen else ""
    return replace(memory, blocks=out, window=[m for n, m in enumerate(window) if n in held], synopsis=synopsis)


def _cuts(
    blocks: list[MemoryBlock],
    window: list[dict[str, str]],
    candidates: list[_Candidate],
    kept: set[int],
    context: MemoryContext,
) -> list[PromptCut]:
    """What the budget left out, with why; each cut item is also in its block's ``cut``."""
    cut = []
    by_name = {b.name: b for b in context.blocks}
    for candidate in candidates:
        if id(candidate) in kept:
            continue
        reason = f"prompt budget: worth {candidate.value:.2f} for {candidate.tokens} tok"
        if candidate.block == "window":
            for message in window[candidate.position : candidate.position + candidate.span]:
                tokens = estimate_tokens(message["content"])
                cut.append(PromptCut("window", message["role"], message["content"], tokens, reason))
            continue
        item = next(b for b in blocks if b.name == candidate.block).items[candidate.position]
        by_name[candidate.block].cut.append(item)
        cut.append(PromptCut(candidate.block, item.source, item.text, candidate.tokens, reason))
    return cut


def _finish(bundle: PromptBundle, cut: list[PromptCut], budget_tokens: int | None) -> PromptBundle:
    bundle.cut = [*cut, *_shortened(bundle.memory)]
    bundle.budget_tokens = budget_tokens
    return bundle


def _shortened(memory: MemoryContext) -> list[PromptCut]:
    """The items the prompt shows in part (a lore entry longer than a prompt shows of one): what was left out, and
    why, beside what the budget cut."""
    return [
        PromptCut(
            block.name,
            item.source,
            item.left_out,
            estimate_tokens(item.left_out),
            f"shortened: the entry's own size ({len(item.text) + len(item.left_out):,} characters) is over what a "
            "prompt shows of one",
        )
        for block in memory.blocks
        for item in block.items
        if item.left_out
    ]


def _render(block: MemoryBlock) -> str:
    """A recalled block as the prompt shows it: the system prompt's in a fixed order, the others as ranked."""
    if block.name in SYSTEM_BLOCKS:
        block = replace(block, items=sorted(block.items, key=lambda item: (-item.score, item.source)))
    return block.render()


def _assemble(
    action: str,
    command: Command,
    state: GameState,
    pack: ContentPack,
    memory: MemoryContext,
    asked: str = "",
    ahead: Sequence[str] = (),
) -> PromptBundle:
    recalled = [prompt_block(b.name, text) for b in memory.blocks if (text := _render(b))]
    in_user = any(b.name not in SYSTEM_BLOCKS for b in recalled)
    parts = {
        **(
            {"memory_header": prompt_block("memory_header", f"## {memory.header}")} if memory.header and in_user else {}
        ),
        "persona": prompt_block("persona", persona_text(pack)),
        **({"author_note": prompt_block("author_note", note)} if (note := author_note_text(pack)) else {}),
        **({"voice": prompt_block("voice", voice)} if (voice := voice_text(command, state, pack)) else {}),
        "json_instruction": prompt_block("json_instruction", JSON_INSTRUCTION),
        **{b.name: b for b in recalled if b.name in SYSTEM_BLOCKS},
        **({"synopsis": prompt_block("synopsis", synopsis_text(memory.synopsis))} if memory.synopsis else {}),
        **{b.name: b for b in fixed_blocks(action, state, pack, asked, ahead)},
        "answer_reminder": prompt_block("answer_reminder", ANSWER_REMINDER),
    }
    system_blocks = [parts[name] for name in SYSTEM_BLOCKS if name in parts]
    user_blocks = [
        *(parts[name] for name in FIXED_BLOCKS_BEFORE_MEMORY if name in parts),
        *(b for b in recalled if b.name not in SYSTEM_BLOCKS),
        *(parts[name] for name in FIXED_BLOCKS_AFTER_MEMORY),
    ]
    system = "\n\n".join(b.text for b in system_blocks)
    user = "\n\n".join(b.text for b in user_blocks)
    messages = [{"role": "system", "content": system}, *memory.window, {"role": "user", "content": user}]
    # the same as estimate_messages(messages), without estimating every block again for each item the budget cuts:
    # an estimate adds up over blocks joined by a blank line (two newlines, a token each)
    tokens = estimate_messages(memory.window) + sum(
        MESSAGE_TOKENS + sum(b.tokens for b in part) + 2 * (len(part) - 1) for part in (system_blocks, user_blocks)
    )
    return PromptBundle(
        system=system,
        user=user,
        messages=messages,
        blocks=[*system_blocks, *user_blocks],
        tokens=tokens,
        action=action,
        command=command,
        state=state,
        memory=memory,
    )
