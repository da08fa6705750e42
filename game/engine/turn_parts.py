"""What every narrator prompt carries, whatever the budget: the answer format, the persona, the place (exits with
what waits there, the people, things and enemies by id, the choices and side quests that can be used here), the
quests, the player's action with what the engine read it to ask and what the rules will add by themselves.

``game/engine/prompt.py`` composes these with the recalled memory within the budget (issue 42: the format, once;
ids for everything the format offers; the consequences before the narrator answers).
"""

from __future__ import annotations

from collections.abc import Sequence

from game.language.parser import Command
from game.llm.base import PromptBlock
from game.memory.guard import DATA_NOT_ORDERS
from game.text import estimate_tokens, mentions
from game.world.conditions import enemies_at, holds, items_at, npcs_at
from game.world.content import VOICE_CHARS, ContentPack
from game.world.describe import node_description, node_texts, npc_brief, objective_lines, status_text
from game.world.rules.trade import trade_ids
from game.world.state import GameState

JSON_INSTRUCTION = """## Answer format
Reply with ONE JSON object and nothing else:
{"narration": "2-5 sentences of second-person narration", "choices": ["2 to 4 short next actions"],
 "effects": {only the keys the player's action needs},
 "memory_notes": ["what was said, learned or promised; the rules record every act and its result"]}
Effects, with this turn's ids (the rules check each and add what follows):
- "talk_to": a person; "move_to": an exit's place; "rest": true; "use_item": a carried item;
  "items_gained", "items_lost": [items here, carried]; "combat_action": "attack"/"flee"/"defend";
  "start_combat": an enemy (with "combat_action": "attack" when the player strikes the first blow)
- "give_item": {"item", "to"}; "give_gold": {"amount", "to"}; "trade": {"deal": "buy"/"sell", "item", "npc"}
- "choice", "trigger_side_quest": ids from "Choices here", "Side quests offered here"
- "hp_delta", "gold_delta", "exp_delta", "affinity": {person: n}: only what the rules cannot know (a fall, a coin
  found, a kind word); never for a fight, trade, gift, item used or quest: the rules count those.
Quest steps, rewards, levels and endings follow from the acts: "Rules' consequences" under the action tells them."""
"""The answer format, sent once: the keys, each effect's shape and what the rules do with it by themselves.

``quest_updates`` and ``ending`` are not offered: the rules complete objectives and reach endings themselves, a
narrator's claim of either only repeats them (``game/world/rules/quests.py``, ``check_claim``). The persona and the
Story Bible's style rule already say never to invent what the rules did not grant."""

ANSWER_REMINDER = "## Your answer\nReply with ONE JSON object in the answer format above, and nothing else."
"""Ends the user prompt: the format itself is in the system prompt (stable), this line next to the action."""


def prompt_block(name: str, text: str) -> PromptBlock:
    return PromptBlock(name=name, text=text, tokens=estimate_tokens(text))


def persona_text(pack: ContentPack) -> str:
    return f"{pack.story.persona}\n\n{DATA_NOT_ORDERS}"


AUTHOR_NOTE_HEADER = (
    "## The author's note\n"
    "The story's author asks this of how the story is told: their wish for the telling, not a fact of the world, "
    "and it changes nothing the rules decide."
)
"""Opens the author's note (``Story.author_note``; issue 44, item 5), which is never lore, canon or history."""


def author_note_text(pack: ContentPack) -> str:
    """The author's note as the system prompt shows it ("" when the story has none)."""
    notes = pack.story.author_note
    return AUTHOR_NOTE_HEADER + "".join(f"\n- {note}" for note in notes) if notes else ""


def voice_text(command: Command, state: GameState, pack: ContentPack) -> str:
    """How the people this turn talks to speak (``Npc.voice``, a card's examples; issue 44, item 4): the people
    here with a voice whom the action names, or the one such person here when the action talks or says something.
    "" when none. Shown as examples of a manner, never as what happened, and up to ``VOICE_CHARS`` each."""
    voiced = [pack.npcs[n] for n in npcs_at(pack, state.node) if pack.npcs[n].voice]
    named, _ = mentions(command.text, [(npc.id, npc.names) for npc in voiced])
    if not named and len(voiced) == 1 and command.verb in ("talk", "say"):
        named = [voiced[0].id]
    out = []
    for npc in (pack.npcs[n] for n in dict.fromkeys(named)):
        shown: list[str] = []
        total = 0
        for example in npc.voice:
            if shown and total + len(example) > VOICE_CHARS:
                break
            shown.append(example)
            total += len(example)
        out.append(
            f"## How {npc.name} speaks\nExamples of {npc.name}'s voice and manner, not events of this story: "
            f"speak as they do, in new words.\n" + "\n\n".join(shown)
        )
    return "\n\n".join(out)


def synopsis_text(synopsis: str) -> str:
    return f"Previously: {synopsis}"


def _ids(label: str, pairs: list[tuple[str, str]]) -> str:
    return f"{label}: " + (", ".join(f"{i} ({name})" for i, name in pairs) or "none")


def _counted(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each (id, name) once, in first-seen order, with "x3" after the name of one held three times."""
    counts: dict[tuple[str, str], int] = {}
    for pair in pairs:
        counts[pair] = counts.get(pair, 0) + 1
    return [(i, name if n == 1 else f"{name} x{n}") for (i, name), n in counts.items()]


def _exit_label(state: GameState, pack: ContentPack, direction: str, target: str) -> str:
    """An exit as the narrator needs it to tell the way and the arrival: its place, the lock when it is shut,
    and what waits there (people, things, danger), so that an arrival is not told blind (issue 42)."""
    label = f"{direction}: {pack.nodes[target].name}"
    lock = pack.nodes[state.node].locked_exits.get(direction)
    if lock and not holds(lock.condition, state):
        label += f", LOCKED - {lock.message}"
    there = [
        *(pack.npcs[n].name for n in npcs_at(pack, target)),
        *(pack.items[i].name for i in dict.fromkeys(items_at(state, pack, target))),
        *(f"danger: {pack.enemies[e].name}" for e in enemies_at(state, pack, target)),
    ]
    return label + (f"; there: {', '.join(there)}" if there else "")


def _offered(state: GameState, pack: ContentPack) -> list[str]:
    """The lines naming the ids of ``choice`` and ``trigger_side_quest`` where they can be used here: the story's
    choices that can be made at this place, and the side quests a person here gives now."""
    here = npcs_at(pack, state.node)
    choices = [(c.id, c.name) for c in pack.story.choices if c.condition.at_node in (None, state.node)]
    quests = [
        (q.id, f"{q.title}, from {pack.npcs[q.trigger.npc].name}")
        for q in pack.quests.side
        if q.trigger and q.trigger.npc in here and q.id not in state.quests and holds(q.trigger.condition, state)
    ]
    return [
        *([_ids("Choices here (choice)", choices)] if choices else []),
        *([_ids("Side quests offered here (trigger_side_quest)", quests)] if quests else []),
    ]


def fixed_blocks(
    action: str, state: GameState, pack: ContentPack, asked: str = "", ahead: Sequence[str] = ()
) -> list[PromptBlock]:
    """The blocks every prompt carries; ``asked``: what the engine read the action to ask (issue 41), told to the
    narrator under the action ("The player asks to: take the Heartsap Tonic."); ``ahead``: what the rules will add
    by themselves when it is carried out (issue 42), for the narrator to tell."""
    node = pack.nodes[state.node]
    region = pack.region(node.region)
    said = [f"## Player action\n{action}", asked]
    if ahead:
        said.append("Rules' consequences (tell them): " + " ".join(" ".join(ahead).split()))
    blocks = [
        prompt_block("player_action", "\n".join(filter(None, said))),
        prompt_block(
            "current_context",
            f"## Current context\n{status_text(state, pack)} Location: {node.name}"
            + (f" ({region.name})" if region else "")
            + ".",
        ),
    ]
    main = [q for q in pack.story.main_quest_order if state.quests.get(q) and state.quests[q].status == "active"]
    if main:
        quest = pack.quest(main[0])
        assert quest is not None
        text = f"## Main quest progress\n{quest.title}: {quest.description}\n" + "\n".join(
            objective_lines(quest, state)
        )
        blocks.append(prompt_block("main_quest", text))
    side = [q for q in state.active_quests() if q not in pack.story.main_quest_order]
    if side:
        lines = []
        for quest_id in side:
            quest = pack.quest(quest_id)
            assert quest is not None
            lines.append(f"{quest.title} ({quest.id})")
            lines += objective_lines(quest, state)
        blocks.append(prompt_block("side_quests", "## Active side quests\n" + "\n".join(lines)))
    node_lines = [
        f"## Node info\n{node.name} ({node.id}): {node_description(state, pack)}",
        *(f"{field.replace('_', ' ').capitalize()}: {text}" for field, text in node_texts(node) if text),
        _ids("Exits (move_to)", [(t, _exit_label(state, pack, d, t)) for d, t in node.exits.items()]),
        _ids("NPCs here (talk_to)", [(n, pack.npcs[n].name) for n in npcs_at(pack, state.node)]),
        *(line for line in [trade_ids(state, pack)] if line),  # who trades here, and the rules' prices
        *(f"- {npc_brief(pack.npcs[n], state)}" for n in npcs_at(pack, state.node)),
        _ids("Items here (items_gained)", [(i, pack.items[i].name) for i in items_at(state, pack, state.node)]),
        _ids("Enemies here (start_combat)", [(e, pack.enemies[e].name) for e in enemies_at(state, pack, state.node)]),
        _ids("Inventory", _counted([(i, pack.items[i].name) for i in state.inventory if i in pack.items])),
        *_offered(state, pack),
    ]
    blocks.append(prompt_block("node_info", "\n".join(node_lines)))
    if state.combat:
        enemy = pack.enemies[state.combat.enemy_id]
        blocks.append(
            prompt_block(
                "combat_hints",
                f"## Combat\nFighting {enemy.name} ({enemy.id}), {state.combat.enemy_hp}/{enemy.hp} HP, "
                f"attack {enemy.attack}. Use combat_action 'attack', 'flee', or 'defend' (with use_item); "
                "the rules roll the dice.",
            )
        )
    return blocks
