"""Suggested choices, computed from the state after the turn.

A narrator proposes choices before the rules have run; by the time the player
reads them the enemy may be dead, the item taken, the fight begun. The engine
keeps the narrator's choices that still make sense in the state after the
turn and fills up with suggestions read from that state, so a player is never
offered "attack | flee" over a corpse.
"""

from __future__ import annotations

from game.language.parser import DIRECTIONS, parse
from game.text import best_match
from game.world.conditions import (
    enemies_at,
    holds,
    items_at,
    npcs_at,
    objective_places,
    open_exits,
    weapon_in_hand,
)
from game.world.content import ContentPack
from game.world.effects import Trade
from game.world.rules import trade
from game.world.rules.combat import heavy_coming
from game.world.state import GameState

MAX_CHOICES = 4
NARRATOR_CHOICES = 2
"""How many of the narrator's own choices are kept before the ways out and the key actions read from the state."""


def suggested(state: GameState, pack: ContentPack) -> list[str]:
    """Choices read from ``state``: fight or flee in a fight; else :func:`key_actions`, then the enemy, the
    person and the thing here, then the open ways out (places not visited yet first), at most four."""
    if state.ending:
        return []
    if state.combat:
        healing = [i for i in dict.fromkeys(state.inventory) if (use := pack.items[i].use) and use.heal]
        hurt = state.hp < state.max_hp  # the rules refuse a heal at full health: never suggest one
        guard = ["defend"] if heavy_coming(pack, state) else []  # the announced heavy blow
        flee = [] if pack.enemies[state.combat.enemy_id].boss else ["flee"]  # "there is no escaping" a boss
        return ["attack", *guard, *flee, *[f"use {pack.items[i].name}" for i in healing[:1] if hurt]]
    out = key_actions(state, pack)
    out += [f"attack {pack.enemies[e].name}" for e in enemies_at(state, pack, state.node)[:1]]
    out += [f"talk to {pack.npcs[n].name}" for n in npcs_at(pack, state.node)[:1]]
    out += trade.offers(state, pack)[:1]  # a deal the rules would accept (issue 35)
    out += [f"take {pack.items[i].name}" for i in items_at(state, pack, state.node)[:1]]
    out += [f"go {direction}" for direction in ways_out(state, pack)]
    return out[:MAX_CHOICES] or ["look around"]


def key_actions(state: GameState, pack: ContentPack) -> list[str]:
    """The story choices the player can make here and now and that would succeed (an ending's parley, pact or
    requiem), by their names: a parley the rules would take back ("does not succeed yet") is not offered."""
    if state.ending or state.combat:
        return []
    out = []
    for choice in (c for c in pack.story.choices if holds(c.condition, state)):
        flag = f"choice:{choice.id}"
        needing = [e.condition for e in pack.endings if flag in e.condition.flags]
        chosen = state.model_copy(update={"flags": [*state.flags, flag]}) if needing else state
        if not needing or any(holds(c, chosen) for c in needing):
            out.append(choice.name)
    return out


def ways_out(state: GameState, pack: ContentPack) -> list[str]:
    """The directions out of here that are open now (a guarded or locked exit is not a way out yet): the one
    toward the main story's next step first, then those to places not visited yet, each group in the story's
    order."""
    exits = open_exits(state, pack)
    goals = _next_steps(state, pack)
    distance = {d: _distance(state, pack, there, goals) for d, there in exits.items()}
    return sorted(exits, key=lambda d: (distance[d], state.has_flag(f"visited:{exits[d]}")))


def _next_steps(state: GameState, pack: ContentPack) -> set[str]:
    """The places where the main quests under way have a step still to do."""
    out: set[str] = set()
    for quest in pack.quests.main:
        progress = state.quests.get(quest.id)
        if progress is None or progress.status != "active":
            continue
        for objective in (o for o in quest.objectives if o.id not in progress.objectives_done):
            out |= objective_places(objective, pack)
    return out


def _distance(state: GameState, pack: ContentPack, start: str, goals: set[str]) -> int:
    """Steps from ``start`` to the nearest of ``goals`` through exits open now (the number of places when none
    is reachable)."""
    seen, frontier, steps = {start}, [start], 0
    while frontier and goals:
        if goals.intersection(frontier):
            return steps
        steps += 1
        frontier = [t for here in frontier for t in open_exits(state, pack, here).values() if t not in seen]
        seen.update(frontier)
    return len(pack.nodes)


def still_possible(choice: str, state: GameState, pack: ContentPack) -> bool:
    """Whether ``choice`` still makes sense in ``state`` (what it names is here; a fight to flee exists)."""
    command = parse(choice)
    verb, target = command.verb, command.target
    here = state.node
    if verb == "flee":
        return state.combat is not None and not pack.enemies[state.combat.enemy_id].boss
    if verb == "defend":
        return state.combat is not None
    if verb == "attack":
        if state.combat is not None:
            return True
        enemies = [(e, pack.enemies[e].names) for e in enemies_at(state, pack, here)]
        return bool(enemies) and (not target or best_match(target, enemies) is not None)
    if state.combat is not None and verb in ("go", "take", "talk", "give", "rest"):
        return False
    if verb == "go":
        exits = open_exits(state, pack)
        direction = DIRECTIONS.get(target, target)
        named = best_match(target, [(n, [pack.nodes[n].name]) for n in pack.nodes[here].exits.values()])
        return direction in exits or (named is not None and named in exits.values())
    if verb in ("take", "use", "sell", "buy") or (verb == "give" and command.obj):
        return _thing_possible(verb, target, command.obj, state, pack)
    if verb == "rest":
        return pack.nodes[here].safe  # the rules refuse a rest where it is too dangerous
    if verb in ("talk", "give", "ask"):
        person = command.obj or target
        present = [(n, pack.npcs[n].names) for n in npcs_at(pack, here)]
        return not person or best_match(person, present) is not None
    return True


def _thing_possible(verb: str, target: str, person: str, state: GameState, pack: ContentPack) -> bool:
    """Whether a choice about a thing still makes sense: the thing it names is read among all the story's things
    first, then looked for where the act needs it (here to take, carried to use, give or sell, on a trader's stall
    to buy). Matched among the things here only, "take Brass Burner" once the burner is taken named the Brass
    Pocket Watch still lying there, and the choice stayed (issue 46)."""
    item = best_match(target, [(i, found.names) for i, found in pack.items.items()])
    if verb == "give":  # a thing, or money ("give 5 gold to Garrick"), to a person here
        present = best_match(person, [(n, pack.npcs[n].names) for n in npcs_at(pack, state.node)]) is not None
        return present and (item is None or item in state.inventory)
    if item is None:
        return False
    if verb == "take":
        return item in items_at(state, pack, state.node)
    if verb == "use":
        return item in state.inventory and _usable(item, state, pack)
    traders = trade.traders_here(pack, state)
    named = best_match(person, [(n, pack.npcs[n].names) for n in traders]) if person else None
    deal = "sell" if verb == "sell" else "buy"
    return any(
        trade.refusal(pack, state, Trade(deal=deal, item=item, npc=npc)) is None
        for npc in ([named] if named else [] if person else traders)
    )


def _usable(item_id: str, state: GameState, pack: ContentPack) -> bool:
    """Whether the rules would let the player use a carried item here: not an item of use only elsewhere, not a
    weapon weaker than the one in hand (the rules ask first: ``interaction.wield``)."""
    item = pack.items[item_id]
    if item.use is not None and item.use.only_at and state.node not in item.use.only_at:
        return False
    held = weapon_in_hand(state, pack)
    return not (item.attack_bonus > 0 and held is not None and item.attack_bonus < pack.items[held].attack_bonus)


def choices_after(proposed: list[str], state: GameState, pack: ContentPack) -> list[str]:
    """The key actions, then two of the narrator's choices that still make sense after the turn, then
    suggestions, at most four, no two that mean the same ("attack" and "attack Bog Lurker"): a narrator's four
    ideas never hide the way to the ending, and the best way on (:func:`way_on`) always keeps its place."""
    if state.ending:
        return []
    kept = [c for c in proposed if c.strip() and still_possible(c, state, pack)]
    keys = key_actions(state, pack)
    seen: set[str] = set()
    out = []
    for choice in [*keys, *kept[:NARRATOR_CHOICES], *suggested(state, pack)]:
        key = meaning(choice, state, pack)
        if key not in seen:
            seen.add(key)
            out.append(choice.strip())
    onward = way_on(state, pack)
    if onward is not None:
        keep = next((c for c in out if meaning(c, state, pack) == f"go:{onward}"), f"go {onward}")
        if keep not in out[:MAX_CHOICES] and len(keys) < MAX_CHOICES:  # crowded out: the last place, not a key's
            out = [*[c for c in out if c != keep][: MAX_CHOICES - 1], keep]
    return out[:MAX_CHOICES]


def way_on(state: GameState, pack: ContentPack) -> str | None:
    """The open exit the choices always keep room for: the one toward the main story's next step, else one to a
    place not visited yet (Neon Crossing's north way to the tower, once it opens); None in a fight or when every
    way out leads back. The four choices fit a screen line each and the keys 1-4, so the cap stays: it is the
    way on, not every exit, that must never be crowded out by a fight, a thing to take and the narrator's ideas."""
    if state.combat is not None or state.ending:
        return None
    exits = open_exits(state, pack)
    goals = _next_steps(state, pack)
    here = _distance(state, pack, state.node, goals)
    for direction in ways_out(state, pack):
        closer = _distance(state, pack, exits[direction], goals) < here
        if closer or not state.has_flag(f"visited:{exits[direction]}"):
            return direction
    return None


def meaning(choice: str, state: GameState, pack: ContentPack) -> str:
    """What a choice does, for telling two apart: "attack" and "attack Bog Lurker" are one fight, "north" and
    "go north" one way; any other choice is its own words."""
    command = parse(choice)
    if command.verb == "attack":
        here = [(e, pack.enemies[e].names) for e in enemies_at(state, pack, state.node)]
        foe = state.combat.enemy_id if state.combat else None
        foe = foe or (best_match(command.target, here) if command.target else here[0][0] if here else None)
        if foe is not None:
            return f"attack:{foe}"
    if command.verb == "go":
        exits = pack.nodes[state.node].exits
        direction = DIRECTIONS.get(command.target, command.target)
        named = best_match(command.target, [(d, [pack.nodes[n].name]) for d, n in exits.items()])
        way = direction if direction in exits else named
        if way is not None:
            return f"go:{way}"
    return choice.strip().lower()
