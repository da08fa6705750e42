"""Suggested choices, computed from the state after the turn.

A narrator proposes choices before the rules have run; by the time the player
reads them the enemy may be dead, the item taken, the fight begun. The engine
keeps the narrator's choices that still make sense in the state after the
turn and fills up with suggestions read from that state, so a player is never
offered "attack | flee" over a corpse.
"""

from __future__ import annotations

from game.text import best_match
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.parser import DIRECTIONS, parse
from game.world.rules.combat import heavy_coming
from game.world.state import GameState

MAX_CHOICES = 4


def suggested(state: GameState, pack: ContentPack) -> list[str]:
    """Choices read from ``state``: fight or flee in a fight, else people, things, enemies and ways out here."""
    if state.ending:
        return []
    if state.combat:
        healing = [i for i in dict.fromkeys(state.inventory) if (use := pack.items[i].use) and use.heal]
        hurt = state.hp < state.max_hp  # the rules refuse a heal at full health: never suggest one
        guard = ["defend"] if heavy_coming(pack, state) else []  # the announced heavy blow
        return ["attack", *guard, "flee", *[f"use {pack.items[i].name}" for i in healing[:1] if hurt]]
    node = pack.nodes[state.node]
    out = [f"talk to {pack.npcs[n].name}" for n in npcs_at(pack, state.node)[:1]]
    out += [f"take {pack.items[i].name}" for i in items_at(state, pack, state.node)[:1]]
    out += [f"attack {pack.enemies[e].name}" for e in enemies_at(state, pack, state.node)[:1]]
    out += [f"go {direction}" for direction in list(node.exits)[:2]]
    return out[:MAX_CHOICES] or ["look around"]


def still_possible(choice: str, state: GameState, pack: ContentPack) -> bool:
    """Whether ``choice`` still makes sense in ``state`` (what it names is here; a fight to flee exists)."""
    command = parse(choice)
    verb, target = command.verb, command.target
    here = state.node
    if verb in ("flee", "defend"):
        return state.combat is not None
    if verb == "attack":
        if state.combat is not None:
            return True
        enemies = [(e, pack.enemies[e].names) for e in enemies_at(state, pack, here)]
        return bool(enemies) and (not target or best_match(target, enemies) is not None)
    if state.combat is not None and verb in ("go", "take", "talk", "give", "rest"):
        return False
    if verb == "go":
        exits = pack.nodes[here].exits
        direction = DIRECTIONS.get(target, target)
        return direction in exits or best_match(target, [(n, [pack.nodes[n].name]) for n in exits.values()]) is not None
    if verb == "take":
        items = [(i, pack.items[i].names) for i in items_at(state, pack, here)]
        return bool(items) and best_match(target, items) is not None
    if verb == "use":
        return best_match(target, [(i, pack.items[i].names) for i in set(state.inventory)]) is not None
    if verb in ("talk", "give", "ask"):
        person = command.obj or target
        present = [(n, pack.npcs[n].names) for n in npcs_at(pack, here)]
        return not person or best_match(person, present) is not None
    return True


def choices_after(proposed: list[str], state: GameState, pack: ContentPack) -> list[str]:
    """The narrator's choices that still make sense after the turn, then suggestions, at most four, no repeats."""
    if state.ending:
        return []
    kept = [c for c in proposed if c.strip() and still_possible(c, state, pack)]
    seen: set[str] = set()
    out = []
    for choice in [*kept, *suggested(state, pack)]:
        key = choice.strip().lower()
        if key not in seen:
            seen.add(key)
            out.append(choice.strip())
    return out[:MAX_CHOICES]
