"""Rules of fighting: starting a fight, rounds rolled by the rules' dice, victory, knock-outs."""

from __future__ import annotations

import random

from game.world.conditions import armor_bonus, enemies_at, weapon_bonus
from game.world.content import ContentPack
from game.world.describe import the
from game.world.rules.core import Outcome, gain_item, record_event
from game.world.state import CombatState, GameState


def start_combat(pack: ContentPack, state: GameState, enemy_id: str, out: Outcome) -> None:
    enemy = pack.enemies.get(enemy_id)
    if enemy is None:
        out.reject("start_combat", enemy_id, f"no such enemy: {enemy_id}")
    elif state.combat:
        out.reject("start_combat", enemy_id, "you are already fighting")
    elif enemy_id not in enemies_at(state, pack, state.node):
        out.reject("start_combat", enemy_id, f"there is no {enemy.name} here")
    else:
        state.combat = CombatState(enemy_id=enemy_id, enemy_hp=enemy.hp)
        out.ok("start_combat", enemy_id, f"{enemy.encounter} ({enemy.name}: {enemy.hp} HP)")


def combat_action(pack: ContentPack, state: GameState, action: str, rng: random.Random, out: Outcome) -> None:
    if state.combat is None:
        out.reject("combat_action", action, "you are not fighting anyone")
        return
    enemy = pack.enemies[state.combat.enemy_id]
    state.combat.rounds += 1
    if action == "defend":  # the player spends the round on something else, e.g. an item
        out.ok("combat_action", "defend")
    elif action == "flee":
        if enemy.boss:
            out.reject("combat_action", action, f"there is no escaping {enemy.name}")
            return
        if rng.random() < 0.35 + state.agility / 100:
            state.combat = None
            out.ok("combat_action", "flee", f"You break away from {the(enemy.name)}.")
            return
        out.ok("combat_action", "flee-failed", f"You fail to get away from {the(enemy.name)}!")
    else:
        hit = 4 + state.strength // 2 + weapon_bonus(state, pack) + rng.randint(0, 2)
        state.combat.enemy_hp -= hit
        if state.combat.enemy_hp <= 0:
            out.ok("combat_action", "attack", f"You strike {the(enemy.name)} for {hit}.")
            _victory(pack, state, rng, out)
            return
        out.ok(
            "combat_action",
            "attack",
            f"You strike {the(enemy.name)} for {hit} ({state.combat.enemy_hp}/{enemy.hp} HP left).",
        )
    _enemy_turn(pack, state, rng, out)


def _enemy_turn(pack: ContentPack, state: GameState, rng: random.Random, out: Outcome) -> None:
    assert state.combat is not None
    enemy = pack.enemies[state.combat.enemy_id]
    if rng.random() < min(0.4, state.agility / 100):
        out.messages.append(f"You dodge {the(enemy.name)}'s attack.")
        return
    damage = max(1, enemy.attack - armor_bonus(state, pack) + rng.randint(-1, 1))
    state.hp -= damage
    out.messages.append(
        f"{the(enemy.name, capital=True)} hits you for {damage} ({max(state.hp, 0)}/{state.max_hp} HP)."
    )
    if state.hp <= 0:
        _knocked_out(pack, state, out)


def _victory(pack: ContentPack, state: GameState, rng: random.Random, out: Outcome) -> None:
    assert state.combat is not None
    enemy = pack.enemies[state.combat.enemy_id]
    state.combat = None
    record_event(state, out, f"defeated:{enemy.id}")
    state.exp += enemy.exp
    state.gold += enemy.gold
    lines = [f"{the(enemy.name, capital=True)} is defeated! (+{enemy.exp} exp, +{enemy.gold} gold)"]
    for loot in enemy.loot:
        if rng.random() < loot.chance:
            gain_item(state, loot.item)
            lines.append(f"Loot: {pack.items[loot.item].name}.")
    out.ok("defeated", enemy.id, " ".join(lines))


def _knocked_out(pack: ContentPack, state: GameState, out: Outcome) -> None:
    lost = state.gold // 10
    state.combat = None
    state.gold -= lost
    state.hp = max(1, state.max_hp // 2)
    state.node = pack.story.start_node
    state.add_flag("knocked_out")
    start = pack.nodes[state.node].name
    out.ok("knocked_out", start, f"You collapse... and wake at {start}, weakened (-{lost} gold).")
