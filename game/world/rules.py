"""The rules engine: the only code that changes a :class:`GameState`.

:meth:`Rules.apply` validates each proposed effect against the world. An effect
the rules do not allow is rejected with a reason and never applied; the others
are applied in a fixed order (talk, move, items, combat, ...), then the rules
run their own consequences: objectives whose events happened, quest rewards,
level-ups, talents, achievements, affinity thresholds and endings.

Randomness (combat, loot) comes from a ``random.Random`` seeded with the game's
seed and the turn number, so replaying the same actions gives the same game.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any

from game.world.conditions import (
    armor_bonus,
    enemies_at,
    holds,
    items_at,
    npcs_at,
    objective_check_failures,
    objective_event_happened,
    unmet,
    weapon_bonus,
)
from game.world.content import ContentPack, Quest
from game.world.describe import the
from game.world.effects import Effects
from game.world.state import CombatState, GameState, QuestProgress

log = logging.getLogger("storyecho.rules")

EXP_PER_LEVEL = 100
LEVEL_UP_MAX_HP = 10
LEVEL_UP_STATS = 2
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


@dataclass
class AppliedEffect:
    effect: str
    detail: str


@dataclass
class RejectedEffect:
    effect: str
    value: Any
    reason: str


@dataclass
class Outcome:
    """What the rules did with one turn's effects."""

    applied: list[AppliedEffect] = field(default_factory=list)
    rejected: list[RejectedEffect] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    events: set[str] = field(default_factory=set)
    """Event flags that happened this turn (set again or for the first time)."""

    def ok(self, effect: str, detail: str, message: str | None = None) -> None:
        self.applied.append(AppliedEffect(effect, detail))
        if message:
            self.messages.append(message)

    def reject(self, effect: str, value: Any, reason: str) -> None:
        log.info("rejected %s=%r: %s", effect, value, reason)
        self.rejected.append(RejectedEffect(effect, value, reason))


class Rules:
    """Validates and applies effects for one content pack."""

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack

    # ------------------------------------------------------------------ entry
    def apply(self, state: GameState, effects: Effects) -> Outcome:
        """Apply ``effects`` to ``state`` in place; return what happened."""
        out = Outcome()
        if state.ending:
            if not effects.is_empty():
                out.reject("*", None, f"the story has ended ({state.ending})")
            return out
        affinity_before = dict(state.affinity)
        rng = random.Random(f"{state.seed}:{state.turn}")
        if effects.talk_to:
            self._talk(state, effects.talk_to, out)
        if effects.move_to:
            self._move(state, effects.move_to, out)
        for item in effects.items_gained:
            self._take(state, item, out)
        for item in effects.items_lost:
            self._drop(state, item, out)
        if effects.use_item:
            self._use(state, effects.use_item, out)
        if effects.give_item:
            self._give(state, effects.give_item.item, effects.give_item.to, out)
        self._deltas(state, effects, out)
        for npc, delta in effects.affinity.items():
            self._affinity(state, npc, delta, effects.talk_to, out)
        if effects.start_combat:
            self._start_combat(state, effects.start_combat, out)
        if effects.combat_action:
            self._combat_action(state, effects.combat_action, rng, out)
        if effects.rest:
            self._rest(state, out)
        if effects.choice:
            self._choice(state, effects.choice, out)
        if effects.trigger_side_quest:
            self._trigger_side_quest(state, effects.trigger_side_quest, out)
        for update in effects.quest_updates:
            self._quest_update(state, update.quest, update.objective, out)
        self.settle(state, out, affinity_before)
        if effects.ending and state.ending != effects.ending:
            self._ending(state, effects.ending, out)
        return out

    def settle(self, state: GameState, out: Outcome, affinity_before: dict[str, int]) -> None:
        """Run the rules' own consequences until nothing more changes."""
        for _ in range(20):  # bounded: each pass can only add progress
            changed = self._progress_quests(state, out)
            changed |= self._level_up(state, out)
            changed |= self._talents(state, out)
            if not changed:
                break
        self._achievements(state, out)
        self._thresholds(state, affinity_before, out)
        self._check_endings(state, out)
        self._undo_failed_choices(state, out)

    def _undo_failed_choices(self, state: GameState, out: Outcome) -> None:
        """A decisive choice that ended nothing is taken back, with the reason.

        Choices are acts of the moment: a failed parley must not turn into the
        peace ending three rooms later when the last condition happens to hold.
        """
        if state.ending:
            return
        for flag in sorted(f for f in out.events if f.startswith("choice:")):
            needing = [e for e in self.pack.endings if flag in e.condition.flags]
            if not needing:
                continue
            closest = min(needing, key=lambda e: len(unmet(e.condition, state, self.pack)))
            reasons = "; ".join(unmet(closest.condition, state, self.pack))
            state.flags.remove(flag)
            choice = self.pack.choice(flag.removeprefix("choice:"))
            name = choice.name if choice else flag
            out.ok("choice_failed", flag, f"{name} does not succeed yet ({reasons}).")

    # ----------------------------------------------------------- interaction
    @staticmethod
    def _event(state: GameState, out: Outcome, flag: str) -> bool:
        """Record that an event happened this turn; returns whether it is new."""
        out.events.add(flag)
        return state.add_flag(flag)

    def _talk(self, state: GameState, npc_id: str, out: Outcome) -> None:
        npc = self.pack.npcs.get(npc_id)
        if npc is None:
            out.reject("talk_to", npc_id, f"no such character: {npc_id}")
            return
        if npc_id not in npcs_at(self.pack, state.node):
            out.reject("talk_to", npc_id, f"{npc.name} is not here")
            return
        if self._event(state, out, f"talked:{npc_id}"):
            self._bump_affinity(state, npc_id, FIRST_TALK_AFFINITY)
        out.ok("talk_to", npc_id)
        for quest in self.pack.quests.side:
            triggered = quest.trigger and quest.trigger.npc == npc_id and holds(quest.trigger.condition, state)
            if triggered and quest.id not in state.quests:
                self._start_quest(state, quest, out)

    def _move(self, state: GameState, node_id: str, out: Outcome) -> None:
        if state.combat:
            enemy = self.pack.enemies[state.combat.enemy_id].name
            out.reject("move_to", node_id, f"you are fighting {enemy}; flee first")
            return
        if node_id not in self.pack.nodes:
            out.reject("move_to", node_id, f"no such place: {node_id}")
            return
        here = self.pack.nodes[state.node]
        if node_id not in here.exits.values():
            out.reject("move_to", node_id, f"{self.pack.nodes[node_id].name} is not reachable from here")
            return
        for direction, target in here.exits.items():
            lock = here.locked_exits.get(direction)
            if target == node_id and lock and not holds(lock.condition, state):
                out.reject("move_to", node_id, lock.message)
                return
        state.node = node_id
        state.clock_minutes += MOVE_MINUTES
        self._event(state, out, f"visited:{node_id}")
        out.ok("move_to", node_id)

    def _take(self, state: GameState, item_id: str, out: Outcome) -> None:
        if item_id not in self.pack.items:
            out.reject("items_gained", item_id, f"no such item: {item_id}")
            return
        if item_id not in items_at(state, self.pack, state.node):
            out.reject("items_gained", item_id, f"there is no {self.pack.items[item_id].name} here")
            return
        dropped = state.dropped_items.get(state.node, [])
        if item_id in dropped:
            dropped.remove(item_id)
        else:
            state.taken_items.append(f"{state.node}:{item_id}")
        self._gain_item(state, item_id)
        out.ok("items_gained", item_id, f"You take the {self.pack.items[item_id].name}.")

    def _gain_item(self, state: GameState, item_id: str) -> None:
        state.inventory.append(item_id)
        state.add_flag(f"obtained:{item_id}")

    def _drop(self, state: GameState, item_id: str, out: Outcome) -> None:
        if item_id not in state.inventory:
            out.reject("items_lost", item_id, f"you do not carry {item_id}")
            return
        state.inventory.remove(item_id)
        state.dropped_items.setdefault(state.node, []).append(item_id)
        out.ok("items_lost", item_id, f"You leave the {self.pack.items[item_id].name} here.")

    def _use(self, state: GameState, item_id: str, out: Outcome) -> None:
        item = self.pack.items.get(item_id)
        if item is None or item_id not in state.inventory:
            out.reject("use_item", item_id, f"you do not carry {item_id}")
            return
        if item.use and item.use.only_at and state.node not in item.use.only_at:
            places = " or ".join(self.pack.nodes[n].name for n in item.use.only_at)
            out.reject("use_item", item_id, f"the {item.name} is of no use here (only at {places})")
            return
        if item.consumable and (failures := self._use_check_failures(state, item_id)):
            # using it up now would leave the quest step impossible to retry
            out.reject("use_item", item_id, f"you are not ready to use the {item.name} here: needs {failures}")
            return
        lines: list[str] = []
        if item.use:
            text = item.use.node_texts.get(state.node, item.use.text)
            if text:
                lines.append(text)
            if item.use.max_hp:
                state.max_hp += item.use.max_hp
            if item.use.heal:
                healed = min(item.use.heal, state.max_hp - state.hp)
                state.hp += healed
                lines.append(f"(+{healed} HP)")
            for stat, bonus in item.use.stats.items():
                setattr(state, stat, state.stat(stat) + bonus)
                lines.append(f"({stat} +{bonus})")
        if item.consumable:
            state.inventory.remove(item_id)
        self._event(state, out, f"used:{item_id}")
        self._event(state, out, f"used:{item_id}@{state.node}")
        out.ok("use_item", item_id, " ".join(lines) or None)

    def _use_check_failures(self, state: GameState, item_id: str) -> str:
        """Failed attribute checks of an active quest step that uses this item here."""
        for quest_id in state.active_quests():
            quest = self.pack.quest(quest_id)
            for objective in quest.objectives if quest else ():
                here = objective.at_node in (None, state.node)
                if objective.kind == "use" and objective.target == item_id and here:
                    failures = objective_check_failures(objective, state)
                    if failures and objective.id not in state.quests[quest_id].objectives_done:
                        return ", ".join(failures)
        return ""

    def _give(self, state: GameState, item_id: str, npc_id: str, out: Outcome) -> None:
        npc = self.pack.npcs.get(npc_id)
        if item_id not in state.inventory:
            out.reject("give_item", item_id, f"you do not carry {item_id}")
            return
        if npc is None or npc_id not in npcs_at(self.pack, state.node):
            out.reject("give_item", item_id, f"{npc.name if npc else npc_id} is not here")
            return
        state.inventory.remove(item_id)
        self._event(state, out, f"gave:{item_id}:{npc_id}")
        if item_id in npc.likes:
            delta = GIFT_LIKED
        elif item_id in npc.dislikes:
            delta = GIFT_DISLIKED
        else:
            delta = GIFT_NEUTRAL
        self._bump_affinity(state, npc_id, delta)
        name = self.pack.items[item_id].name
        out.ok("give_item", f"{item_id}->{npc_id}", f"{npc.name} accepts the {name}. (affinity {delta:+d})")

    def _deltas(self, state: GameState, effects: Effects, out: Outcome) -> None:
        if effects.hp_delta > 0:
            out.reject("hp_delta", effects.hp_delta, "healing comes only from resting and items")
        elif effects.hp_delta < 0:
            if -effects.hp_delta > MAX_NARRATOR_DAMAGE:
                out.reject("hp_delta", effects.hp_delta, f"narrated harm is capped at {MAX_NARRATOR_DAMAGE} per turn")
            else:
                state.hp = max(1, state.hp + effects.hp_delta)
                out.ok("hp_delta", str(effects.hp_delta), f"({effects.hp_delta} HP)")
        if effects.gold_delta > 0:
            out.reject("gold_delta", effects.gold_delta, "gold comes only from loot and quest rewards")
        elif effects.gold_delta < 0:
            if state.gold + effects.gold_delta < 0:
                out.reject("gold_delta", effects.gold_delta, f"you have only {state.gold} gold")
            else:
                state.gold += effects.gold_delta
                out.ok("gold_delta", str(effects.gold_delta), f"({effects.gold_delta} gold)")
        if effects.exp_delta:
            if not 0 < effects.exp_delta <= MAX_NARRATOR_EXP:
                out.reject("exp_delta", effects.exp_delta, f"narrated experience must be 1..{MAX_NARRATOR_EXP}")
            else:
                state.exp += effects.exp_delta
                out.ok("exp_delta", str(effects.exp_delta))

    def _affinity(self, state: GameState, npc_id: str, delta: int, talked: str | None, out: Outcome) -> None:
        if npc_id not in self.pack.npcs:
            out.reject("affinity", {npc_id: delta}, f"no such character: {npc_id}")
        elif npc_id not in npcs_at(self.pack, state.node):
            out.reject("affinity", {npc_id: delta}, f"{self.pack.npcs[npc_id].name} is not here")
        elif abs(delta) > MAX_AFFINITY_STEP:
            out.reject("affinity", {npc_id: delta}, f"affinity moves at most {MAX_AFFINITY_STEP} per turn")
        elif delta:
            self._bump_affinity(state, npc_id, delta)
            out.ok("affinity", f"{npc_id} {delta:+d}")

    def _bump_affinity(self, state: GameState, npc_id: str, delta: int) -> None:
        state.affinity[npc_id] = max(-100, min(100, state.affinity.get(npc_id, 0) + delta))

    # ----------------------------------------------------------------- combat
    def _start_combat(self, state: GameState, enemy_id: str, out: Outcome) -> None:
        enemy = self.pack.enemies.get(enemy_id)
        if enemy is None:
            out.reject("start_combat", enemy_id, f"no such enemy: {enemy_id}")
        elif state.combat:
            out.reject("start_combat", enemy_id, "you are already fighting")
        elif enemy_id not in enemies_at(state, self.pack, state.node):
            out.reject("start_combat", enemy_id, f"there is no {enemy.name} here")
        else:
            state.combat = CombatState(enemy_id=enemy_id, enemy_hp=enemy.hp)
            out.ok("start_combat", enemy_id, f"{enemy.encounter} ({enemy.name}: {enemy.hp} HP)")

    def _combat_action(self, state: GameState, action: str, rng: random.Random, out: Outcome) -> None:
        if state.combat is None:
            out.reject("combat_action", action, "you are not fighting anyone")
            return
        enemy = self.pack.enemies[state.combat.enemy_id]
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
            hit = 4 + state.strength // 2 + weapon_bonus(state, self.pack) + rng.randint(0, 2)
            state.combat.enemy_hp -= hit
            if state.combat.enemy_hp <= 0:
                out.ok("combat_action", "attack", f"You strike {the(enemy.name)} for {hit}.")
                self._victory(state, rng, out)
                return
            out.ok(
                "combat_action",
                "attack",
                f"You strike {the(enemy.name)} for {hit} ({state.combat.enemy_hp}/{enemy.hp} HP left).",
            )
        self._enemy_turn(state, rng, out)

    def _enemy_turn(self, state: GameState, rng: random.Random, out: Outcome) -> None:
        assert state.combat is not None
        enemy = self.pack.enemies[state.combat.enemy_id]
        if rng.random() < min(0.4, state.agility / 100):
            out.messages.append(f"You dodge {the(enemy.name)}'s attack.")
            return
        damage = max(1, enemy.attack - armor_bonus(state, self.pack) + rng.randint(-1, 1))
        state.hp -= damage
        out.messages.append(
            f"{the(enemy.name, capital=True)} hits you for {damage} ({max(state.hp, 0)}/{state.max_hp} HP)."
        )
        if state.hp <= 0:
            self._knocked_out(state, out)

    def _victory(self, state: GameState, rng: random.Random, out: Outcome) -> None:
        assert state.combat is not None
        enemy = self.pack.enemies[state.combat.enemy_id]
        state.combat = None
        self._event(state, out, f"defeated:{enemy.id}")
        state.exp += enemy.exp
        state.gold += enemy.gold
        lines = [f"{the(enemy.name, capital=True)} is defeated! (+{enemy.exp} exp, +{enemy.gold} gold)"]
        for loot in enemy.loot:
            if rng.random() < loot.chance:
                self._gain_item(state, loot.item)
                lines.append(f"Loot: {self.pack.items[loot.item].name}.")
        out.ok("defeated", enemy.id, " ".join(lines))

    def _knocked_out(self, state: GameState, out: Outcome) -> None:
        lost = state.gold // 10
        state.combat = None
        state.gold -= lost
        state.hp = max(1, state.max_hp // 2)
        state.node = self.pack.story.start_node
        state.add_flag("knocked_out")
        start = self.pack.nodes[state.node].name
        out.ok("knocked_out", start, f"You collapse... and wake at {start}, weakened (-{lost} gold).")

    def _rest(self, state: GameState, out: Outcome) -> None:
        if state.combat:
            out.reject("rest", True, "you cannot rest in the middle of a fight")
        elif not self.pack.nodes[state.node].safe:
            out.reject("rest", True, "this place is too dangerous to rest")
        else:
            healed = min(state.max_hp - state.hp, max(1, int(state.max_hp * REST_HEAL_SHARE)))
            state.hp += healed
            state.clock_minutes += REST_MINUTES
            message = (
                f"You rest a while. (+{healed} HP)"
                if healed
                else "You rest a while; you were already at full strength."
            )
            out.ok("rest", str(healed), message)

    # --------------------------------------------------------------- quests
    def _choice(self, state: GameState, choice_id: str, out: Outcome) -> None:
        choice = self.pack.choice(choice_id)
        if choice is None:
            out.reject("choice", choice_id, f"no such choice: {choice_id}")
            return
        missing = unmet(choice.condition, state, self.pack)
        if missing:
            out.reject("choice", choice_id, f"{choice.name} is not possible now: {'; '.join(missing)}")
            return
        self._event(state, out, f"choice:{choice_id}")
        out.ok("choice", choice_id, f"You choose: {choice.name}.")

    def _trigger_side_quest(self, state: GameState, quest_id: str, out: Outcome) -> None:
        quest = next((q for q in self.pack.quests.side if q.id == quest_id), None)
        if quest is None or quest.trigger is None:
            out.reject("trigger_side_quest", quest_id, f"no such side quest: {quest_id}")
        elif quest_id in state.quests:
            if not any(a.effect == "quest_started" and a.detail == quest_id for a in out.applied):
                out.reject("trigger_side_quest", quest_id, "that quest has already started")
        elif quest.trigger.npc not in npcs_at(self.pack, state.node):
            out.reject("trigger_side_quest", quest_id, f"{self.pack.npcs[quest.trigger.npc].name} is not here")
        elif missing := unmet(quest.trigger.condition, state, self.pack):
            out.reject("trigger_side_quest", quest_id, "; ".join(missing))
        else:
            self._start_quest(state, quest, out)

    def _start_quest(self, state: GameState, quest: Quest, out: Outcome) -> None:
        state.quests[quest.id] = QuestProgress()
        out.ok("quest_started", quest.id, f"New quest: {quest.title}.")

    def _quest_update(self, state: GameState, quest_id: str, objective_id: str, out: Outcome) -> None:
        value = f"{quest_id}:{objective_id}"
        quest = self.pack.quest(quest_id)
        progress = state.quests.get(quest_id)
        objective = next((o for o in quest.objectives if o.id == objective_id), None) if quest else None
        if quest is None or objective is None:
            out.reject("quest_updates", value, "no such quest objective")
        elif progress is None or progress.status != "active":
            out.reject("quest_updates", value, f"quest {quest_id} is not active")
        elif objective_id in progress.objectives_done:
            return  # already done this turn by the rules themselves
        elif not objective_event_happened(objective, state):
            out.reject("quest_updates", value, f"not done yet: {objective.description}")
        elif failures := objective_check_failures(objective, state):
            out.reject("quest_updates", value, f"attribute check failed: {', '.join(failures)}")
        else:
            self._complete_objective(state, quest, objective_id, out)

    def _complete_objective(self, state: GameState, quest: Quest, objective_id: str, out: Outcome) -> None:
        progress = state.quests[quest.id]
        progress.objectives_done.append(objective_id)
        objective = next(o for o in quest.objectives if o.id == objective_id)
        out.ok(
            "objective_done", f"{quest.id}:{objective_id}", f"Objective complete: {objective.description.rstrip('.')}."
        )

    def _progress_quests(self, state: GameState, out: Outcome) -> bool:
        changed = False
        for quest_id in state.active_quests():
            quest = self.pack.quest(quest_id)
            if quest is None:
                continue
            progress = state.quests[quest_id]
            for index, objective in enumerate(quest.objectives):
                if objective.id in progress.objectives_done:
                    continue
                if quest.ordered and index > 0:
                    if quest.objectives[index - 1].id not in progress.objectives_done:
                        break
                    # the step's event must happen now, after the previous step (owning counts any time)
                    if objective.kind != "obtain" and objective.event_flag() not in out.events:
                        break
                if not objective_event_happened(objective, state):
                    if quest.ordered:
                        break
                    continue
                failures = objective_check_failures(objective, state)
                acted_now = objective.kind == "obtain" or objective.event_flag() in out.events
                if failures:
                    first_time = state.add_flag(f"check_failed:{quest_id}:{objective.id}")
                    if acted_now or first_time:
                        out.messages.append(
                            f"Not yet: {objective.description.rstrip('.')} needs {', '.join(failures)}."
                        )
                    continue
                if objective.requires and state.has_flag(f"check_failed:{quest_id}:{objective.id}") and not acted_now:
                    continue  # a failed attempt must be made again once the player is able
                self._complete_objective(state, quest, objective.id, out)
                changed = True
            if len(progress.objectives_done) == len(quest.objectives):
                self._complete_quest(state, quest, out)
                changed = True
        return changed

    def _complete_quest(self, state: GameState, quest: Quest, out: Outcome) -> None:
        state.quests[quest.id].status = "completed"
        state.add_flag(f"quest_done:{quest.id}")
        reward = quest.reward
        state.exp += reward.exp
        state.gold += reward.gold
        parts = [f"+{amount} {unit}" for amount, unit in ((reward.exp, "exp"), (reward.gold, "gold")) if amount]
        if reward.item:
            self._gain_item(state, reward.item)
            parts.append(self.pack.items[reward.item].name)
        for stat, bonus in reward.stats.items():
            setattr(state, stat, state.stat(stat) + bonus)
            parts.append(f"{stat} +{bonus}")
        for npc, delta in reward.affinity.items():
            self._bump_affinity(state, npc, delta)
            parts.append(f"{self.pack.npcs[npc].name} affinity {delta:+d}")
        rewards = f" ({', '.join(parts)})" if parts else ""
        out.ok("quest_completed", quest.id, f"Quest complete: {quest.title}{rewards}.")
        order = self.pack.story.main_quest_order
        if quest.id in order:
            index = order.index(quest.id)
            if index + 1 < len(order) and order[index + 1] not in state.quests:
                next_quest = self.pack.quest(order[index + 1])
                assert next_quest is not None
                self._start_quest(state, next_quest, out)

    # --------------------------------------------------------------- growth
    def _level_up(self, state: GameState, out: Outcome) -> bool:
        target = 1 + state.exp // EXP_PER_LEVEL
        if target <= state.level:
            return False
        while state.level < target:
            state.level += 1
            state.max_hp += LEVEL_UP_MAX_HP
            for stat in ("strength", "agility", "intelligence"):
                setattr(state, stat, state.stat(stat) + LEVEL_UP_STATS)
        state.hp = state.max_hp
        out.ok("level_up", str(state.level), f"Level up! You are now level {state.level}.")
        return True

    def _talents(self, state: GameState, out: Outcome) -> bool:
        changed = False
        for talent in self.pack.talents:
            if talent.id not in state.talents and holds(talent.condition, state):
                state.talents.append(talent.id)
                for stat, bonus in talent.bonus.items():
                    setattr(state, stat, state.stat(stat) + bonus)
                state.max_hp += talent.max_hp_bonus
                out.ok("talent", talent.id, f"Talent learned: {talent.name} - {talent.description}")
                changed = True
        return changed

    def _achievements(self, state: GameState, out: Outcome) -> None:
        for ach in self.pack.achievements:
            if ach.id not in state.achievements and holds(ach.condition, state):
                state.achievements.append(ach.id)
                out.ok("achievement", ach.id, f"Achievement unlocked: {ach.name}.")

    def _thresholds(self, state: GameState, before: dict[str, int], out: Outcome) -> None:
        for npc_id, now in state.affinity.items():
            was = before.get(npc_id, now)
            if was == now:
                continue
            npc = self.pack.npcs[npc_id]
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

    # -------------------------------------------------------------- endings
    def _ending(self, state: GameState, ending_id: str, out: Outcome) -> None:
        ending = next((e for e in self.pack.endings if e.id == ending_id), None)
        if ending is None:
            out.reject("ending", ending_id, f"no such ending: {ending_id}")
        elif state.ending:
            out.reject("ending", ending_id, f"the story already ended ({state.ending})")
        else:
            reasons = "; ".join(unmet(ending.condition, state, self.pack))
            out.reject("ending", ending_id, f"conditions not met: {reasons}")

    def _check_endings(self, state: GameState, out: Outcome) -> None:
        if state.ending:
            return
        for ending in sorted(self.pack.endings, key=lambda e: -e.priority):
            if holds(ending.condition, state):
                state.ending = ending.id
                out.ok("ending", ending.id, f"*** {ending.title} ***\n{ending.description}")
                return
