"""The checker's moves, played through the real rules: walking, the free moves, items, gifts, fights.

:class:`World` is shared by every search of a pack (see :mod:`game.checker`);
it caches the outcomes of fights, which depend only on the fighter's numbers.
"""

from __future__ import annotations

import copy
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel

from game.checker.relevance import Key, Relevance, raises_stats, relevant_conditions
from game.world.conditions import armor_bonus, holds, items_at, npcs_at, weapon_bonus
from game.world.content import ContentPack
from game.world.describe import the
from game.world.effects import Effects, GiveItem
from game.world.rules import Rules, combat
from game.world.state import GameState

MAX_FIGHT_TURNS = 60
"""A fight still going after this many turns is given up (counted as not won)."""


@dataclass
class Succ:
    """A move: the state it leads to, and the lines a player types for it."""

    state: GameState
    lines: list[str]
    loss: bool = False
    wasted: str | None = None
    """The item this move used up for nothing."""
    keep: bool = True
    """False: the move is only recorded (a wasted item), not explored further."""
    luck: bool = False
    """A fight whose dice can end it in more than one way: every way is explored."""
    gift: bool = False
    """Tokens given for trust (made as soon as they open something, like a step)."""
    lost: str | None = None
    """The item a loss lost."""


Routes = dict[str, tuple[str, str]]
"""node -> (previous node, direction) on a shortest way there from where the player stands."""
ADVERSARY, COOPERATIVE = "A", "C"


class World:
    """Playing moves through the rules: walking, the free moves, fights; shared by every search of a pack."""

    def __init__(self, pack: ContentPack, fight_seeds: int) -> None:
        self.pack = pack
        self.rules = Rules(pack, ambushes=False)  # an ambush is always avoided by stepping out and back in
        self.rel = Relevance(pack)
        self.fight_seeds = fight_seeds
        self.fights: dict[Key, list[tuple[str, int]]] = {}
        self.wasted: dict[str, tuple[list[str], str]] = {}
        self.triggers = {q.id: q.trigger for q in pack.quests.side if q.trigger}
        self.use_nodes: dict[str, set[str]] = {}
        for flag in self.rel.flags:
            kind, _, rest = flag.partition(":")
            if kind == "used" and "@" in rest:
                item, _, node = rest.partition("@")
                self.use_nodes.setdefault(item, set()).add(node)
        self.stat_items = {i for i, item in pack.items.items() if raises_stats(item)}
        self.needs: dict[str, list[int]] = {}
        for quest in pack.all_quests():
            for o in quest.objectives:
                for stat, need in o.requires.items():
                    self.needs.setdefault(stat, []).append(need)
        for cond in relevant_conditions(pack):
            for stat, need in cond.min_stats.items():
                self.needs.setdefault(stat, []).append(need)
        in_endings = {e for end in pack.endings for e in end.condition.defeated}
        referenced = {f.partition(":")[2] for f in self.rel.flags if f.startswith("defeated:")}
        self.optional_enemies = {
            e for e, enemy in pack.enemies.items() if e not in referenced and not enemy.boss and e not in in_endings
        }
        self.spare_enemies = {e for e, enemy in pack.enemies.items() if not enemy.boss and e not in in_endings}

    # ---- names
    def item(self, item_id: str) -> str:
        return self.pack.items[item_id].name

    def npc(self, npc_id: str) -> str:
        return self.pack.npcs[npc_id].name

    # ---- the map
    def routes(self, state: GameState) -> Routes:
        """Shortest ways from where the player stands to every place the open exits reach."""
        pack = self.pack
        routes: Routes = {state.node: ("", "")}
        queue = deque([state.node])
        while queue:
            here = queue.popleft()
            node = pack.nodes[here]
            for direction, target in node.exits.items():
                if target in routes or target not in pack.nodes:
                    continue
                lock = node.locked_exits.get(direction)
                if lock is not None and not holds(lock.condition, state):
                    continue
                routes[target] = (here, direction)
                queue.append(target)
        return routes

    @staticmethod
    def way(routes: Routes, target: str) -> list[str]:
        """The "go" lines from where the player stands to ``target``."""
        lines: list[str] = []
        while routes[target][0]:
            previous, direction = routes[target]
            lines.append(f"go {direction}")
            target = previous
        return lines[::-1]

    @staticmethod
    def at(state: GameState, node: str) -> GameState:
        """A copy of ``state`` standing at ``node``, a place already visited and reachable from where it stands.

        Walking through places already visited changes nothing the rules keep
        but the clock and the turn (a visit counts when it is new; a step that
        needs a visit again is a move of its own, played by the rules): the
        copy is put there, and the action list gets the walk.
        """
        s = clone(state)
        s.node = node
        return s

    def key(self, state: GameState, losses: int, mode: str) -> Key:
        return self.rel.key(state, (losses, mode), frozenset(self.routes(state)))

    # ---- playing
    def play(self, state: GameState, effects: Effects) -> bool:
        """Play one turn on ``state``; whether the rules applied anything of it."""
        return bool(self.rules.resolve_turn(state, effects).applied)

    def starts_quest(self, state: GameState, npc: str, quests: Iterable[str] | None = None) -> bool:
        """Whether talking to ``npc`` now would start a side quest (one of ``quests``, when given)."""
        return any(
            t.npc == npc and q not in state.quests and holds(t.condition, state) and (quests is None or q in quests)
            for q, t in self.triggers.items()
        )

    def free_moves(
        self, state: GameState, lines: list[str], greet: Callable[[GameState, str], bool], *, hold: bool = False
    ) -> GameState:
        """The free moves: walk into every place not visited yet, take what lies there, greet whom ``greet`` allows.

        None of these can close a door (:mod:`game.checker`). A move that would
        end the story is left out, and with ``hold`` (the adversary) so is one
        that would complete a quest: its reward makes the player stronger,
        which the adversary may not want yet; such moves are moves of their
        own (:meth:`game.checker.search.Search.successors`).
        """
        pack = self.pack
        skip: set[tuple[str, str, str]] = set()
        for _ in range(4 * len(pack.nodes) + 4 * len(pack.items) + 10):
            if state.ending:
                return state
            routes = self.routes(state)
            move = next((m for m in self._free_moves(state, routes, greet) if m not in skip), None)
            if move is None:
                return state
            kind, node, what = move
            s = clone(state)
            if kind == "visit":
                previous, direction = routes[node]
                s.node = previous
                done = self.play(s, Effects(move_to=node)) and s.node == node
                told = [*self.way(routes, previous), f"go {direction}"]
            else:
                s.node = node
                effects = Effects(items_gained=[what]) if kind == "take" else Effects(talk_to=what)
                done = self.play(s, effects)
                told = [
                    *self.way(routes, node),
                    f"take {self.item(what)}" if kind == "take" else f"talk to {self.npc(what)}",
                ]
            if not done or s.ending or (hold and quests_done(s) > quests_done(state)):
                skip.add(move)
                continue
            state = s
            lines += told
        return state

    def _free_moves(
        self, state: GameState, routes: Routes, greet: Callable[[GameState, str], bool]
    ) -> Iterator[tuple[str, str, str]]:
        pack = self.pack
        for node in routes:
            if not state.has_flag(f"visited:{node}"):
                previous = routes[node][0]
                if not previous or state.has_flag(f"visited:{previous}"):
                    yield "visit", node, ""
                continue
            for item in items_at(state, pack, node):
                if item in self.rel.eager:
                    yield "take", node, item
            for npc in npcs_at(pack, node):
                if not state.has_flag(f"talked:{npc}") and greet(state, npc):
                    yield "greet", node, npc

    def stats_wanted(self, state: GameState, item_id: str) -> bool:
        """Whether the stats ``item_id`` gives, with those of the other such items carried, can reach a requirement.

        Using such an item commutes with everything but what reads stats and
        only ever helps: it is made when it can make a check or condition that
        fails now pass, not at every moment before.
        """
        use = self.pack.items[item_id].use
        if use is None:
            return False
        if use.max_hp:
            return True
        for stat in use.stats:
            have = state.stat(stat)
            reach = have + sum(
                (u.stats.get(stat, 0) if (u := self.pack.items[i].use) else 0)
                for i in state.inventory
                if i in self.stat_items
            )
            if any(have < need <= reach for need in self.needs.get(stat, ())):
                return True
        return False

    def gained(self, before: GameState, after: GameState) -> bool:
        """Whether spending an item changed anything that matters besides the item being gone."""
        rel = self.rel
        new_flags = {f for f in after.flags if rel.flag_matters(f)} - set(before.flags)
        growth = (after.strength, after.agility, after.intelligence, after.level, after.max_hp)
        return bool(
            new_flags
            or growth != (before.strength, before.agility, before.intelligence, before.level, before.max_hp)
            or after.quests != before.quests
            or after.ending
            or any(after.affinity.get(n, 0) > before.affinity.get(n, 0) for n in rel.trust_npcs)
            or len(after.inventory) >= len(before.inventory)  # something came back for it
        )

    def use(self, state: GameState, item_id: str, losses: int, max_losses: int) -> Iterator[Succ]:
        item = self.pack.items[item_id]
        if item.use is not None and item.use.only_at and state.node not in item.use.only_at:
            return  # the rules refuse it
        s = clone(state)
        if not self.play(s, Effects(use_item=item_id)):
            return
        if s.inventory.count(item_id) >= state.inventory.count(item_id):  # not spent
            yield Succ(s, [f"use {item.name}"])
            return
        gained = self.gained(state, s)
        wasted = item_id if not gained and not (item.use and item.use.heal) else None
        keep = gained or losses < max_losses
        if keep or wasted:
            yield Succ(s, [f"use {item.name}"], loss=not gained, wasted=wasted, keep=keep, lost=item_id)

    def give(self, state: GameState, item_id: str, npc: str) -> Iterator[Succ]:
        s = clone(state)
        if self.play(s, Effects(give_item=GiveItem(item=item_id, to=npc))):
            yield Succ(
                s, [f"give {self.item(item_id)} to {self.npc(npc)}"], loss=not self.gained(state, s), lost=item_id
            )

    def trust_would_open(self, state: GameState, npc: str) -> bool:
        """Whether more trust from ``npc`` would make a condition hold that fails now only for want of it."""
        for cond in self.rel.trust_conditions.get(npc, ()):
            # a choice is made at the very end: the trust an ending asks for is wanted before it
            flags = [f for f in cond.flags if not f.startswith("choice:")]
            rest = cond.model_copy(update={"min_affinity": {}, "at_node": None, "flags": flags})
            if holds(rest, state) and not holds(cond.model_copy(update={"at_node": None, "flags": flags}), state):
                return True
        return False

    def gift_tokens(self, state: GameState, npc: str) -> Iterator[Succ]:
        """Tokens given to ``npc`` one by one until its trust reaches what conditions ask, when that opens something.

        Token gifts commute with everything but what reads that trust, so they
        are made only when every other clause of such a condition holds
        (except where the player stands), and all at once.
        """
        rel = self.rel
        cap = rel.trust_need[npc]
        tokens = [i for i in state.inventory if i in rel.tokens and i not in self.pack.npcs[npc].dislikes]
        if not tokens or state.affinity.get(npc, 0) >= cap or not self.trust_would_open(state, npc):
            return
        s = clone(state)
        lines: list[str] = []
        for item in tokens:
            if s.affinity.get(npc, 0) >= cap:
                break
            if self.play(s, Effects(give_item=GiveItem(item=item, to=npc))):
                lines.append(f"give {self.item(item)} to {self.npc(npc)}")
        if lines:
            yield Succ(s, lines)

    # ---- fights
    def fight(self, state: GameState, enemy_id: str) -> Iterator[Succ]:
        """Every distinct outcome of fighting ``enemy_id`` now (see :mod:`game.checker`)."""
        weak = self._weak(state, enemy_id)
        plans = self._plans(state, enemy_id, weak)
        for tactic, seed in plans:
            s, lines = self._play_fight(state, enemy_id, tactic, seed, weak)
            yield Succ(s, lines, luck=len(plans) > 1)

    def best_fight(self, state: GameState, enemy_id: str) -> Succ | None:
        """The fight won with the most loot, or None when no dice win it."""
        weak = self._weak(state, enemy_id)
        best: tuple[int, Succ] | None = None
        for tactic, seed in self._plans(state, enemy_id, weak):
            s, lines = self._play_fight(state, enemy_id, tactic, seed, weak)
            if s.has_flag(f"defeated:{enemy_id}"):
                score = len(s.inventory)
                if best is None or score > best[0]:
                    best = (score, Succ(s, lines))
        return best[1] if best else None

    def one_outcome(self, state: GameState, enemy_id: str) -> bool:
        """Whether every way this fight can go ends the same for the key (won, with the same story loot)."""
        return len(self._plans(state, enemy_id, self._weak(state, enemy_id))) == 1

    def _weak(self, state: GameState, enemy_id: str) -> list[str]:
        weaknesses = self.pack.enemies[enemy_id].weaknesses
        return sorted({w.item for w in weaknesses if w.item in state.inventory})

    def _plans(self, state: GameState, enemy_id: str, weak: list[str]) -> list[tuple[str, int]]:
        pack = self.pack
        numbers = (state.strength, state.agility, state.intelligence, state.level, state.max_hp)
        sig: Key = (enemy_id, numbers, weapon_bonus(state, pack), armor_bonus(state, pack), tuple(weak))
        plans = self.fights.get(sig)
        if plans is None:
            plans = self._plan_fight(state, enemy_id, weak)
            self.fights[sig] = plans
        return plans

    def _plan_fight(self, state: GameState, enemy_id: str, weak: list[str]) -> list[tuple[str, int]]:
        """The (tactic, dice) pairs that give each distinct outcome of this fight."""
        tactics = ["attack"]
        if self.pack.enemies[enemy_id].heavy is not None:
            tactics += ["defend", "item"] if weak else ["defend"]
        seen: dict[Hashable, tuple[int, tuple[str, int]]] = {}
        won: set[Hashable] = set()
        for seed in range(self.fight_seeds):
            for tactic in tactics:
                s, _ = self._play_fight(state, enemy_id, tactic, seed, weak)
                outcome = (
                    s.has_flag(f"defeated:{enemy_id}"),
                    s.combat is None,
                    self._what(counts(s.inventory) - counts(state.inventory)),
                    self._what(counts(state.inventory) - counts(s.inventory)),
                )
                tokens = sum(1 for i in s.inventory if i in self.rel.tokens)
                best = seen.get(outcome)
                if best is None or tokens > best[0]:  # luck with tokens is taken at its best
                    seen[outcome] = (tokens, (tactic, seed))
                if outcome[0]:
                    won.add(outcome)
        # a fight that can be won need not be lost: losing only sends the player back to the start
        return [plan for outcome, (_, plan) in seen.items() if outcome in won or not won]

    def _what(self, items: Counter[str]) -> Hashable:
        """Items as the key tells them apart: story items one by one, gear by bonus (tokens: not at all)."""
        rel, pack = self.rel, self.pack
        story = tuple(sorted(i for i in items.elements() if i in rel.story_items))
        attack = max((pack.items[i].attack_bonus for i in items if i in rel.gear), default=0)
        defence = max((pack.items[i].defense_bonus for i in items if i in rel.gear), default=0)
        return story, attack, defence

    def _play_fight(
        self, state: GameState, enemy_id: str, tactic: str, seed: int, weak: list[str]
    ) -> tuple[GameState, list[str]]:
        """The fight played to its end by the rules, from full HP, with the dice of ``seed``."""
        s = clone(state)
        s.hp, s.seed, s.turn = s.max_hp, seed, 0
        name = self.pack.enemies[enemy_id].name
        self.play(s, Effects(start_combat=enemy_id, combat_action="attack"))
        actions = ["attack"]
        while s.combat is not None and s.turn < MAX_FIGHT_TURNS and not s.ending:
            if tactic != "attack" and combat.heavy_coming(self.pack, s):
                carried = [i for i in weak if i in s.inventory]
                if tactic == "item" and carried:
                    self.play(s, Effects(use_item=carried[0], combat_action="defend"))
                    actions.append(f"use {self.item(carried[0])}")
                    continue
                self.play(s, Effects(combat_action="defend"))
                actions.append("defend")
                continue
            self.play(s, Effects(combat_action="attack"))
            actions.append("attack")
        turns = s.turn
        s.seed, s.turn = state.seed, state.turn + turns
        if s.has_flag(f"defeated:{enemy_id}") and not state.has_flag(f"defeated:{enemy_id}"):
            result = "won"
        elif s.combat is not None:
            result = "not finished"
        else:
            result = "lost: knocked out"
        loot = sorted((counts(s.inventory) - counts(state.inventory)).elements())
        extra = f"; loot: {', '.join(self.item(i) for i in loot)}" if result == "won" and loot else ""
        rounds = f"{len(actions)} round" + ("s" if len(actions) > 1 else "")
        note = f"# the fight with {the(name)}: {result} in {rounds}, from full HP{extra}"
        return s, [f"attack {name}", *actions[1:], note]


def counts(items: Iterable[str]) -> Counter[str]:
    return Counter(items)


def clone(state: GameState) -> GameState:
    """A deep copy of a state, as :meth:`GameState.snapshot` makes, at a fraction of its cost (no validation)."""
    return cast(GameState, _copy(state))


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value] if value and isinstance(value[0], (list, dict, BaseModel)) else list(value)
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        new = copy.copy(value)
        for name, field_value in value.__dict__.items():
            if isinstance(field_value, (list, dict, BaseModel)):
                new.__dict__[name] = _copy(field_value)
        return new
    return value


def quests_done(state: GameState) -> int:
    return sum(p.status == "completed" for p in state.quests.values())


def steps_done(state: GameState) -> int:
    return sum(len(p.objectives_done) for p in state.quests.values())


def done_in(state: GameState, quest_id: str) -> int:
    progress = state.quests.get(quest_id)
    return len(progress.objectives_done) if progress else 0


def npcs_in(pack: ContentPack, routes: Routes) -> set[str]:
    return {n for node in routes for n in npcs_at(pack, node)}


def completed(state: GameState, quest_id: str) -> bool:
    progress = state.quests.get(quest_id)
    return progress is not None and progress.status == "completed"
