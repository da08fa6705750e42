"""The prompt budget spends tokens by value (issue 21): what recall finds reaches the narrator.

The fixed parts are costs too (only the characters this turn needs, the style and safety rules once, world lore by
relevance); relevant memories keep a guaranteed share; every other item is kept by value per token; the people
present, the player's own facts, the pinned facts and the window's last exchange are never cut; every cut says why.
"""

from __future__ import annotations

import pytest

from game.engine import prompt as prompt_module
from game.engine.pipeline import TurnPipeline
from game.engine.prompt import REQUIRED_WINDOW, SYSTEM_BLOCKS, compose
from game.language.parser import parse
from game.llm.scripted import ScriptedNarrator
from game.text import DEFAULT_PROMPT_BUDGET
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import MISTY_OPENING, keyword_memory


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


@pytest.fixture(scope="module")
def played(fantasy):
    """A Misty Forest opening, keyword memory (no embedder), at the default budget."""
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), keyword_memory(fantasy))
    for action in MISTY_OPENING[:12]:
        assert engine.play(action).ok
    return engine


def sent(bundle):
    return "\n".join(m["content"] for m in bundle.messages)


def test_the_budget_holds_the_fixed_parts_and_records_every_cut_with_why(fantasy, played):
    action = "what do I know about hal?"
    context = played.memory.recall(action, played.state)
    bundle = compose(action, parse(action), played.state, fantasy, context, 1900)
    assert bundle.tokens <= 1900 and bundle.budget_tokens == 1900
    names = [b.name for b in bundle.blocks]
    for name in ("persona", "json_instruction", "current_context", "node_info", "player_action", "answer_reminder"):
        assert name in names
    assert bundle.cut and all(c.reason.startswith("prompt budget: worth ") for c in bundle.cut)
    kept = {i.text for b in bundle.memory.blocks for i in b.items}
    assert not kept & {c.text for c in bundle.cut if c.block != "window"}  # the narrator's memory is the prompt's
    for block in bundle.memory.blocks:  # each cut item is also listed in its block's cut, for the debug panel
        assert {i.source for i in block.cut} == {c.source for c in bundle.cut if c.block == block.name}
    unbudgeted = compose(action, parse(action), played.state, fantasy, context, None)
    assert unbudgeted.tokens > 1900 and not unbudgeted.cut


def test_the_style_and_safety_rules_are_said_once_and_world_lore_comes_by_relevance(fantasy, played):
    idle = played.play("look").trace.prompt
    assert "## Story Bible: style and safety" not in idle.system
    assert "The rules decide:" not in sent(idle)  # the persona says it
    assert "The Path to Peace" not in sent(idle)  # a hidden rule of the throne, not of the gate
    asked = compose(
        "how can the shadow lord be talked back into silas?",
        parse("how can the shadow lord be talked back into silas?"),
        played.state,
        fantasy,
        played.memory.recall("how can the shadow lord be talked back into silas?", played.state),
        DEFAULT_PROMPT_BUDGET,
    )
    assert "The Path to Peace" in sent(asked)


def test_present_people_and_the_player_are_never_cut_and_absent_strangers_are_not_carried(fantasy):
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), keyword_memory(fantasy))
    for action in ["say my name is Ren", "go north", "go east", "talk to nyssa"]:
        engine.play(action)
    assert engine.state.node == "silver_spring"
    nyssa = fantasy.npcs["nyssa"]
    for budget in (DEFAULT_PROMPT_BUDGET, 1500, 900):
        bundle = engine.play("look").trace.prompt if budget == DEFAULT_PROMPT_BUDGET else None
        if bundle is None:
            context = engine.memory.recall("look", engine.state)
            bundle = compose("look", parse("look"), engine.state, fantasy, context, budget)
        core = bundle.memory.block("bible_core")
        shown = [i.text for i in core.items]
        assert any(t.startswith(f"{nyssa.name},") for t in shown), (budget, shown)
        assert 'The player claims: "The player\'s name is Ren"' in shown  # what the player said: a quoted claim
        assert not any(c.block == "bible_core" and c.text.startswith(nyssa.name) for c in bundle.cut)
        for absent in ("bruno", "elvin", "thief_leader"):  # never met, not named, not here
            assert not any(t.startswith(fantasy.npcs[absent].name + ",") for t in shown), absent


def test_a_better_item_is_never_cut_while_a_worse_one_of_its_size_stays(fantasy, played):
    """Over many budgets: within a block, and across blocks whose title is already paid for, a cut item is
    worth less per token than every kept one no larger than it (except the relevant memories' reserve, which
    takes the best-scored first)."""
    action = "what did garrick tell me about hal and silas?"
    context = played.memory.recall(action, played.state)
    full = compose(action, parse(action), played.state, fantasy, context, None).tokens
    checked = 0
    for budget in range(full, 1100, -37):
        bundle = compose(action, parse(action), played.state, fantasy, context, budget)
        candidates, _ = prompt_module._split(
            prompt_module._without_shown_quests(list(context.blocks), played.state, fantasy), context.window
        )
        items = {(b.name, i.source) for b in bundle.memory.blocks for i in b.items}
        values = {}
        for block in context.blocks:
            for item, value in zip(block.items, prompt_module._values(block), strict=True):
                values[(block.name, item.source)] = (value, prompt_module.estimate_tokens(f"- {item.text}") + 1)
        cut = [(c.block, c.source) for c in bundle.cut if c.block != "window" and c.reason.startswith("prompt budget")]
        kept = [k for k in values if k in items and k[0] != "pinned"]
        opened = {name for name, _ in items}
        for c in cut:
            value_c, tokens_c = values[c]
            for k in kept:
                value_k, tokens_k = values[k]
                if tokens_c > tokens_k:
                    continue
                checked += 1
                if value_c / tokens_c <= value_k / tokens_k:
                    continue
                if k[0] == "relevant_memories" and (c[0] != "relevant_memories" or value_k >= value_c):
                    continue  # the reserve takes the best memories first, whatever the rest is worth
                same_block = c[0] == k[0]
                if same_block or c[0] in opened:
                    required = any(i.required for b in context.blocks for i in b.items if (b.name, i.source) == k)
                    assert required, (budget, c, values[c], k, values[k])
        assert len(candidates) >= len(cut)
    assert full > 1500 and checked > 100  # many budgets cut, and many pairs were compared


def test_relevant_memories_keep_their_share_whenever_recall_found_some(fantasy, played):
    action = "what did garrick tell me?"
    context = played.memory.recall(action, played.state)
    found = context.block("relevant_memories").items
    assert len(found) >= 3
    for budget in (DEFAULT_PROMPT_BUDGET, 2200):
        bundle = compose(action, parse(action), played.state, fantasy, context, budget)
        kept = bundle.memory.block("relevant_memories").items
        assert [i.source for i in kept[:3]] == [i.source for i in found[:3]], budget  # the three best, always


def test_the_window_keeps_its_last_exchange_and_stays_a_run_of_the_latest(fantasy, played):
    action = "look"
    context = played.memory.recall(action, played.state)
    assert len(context.window) > REQUIRED_WINDOW
    for budget in range(2400, 900, -50):
        window = compose(action, parse(action), played.state, fantasy, context, budget).memory.window
        assert window == context.window[len(context.window) - len(window) :], budget
        assert len(window) >= REQUIRED_WINDOW


def test_a_budget_no_cut_can_meet_holds_the_required_parts_and_says_so(fantasy, played):
    context = played.memory.recall("look", played.state)
    bundle = compose("look", parse("look"), played.state, fantasy, context, 300)
    assert bundle.tokens > 300 and bundle.budget_tokens == 300
    assert not [i for b in bundle.memory.blocks if b.name != "pinned" for i in b.items if not i.required]
    assert bundle.memory.window == context.window[-REQUIRED_WINDOW:]


def test_the_characters_open_the_user_prompts_memory_and_the_system_prompt_holds_still(fantasy, played):
    """The characters change with the place and the action: after the place, not in the cached system prompt."""
    moved = [played.play(action).trace.prompt for action in ("go south", "look", "go north")]
    names = [b.name for b in moved[-1].blocks]
    assert "bible_core" not in SYSTEM_BLOCKS
    assert names.index("node_info") < names.index("memory_header") == names.index("bible_core") - 1
    assert moved[0].system == moved[1].system  # the people changed, the system prompt did not
    assert all("## Story Bible: characters" in p.user and "## Story Bible: characters" not in p.system for p in moved)
