"""The full-mode grammar of the local narrator: the JSON schema a turn is decoded against.

In ``full`` mode the model writes the whole JSON turn, constrained by a
grammar built from a compact JSON schema of the turn (:func:`turn_schema`):
the real effect names and types of :class:`game.world.effects.Effects`, with
ids limited to what the prompt lists for this place (exits, NPCs, items,
enemies, inventory), so every complete answer parses. The prompt's JSON
answer template gives way to a short instruction (:func:`compact_instruction`),
and :func:`turn_is_valid` tells whether an answer, as it stands, is a turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from game.llm.base import PromptBundle
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.rules.trade import trade_schema
from game.world.state import GameState

NARRATION_MAX_CHARS = 600
CHOICE_MAX_CHARS = 48
NOTE_MAX_CHARS = 160
MAX_GRAMMAR_NOTES = 2
FULL_BUDGET_TOKENS = 400
"""The answer these caps are sized for (about 370 tokens at the worst); a smaller max_tokens shrinks them."""


def _enum(ids: Iterable[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(dict.fromkeys(ids))}


def effects_schema(pack: ContentPack, state: GameState) -> dict[str, Any]:
    """JSON schema of the effects a narrator may propose here, with the ids the prompt lists.

    The names and types are those of :class:`Effects`; an effect with nothing
    to name here (no exit, no NPC, an empty inventory) is left out. The
    numeric claims (``hp_delta``, ``gold_delta``, ``exp_delta``, ``affinity``),
    ``quest_updates``, ``trigger_side_quest`` and ``ending`` are left out too:
    the rules work those out themselves from what happened, and a small model
    only wastes tokens on claims they would reject.
    """
    fields = Effects.model_fields
    node = pack.nodes[state.node]
    exits = list(dict.fromkeys(node.exits.values()))
    npcs = npcs_at(pack, state.node)
    items = items_at(state, pack, state.node)
    enemies = enemies_at(state, pack, state.node)
    inventory = [i for i in state.inventory if i in pack.items]
    props: dict[str, Any] = {}
    if npcs:
        props["talk_to"] = _enum(npcs)
    if exits and not state.combat:
        props["move_to"] = _enum(exits)
    if items and not state.combat:
        props["items_gained"] = {"type": "array", "items": _enum(items), "maxItems": len(items)}
    if inventory:
        props["items_lost"] = {"type": "array", "items": _enum(inventory), "maxItems": 1}
        props["use_item"] = _enum(inventory)
        if npcs:
            props["give_item"] = {
                "type": "object",
                "properties": {"item": _enum(inventory), "to": _enum(npcs)},
                "required": ["item", "to"],
                "additionalProperties": False,
            }
    if (deals := trade_schema(pack, state)) is not None:
        props["trade"] = deals
    if enemies and not state.combat:
        props["start_combat"] = _enum(enemies)
    if state.combat or enemies:
        props["combat_action"] = _enum(["attack", "flee", "defend"])
    if node.safe and not state.combat:
        props["rest"] = {"type": "boolean"}
    if pack.story.choices:
        props["choice"] = _enum(c.id for c in pack.story.choices)
    assert all(name in fields for name in props), "effects_schema names a field Effects does not have"
    return {"type": "object", "properties": props, "additionalProperties": False}


def turn_schema(pack: ContentPack, state: GameState, max_tokens: int = FULL_BUDGET_TOKENS) -> dict[str, Any]:
    """Compact JSON schema of one turn; ``narration`` comes first so it can be streamed.

    The lengths are capped so that a whole answer fits in ``max_tokens``
    (at about 3 characters a token): an answer the grammar had to cut off
    would not parse.
    """
    share = min(1.0, max_tokens / FULL_BUDGET_TOKENS)
    return {
        "type": "object",
        "properties": {
            "narration": {"type": "string", "minLength": 1, "maxLength": max(40, int(NARRATION_MAX_CHARS * share))},
            "choices": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": CHOICE_MAX_CHARS},
                "maxItems": max(1, int(4 * share)),
            },
            "effects": effects_schema(pack, state),
            "memory_notes": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": NOTE_MAX_CHARS},
                "maxItems": int(MAX_GRAMMAR_NOTES * share),
            },
        },
        "required": ["narration", "choices", "effects", "memory_notes"],
        "additionalProperties": False,
    }


ANSWER_INSTRUCTION = """## Answer
Reply with one JSON object. "narration": what happens now, 2 to 4 sentences spoken to the player as "you".
"choices": 2 to 4 short next actions. "effects": only what the action does, with ids from the turn's lists
below (Node info): move_to an exit to go there, talk_to someone here to speak with them, items_gained to take
an item here, start_combat to attack an enemy here, use_item to use something carried. "memory_notes": facts
worth remembering, or []. The game rules check every effect."""
"""The answer format for a small model under a grammar: the grammar gives the shape, so the prompt's
JSON template (whose placeholder text small models copy into the narration) is replaced by this."""


def compact_instruction(bundle: PromptBundle) -> list[dict[str, str]]:
    """The bundle's messages with its JSON answer template replaced by :data:`ANSWER_INSTRUCTION`."""
    block = next((b for b in bundle.blocks if b.name == "json_instruction"), None)
    if block is None:
        return list(bundle.messages)
    return [
        {**m, "content": m["content"].replace(block.text, ANSWER_INSTRUCTION)} if block.text in m["content"] else m
        for m in bundle.messages
    ]


def turn_is_valid(raw: str) -> bool:
    """Whether ``raw`` is, as it stands, a JSON turn: an object with a narration and effects that validate."""
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(data, dict) or not isinstance(data.get("narration"), str) or not data["narration"].strip():
        return False
    try:
        Effects.model_validate(data.get("effects") or {})
    except ValidationError:
        return False
    return True
