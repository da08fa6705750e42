"""Cooperative play (mode C): everything outside a search's focus played as well as it can be.

From an adversary state the search switches here to prove a quest still
possible (see :mod:`game.checker`): side quests are started when no check of
theirs would fail on an event already past, each step is made when the rules
accept it, stat items are used, optional fights fought, and tokens given
where trust opens something.
"""

from __future__ import annotations

from game.checker.focus import Focus
from game.checker.world import Routes, Succ, World, npcs_in
from game.world.conditions import enemies_at, holds, objective_check_failures, objective_event_happened
from game.world.content import Objective
from game.world.effects import Effects, GiveItem
from game.world.state import GameState


class Cooperative:
    """Good play of what one focus leaves alone (:meth:`play_out`), for the search of that focus."""

    def __init__(self, world: World, focus: Focus) -> None:
        self.w = world
        self.pack = world.pack
        self.focus = focus

    def greet(self, state: GameState, npc: str) -> bool:
        return not self.w.starts_quest(state, npc)

    def play_out(self, state: GameState, lines: list[str]) -> GameState:
        """Everything outside the focus played as well as it can be, until nothing more comes of it.

        In this order, each time the first that works: the free moves; using
        an item that only raises stats; side quests started when no step of
        theirs would fail a check on an event already past; open steps of
        those quests, each made only when the rules then complete it; fights
        with enemies no step or condition names; tokens given where trust
        opens something; and when nothing else is left, the other fights.
        Nothing that would end the story.
        """
        for _ in range(200):
            state = self.w.free_moves(state, lines, self.greet)
            if state.ending:
                return state
            move = self._move(state)
            if move is None:
                return state
            state = move.state
            lines += move.lines
        return state

    def _move(self, state: GameState) -> Succ | None:
        w, pack, focus = self.w, self.pack, self.focus
        routes = w.routes(state)
        for item in dict.fromkeys(state.inventory):
            if item in w.stat_items and item not in focus.items and item not in w.rel.story_items - w.stat_items:
                for succ in w.use(state, item, 0, 0):
                    if not succ.state.ending and succ.keep and w.gained(state, succ.state):
                        return succ
        for quest_id, trigger in w.triggers.items():
            if quest_id in focus.quests or quest_id in state.quests or trigger.npc not in npcs_in(pack, routes):
                continue
            if holds(trigger.condition, state) and self._safe_start(state, quest_id):
                node = pack.npcs[trigger.npc].location
                s = w.at(state, node)
                if w.play(s, Effects(talk_to=trigger.npc)) and quest_id in s.quests and not s.ending:
                    return Succ(s, [*w.way(routes, node), f"talk to {w.npc(trigger.npc)}"])
        step = self.progress(state, routes, None, strict=False)
        if step is not None:
            return step
        for enemy in sorted(w.optional_enemies - focus.enemies):
            fight = self.fight(state, routes, enemy)
            if fight is not None:
                return fight
        for npc in w.rel.trust_npcs:
            if npc in npcs_in(pack, routes):
                node = pack.npcs[npc].location
                for succ in w.gift_tokens(w.at(state, node), npc):
                    return Succ(succ.state, [*w.way(routes, node), *succ.lines])
        for enemy in sorted(w.spare_enemies - focus.enemies - w.optional_enemies):
            fight = self.fight(state, routes, enemy)
            if fight is not None:
                return fight
        return None

    def progress(self, state: GameState, routes: Routes, quests: frozenset[str] | None, *, strict: bool) -> Succ | None:
        """A move the rules accept now as a step of an active quest (of ``quests``, when given), or None.

        A step made as soon as it can be only moves its quest on (and its
        reward only makes the player stronger), so the search makes it at
        once instead of trying every moment for it. ``strict``: a fight whose
        dice can drop different story items is left as a move of its own.
        """
        for quest_id, progress in state.quests.items():
            quest = self.pack.quest(quest_id)
            if quest is None or progress.status != "active" or (quests is not None and quest_id not in quests):
                continue
            for objective in quest.objectives:
                if objective.id in progress.objectives_done:
                    continue
                succ = self._step(state, routes, quest_id, objective, strict=strict)
                if succ is not None:
                    return succ
                if quest.ordered:
                    break
        return None

    def _safe_start(self, state: GameState, quest_id: str) -> bool:
        quest = self.pack.quest(quest_id)
        assert quest is not None
        return not any(
            objective_event_happened(o, state) and objective_check_failures(o, state) for o in quest.objectives
        )

    def _step(
        self, state: GameState, routes: Routes, quest_id: str, objective: Objective, *, strict: bool = False
    ) -> Succ | None:
        """The move that completes ``objective`` now, if there is one."""
        w, pack = self.w, self.pack
        if objective_check_failures(objective, state):
            return None
        tries: list[tuple[str, Effects]] = []
        if objective.kind == "talk" and objective.target in npcs_in(pack, routes):
            tries.append((pack.npcs[objective.target].location, Effects(talk_to=objective.target)))
        elif objective.kind == "give" and objective.target in state.inventory and objective.to_npc:
            if objective.to_npc in npcs_in(pack, routes):
                give = GiveItem(item=objective.target, to=objective.to_npc)
                tries.append((pack.npcs[objective.to_npc].location, Effects(give_item=give)))
        elif objective.kind == "use" and objective.target in state.inventory:
            node = objective.at_node or state.node
            if node in routes:
                tries.append((node, Effects(use_item=objective.target)))
        elif objective.kind == "defeat":
            return self.fight(state, routes, objective.target, (quest_id, objective.id), strict=strict)
        elif objective.kind == "visit" and objective.target in routes:
            for previous, (_, _) in routes.items():
                for direction, target in pack.nodes[previous].exits.items():
                    if target == objective.target and previous != target:
                        lock = pack.nodes[previous].locked_exits.get(direction)
                        if lock is None or holds(lock.condition, state):
                            s = w.at(state, previous)
                            w.play(s, Effects(move_to=target))
                            if self._done(s, quest_id, objective.id):
                                return Succ(s, [*w.way(routes, previous), f"go {direction}"])
            return None
        for node, effects in tries:
            s = w.at(state, node)
            if w.play(s, effects) and self._done(s, quest_id, objective.id):
                return Succ(s, [*w.way(routes, node), *_describe(w, effects)])
        return None

    @staticmethod
    def _done(state: GameState, quest_id: str, objective_id: str) -> bool:
        progress = state.quests.get(quest_id)
        return not state.ending and progress is not None and objective_id in progress.objectives_done

    def fight(
        self, state: GameState, routes: Routes, enemy: str, step: tuple[str, str] | None = None, *, strict: bool = False
    ) -> Succ | None:
        w = self.w
        for node in routes:
            if enemy in enemies_at(state, self.pack, node):
                here = w.at(state, node)
                if strict and not w.one_outcome(here, enemy):
                    return None
                succ = w.best_fight(here, enemy)
                if succ is None or succ.state.ending or (step and not self._done(succ.state, *step)):
                    return None
                return Succ(succ.state, [*w.way(routes, node), *succ.lines])
        return None


def _describe(world: World, effects: Effects) -> list[str]:
    if effects.talk_to:
        return [f"talk to {world.npc(effects.talk_to)}"]
    if effects.give_item:
        return [f"give {world.item(effects.give_item.item)} to {world.npc(effects.give_item.to)}"]
    if effects.use_item:
        return [f"use {world.item(effects.use_item)}"]
    return []
