"""The rules' own consequences: levels, talents, achievements, affinity thresholds, endings."""

from __future__ import annotations

import math

from game.world.conditions import holds, unmet
from game.world.content import ContentPack
from game.world.rules.core import Outcome
from game.world.state import GameState

EXP_PER_LEVEL = 100
"""What the second level costs; every level after costs that much more than the one before (level ``L`` needs
``EXP_PER_LEVEL * L * (L - 1) / 2`` in all: 100, 300, 600, 1000...). A flat price let a player who fights and
quests everywhere outgrow every stat gate of the story by its middle (issue 35): with a rising price, the
extra experience of a thorough player buys fewer extra levels."""
LEVEL_UP_MAX_HP = 8
LEVEL_UP_STATS = {"strength": 2, "agility": 2, "intelligence": 1}
"""Stats a level-up adds: a body hardens with every fight, a mind grows by study (talents, quests, books), so
intelligence grows slowest and the story's intelligence checks are not opened by fighting alone (issue 25)."""


def level_for(exp: int) -> int:
    """The level ``exp`` reaches: the largest ``L`` with ``EXP_PER_LEVEL * L * (L - 1) / 2 <= exp``, solved at once."""
    pairs = 2 * max(0, exp) // EXP_PER_LEVEL  # L * (L - 1) <= pairs
    return (1 + math.isqrt(1 + 4 * pairs)) // 2


def level_up(state: GameState, out: Outcome) -> bool:
    target = level_for(state.exp)
    if target <= state.level:
        return False
    gained = target - state.level  # computed at once: a loop per level hung on a save with exp 9e18 (issue 22)
    state.level = target
    state.max_hp += gained * LEVEL_UP_MAX_HP
    for stat, bonus in LEVEL_UP_STATS.items():
        setattr(state, stat, state.stat(stat) + gained * bonus)
    state.hp += gained * LEVEL_UP_MAX_HP  # the new strength, not a full heal: heals are the player's to find
    out.ok("level_up", str(state.level), f"Level up! You are now level {state.level}.")
    return True


def talents(pack: ContentPack, state: GameState, out: Outcome) -> bool:
    changed = False
    for talent in pack.talents:
        if talent.id not in state.talents and holds(talent.condition, state):
            state.talents.append(talent.id)
            for stat, bonus in talent.bonus.items():
                setattr(state, stat, state.stat(stat) + bonus)
            state.max_hp += talent.max_hp_bonus
            out.ok("talent", talent.id, f"Talent learned: {talent.name} - {talent.description}")
            changed = True
    return changed


def achievements(pack: ContentPack, state: GameState, out: Outcome) -> None:
    for ach in pack.achievements:
        if ach.id not in state.achievements and holds(ach.condition, state):
            state.achievements.append(ach.id)
            out.ok("achievement", ach.id, f"Achievement unlocked: {ach.name}.")


def thresholds(pack: ContentPack, state: GameState, before: dict[str, int], out: Outcome) -> None:
    for npc_id, now in state.affinity.items():
        was = before.get(npc_id, now)
        if was == now:
            continue
        npc = pack.npcs[npc_id]
        for threshold in npc.thresholds:
            if was < threshold.at <= now:
                state.add_flag(f"affinity:{npc_id}:{threshold.label}")
                out.ok(
                    "affinity_threshold",
                    f"{npc_id}:{threshold.label}",
                    f"{npc.name} now sees you as {threshold.label}: {threshold.effect}",
                )
            elif now < threshold.at <= was:
                out.ok(
                    "affinity_threshold",
                    f"{npc_id}:-{threshold.label}",
                    f"{npc.name} no longer sees you as {threshold.label}.",
                )


def claim_ending(pack: ContentPack, state: GameState, ending_id: str, out: Outcome) -> None:
    """A narrator's ``ending``: endings happen only when the rules find their conditions hold."""
    if state.ending == ending_id:
        return
    ending = next((e for e in pack.endings if e.id == ending_id), None)
    if ending is None:
        out.reject("ending", ending_id, f"no such ending: {ending_id}")
    elif state.ending:
        out.reject("ending", ending_id, f"the story already ended ({state.ending})")
    else:
        reasons = "; ".join(unmet(ending.condition, state, pack))
        out.reject("ending", ending_id, f"conditions not met: {reasons}")


def check_endings(pack: ContentPack, state: GameState, out: Outcome) -> None:
    if state.ending:
        return
    for ending in sorted(pack.endings, key=lambda e: -e.priority):
        if holds(ending.condition, state):
            state.ending = ending.id
            out.ok("ending", ending.id, f"*** {ending.title} ***\n{ending.description}")
            return
