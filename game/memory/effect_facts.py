"""The Story Bible facts of what the rules applied in a turn: one pure mapping, effect by effect."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from game.memory.records import EntryType
from game.text import keywords
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


_NAMED_BY = {
    "items_gained": "item",
    "items_lost": "item",
    "use_item": "item",
    "give_item": "item",
    "trade": "item",
    "start_combat": "enemy",
    "defeated": "enemy",
    "move_to": "node",
    "quest_completed": "quest",
    "objective_done": "quest",
}
"""The applied effects a narrator's note may restate, and what their detail names (a talk is not among them:
what a person said is the note's own, the rules record only that they spoke)."""
_WORDS_SAID = re.compile(
    r"\b(?:said|says|told|tells|asked|asks|promised|promises|swore|vowed|learned|learnt|heard|agreed|refused|"
    r"revealed|claimed|named|warned|offered)\b|[\"“”]",
    re.I,
)


def restates_the_rules(note: str, applied: Iterable[tuple[str, str]], pack: ContentPack) -> bool:
    """Whether a narrator's note only restates an act the rules applied and record themselves ("The traveller took
    the Heartsap Tonic from the mantel", beside the rules' "The player took the Heartsap Tonic"): its subject is
    the player, it names a thing, foe, place or quest of the turn's applied acts, and it tells nothing said. The
    relay game (issue 42) kept 30 such notes beside the 17 records of the rules, and the copies crowded out the
    rest of memory."""
    text = note.strip()
    subject = rf"(?:the\s+)?(?:player|traveller|traveler|you|{re.escape(pack.story.player.name)})\b"
    if not re.match(subject, text, re.I) or _WORDS_SAID.search(text):
        return False
    said = {w for w in keywords(text) if len(w) > 3}
    return any(said & _name_words(pack, effect, detail) for effect, detail in applied)


def _name_words(pack: ContentPack, effect: str, detail: str) -> set[str]:
    kind = _NAMED_BY.get(effect)
    names: list[str] = []
    for part in re.split(r"[^\w]+", detail):
        if kind == "item" and part in pack.items:
            names.append(pack.items[part].name)
        elif kind == "enemy" and part in pack.enemies:
            names.append(pack.enemies[part].name)
        elif kind == "node" and part in pack.nodes:
            names.append(pack.nodes[part].name)
        elif kind == "quest" and (quest := pack.quest(part)) is not None:
            names.append(quest.title)
    return {w for w in keywords(" ".join(names)) if len(w) > 3}


def own_notes(notes: Iterable[Any], applied: Iterable[tuple[str, str]], pack: ContentPack | None) -> list[Any]:
    """The turn's narrator notes (a recollection's are none) but those that only restate an act the rules record:
    one fact, stored once, and the rules' record is its word (:func:`restates_the_rules`)."""
    acts = list(applied)
    if pack is None:
        return list(notes)
    return [n for n in notes if not (isinstance(n, str) and restates_the_rules(n, acts, pack))]
