"""Evaluate content :class:`Condition` s and objectives against a :class:`GameState`."""

from __future__ import annotations

from typing import Any

from game.world.content import Condition, ContentPack, NodeVariant, Objective, Stat
from game.world.state import GameState


def unmet(cond: Condition, state: GameState, pack: ContentPack | None = None) -> list[str]:
    """The clauses of ``cond`` that do not hold, in words (empty when it holds).

    With ``pack`` the words use the story's names instead of ids.
    """

    def name(kind: str, ident: str) -> str:
        if pack is None:
            return ident
        table: dict[str, Any] = {"npc": pack.npcs, "item": pack.items, "node": pack.nodes, "enemy": pack.enemies}
        if kind == "quest":
            quest = pack.quest(ident)
            return quest.title if quest else ident
        entry = table[kind].get(ident)
        return str(entry.name) if entry is not None else ident

    out: list[str] = []
    out += [f"needs {_flag_words(f, pack)}" for f in cond.flags if not state.has_flag(f)]
    out += [f"must not have {_flag_words(f, pack)}" for f in cond.not_flags if state.has_flag(f)]
    for quest in cond.quests_completed:
        progress = state.quests.get(quest)
        if progress is None or progress.status != "completed":
            out.append(f"quest '{name('quest', quest)}' not completed")
    for stat, need in cond.min_stats.items():
        if state.stat(stat) < need:
            out.append(f"{stat} {state.stat(stat)} < {need}")
    if state.level < cond.min_level:
        out.append(f"level {state.level} < {cond.min_level}")
    for npc, need in cond.min_affinity.items():
        have = state.affinity.get(npc, 0)
        if have < need:
            out.append(f"{name('npc', npc)}'s trust {have} < {need}")
    if cond.at_node and state.node != cond.at_node:
        out.append(f"must be at {name('node', cond.at_node)}")
    out += [f"must carry {name('item', i)}" for i in cond.has_items if i not in state.inventory]
    out += [f"{name('enemy', e)} not defeated" for e in cond.defeated if not state.has_flag(f"defeated:{e}")]
    if cond.hp_below_percent and state.hp * 100 >= cond.hp_below_percent * state.max_hp:
        out.append(f"HP {state.hp}/{state.max_hp} not below {cond.hp_below_percent}%")
    return out


def missing(cond: Condition, state: GameState, pack: ContentPack) -> list[str]:
    """What ``cond`` still needs, in the story's words for the player: no ids, flags, numbers or ending names
    ("you need the Brass Burner", "Kage has not spoken with you yet", "your mind is not yet sharp enough")."""
    out: list[str] = []
    for flag in cond.flags:
        if not state.has_flag(flag):
            out.append(_flag_missing(flag, pack))
    if any(state.has_flag(f) for f in cond.not_flags):
        out.append("that moment has passed")
    for quest in cond.quests_completed:
        progress = state.quests.get(quest)
        if progress is None or progress.status != "completed":
            found = pack.quest(quest)
            out.append(f'first finish what "{found.title}" asks of you' if found else "something must be done first")
    out += shortfall(cond.min_stats, state)
    if state.level < cond.min_level:
        out.append("you need more experience")
    for npc, need in cond.min_affinity.items():
        if state.affinity.get(npc, 0) < need and npc in pack.npcs:
            out.append(f"{pack.npcs[npc].name} does not trust you enough yet")
    if cond.at_node and state.node != cond.at_node:
        out.append("this is not the place for it")
    out += [
        f"you need {_the(pack.items[i].name)}" for i in cond.has_items if i not in state.inventory and i in pack.items
    ]
    out += [
        f"{_the(pack.enemies[e].name)} still stands"
        for e in cond.defeated
        if not state.has_flag(f"defeated:{e}") and e in pack.enemies
    ]
    if cond.hp_below_percent and state.hp * 100 >= cond.hp_below_percent * state.max_hp:
        out.append("you are not hurt badly enough")
    return out


SHORT_OF = {
    "strength": "you are not yet strong enough",
    "agility": "you are not yet quick enough",
    "intelligence": "your mind is not yet sharp enough",
}
"""A failed check of each attribute, in words: the player reads no "intelligence 12 < 18" (issue 46)."""


def shortfall(requires: dict[Stat, int], state: GameState) -> list[str]:
    """The attribute checks of ``requires`` that fail, in the player's words ("you are not yet strong enough")."""
    return [SHORT_OF.get(stat, "you are not ready") for stat, need in requires.items() if state.stat(stat) < need]


def _the(name: str) -> str:
    return (
        name
        if name[:1].isupper() and " " not in name
        else f"the {name}"
        if not name.lower().startswith("the ")
        else name
    )


def _flag_missing(flag: str, pack: ContentPack) -> str:
    """What a flag a condition needs means, for the player."""
    kind, _, ident = flag.partition(":")
    if kind == "talked" and ident in pack.npcs:
        return f"you have not spoken with {pack.npcs[ident].name} yet"
    if kind == "visited" and ident in pack.nodes:
        return f"you have not been to {_the(pack.nodes[ident].name)} yet"
    if kind == "defeated" and ident in pack.enemies:
        return f"{_the(pack.enemies[ident].name)} still stands"
    if kind == "obtained" and ident in pack.items:
        return f"you have not found {_the(pack.items[ident].name)} yet"
    if kind == "gave":
        item = ident.split("->")[0]
        return (
            f"you have not given {_the(pack.items[item].name)} away yet" if item in pack.items else "a gift is missing"
        )
    if kind == "used":
        item = ident.split("@")[0]
        return f"you have not used {_the(pack.items[item].name)} yet" if item in pack.items else "something is undone"
    if kind == "quest_done" and (quest := pack.quest(ident)):
        return f'first finish what "{quest.title}" asks of you'
    return "the time is not right yet"


def _flag_words(flag: str, pack: ContentPack | None) -> str:
    kind, _, ident = flag.partition(":")
    if pack is not None and kind == "choice" and (choice := pack.choice(ident)):
        return f"the choice '{choice.name}'"
    return flag


def holds(cond: Condition, state: GameState) -> bool:
    return not unmet(cond, state)


def objective_event_happened(obj: Objective, state: GameState) -> bool:
    if obj.kind == "obtain":
        return obj.target in state.inventory or state.has_flag(obj.event_flag())
    return state.has_flag(obj.event_flag())


def open_exits(state: GameState, pack: ContentPack, node_id: str | None = None) -> dict[str, str]:
    """The exits of a place (default: the player's) that are open now: direction -> place (a lock's condition
    holds, or there is none)."""
    node = pack.nodes[node_id or state.node]
    locks = node.locked_exits
    return {d: there for d, there in node.exits.items() if d not in locks or holds(locks[d].condition, state)}


def objective_places(objective: Objective, pack: ContentPack) -> set[str]:
    """Where an objective is done: the place; the person's place; the enemy's places; the use's place (else where
    the item lies); where the item lies; the story choice's place."""
    kind, target = objective.kind, objective.target
    if kind == "visit":
        return {target}
    if kind in ("talk", "give"):
        person = pack.npcs.get(objective.to_npc or target if kind == "give" else target)
        return {person.location} if person else set()
    if kind == "defeat":
        return set(pack.enemies[target].nodes) if target in pack.enemies else set()
    if kind == "choice":
        choice = pack.choice(target)
        return {choice.condition.at_node} if choice and choice.condition.at_node else set()
    if kind == "use" and objective.at_node:
        return {objective.at_node}
    return {n.id for n in pack.nodes.values() if target in n.items}


def objective_check_failures(obj: Objective, state: GameState) -> list[str]:
    """Attribute checks of ``obj`` that fail, in words."""
    return [f"{stat} {state.stat(stat)} < {need}" for stat, need in obj.requires.items() if state.stat(stat) < need]


def weapon_bonus(state: GameState, pack: ContentPack) -> int:
    held = weapon_in_hand(state, pack)
    return pack.items[held].attack_bonus if held is not None else 0


def weapon_in_hand(state: GameState, pack: ContentPack) -> str | None:
    """The carried item a blow is struck with (the one :func:`weapon_bonus` counts); None: bare hands.

    The weapon the player chose over a better one ("wield the pistol anyway": ``equipped_weapon``) while they
    carry it, else the best one carried."""
    carried = [i for i in state.inventory if i in pack.items and pack.items[i].attack_bonus > 0]
    if state.equipped_weapon in carried:
        return state.equipped_weapon
    return max(carried, key=lambda i: pack.items[i].attack_bonus, default=None)


def armor_bonus(state: GameState, pack: ContentPack) -> int:
    return max((pack.items[i].defense_bonus for i in state.inventory if i in pack.items), default=0)


def items_at(state: GameState, pack: ContentPack, node_id: str) -> list[str]:
    """Items lying at ``node_id`` now: content items not yet taken, plus dropped ones."""
    node = pack.nodes[node_id]
    here = [i for i in node.items if f"{node_id}:{i}" not in state.taken_items]
    return here + list(state.dropped_items.get(node_id, []))


def enemies_at(state: GameState, pack: ContentPack, node_id: str) -> list[str]:
    """Enemies that can be fought at ``node_id``: bosses once, others while undefeated."""
    return [e for e in pack.nodes[node_id].enemies if not state.has_flag(f"defeated:{e}")]


def npcs_at(pack: ContentPack, node_id: str) -> list[str]:
    return list(pack.nodes[node_id].npcs)


def variant_holds(variant: NodeVariant, state: GameState, pack: ContentPack, node_id: str) -> bool:
    """Whether a place's text ``variant`` is true now: its condition holds and its ``items_here`` lie at ``node_id``."""
    here = items_at(state, pack, node_id)
    return holds(variant.when, state) and all(item in here for item in variant.items_here)
