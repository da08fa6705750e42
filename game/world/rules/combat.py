"""Rules of fighting: starting a fight, rounds rolled by the rules' dice, victory, knock-outs.

A round is the player's action (attack, defend, flee; using an item is a
defend) and then the enemy's turn. What makes a fight matter:

- initiative: an enemy with ``initiative`` strikes once as the fight starts,
  before the player's first blow, and that is its blow of the round;
- heavy attacks: an enemy with a ``heavy`` attack sometimes winds up, and the
  rules announce it (its ``tell``) the round before it lands. The blow does
  ``multiplier`` times an ordinary hit and cannot be dodged; defending (or
  using an item) that round takes only a share of it, and an item the enemy is
  weak to breaks it outright and hurts the enemy;
- defending: the round's blow, ordinary or heavy, lands at ``DEFEND_SHARE``;
- aggressive enemies (``Enemy.aggressive``): one left alone in the player's
  place attacks first at the end of the player's ``AMBUSH_TURN``-th turn there
  without a fight, and the turn before, the rules announce it (its ``tell``;
  :func:`ambush_coming`). Leaving the place, or fighting, starts the count
  again. The count is kept in ``stalking:<enemy>@<node>:<turns>`` flags, which
  no condition reads.

Which rounds are heavy is a pure function of the game's seed, the enemy and the
round (:func:`heavy_round`), so it is known a round ahead without being
stored, and replaying the same actions gives the same fight. The narrator only
proposes ``start_combat`` and ``combat_action``: every number is decided here.
"""

from __future__ import annotations

import random

from game.world.amounts import gains, money
from game.world.conditions import armor_bonus, enemies_at, weapon_bonus
from game.world.content import ContentPack, Enemy, Weakness
from game.world.describe import the
from game.world.rules.core import Outcome, gain_item, record_event
from game.world.state import CombatState, GameState

DEFEND_SHARE = 1 / 3
"""Share of a blow that lands when the player defends (or uses an item) that round."""
FIRST_HEAVY_ROUND = 2
"""Heavy attacks come from this round on: the first round can be played in the turn the fight starts."""
AMBUSH_TURN = 3
"""An aggressive enemy attacks at the end of the player's third turn in its place without a fight."""
STALKING = "stalking:"


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
        if enemy.initiative:
            out.messages.append(f"{the(enemy.name, capital=True)} strikes before you are ready!")
            _enemy_turn(pack, state, random.Random(f"{state.seed}:{state.turn}:initiative"), out)  # its own dice


def stalk(pack: ContentPack, state: GameState, out: Outcome) -> None:
    """The end of a turn for aggressive enemies: the player left alone with one is counted, warned, then attacked."""
    carried = [f for f in state.flags if f.startswith(STALKING)]
    for flag in carried:
        state.flags.remove(flag)
    fought = any(a.effect in ("start_combat", "combat_action", "defeated", "knocked_out") for a in out.applied)
    if state.ending or state.combat is not None or fought:
        return
    enemy_id = next((e for e in enemies_at(state, pack, state.node) if pack.enemies[e].aggressive), None)
    if enemy_id is None:
        return
    enemy = pack.enemies[enemy_id]
    assert enemy.aggressive is not None
    where = f"{STALKING}{enemy_id}@{state.node}:"
    turns = 1 + max((_count(f[len(where) :]) for f in carried if f.startswith(where)), default=0)
    if turns < AMBUSH_TURN:
        state.add_flag(f"{where}{turns}")
        if turns == AMBUSH_TURN - 1:
            out.messages.append(f"{enemy.aggressive.tell} (It will attack if you stay: fight it, or leave.)")
        return
    state.combat = CombatState(enemy_id=enemy_id, enemy_hp=enemy.hp)
    attack = enemy.aggressive.text or f"{the(enemy.name, capital=True)} attacks you!"
    out.ok("start_combat", enemy_id, f"{attack} ({enemy.name}: {enemy.hp} HP)")
    _enemy_turn(pack, state, random.Random(f"{state.seed}:{state.turn}:ambush"), out)  # its own dice


def _count(text: str) -> int:
    """A stalking flag's count, as a save holds it: digits, else 0 (a hostile save's "zzz" or 5,000 digits must
    neither crash every turn in that place nor parse for long; anything past the ambush turn is the ambush turn)."""
    return min(int(text), AMBUSH_TURN) if text.isascii() and text.isdigit() and len(text) <= 3 else 0


def ambush_coming(pack: ContentPack, state: GameState) -> str | None:
    """The aggressive enemy that attacks at the end of the next turn if the player stays (what this turn announced)."""
    if state.combat is not None or state.ending:
        return None
    for enemy_id in enemies_at(state, pack, state.node):
        if pack.enemies[enemy_id].aggressive and state.has_flag(f"{STALKING}{enemy_id}@{state.node}:{AMBUSH_TURN - 1}"):
            return enemy_id
    return None


def combat_action(pack: ContentPack, state: GameState, action: str, rng: random.Random, out: Outcome) -> None:
    if state.combat is None:
        if not any(a.effect == "knocked_out" for a in out.applied):  # not when a first strike already ended it
            out.reject("combat_action", action, "you are not fighting anyone")
        return
    enemy = pack.enemies[state.combat.enemy_id]
    if action == "flee" and enemy.boss:
        out.reject("combat_action", action, f"there is no escaping {enemy.name}")
        return
    state.combat.rounds += 1
    defending = False
    if action == "defend":  # the player guards, or spends the round on something else, e.g. an item
        defending = True
        used = [a.detail for a in out.applied if a.effect == "use_item"]
        weakness = next((w for w in enemy.weaknesses if w.item in used), None)
        if weakness and heavy_round(state, enemy, state.combat.rounds):
            _break_heavy(pack, state, enemy, weakness, rng, out)
            return
        out.ok("combat_action", "defend", None if used else f"You raise your guard against {the(enemy.name)}.")
    elif action == "flee":
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
    if not _struck_first(enemy, out):  # its opening blow was this round's: once, not again after the player's
        _enemy_turn(pack, state, rng, out, defending=defending)
    _announce(pack, state, out)


def _struck_first(enemy: Enemy, out: Outcome) -> bool:
    """Whether ``enemy`` struck before the player was ready this very turn (its ``initiative``, as the fight began):
    the turn a fight starts the player read two blows, "strikes before you are ready!" and another after their own
    (issue 46)."""
    return enemy.initiative and any(a.effect == "start_combat" and a.detail == enemy.id for a in out.applied)


def heavy_round(state: GameState, enemy: Enemy, round_no: int) -> bool:
    """Whether ``enemy``'s attack of round ``round_no`` is its heavy one (never two rounds running)."""
    if enemy.heavy is None or round_no < FIRST_HEAVY_ROUND:
        return False
    heavy = False
    for r in range(FIRST_HEAVY_ROUND, round_no + 1):  # walks the rounds so that no two heavies follow each other
        heavy = not heavy and random.Random(f"{state.seed}:{enemy.id}:heavy:{r}").random() < enemy.heavy.chance
    return heavy


def heavy_coming(pack: ContentPack, state: GameState) -> bool:
    """Whether the enemy fought now will land its heavy attack next round (what the last turn announced)."""
    if state.combat is None:
        return False
    return heavy_round(state, pack.enemies[state.combat.enemy_id], state.combat.rounds + 1)


def _announce(pack: ContentPack, state: GameState, out: Outcome) -> None:
    if state.combat is not None and heavy_coming(pack, state):
        enemy = pack.enemies[state.combat.enemy_id]
        assert enemy.heavy is not None
        out.messages.append(f"{enemy.heavy.tell} (A heavy blow is coming: defend, or use an item.)")


def _enemy_turn(
    pack: ContentPack, state: GameState, rng: random.Random, out: Outcome, *, defending: bool = False
) -> None:
    assert state.combat is not None
    enemy = pack.enemies[state.combat.enemy_id]
    heavy = enemy.heavy if heavy_round(state, enemy, state.combat.rounds) else None
    dodge = rng.random() < min(0.4, state.agility / 100)
    damage = max(1, enemy.attack - armor_bonus(state, pack) + rng.randint(-1, 1))
    if heavy is None and dodge:
        out.messages.append(f"You dodge {the(enemy.name)}'s attack.")
        return
    if heavy is not None:
        damage = round(damage * heavy.multiplier)
    if defending:
        damage = max(1, round(damage * DEFEND_SHARE))
    state.hp -= damage
    blow = f"{the(enemy.name, capital=True)} hits you"
    if heavy is not None:
        blow = f"{heavy.text} It hits you" if heavy.text else f"{the(enemy.name, capital=True)}'s heavy blow hits you"
    guard = ", through your guard" if defending else ""
    out.messages.append(f"{blow} for {damage}{guard} ({max(state.hp, 0)}/{state.max_hp} HP).")
    if state.hp <= 0:
        _knocked_out(pack, state, out)


def _break_heavy(
    pack: ContentPack, state: GameState, enemy: Enemy, weakness: Weakness, rng: random.Random, out: Outcome
) -> None:
    """An item the enemy is weak to, used as its heavy attack comes: the attack is broken and the enemy hurt."""
    assert state.combat is not None
    state.combat.enemy_hp -= weakness.damage
    hurt = f"{weakness.text} ({the(enemy.name, capital=True)} takes {weakness.damage}"
    if state.combat.enemy_hp <= 0:
        out.ok("combat_action", "defend", f"{hurt}.)")
        _victory(pack, state, rng, out)
        return
    out.ok("combat_action", "defend", f"{hurt}, {state.combat.enemy_hp}/{enemy.hp} HP left; its attack is broken.)")
    _announce(pack, state, out)


def _victory(pack: ContentPack, state: GameState, rng: random.Random, out: Outcome) -> None:
    assert state.combat is not None
    enemy = pack.enemies[state.combat.enemy_id]
    state.combat = None
    record_event(state, out, f"defeated:{enemy.id}")
    state.exp += enemy.exp
    state.gold += enemy.gold
    were = "are" if enemy.many else "is"
    gained = ", ".join(gains(pack, exp=enemy.exp, gold=enemy.gold))
    lines = [f"{the(enemy.name, capital=True)} {were} defeated!" + (f" ({gained})" if gained else "")]
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
    out.ok("knocked_out", start, f"You collapse... and wake at {start}, weakened (-{money(lost, pack)}).")
