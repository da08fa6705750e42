"""The Story Bible facts of what the rules applied in a turn: one pure mapping, effect by effect."""

from __future__ import annotations

from dataclasses import dataclass, field

from game.memory.records import EntryType
from game.world.content import ContentPack

ITEM_IMPORTANCE = {"quest": 70, "key": 70, "weapon": 50, "armor": 50}
"""A taken item's importance by its kind (others 40)."""


@dataclass(frozen=True)
class EffectFact:
    """One fact to propose (``StoryBible.propose``, source ``effect``)."""

    entry_type: EntryType
    key: str
    title: str
    content: str
    importance: int
    npcs: list[str] = field(default_factory=list)


def effect_fact(pack: ContentPack, effect: str, detail: str, turn: int, place: str = "") -> EffectFact | None:
    """The fact an applied effect establishes (``place``: where the player ended the turn), None for none."""
    if effect in ("quest_started", "quest_completed"):
        quest = pack.quest(detail)
        if quest is None:
            return None
        giver = [quest.giver] if quest.giver else []
        if effect == "quest_started":
            content = f"Open quest: {quest.title}. {quest.description}"
            return EffectFact("open_thread", f"thread:quest:{quest.id}", quest.title, content, 60, giver)
        content = f"The player completed the quest {quest.title}"
        return EffectFact("event", f"event:quest-done:{quest.id}", quest.title, content, 65, giver)
    if effect == "items_gained" and (item := pack.items.get(detail)):
        at = f" at {place}" if place else ""
        importance = ITEM_IMPORTANCE.get(item.kind, 40)
        return EffectFact("item", f"item:{item.id}", item.name, f"The player took the {item.name}{at}", importance)
    if effect == "give_item":
        item_id, _, npc_id = detail.partition("->")
        if item_id not in pack.items or npc_id not in pack.npcs:
            return None
        item, npc = pack.items[item_id], pack.npcs[npc_id]
        content = f"The player gave the {item.name} to {npc.name}"
        return EffectFact("item", f"item:{item_id}", item.name, content, 65, [npc_id])
    if effect == "affinity_threshold":
        npc_id, _, label = detail.partition(":")
        if npc_id not in pack.npcs:
            return None
        name = pack.npcs[npc_id].name
        lost = label.startswith("-")
        content = f"{name} no longer sees the player as {label[1:]}" if lost else f"{name} sees the player as {label}"
        return EffectFact("relationship", f"relationship:player-{npc_id}", name, content, 70, [npc_id])
    if effect == "defeated" and (enemy := pack.enemies.get(detail)):
        content = f"The player defeated {enemy.name}"
        return EffectFact("event", f"event:defeated:{enemy.id}", enemy.name, content, 75 if enemy.boss else 40)
    if effect == "choice" and (choice := pack.choice(detail)):
        return EffectFact("event", f"event:choice:{choice.id}", choice.name, f"The player chose: {choice.name}", 90)
    if effect == "knocked_out":
        content = f"The player was knocked out and woke at {detail}"
        return EffectFact("event", f"event:knocked-out:{turn}", "Knocked out", content, 45)
    return None
