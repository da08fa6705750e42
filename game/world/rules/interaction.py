"""Rules of acting in the world: talking, moving, items, gifts, narrated deltas, resting."""

from __future__ import annotations

from game.world.amounts import money
from game.world.conditions import holds, items_at, npcs_at, weapon_in_hand
from game.world.content import ContentPack, Objective
from game.world.effects import Effects
from game.world.rules.core import Outcome, bump_affinity, full_hands, gain_item, no_room_here, record_event
from game.world.rules.quests import not_yet, start_quest, step_check_failures, step_words, steps_needing
from game.world.state import GameState

MAX_NARRATOR_EXP = 10
MAX_NARRATOR_DAMAGE = 20
MAX_AFFINITY_STEP = 10
FIRST_TALK_AFFINITY = 2
GIFT_LIKED = 15
GIFT_NEUTRAL = 3
GIFT_DISLIKED = -10
REST_HEAL_SHARE = 0.3
MOVE_MINUTES = 20
REST_MINUTES = 120


def talk(pack: ContentPack, state: GameState, npc_id: str, out: Outcome) -> None:
    npc = pack.npcs.get(npc_id)
    if npc is None:
        out.reject("talk_to", npc_id, f"no such character: {npc_id}")
        return
    if npc_id not in npcs_at(pack, state.node):
        out.reject("talk_to", npc_id, f"{npc.name} is not here")
        return
    if record_event(state, out, f"talked:{npc_id}"):
        bump_affinity(state, npc_id, FIRST_TALK_AFFINITY)
    out.ok("talk_to", npc_id)
    for quest in pack.quests.side:
        triggered = quest.trigger and quest.trigger.npc == npc_id and holds(quest.trigger.condition, state)
        if triggered and quest.id not in state.quests:
            start_quest(state, quest, out)


def move(pack: ContentPack, state: GameState, node_id: str, out: Outcome) -> None:
    if state.combat:
        enemy = pack.enemies[state.combat.enemy_id].name
        out.reject("move_to", node_id, f"you are fighting {enemy}; flee first")
        return
    if node_id not in pack.nodes:
        out.reject("move_to", node_id, f"no such place: {node_id}")
        return
    here = pack.nodes[state.node]
    if node_id == state.node:
        out.reject("move_to", node_id, f"you are already at {here.name}")
        return
    if node_id not in here.exits.values():
        out.reject("move_to", node_id, f"{pack.nodes[node_id].name} is not reachable from here")
        return
    for direction, target in here.exits.items():
        lock = here.locked_exits.get(direction)
        if target == node_id and lock and not holds(lock.condition, state):
            out.reject("move_to", node_id, lock.message)
            return
    state.node = node_id
    state.clock_minutes += MOVE_MINUTES
    record_event(state, out, f"visited:{node_id}")
    out.ok("move_to", node_id)


def take_all(pack: ContentPack, state: GameState, item_ids: list[str], out: Outcome) -> None:
    """Take each of ``item_ids`` (:func:`take`), told in one line: "You take the Brass Burner, the False Lantern and
    the Brass Pocket Watch." (issue 46: ``take everything`` told each take twice, in the prose and a line each)."""
    if len(item_ids) < 2:
        for item_id in item_ids:
            take(pack, state, item_id, out)
        return
    names = [f"the {pack.items[i].name}" for i in item_ids if take(pack, state, i, out, told=False)]
    if names:
        line = f"You take {' and '.join([', '.join(names[:-1]), names[-1]]) if names[1:] else names[0]}."
        out.messages.append(line)
        out.said.append(("items_gained", line))


def take(pack: ContentPack, state: GameState, item_id: str, out: Outcome, *, told: bool = True) -> bool:
    """Take ``item_id`` from here, told "You take the ..." (unless ``told`` is False); False when refused."""
    if item_id not in pack.items:
        out.reject("items_gained", item_id, f"no such item: {item_id}")
        return False
    if item_id not in items_at(state, pack, state.node):
        out.reject("items_gained", item_id, f"there is no {pack.items[item_id].name} here")
        return False
    if why := full_hands(state):
        out.reject("items_gained", item_id, why)
        return False
    dropped = state.dropped_items.get(state.node, [])
    if item_id in dropped:
        dropped.remove(item_id)
    else:
        state.taken_items.append(f"{state.node}:{item_id}")
    gain_item(state, item_id)
    out.ok("items_gained", item_id, f"You take the {pack.items[item_id].name}." if told else None)
    return True


def drop(pack: ContentPack, state: GameState, item_id: str, out: Outcome) -> None:
    if item_id not in state.inventory:
        out.reject("items_lost", item_id, f"you do not carry {_item_name(pack, item_id)}")
        return
    if why := no_room_here(state):
        out.reject("items_lost", item_id, why)
        return
    state.inventory.remove(item_id)
    state.dropped_items.setdefault(state.node, []).append(item_id)
    out.ok("items_lost", item_id, f"You leave the {pack.items[item_id].name} here.")


def use(pack: ContentPack, state: GameState, item_id: str, out: Outcome, *, anyway: bool = False) -> None:
    item = pack.items.get(item_id)
    if item is None or item_id not in state.inventory:
        out.reject("use_item", item_id, f"you do not carry {_item_name(pack, item_id)}")
        return
    if item.attack_bonus > 0 and not wield(pack, state, item_id, out, anyway=anyway):
        return
    if item.use and item.use.only_at and state.node not in item.use.only_at:
        places = " or ".join(pack.nodes[n].name for n in item.use.only_at)
        out.reject("use_item", item_id, f"the {item.name} is of no use here (only at {places})")
        return
    if item.consumable and (blocked := step_check_failures(pack, state, "use", item_id)):
        # using it up now would leave the quest step impossible to retry
        objective, lacking = blocked
        out.reject(
            "use_item", item_id, objective.refusal or f"you are not ready to use the {item.name} here: {lacking}"
        )
        return
    steps = steps_needing(pack, state, item_id)
    a_step_here = any(o.kind == "use" and o.at_node in (None, state.node) for o in steps)
    if item.consumable and not a_step_here and _only_heals(pack, state, item_id) and state.hp >= state.max_hp:
        out.reject(
            "use_item", item_id, f"you are already at full health: the {item.name} would do nothing, so you keep it"
        )
        return
    lines: list[str] = []
    if item.use:
        text = item.use.node_texts.get(state.node, item.use.text)
        if text:
            lines.append(text)
        if item.use.max_hp:
            state.max_hp += item.use.max_hp
        if item.use.heal:
            healed = max(0, min(item.use.heal, state.max_hp - state.hp))
            state.hp += healed
            if healed:
                lines.append(f"(+{healed} HP)")
        for stat, bonus in item.use.stats.items():
            setattr(state, stat, state.stat(stat) + bonus)
            lines.append(f"({stat} +{bonus})")
    if item.consumable:
        state.inventory.remove(item_id)
    record_event(state, out, f"used:{item_id}")
    record_event(state, out, f"used:{item_id}@{state.node}")
    out.ok("use_item", item_id, " ".join(lines) or None)


def wield(pack: ContentPack, state: GameState, item_id: str, out: Outcome, *, anyway: bool = False) -> bool:
    """Take up a weapon (``use`` of one: "wield the pistol"); False when refused.

    A blow is struck with the best weapon carried (``conditions.weapon_in_hand``) unless the player chose another.
    A weaker one is refused, at no cost (``core.costs_nothing``), with the two bonuses and how to insist:
    "wield the Smart Pistol anyway" takes it up all the same. There is no pending question to answer: the
    confirmation is the same action said again with "anyway", so the game holds no half-made decision.
    """
    item, held = pack.items[item_id], weapon_in_hand(state, pack)
    best = max(pack.items[i].attack_bonus for i in state.inventory if i in pack.items)
    if held is not None and held != item_id and item.attack_bonus < pack.items[held].attack_bonus and not anyway:
        have = pack.items[held]
        out.reject(
            "use_item",
            item_id,
            f"the {item.name} (+{item.attack_bonus}) is weaker than your {have.name} (+{have.attack_bonus}); "
            f"to fight with it all the same, say 'wield the {item.name} anyway'",
        )
        return False
    state.equipped_weapon = None if item.attack_bonus >= best else item_id  # None: the best one carried
    return True


def _asked_later(pack: ContentPack, state: GameState, steps: list[Objective], npc_id: str) -> str | None:
    """The title of a quest not yet under way whose give step to ``npc_id`` this gift would be.

    Taken before an ordered quest begins, or while the step's attribute check would fail, the gift
    would skip the step's order or fail its check for good: the person takes it once they have asked
    for it. (An unordered quest counts the gift's event flag when it starts.)
    """
    for quest in pack.all_quests():
        progress = state.quests.get(quest.id)
        if progress is not None:
            continue
        # an unordered step whose check the player meets is done later by the gift's event flag
        for o in steps:
            if o not in quest.objectives or o.kind != "give" or o.to_npc != npc_id:
                continue
            unmet = any(state.stat(stat) < need for stat, need in o.requires.items())
            if quest.ordered or unmet:
                return quest.title
    return None


def door_needing(pack: ContentPack, item_id: str) -> str | None:
    """The first locked exit whose condition needs ``item_id`` carried ("the north way from Neon Crossing")."""
    for node in pack.nodes.values():
        for direction, lock in node.locked_exits.items():
            if item_id in lock.condition.has_items:
                return f"the {direction} way from {node.name}"
    return None


def give(pack: ContentPack, state: GameState, item_id: str, npc_id: str, out: Outcome) -> None:
    npc = pack.npcs.get(npc_id)
    if item_id not in state.inventory:
        out.reject("give_item", item_id, f"you do not carry {_item_name(pack, item_id)}")
        return
    if npc is None or npc_id not in npcs_at(pack, state.node):
        out.reject("give_item", item_id, f"{npc.name if npc else 'no one by that name'} is not here")
        return
    if blocked := step_check_failures(pack, state, "give", item_id, npc_id):
        # a gift the quest step cannot accept yet stays with the player, to be given again when able
        objective, lacking = blocked
        name = pack.items[item_id].name
        out.reject("give_item", item_id, objective.refusal or f"{npc.name} will not take the {name} yet: {lacking}")
        out.messages.append(not_yet(objective, state))
        return
    steps = steps_needing(pack, state, item_id)
    if steps and not any(o.kind == "give" and o.to_npc == npc_id for o in steps):
        # a gift is gone for good: an item a quest still needs used or given elsewhere is not given away
        name = pack.items[item_id].name
        out.reject(
            "give_item", item_id, f"{npc.name} will not take the {name}: you still need it to {step_words(steps[0])}"
        )
        return
    if early := _asked_later(pack, state, steps, npc_id):
        # a quest counts a gift only once it is under way
        name = pack.items[item_id].name
        out.reject("give_item", item_id, f"{npc.name} has not asked you for the {name} yet ({early})")
        return
    if not steps and (door := door_needing(pack, item_id)) is not None:
        # a key is never given away: a locked exit needs it carried every time the player passes
        name = pack.items[item_id].name
        out.reject("give_item", item_id, f"{npc.name} will not take the {name}: you need it to pass {door}")
        return
    state.inventory.remove(item_id)
    record_event(state, out, f"gave:{item_id}:{npc_id}")
    if item_id in npc.likes:
        delta = GIFT_LIKED
    elif item_id in npc.dislikes:
        delta = GIFT_DISLIKED
    else:
        delta = GIFT_NEUTRAL
    bump_affinity(state, npc_id, delta)
    item = pack.items[item_id]
    taken = item.gift_texts.get(npc_id) or f"{npc.name} accepts the {item.name}."
    out.ok("give_item", f"{item_id}->{npc_id}", f"{taken} (affinity {delta:+d})")


def deltas(pack: ContentPack, state: GameState, effects: Effects, out: Outcome) -> None:
    if effects.hp_delta > 0:
        out.reject("hp_delta", effects.hp_delta, "healing comes only from resting and items")
    elif effects.hp_delta < 0:
        if -effects.hp_delta > MAX_NARRATOR_DAMAGE:
            out.reject("hp_delta", effects.hp_delta, f"narrated harm is capped at {MAX_NARRATOR_DAMAGE} per turn")
        else:
            state.hp = max(1, state.hp + effects.hp_delta)
            out.ok("hp_delta", str(effects.hp_delta), f"({effects.hp_delta} HP)")
    currency = pack.story.currency
    if effects.gold_delta > 0:
        out.reject("gold_delta", effects.gold_delta, f"{currency} comes only from loot and quest rewards")
    elif effects.gold_delta < 0:
        if state.gold + effects.gold_delta < 0:
            out.reject("gold_delta", effects.gold_delta, f"you have only {money(state.gold, pack)}")
        else:
            state.gold += effects.gold_delta
            out.ok("gold_delta", str(effects.gold_delta), f"(-{money(-effects.gold_delta, pack)})")
    if effects.exp_delta:
        if not 0 < effects.exp_delta <= MAX_NARRATOR_EXP:
            out.reject("exp_delta", effects.exp_delta, f"narrated experience must be 1..{MAX_NARRATOR_EXP}")
        else:
            state.exp += effects.exp_delta
            out.ok("exp_delta", str(effects.exp_delta))


def affinity(pack: ContentPack, state: GameState, npc_id: str, delta: int, out: Outcome) -> None:
    if npc_id not in pack.npcs:
        out.reject("affinity", {npc_id: delta}, f"no such character: {npc_id}")
    elif npc_id not in npcs_at(pack, state.node):
        out.reject("affinity", {npc_id: delta}, f"{pack.npcs[npc_id].name} is not here")
    elif abs(delta) > MAX_AFFINITY_STEP:
        out.reject("affinity", {npc_id: delta}, f"affinity moves at most {MAX_AFFINITY_STEP} per turn")
    elif any(a.effect in ("give_item", "give_gold") and a.detail.endswith(f"->{npc_id}") for a in out.applied):
        # a gift's own liking is the rules' (issue 42: +3 told, +5 applied when a model added its own)
        out.reject("affinity", {npc_id: delta}, "the gift already counts for how they feel")
    elif delta:
        bump_affinity(state, npc_id, delta)
        out.ok("affinity", f"{npc_id} {delta:+d}")


def rest(pack: ContentPack, state: GameState, out: Outcome) -> None:
    if state.combat:
        out.reject("rest", True, "you cannot rest in the middle of a fight")
    elif not pack.nodes[state.node].safe:
        out.reject("rest", True, "this place is too dangerous to rest")
    else:
        healed = min(state.max_hp - state.hp, max(1, int(state.max_hp * REST_HEAL_SHARE)))
        state.hp += healed
        state.clock_minutes += REST_MINUTES
        message = (
            f"You rest a while. (+{healed} HP)" if healed else "You rest a while; you were already at full strength."
        )
        out.ok("rest", str(healed), message)


def _only_heals(pack: ContentPack, state: GameState, item_id: str) -> bool:
    """Whether using ``item_id`` here would only heal: no stats, max HP, text of this place or foe's weakness."""
    use = pack.items[item_id].use
    if use is None or not use.heal or use.stats or use.max_hp or state.node in use.node_texts:
        return False
    enemy = pack.enemies.get(state.combat.enemy_id) if state.combat else None
    # used as its heavy blow comes, a weakness hurts the foe
    weak_to = [w.item for w in enemy.weaknesses] if enemy is not None else []
    return item_id not in weak_to


def _item_name(pack: ContentPack, item_id: str) -> str:
    """How a refusal names an item: "the Moonlight Harp", or "that" for an id the story does not have."""
    item = pack.items.get(item_id)
    return f"the {item.name}" if item else "that"
