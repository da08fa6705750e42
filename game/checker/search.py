"""One search of the checker: a graph of states for one focus, explored breadth first (see :mod:`game.checker`)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator

from game.checker.cooperative import Cooperative
from game.checker.focus import Focus
from game.checker.graph import StateGraph
from game.checker.world import (
    ADVERSARY,
    COOPERATIVE,
    Routes,
    Succ,
    World,
    clone,
    completed,
    counts,
    done_in,
    steps_done,
)
from game.world.conditions import enemies_at, holds, items_at, npcs_at
from game.world.effects import Effects
from game.world.state import GameState, new_game


class Search(StateGraph):
    """One graph of states for one focus: the adversary's moves, and cooperative play switched to on demand.

    Adversary states (mode A) play only the focus, move by move, with at most
    ``max_losses`` losses; the rest of the story is left alone, so the player
    stays as weak as the focus allows. A switch from an adversary state leads
    to a cooperative state (mode C): from there everything outside the focus
    is played as well as it can be (:class:`~game.checker.cooperative.Cooperative`) while the focus is
    still played move by move, without losses. A quest is locked in an
    adversary state when neither its own moves nor the cooperative play from
    it reach a completion.
    """

    def __init__(self, world: World, focus: Focus, *, max_states: int, max_depth: int, max_losses: int) -> None:
        super().__init__()
        self.w = world
        self.pack = world.pack
        self.focus = focus
        self.coop = Cooperative(world, focus)
        self.max_states = max_states
        self.max_depth = max_depth
        self.max_losses = max_losses
        self.truncated = False
        self.switched: dict[int, int] = {}

    # ---- closure of a state, by mode
    def _greet_focus(self, state: GameState, npc: str) -> bool:
        return npc in self.focus.npcs and not self.w.starts_quest(state, npc, self.focus.quests)

    def after_move(self, state: GameState, lines: list[str], mode: str) -> GameState:
        """The moves made at once after each move: the free moves (adversary), or all good play (cooperative)."""
        if mode == COOPERATIVE:
            return self.coop.play_out(state, lines)
        return self.w.free_moves(state, lines, self._greet_focus, hold=True)

    # ---- the focus, move by move
    def successors(self, sid: int) -> Iterator[Succ]:
        w, pack, focus = self.w, self.pack, self.focus
        state, mode, losses = self.states[sid], self.mode[sid], self.losses[sid]
        budget = self.max_losses if mode == ADVERSARY else 0
        if state.combat is not None:  # only when a fight could not be finished: get out of it
            s = clone(state)
            w.play(s, Effects(combat_action="flee"))
            yield Succ(s, ["flee"])
            return
        routes = w.routes(state)
        loss_npc = next((n for node in routes for n in npcs_at(pack, node) if n not in w.rel.trust_npcs), None)
        # an item is lost (given away, used for nothing) only right after it came: a loss is never less harmful
        # earlier, and trying it at every later moment would explore the same mistake again and again
        before = counts(self.states[self.parent[sid]].inventory) if sid > 0 else Counter[str]()
        fresh = set((counts(state.inventory) - before).elements())
        for node_id in routes:
            if not state.has_flag(f"visited:{node_id}"):  # a walk the free moves held back
                previous, direction = routes[node_id]
                if previous and not state.has_flag(f"visited:{previous}"):
                    continue  # beyond another place not visited yet
                s = w.at(state, previous)
                if w.play(s, Effects(move_to=node_id)):
                    yield Succ(s, [*w.way(routes, previous), f"go {direction}"])
                continue
            way = w.way(routes, node_id)
            here = w.at(state, node_id) if node_id != state.node else state
            for item in items_at(here, pack, node_id):
                s = clone(here)
                if w.play(s, Effects(items_gained=[item])):
                    yield Succ(s, [*way, f"take {w.item(item)}"])
            for npc in npcs_at(pack, node_id):
                if self._talk_matters(here, npc):
                    s = clone(here)
                    if w.play(s, Effects(talk_to=npc)):
                        yield Succ(s, [*way, f"talk to {w.npc(npc)}"])
            for item in dict.fromkeys(here.inventory):
                spare = budget if item in fresh else 0
                yield from self._item_moves(here, node_id, item, way, losses, spare, loss_npc, sid)
            for npc in npcs_at(pack, node_id):
                if npc in w.rel.trust_npcs:
                    for succ in w.gift_tokens(here, npc):
                        yield Succ(succ.state, [*way, *succ.lines], gift=True)
            for enemy in enemies_at(here, pack, node_id):
                if enemy in focus.enemies:
                    for succ in w.fight(here, enemy):
                        yield Succ(succ.state, [*way, *succ.lines], luck=succ.luck)
            for choice in pack.story.choices if focus.endings else ():
                at = choice.condition.at_node
                if (at == node_id or (at is None and node_id == state.node)) and holds(choice.condition, here):
                    s = clone(here)
                    if w.play(s, Effects(choice=choice.id)):
                        yield Succ(s, [*way, choice.keywords[0]])
            if node_id in focus.visits and self._step_open(state, "visit", node_id):
                yield from self._revisit(state, routes, node_id)

    def _item_moves(
        self,
        here: GameState,
        node_id: str,
        item: str,
        way: list[str],
        losses: int,
        budget: int,
        loss_npc: str | None,
        sid: int,
    ) -> Iterator[Succ]:
        w, focus = self.w, self.focus
        model = self.pack.items[item]
        at_use_node = (
            node_id == self.states[sid].node
            or node_id in w.use_nodes.get(item, ())
            or bool(model.use and node_id in model.use.only_at)
        )
        if at_use_node:
            if item in focus.items and (item not in w.stat_items or w.stats_wanted(here, item)):
                for succ in w.use(here, item, losses, budget if item in focus.losable else 0):
                    yield Succ(succ.state, [*way, *succ.lines], succ.loss, succ.wasted, succ.keep, lost=succ.lost)
            elif self.focus.name == "main" and model.consumable and not (model.use and model.use.heal):
                for succ in w.use(here, item, losses, 0):  # only to learn whether it can be used up for nothing
                    if succ.wasted:
                        yield Succ(succ.state, [*way, *succ.lines], succ.loss, succ.wasted, keep=False)
        if item not in focus.items:
            return
        if item not in focus.losable:
            budget = 0
        for npc in npcs_at(self.pack, node_id):
            step = f"gave:{item}:{npc}" in w.rel.flags
            # trust: a liked gift (a neutral one is a token's job, and story items are not spent on it)
            trust = npc in w.rel.trust_npcs and item in self.pack.npcs[npc].likes and w.trust_would_open(here, npc)
            if step or trust or (losses < budget and npc == loss_npc):
                for succ in w.give(here, item, npc):
                    if not succ.loss or losses < budget:
                        yield Succ(succ.state, [*way, *succ.lines], succ.loss, lost=succ.lost)

    def _talk_matters(self, state: GameState, npc: str) -> bool:
        """Whether talking to ``npc`` can change anything the focus cares for: a first talk, a trigger, a step."""
        if npc not in self.focus.npcs:
            return self.w.starts_quest(state, npc, self.focus.quests)
        if not state.has_flag(f"talked:{npc}") or self.w.starts_quest(state, npc):
            return True
        return self._step_open(state, "talk", npc)

    def _step_open(self, state: GameState, kind: str, target: str) -> bool:
        for quest_id, progress in state.quests.items():
            quest = self.pack.quest(quest_id)
            if quest is None or progress.status != "active":
                continue
            for o in quest.objectives:
                if o.kind == kind and o.target == target and o.id not in progress.objectives_done:
                    return True
        return False

    def _revisit(self, state: GameState, routes: Routes, node_id: str) -> Iterator[Succ]:
        """Walk into ``node_id`` again (a visit step to do after an earlier one, or after a failed check)."""
        w, pack = self.w, self.pack
        for previous in routes:
            node = pack.nodes[previous]
            for direction, target in node.exits.items():
                lock = node.locked_exits.get(direction)
                if target != node_id or previous == node_id or (lock and not holds(lock.condition, state)):
                    continue
                s = w.at(state, previous)
                if w.play(s, Effects(move_to=node_id)):
                    yield Succ(s, [*w.way(routes, previous), f"go {direction}"])
                return

    # ---- exploring
    def start(self) -> None:
        state = self.w.free_moves(new_game(self.pack), self.start_lines, self._greet_focus, hold=True)
        self.add(state, -1, [], 0, ADVERSARY, self.w.key(state, 0, ADVERSARY))

    def explore(self, queue: deque[int], stop: Callable[[], bool] | None = None) -> None:
        """Expand the states in ``queue`` breadth first (and what they reach), until ``stop()`` or the bound."""
        while queue:
            if stop is not None and stop():
                return
            sid = queue.popleft()
            if self.expanded[sid]:
                continue
            state = self.states[sid]
            if state.ending:
                self.expanded[sid] = True
                continue
            if self.depth[sid] >= self.max_depth:
                self.truncated = True
                continue
            mode = self.mode[sid]
            if mode == ADVERSARY and self.losses[sid]:
                self.expanded[sid] = True  # after a loss, only cooperative play is tried (see locks)
                continue
            complete = True
            here = self.w.key(state, self.losses[sid], mode)
            for succ in self._ample(state, self.successors(sid)):
                if succ.wasted and succ.wasted not in self.w.wasted:
                    self.w.wasted[succ.wasted] = ([*self.path(sid), *succ.lines], succ.state.node)
                if not succ.keep:
                    continue
                decisive = len(succ.lines)
                after = self.after_move(succ.state, succ.lines, mode)
                losses = self.losses[sid] + succ.loss
                key = self.w.key(after, losses, mode)
                if key == here:
                    continue
                target = self.keys.get(key)
                if target is None:
                    if len(self.states) >= self.max_states:
                        complete = False
                        self.truncated = True
                        continue
                    target = self.add(after, sid, succ.lines, losses, mode, key, succ.lost if succ.loss else None)
                    self.decisive[target] = decisive
                    queue.append(target)
                self.link(sid, target)
            self.expanded[sid] = complete

    def _ample(self, state: GameState, moves: Iterable[Succ]) -> list[Succ]:
        """The moves to explore: one step the rules accept now (main quests first), and every other move.

        Steps that the rules accept as they are made commute with each other
        and only move the story on, so one of them stands for all (the others
        stay available after it). The moves that are not such steps - fights
        that complete nothing yet, quests started, items lost, stats used,
        choices, fights whose dice can drop different story items - are all
        explored from every state, so that the adversary can make them at any
        moment of the story, as weak as it then is.
        """
        order = {q: i for i, q in enumerate(self.pack.story.main_quest_order)}
        best: tuple[int, Succ] | None = None
        others: list[Succ] = []
        done = steps_done(state)
        for succ in moves:
            after = steps_done(succ.state)
            step = succ.keep and not succ.loss and not succ.luck and after > done
            if (step or succ.gift) and not succ.state.ending:
                new = {q for q, p in succ.state.quests.items() if len(p.objectives_done) > done_in(state, q)}
                rank = min((order.get(q, len(order)) for q in new), default=len(order) + (not step))
                if best is None or rank < best[0]:
                    best = (rank, succ)
                continue
            others.append(succ)
        return ([best[1]] if best else []) + others

    def switch(self, sid: int) -> int | None:
        """The cooperative state reached from ``sid`` by playing the rest of the story well (added if new)."""
        if sid in self.switched:
            return self.switched[sid]
        if self.mode[sid] == COOPERATIVE:
            return sid
        if len(self.states) >= self.max_states:
            self.truncated = True
            return None
        lines: list[str] = []
        state = self.coop.play_out(clone(self.states[sid]), lines)
        key = self.w.key(state, self.losses[sid], COOPERATIVE)
        target = self.keys.get(key)
        if target is None:
            if len(self.states) >= self.max_states:
                self.truncated = True
                return None
            target = self.add(state, sid, lines, self.losses[sid], COOPERATIVE, key)
        self.link(sid, target)
        self.switched[sid] = target
        return target

    def _close(self, sid: int) -> None:
        """Explore everything reachable from ``sid`` (within the bounds)."""
        while not self.truncated and (todo := self.open_from(sid)):
            before = len(self.states), sum(self.expanded)
            self.explore(deque(todo))
            if (len(self.states), sum(self.expanded)) == before:
                return  # what is left open is beyond the depth bound

    def cooperative_first(self, goal: Callable[[GameState], bool]) -> int | None:
        """The shallowest state where ``goal`` holds; cooperative play from the start when the focus alone fails."""
        found = self.first(goal)
        if found is not None:
            return found
        c = self.switch(0)
        if c is None:
            return None
        self.explore(deque([c]), stop=lambda: any(goal(self.states[i]) for i in range(c, len(self.states))))
        return self.first(goal)

    def locks(self, targets: list[str], needs: dict[str, frozenset[str]]) -> dict[str, int]:
        """The shallowest adversary state where each of ``targets`` is locked (for those that can be locked).

        A candidate is an adversary state from which the adversary's own
        moves complete the quest nowhere; the cooperative play from it is then
        explored, and the quest is locked there when that fails too and
        nothing unexplored is in reach. After a loss, only quests that need
        the lost item (``needs``) are candidates.
        """
        can = {q: self.reach(lambda s, q=q: completed(s, q)) for q in targets}  # type: ignore[misc]
        found: dict[str, int] = {}
        order = sorted(
            (i for i in range(len(self.states)) if self.mode[i] == ADVERSARY), key=lambda i: (self.depth[i], i)
        )
        for sid in order:
            state, lost = self.states[sid], self.lost[sid]
            suspects = [
                q
                for q in targets
                if q not in found
                and not can[q][sid]
                and not state.ending
                and not completed(state, q)
                and (lost is None or lost in needs[q])
            ]
            if not suspects:
                continue
            start = len(self.states)
            c = self.switch(sid)
            if c is None:
                continue
            self._close(c)
            for q in targets:
                self.grow(can[q], start, c, lambda s, q=q: completed(s, q))  # type: ignore[misc]
            if self.closure_open(sid):
                continue
            for q in suspects:
                if not can[q][sid]:
                    found[q] = sid
            if len(found) == len(targets):
                break
        return found
