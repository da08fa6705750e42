"""The content checker: explores what the rules allow from the start and reports soft-locks.

:func:`check_pack` plays a story through the real rules
(:meth:`game.world.rules.Rules.resolve_turn`, the door every played turn goes
through), from :func:`game.world.state.new_game`, breadth first: each move is
applied to a copy of a state, as the effects a narrator would propose for a
line a player types (``go east``, ``take X``, ``talk to Y``, ``use X``, ``give
X to Y``, ``attack Z``, a story choice), and the action lists it reports are
those lines.

**States** are merged under a canonical key that keeps only what can change
what happens later: where the player is (as the set of places the open exits
reach from there), quests and their done steps, the flags a condition or
objective reads (and every ``defeated:``/``check_failed:``), stats, level,
exp, max HP, talents, the trust of people a condition measures, which items
were taken, the ending. Dropped: the clock and turn, gold (no condition reads
it), HP (every fight is played from full HP: the player can rest or heal
first), achievements. Items are told apart by what they can do: story items
(named by a condition or objective, raising stats, liked by a person whose
trust matters, or breaking an enemy's heavy blow) one by one, weapons and
armour by the best bonus carried, everything else (healing, treasure:
*tokens*) not at all (tokens are only ever gifts for trust).

**Free moves** are made at once after every move: walking into a place not
visited yet, taking what lies there (not items an ending, talent or trigger
names), greeting someone for the first time when that starts no quest. None
can close a door; but one that would complete a quest is held back for the
adversary (below) and left as a move of its own, since the reward makes the
player stronger, which can be just what keeps a lock from happening. Walking
between places already visited changes nothing the rules keep, so a state is
moved there directly and the walk is listed.

**Fights** are played by the rules round by round, from full HP, under
``fight_seeds`` dice (a player who waits a turn gets other dice) and two
tactics (attack; defend, or use an item the enemy is weak to, when it
announces a heavy blow). Each distinct outcome - won or lost, which story
items dropped - is a branch (tokens dropped are taken at their luckiest); a
fight that can be won is not explored lost (losing only sends the player to
the start). Outcomes depend only on the fighter's numbers and are cached.

**Searches.** Exploring every interleaving of a story's independent parts is
far too much (Cyber: over 40,000 states ten decisions in), so each search has
a *focus*: the main search plays the main quests, the quests and items the
endings, choices and exit locks need, and decides the endings; each side
quest the main search does not cover gets a search of its own (the main
quests and that quest). The focus is played move by move; the rest of the
story is left alone by the *adversary* (mode A: the player stays as weak as
the focus allows) and played as well as it can be in *cooperative* mode (C:
side quests started when no check of theirs would fail on an event already
past, each step made when the rules accept it, stat items used, optional
fights fought, tokens given where trust opens something). From each
adversary state a switch leads to cooperative play; endings the adversary's
moves do not reach are searched cooperatively from the start.

Two reductions keep the focus small: of the moves that the rules accept as a
quest step right away, one (main quests first) stands for all - they commute
and only move the story on - while every other move (a fight that completes
nothing yet, a quest started, a stat item used, an item lost, a choice, a
fight with several outcomes) is explored from every state, so the adversary
can make it at any moment, as weak as it then is; and an item is lost (given
away, spent for nothing) only right after it came, at most ``max_losses``
times a path (after a loss only cooperative play is tried), since a loss is
never less harmful earlier. Stat items are used only when they can make a
check or condition pass that fails now; trust gifts only when they would open
something (a choice counts as made at the end).

**Results**, by reverse reachability on the explored graph: each ending
reached, with its shortest action list in decisions; each quest that can be
locked - an adversary state where it is not completed and neither the
adversary's moves nor cooperative play from there complete it, with nothing
unexplored in reach - with the shortest locking sequence; quests no play
completes; items a use spends for nothing. The bounds (``max_states`` per
search, ``max_depth`` decisions) are reported when reached, and nothing is
claimed about a state from which an unexplored one can be reached. Static
checks complete the report: references to nothing (the loader's cross-file
checks) and things the texts mention that do not exist (:func:`mentions`).

What this does not see, by design: locks that need more than one loss, or an
adversary that skips steps the rules would accept (it makes them in a fixed
order), or losing a fight on purpose; a narrator's discretionary grants
(``exp_delta``, ``affinity``: the scripted narrator never proposes them).
"""

from __future__ import annotations

import copy
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any, cast

from pydantic import BaseModel

from game.world.check_bounds import DEFAULT_FIGHT_SEEDS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LOSSES, DEFAULT_MAX_STATES
from game.world.conditions import (
    armor_bonus,
    enemies_at,
    holds,
    items_at,
    npcs_at,
    objective_check_failures,
    objective_event_happened,
    weapon_bonus,
)
from game.world.content import Condition, ContentPack, Item, Objective
from game.world.describe import the
from game.world.effects import Effects, GiveItem
from game.world.loader import check_references
from game.world.rules import Rules, combat
from game.world.state import GameState, new_game

MAX_FIGHT_TURNS = 60
"""A fight still going after this many turns is given up (counted as not won)."""

Key = tuple[Hashable, ...]


# ----------------------------------------------------------------- findings
@dataclass
class EndingResult:
    id: str
    title: str
    reachable: bool
    actions: list[str] = field(default_factory=list)
    """The shortest action list that reaches it (when reachable)."""


@dataclass
class QuestLock:
    quest: str
    title: str
    actions: list[str]
    """The shortest action list after which the quest can never be completed."""
    why: str = ""


@dataclass
class WastedItem:
    item: str
    name: str
    node: str
    actions: list[str]
    """The shortest action list ending with the use that spends the item for nothing."""


@dataclass
class Mention:
    source: str
    """Where the text is ("story.json: intro", "npcs.json: [hal].topics.pendant")."""
    kind: str
    """"item" or "person"."""
    phrase: str
    context: str


@dataclass
class CheckReport:
    story: str
    title: str
    states: int = 0
    edges: int = 0
    max_depth_reached: int = 0
    complete: bool = True
    """False when the bound stopped the search before every reachable state was explored."""
    seconds: float = 0.0
    bound: dict[str, int] = field(default_factory=dict)
    endings: list[EndingResult] = field(default_factory=list)
    locks: list[QuestLock] = field(default_factory=list)
    never_completable: list[str] = field(default_factory=list)
    """Quests no explored path completes (proved only when the search is complete)."""
    wasted: list[WastedItem] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    """Each search: its focus and how many states it explored."""

    @property
    def unreachable_endings(self) -> list[EndingResult]:
        return [e for e in self.endings if not e.reachable]

    @property
    def defects(self) -> int:
        """How many problems the report holds (an unexplored bound is not one)."""
        return (
            len(self.unreachable_endings)
            + len(self.locks)
            + len(self.never_completable)
            + len(self.wasted)
            + len(self.references)
            + len(self.mentions)
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["defects"] = self.defects
        return out

    def text(self) -> str:
        """The report as a person reads it."""
        head = f"{self.title} ({self.story}): "
        lines = [
            head + (f"{self.defects} defect(s)" if self.defects else "no defects found"),
            f"  explored {self.states} states, {self.edges} moves, {self.max_depth_reached} decisions deep, "
            f"in {self.seconds:.1f} s"
            + ("" if self.complete else f" - BOUND REACHED ({_bound_words(self.bound)}): results are partial"),
        ]
        if self.searches:
            lines.append(f"  searches: {'; '.join(self.searches)}")
        if self.references:
            lines.append("References to nothing:")
            lines += [f"  - {r}" for r in self.references]
        if self.endings:
            lines.append("Endings:")
        for ending in self.endings:
            if ending.reachable:
                lines.append(f"  + {ending.title} ({ending.id}): reachable in {_count(ending.actions)} actions")
                lines += [f"      {a}" for a in ending.actions]
            else:
                lines.append(f"  - {ending.title} ({ending.id}): NOT REACHED")
        if self.never_completable:
            lines.append("Quests no path completes:")
            lines += [f"  - {q}" for q in self.never_completable]
        if self.locks:
            lines.append("Quests that can become impossible (soft-locks):")
        for lock in self.locks:
            lines.append(f"  - {lock.title} ({lock.quest}) is locked after {_count(lock.actions)} actions{lock.why}:")
            lines += [f"      {a}" for a in lock.actions]
        if self.wasted:
            lines.append("Items that can be used up for no effect:")
        for waste in self.wasted:
            lines.append(f"  - {waste.name} ({waste.item}) at {waste.node}, after:")
            lines += [f"      {a}" for a in waste.actions]
        if self.mentions:
            lines.append("Things the texts mention that do not exist:")
            lines += [f"  - {m.kind} '{m.phrase}' in {m.source}: \"{m.context}\"" for m in self.mentions]
        lines += [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)


def _count(actions: list[str]) -> int:
    """Actions in a list, not counting its comment lines."""
    return sum(1 for a in actions if not a.startswith("#"))


def _bound_words(bound: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in bound.items() if v)


# --------------------------------------------------------------- relevance
def _relevant_conditions(pack: ContentPack) -> Iterator[Condition]:
    """Conditions that change what can happen (not moods, variants or achievements: those only change words)."""
    for node in pack.nodes.values():
        for lock in node.locked_exits.values():
            yield lock.condition
    for choice in pack.story.choices:
        yield choice.condition
    for ending in pack.endings:
        yield ending.condition
    for talent in pack.talents:
        yield talent.condition
    for quest in pack.all_quests():
        if quest.trigger:
            yield quest.trigger.condition


class _Relevance:
    """What of a state can matter for what happens later (see the module docstring)."""

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack
        conditions = list(_relevant_conditions(pack))
        objectives = [o for q in pack.all_quests() for o in q.objectives]
        flags: set[str] = set()
        for cond in conditions:
            flags.update(cond.flags, cond.not_flags)
        flags.update(o.event_flag() for o in objectives)
        # the rules read "obtained:" for obtain steps, and an objective without at_node reads "used:<item>"
        flags.update(f"obtained:{o.target}" for o in objectives if o.kind == "obtain")
        trust: dict[str, int] = {}
        self.trust_conditions: dict[str, list[Condition]] = {}
        for cond in conditions:
            for npc, need in cond.min_affinity.items():
                trust[npc] = max(trust.get(npc, -100), need)
                self.trust_conditions.setdefault(npc, []).append(cond)
        for flag in flags:
            kind, _, rest = flag.partition(":")
            if kind == "affinity" and rest.partition(":")[0] in pack.npcs:
                npc = rest.partition(":")[0]
                label = rest.partition(":")[2]
                at = [t.at for t in pack.npcs[npc].thresholds if t.label == label]
                trust[npc] = max(trust.get(npc, -100), *at, -100)
        self.trust_cap: dict[str, int | None] = {}
        for npc, need in trust.items():
            # nothing the search does lowers trust (disliked gifts are never made) unless a reward does
            lowered = any(d < 0 for q in pack.all_quests() for n, d in q.reward.affinity.items() if n == npc)
            self.trust_cap[npc] = None if lowered else need
        self.trust_need = trust
        self.trust_npcs = sorted(trust)
        flags.update(f"talked:{npc}" for npc in self.trust_npcs)  # the first talk raises trust
        self.flags = frozenset(flags)
        named = {i for cond in conditions for i in cond.has_items}
        self.named_items = frozenset(named)
        targets = {o.target for o in objectives if o.kind in ("obtain", "use", "give")}
        weak = {w.item for e in pack.enemies.values() for w in getattr(e, "weaknesses", ())}
        # an item a person whose trust matters likes is a gift worth making; one they dislike is never given on purpose
        liked = {i for npc in self.trust_npcs if npc in pack.npcs for i in pack.npcs[npc].likes}
        self.story_items = frozenset(
            i
            for i, item in pack.items.items()
            if i in named or i in targets or i in weak or i in liked or _raises_stats(item)
        )
        self.gear = frozenset(
            i
            for i, item in pack.items.items()
            if i not in self.story_items and (item.attack_bonus or item.defense_bonus)
        )
        self.tokens = frozenset(set(pack.items) - self.story_items - self.gear)
        automatic = [e.condition for e in pack.endings] + [t.condition for t in pack.talents]
        automatic += [q.trigger.condition for q in pack.all_quests() if q.trigger]
        not_eager = {i for cond in automatic for i in cond.has_items}
        not_eager |= {f.partition(":")[2] for cond in conditions for f in cond.not_flags if f.startswith("obtained:")}
        self.eager = frozenset(set(pack.items) - not_eager)

    def flag_matters(self, flag: str) -> bool:
        return flag in self.flags or flag.startswith(("defeated:", "check_failed:"))

    def key(self, state: GameState, losses: Hashable, place: Hashable) -> Key:
        """The canonical key: ``place`` stands for where the player is (the places reachable from there)."""
        pack = self.pack
        trust = []
        for npc in self.trust_npcs:
            value = state.affinity.get(npc, 0)
            cap = self.trust_cap[npc]
            trust.append(min(value, cap) if cap is not None else value)
        story = tuple(sorted(i for i in state.inventory if i in self.story_items))
        combat_key = (state.combat.enemy_id, state.combat.enemy_hp) if state.combat else None
        return (
            place,
            state.ending,
            tuple((q, p.status, tuple(sorted(p.objectives_done))) for q, p in sorted(state.quests.items())),
            frozenset(f for f in state.flags if self.flag_matters(f)),
            (state.strength, state.agility, state.intelligence, state.level, state.exp, state.max_hp),
            tuple(sorted(state.talents)),
            tuple(trust),
            story,
            (weapon_bonus(state, pack), armor_bonus(state, pack)),
            frozenset(state.taken_items),
            tuple(sorted((n, tuple(sorted(i))) for n, i in state.dropped_items.items() if i)),
            combat_key,
            losses,
        )


def _raises_stats(item: Item) -> bool:
    return bool(item.use and (item.use.stats or item.use.max_hp))


# ------------------------------------------------------------------- focus
@dataclass(frozen=True)
class _Focus:
    """What one search plays move by move; everything else is left alone (adversary) or played well (cooperative)."""

    name: str
    targets: frozenset[str]
    """The quests whose completion and locks this search decides."""
    quests: frozenset[str]
    npcs: frozenset[str]
    enemies: frozenset[str]
    items: frozenset[str]
    visits: frozenset[str]
    losable: frozenset[str]
    endings: bool
    """Whether the story's choices are played (the main search, which decides the endings)."""
    """Items whose loss the adversary tries: those the targets themselves need (the main search: all its items)."""


def _focus(pack: ContentPack, rel: _Relevance, name: str, targets: set[str], *, endings: bool) -> _Focus:
    """The targets, the main quests, and everything they need: quests, people, enemies, items, places.

    Needs are followed to a fixed point: a condition naming a quest (an exit
    lock, an ending, a choice, a trigger) needs that quest; a quest needs its
    objectives' people, enemies, items and places, its trigger, and the quest
    whose reward is an item it needs; an enemy needs the items it is weak to;
    a stat a step checks or a condition asks for needs the items that raise it.
    """
    quests = set(targets) | set(pack.story.main_quest_order)
    npcs: set[str] = set()
    enemies: set[str] = set()
    items: set[str] = set()
    visits: set[str] = set()
    stats: set[str] = set()
    fixed: list[Condition] = [lock.condition for node in pack.nodes.values() for lock in node.locked_exits.values()]
    if endings:  # the main search decides the endings; a side quest's needs no choice or ending
        fixed += [e.condition for e in pack.endings] + [c.condition for c in pack.story.choices]
    while True:
        before = (len(quests), len(npcs), len(enemies), len(items), len(visits))
        conds = fixed + [q.trigger.condition for q in pack.all_quests() if q.id in quests and q.trigger]
        for cond in conds:
            quests.update(cond.quests_completed)
            items.update(cond.has_items)
            enemies.update(cond.defeated)
            stats.update(cond.min_stats)
            for flag in (*cond.flags, *cond.not_flags):
                kind, _, rest = flag.partition(":")
                head = rest.partition(":")[0].partition("@")[0]
                if kind == "talked":
                    npcs.add(head)
                elif kind == "visited":
                    visits.add(head)
                elif kind == "defeated":
                    enemies.add(head)
                elif kind in ("used", "gave", "obtained"):
                    items.add(head)
                elif kind == "quest_done":
                    quests.add(head)
        for quest in pack.all_quests():
            if quest.id not in quests:
                if quest.reward.item and quest.reward.item in items:
                    quests.add(quest.id)
                continue
            if quest.trigger:
                npcs.add(quest.trigger.npc)
            for o in quest.objectives:
                stats.update(o.requires)
                if o.kind == "talk":
                    npcs.add(o.target)
                elif o.kind == "visit":
                    visits.add(o.target)
                elif o.kind == "defeat":
                    enemies.add(o.target)
                elif o.kind in ("obtain", "use", "give"):
                    items.add(o.target)
                if o.to_npc:
                    npcs.add(o.to_npc)
        for enemy in enemies:
            if enemy in pack.enemies:
                items.update(w.item for w in getattr(pack.enemies[enemy], "weaknesses", ()))
        for item_id, item in pack.items.items():
            if item.use and any(s in stats for s in item.use.stats):
                items.add(item_id)
        if (len(quests), len(npcs), len(enemies), len(items), len(visits)) == before:
            break
    own: set[str] = set()
    own_stats: set[str] = set()
    for quest in pack.all_quests():
        if quest.id in targets:
            own.update(o.target for o in quest.objectives if o.kind in ("obtain", "use", "give"))
            own_stats.update(s for o in quest.objectives for s in o.requires)
            if quest.trigger:
                own.update(quest.trigger.condition.has_items)
                own_stats.update(quest.trigger.condition.min_stats)
    own.update(i for i, item in pack.items.items() if item.use and any(s in own_stats for s in item.use.stats))
    return _Focus(
        name,
        frozenset(targets),
        frozenset(quests),
        frozenset(npcs),
        frozenset(enemies),
        frozenset(items),
        frozenset(visits),
        frozenset(own),
        endings,
    )


# ---------------------------------------------------------------- the world
@dataclass
class _Succ:
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


class _World:
    """Playing moves through the rules: walking, the free moves, fights; shared by every search of a pack."""

    def __init__(self, pack: ContentPack, fight_seeds: int) -> None:
        self.pack = pack
        self.rules = Rules(pack)
        self.rel = _Relevance(pack)
        self.fight_seeds = fight_seeds
        self.fights: dict[Key, list[tuple[str, int]]] = {}
        self.wasted: dict[str, tuple[list[str], str]] = {}
        heavy = getattr(combat, "heavy_coming", None)
        self._heavy_coming: Callable[[ContentPack, GameState], bool] | None = heavy if callable(heavy) else None
        self.triggers = {q.id: q.trigger for q in pack.quests.side if q.trigger}
        self.use_nodes: dict[str, set[str]] = {}
        for flag in self.rel.flags:
            kind, _, rest = flag.partition(":")
            if kind == "used" and "@" in rest:
                item, _, node = rest.partition("@")
                self.use_nodes.setdefault(item, set()).add(node)
        self.stat_items = {i for i, item in pack.items.items() if _raises_stats(item)}
        self.needs: dict[str, list[int]] = {}
        for quest in pack.all_quests():
            for o in quest.objectives:
                for stat, need in o.requires.items():
                    self.needs.setdefault(stat, []).append(need)
        for cond in _relevant_conditions(pack):
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
        s = _clone(state)
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

    def settle(
        self, state: GameState, lines: list[str], greet: Callable[[GameState, str], bool], *, hold: bool = False
    ) -> GameState:
        """The free moves: walk into every place not visited yet, take what lies there, greet whom ``greet`` allows.

        None of these can close a door (module docstring). A move that would
        end the story is left out, and with ``hold`` (the adversary) so is one
        that would complete a quest: its reward makes the player stronger,
        which the adversary may not want yet; such moves are moves of their
        own (:meth:`_Search.successors`).
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
            s = _clone(state)
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
            if not done or s.ending or (hold and _quests_done(s) > _quests_done(state)):
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
        stats = ("strength", "agility", "intelligence", "level", "max_hp")
        return bool(
            new_flags
            or any(after.stat(s) != before.stat(s) for s in stats)
            or after.quests != before.quests
            or after.ending
            or any(after.affinity.get(n, 0) > before.affinity.get(n, 0) for n in rel.trust_npcs)
            or len(after.inventory) >= len(before.inventory)  # something came back for it
        )

    def use(self, state: GameState, item_id: str, losses: int, max_losses: int) -> Iterator[_Succ]:
        item = self.pack.items[item_id]
        if item.use is not None and item.use.only_at and state.node not in item.use.only_at:
            return  # the rules refuse it
        s = _clone(state)
        if not self.play(s, Effects(use_item=item_id)):
            return
        if s.inventory.count(item_id) >= state.inventory.count(item_id):  # not spent
            yield _Succ(s, [f"use {item.name}"])
            return
        gained = self.gained(state, s)
        wasted = item_id if not gained and not (item.use and item.use.heal) else None
        keep = gained or losses < max_losses
        if keep or wasted:
            yield _Succ(s, [f"use {item.name}"], loss=not gained, wasted=wasted, keep=keep, lost=item_id)

    def give(self, state: GameState, item_id: str, npc: str) -> Iterator[_Succ]:
        s = _clone(state)
        if self.play(s, Effects(give_item=GiveItem(item=item_id, to=npc))):
            yield _Succ(
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

    def gift_tokens(self, state: GameState, npc: str) -> Iterator[_Succ]:
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
        s = _clone(state)
        lines: list[str] = []
        for item in tokens:
            if s.affinity.get(npc, 0) >= cap:
                break
            if self.play(s, Effects(give_item=GiveItem(item=item, to=npc))):
                lines.append(f"give {self.item(item)} to {self.npc(npc)}")
        if lines:
            yield _Succ(s, lines)

    # ---- fights
    def fight(self, state: GameState, enemy_id: str) -> Iterator[_Succ]:
        """Every distinct outcome of fighting ``enemy_id`` now (see the module docstring)."""
        weak = self._weak(state, enemy_id)
        plans = self._plans(state, enemy_id, weak)
        for tactic, seed in plans:
            s, lines = self._play_fight(state, enemy_id, tactic, seed, weak)
            yield _Succ(s, lines, luck=len(plans) > 1)

    def best_fight(self, state: GameState, enemy_id: str) -> _Succ | None:
        """The fight won with the most loot, or None when no dice win it."""
        weak = self._weak(state, enemy_id)
        best: tuple[int, _Succ] | None = None
        for tactic, seed in self._plans(state, enemy_id, weak):
            s, lines = self._play_fight(state, enemy_id, tactic, seed, weak)
            if s.has_flag(f"defeated:{enemy_id}"):
                score = len(s.inventory)
                if best is None or score > best[0]:
                    best = (score, _Succ(s, lines))
        return best[1] if best else None

    def one_outcome(self, state: GameState, enemy_id: str) -> bool:
        """Whether every way this fight can go ends the same for the key (won, with the same story loot)."""
        return len(self._plans(state, enemy_id, self._weak(state, enemy_id))) == 1

    def _weak(self, state: GameState, enemy_id: str) -> list[str]:
        weaknesses = getattr(self.pack.enemies[enemy_id], "weaknesses", ())
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
        if self._heavy_coming is not None and getattr(self.pack.enemies[enemy_id], "heavy", None) is not None:
            tactics += ["defend", "item"] if weak else ["defend"]
        seen: dict[Hashable, tuple[int, tuple[str, int]]] = {}
        won: set[Hashable] = set()
        for seed in range(self.fight_seeds):
            for tactic in tactics:
                s, _ = self._play_fight(state, enemy_id, tactic, seed, weak)
                outcome = (
                    s.has_flag(f"defeated:{enemy_id}"),
                    s.combat is None,
                    self._what(_counts(s.inventory) - _counts(state.inventory)),
                    self._what(_counts(state.inventory) - _counts(s.inventory)),
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
        s = _clone(state)
        s.hp, s.seed, s.turn = s.max_hp, seed, 0
        name = self.pack.enemies[enemy_id].name
        self.play(s, Effects(start_combat=enemy_id, combat_action="attack"))
        actions = ["attack"]
        while s.combat is not None and s.turn < MAX_FIGHT_TURNS and not s.ending:
            if tactic != "attack" and self._heavy_coming is not None and self._heavy_coming(self.pack, s):
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
        loot = sorted((_counts(s.inventory) - _counts(state.inventory)).elements())
        extra = f"; loot: {', '.join(self.item(i) for i in loot)}" if result == "won" and loot else ""
        rounds = f"{len(actions)} round" + ("s" if len(actions) > 1 else "")
        note = f"# the fight with {the(name)}: {result} in {rounds}, from full HP{extra}"
        return s, [f"attack {name}", *actions[1:], note]


def _counts(items: Iterable[str]) -> Counter[str]:
    return Counter(items)


def _clone(state: GameState) -> GameState:
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


# --------------------------------------------------------------- the search
class _Search:
    """One graph of states for one focus: the adversary's moves, and cooperative play switched to on demand.

    Adversary states (mode A) play only the focus, move by move, with at most
    ``max_losses`` losses; the rest of the story is left alone, so the player
    stays as weak as the focus allows. A switch from an adversary state leads
    to a cooperative state (mode C): from there everything outside the focus
    is played as well as it can be (:meth:`coop_settle`) while the focus is
    still played move by move, without losses. A quest is locked in an
    adversary state when neither its own moves nor the cooperative play from
    it reach a completion.
    """

    def __init__(self, world: _World, focus: _Focus, *, max_states: int, max_depth: int, max_losses: int) -> None:
        self.w = world
        self.pack = world.pack
        self.focus = focus
        self.max_states = max_states
        self.max_depth = max_depth
        self.max_losses = max_losses
        self.states: list[GameState] = []
        self.keys: dict[Key, int] = {}
        self.parent: list[int] = []
        self.via: list[list[str]] = []
        self.depth: list[int] = []
        self.losses: list[int] = []
        self.mode: list[str] = []
        self.lost: list[str | None] = []
        self.succ: list[list[int]] = []
        self.preds: list[list[int]] = []
        self.expanded: list[bool] = []
        self.truncated = False
        self.switched: dict[int, int] = {}
        self.decisive: dict[int, int] = {}
        """state -> how many lines of the move that found it came before its free moves"""
        self.start_lines: list[str] = []

    # ---- graph
    def _add(
        self, state: GameState, parent: int, lines: list[str], losses: int, mode: str, key: Key, lost: str | None = None
    ) -> int:
        sid = len(self.states)
        self.lost.append(lost)
        self.keys[key] = sid
        self.states.append(state)
        self.parent.append(parent)
        self.via.append(lines)
        self.depth.append(self.depth[parent] + 1 if parent >= 0 else 0)
        self.losses.append(losses)
        self.mode.append(mode)
        self.succ.append([])
        self.preds.append([])
        self.expanded.append(False)
        return sid

    def _link(self, src: int, dst: int) -> None:
        if dst not in self.succ[src]:
            self.succ[src].append(dst)
            self.preds[dst].append(src)

    def path(self, sid: int, *, trim: bool = False) -> list[str]:
        """The action lines from the start to state ``sid`` (``trim``: without the free moves after the last move)."""
        steps: list[list[str]] = []
        if trim and sid > 0 and sid in self.decisive:
            steps.append(self.via[sid][: self.decisive[sid]])
            sid = self.parent[sid]
        while sid > 0:
            steps.append(self.via[sid])
            sid = self.parent[sid]
        return [*self.start_lines, *(line for step in reversed(steps) for line in step)]

    # ---- closure of a state, by mode
    def _greet_focus(self, state: GameState, npc: str) -> bool:
        return npc in self.focus.npcs and not self.w.starts_quest(state, npc, self.focus.quests)

    def _greet_any(self, state: GameState, npc: str) -> bool:
        return not self.w.starts_quest(state, npc)

    def settle(self, state: GameState, lines: list[str], mode: str) -> GameState:
        """The moves made at once after each move: the free moves (adversary), or all good play (cooperative)."""
        if mode == COOPERATIVE:
            return self.coop_settle(state, lines)
        return self.w.settle(state, lines, self._greet_focus, hold=True)

    def coop_settle(self, state: GameState, lines: list[str]) -> GameState:
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
            state = self.w.settle(state, lines, self._greet_any)
            if state.ending:
                return state
            move = self._coop_move(state)
            if move is None:
                return state
            state = move.state
            lines += move.lines
        return state

    def _coop_move(self, state: GameState) -> _Succ | None:
        w, pack, focus = self.w, self.pack, self.focus
        routes = w.routes(state)
        for item in dict.fromkeys(state.inventory):
            if item in w.stat_items and item not in focus.items and item not in w.rel.story_items - w.stat_items:
                for succ in w.use(state, item, 0, 0):
                    if not succ.state.ending and succ.keep and w.gained(state, succ.state):
                        return succ
        for quest_id, trigger in w.triggers.items():
            if quest_id in focus.quests or quest_id in state.quests or trigger.npc not in _npcs_in(pack, routes):
                continue
            if holds(trigger.condition, state) and self._safe_start(state, quest_id):
                node = pack.npcs[trigger.npc].location
                s = w.at(state, node)
                if w.play(s, Effects(talk_to=trigger.npc)) and quest_id in s.quests and not s.ending:
                    return _Succ(s, [*w.way(routes, node), f"talk to {w.npc(trigger.npc)}"])
        step = self._progress(state, routes, None, strict=False)
        if step is not None:
            return step
        for enemy in sorted(w.optional_enemies - focus.enemies):
            fight = self._coop_fight(state, routes, enemy)
            if fight is not None:
                return fight
        for npc in w.rel.trust_npcs:
            if npc in _npcs_in(pack, routes):
                node = pack.npcs[npc].location
                for succ in w.gift_tokens(w.at(state, node), npc):
                    return _Succ(succ.state, [*w.way(routes, node), *succ.lines])
        for enemy in sorted(w.spare_enemies - focus.enemies - w.optional_enemies):
            fight = self._coop_fight(state, routes, enemy)
            if fight is not None:
                return fight
        return None

    def _progress(
        self, state: GameState, routes: Routes, quests: frozenset[str] | None, *, strict: bool
    ) -> _Succ | None:
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
                succ = self._coop_step(state, routes, quest_id, objective, strict=strict)
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

    def _coop_step(
        self, state: GameState, routes: Routes, quest_id: str, objective: Objective, *, strict: bool = False
    ) -> _Succ | None:
        """The move that completes ``objective`` now, if there is one."""
        w, pack = self.w, self.pack
        if objective_check_failures(objective, state):
            return None
        tries: list[tuple[str, Effects]] = []
        if objective.kind == "talk" and objective.target in _npcs_in(pack, routes):
            tries.append((pack.npcs[objective.target].location, Effects(talk_to=objective.target)))
        elif objective.kind == "give" and objective.target in state.inventory and objective.to_npc:
            if objective.to_npc in _npcs_in(pack, routes):
                give = GiveItem(item=objective.target, to=objective.to_npc)
                tries.append((pack.npcs[objective.to_npc].location, Effects(give_item=give)))
        elif objective.kind == "use" and objective.target in state.inventory:
            node = objective.at_node or state.node
            if node in routes:
                tries.append((node, Effects(use_item=objective.target)))
        elif objective.kind == "defeat":
            return self._coop_fight(state, routes, objective.target, (quest_id, objective.id), strict=strict)
        elif objective.kind == "visit" and objective.target in routes:
            for previous, (_, _) in routes.items():
                for direction, target in pack.nodes[previous].exits.items():
                    if target == objective.target and previous != target:
                        lock = pack.nodes[previous].locked_exits.get(direction)
                        if lock is None or holds(lock.condition, state):
                            s = w.at(state, previous)
                            w.play(s, Effects(move_to=target))
                            if self._done(s, quest_id, objective.id):
                                return _Succ(s, [*w.way(routes, previous), f"go {direction}"])
            return None
        for node, effects in tries:
            s = w.at(state, node)
            if w.play(s, effects) and self._done(s, quest_id, objective.id):
                return _Succ(s, [*w.way(routes, node), *_describe(w, effects)])
        return None

    @staticmethod
    def _done(state: GameState, quest_id: str, objective_id: str) -> bool:
        progress = state.quests.get(quest_id)
        return not state.ending and progress is not None and objective_id in progress.objectives_done

    def _coop_fight(
        self, state: GameState, routes: Routes, enemy: str, step: tuple[str, str] | None = None, *, strict: bool = False
    ) -> _Succ | None:
        w = self.w
        for node in routes:
            if enemy in enemies_at(state, self.pack, node):
                here = w.at(state, node)
                if strict and not w.one_outcome(here, enemy):
                    return None
                succ = w.best_fight(here, enemy)
                if succ is None or succ.state.ending or (step and not self._done(succ.state, *step)):
                    return None
                return _Succ(succ.state, [*w.way(routes, node), *succ.lines])
        return None

    # ---- the focus, move by move
    def successors(self, sid: int) -> Iterator[_Succ]:
        w, pack, focus = self.w, self.pack, self.focus
        state, mode, losses = self.states[sid], self.mode[sid], self.losses[sid]
        budget = self.max_losses if mode == ADVERSARY else 0
        if state.combat is not None:  # only when a fight could not be finished: get out of it
            s = _clone(state)
            w.play(s, Effects(combat_action="flee"))
            yield _Succ(s, ["flee"])
            return
        routes = w.routes(state)
        loss_npc = next((n for node in routes for n in npcs_at(pack, node) if n not in w.rel.trust_npcs), None)
        # an item is lost (given away, used for nothing) only right after it came: a loss is never less harmful
        # earlier, and trying it at every later moment would explore the same mistake again and again
        before = _counts(self.states[self.parent[sid]].inventory) if sid > 0 else Counter[str]()
        fresh = set((_counts(state.inventory) - before).elements())
        for node_id in routes:
            if not state.has_flag(f"visited:{node_id}"):  # a walk the free moves held back
                previous, direction = routes[node_id]
                if previous and not state.has_flag(f"visited:{previous}"):
                    continue  # beyond another place not visited yet
                s = w.at(state, previous)
                if w.play(s, Effects(move_to=node_id)):
                    yield _Succ(s, [*w.way(routes, previous), f"go {direction}"])
                continue
            way = w.way(routes, node_id)
            here = w.at(state, node_id) if node_id != state.node else state
            for item in items_at(here, pack, node_id):
                s = _clone(here)
                if w.play(s, Effects(items_gained=[item])):
                    yield _Succ(s, [*way, f"take {w.item(item)}"])
            for npc in npcs_at(pack, node_id):
                if self._talk_matters(here, npc):
                    s = _clone(here)
                    if w.play(s, Effects(talk_to=npc)):
                        yield _Succ(s, [*way, f"talk to {w.npc(npc)}"])
            for item in dict.fromkeys(here.inventory):
                spare = budget if item in fresh else 0
                yield from self._item_moves(here, node_id, item, way, losses, spare, loss_npc, sid)
            for npc in npcs_at(pack, node_id):
                if npc in w.rel.trust_npcs:
                    for succ in w.gift_tokens(here, npc):
                        yield _Succ(succ.state, [*way, *succ.lines], gift=True)
            for enemy in enemies_at(here, pack, node_id):
                if enemy in focus.enemies:
                    for succ in w.fight(here, enemy):
                        yield _Succ(succ.state, [*way, *succ.lines], luck=succ.luck)
            for choice in pack.story.choices if focus.endings else ():
                at = choice.condition.at_node
                if (at == node_id or (at is None and node_id == state.node)) and holds(choice.condition, here):
                    s = _clone(here)
                    if w.play(s, Effects(choice=choice.id)):
                        yield _Succ(s, [*way, choice.keywords[0]])
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
    ) -> Iterator[_Succ]:
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
                    yield _Succ(succ.state, [*way, *succ.lines], succ.loss, succ.wasted, succ.keep, lost=succ.lost)
            elif self.focus.name == "main" and model.consumable and not (model.use and model.use.heal):
                for succ in w.use(here, item, losses, 0):  # only to learn whether it can be used up for nothing
                    if succ.wasted:
                        yield _Succ(succ.state, [*way, *succ.lines], succ.loss, succ.wasted, keep=False)
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
                        yield _Succ(succ.state, [*way, *succ.lines], succ.loss, lost=succ.lost)

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

    def _revisit(self, state: GameState, routes: Routes, node_id: str) -> Iterator[_Succ]:
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
                    yield _Succ(s, [*w.way(routes, previous), f"go {direction}"])
                return

    # ---- exploring
    def start(self) -> None:
        state = self.w.settle(new_game(self.pack), self.start_lines, self._greet_focus, hold=True)
        self._add(state, -1, [], 0, ADVERSARY, self.w.key(state, 0, ADVERSARY))

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
                settled = self.settle(succ.state, succ.lines, mode)
                losses = self.losses[sid] + succ.loss
                key = self.w.key(settled, losses, mode)
                if key == here:
                    continue
                target = self.keys.get(key)
                if target is None:
                    if len(self.states) >= self.max_states:
                        complete = False
                        self.truncated = True
                        continue
                    target = self._add(settled, sid, succ.lines, losses, mode, key, succ.lost if succ.loss else None)
                    self.decisive[target] = decisive
                    queue.append(target)
                self._link(sid, target)
            self.expanded[sid] = complete

    def _ample(self, state: GameState, moves: Iterable[_Succ]) -> list[_Succ]:
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
        best: tuple[int, _Succ] | None = None
        others: list[_Succ] = []
        done = _steps_done(state)
        for succ in moves:
            after = _steps_done(succ.state)
            step = succ.keep and not succ.loss and not succ.luck and after > done
            if (step or succ.gift) and not succ.state.ending:
                new = {q for q, p in succ.state.quests.items() if len(p.objectives_done) > _done_in(state, q)}
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
        state = self.coop_settle(_clone(self.states[sid]), lines)
        key = self.w.key(state, self.losses[sid], COOPERATIVE)
        target = self.keys.get(key)
        if target is None:
            if len(self.states) >= self.max_states:
                self.truncated = True
                return None
            target = self._add(state, sid, lines, self.losses[sid], COOPERATIVE, key)
        self._link(sid, target)
        self.switched[sid] = target
        return target

    def reach(self, goal: Callable[[GameState], bool]) -> list[bool]:
        """For every state, whether a state where ``goal`` holds can be reached from it."""
        seen = [goal(s) for s in self.states]
        queue = deque(i for i, hit in enumerate(seen) if hit)
        while queue:
            for p in self.preds[queue.popleft()]:
                if not seen[p]:
                    seen[p] = True
                    queue.append(p)
        return seen

    def _open_from(self, sid: int) -> list[int]:
        """The states not fully explored that can be reached from ``sid``."""
        seen = {sid}
        stack = [sid]
        out = []
        while stack:
            i = stack.pop()
            if not self.expanded[i]:
                out.append(i)
            for j in self.succ[i]:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        return out

    def closure_open(self, sid: int) -> bool:
        """Whether a state not fully explored can be reached from ``sid``."""
        return bool(self._open_from(sid))

    def _close(self, sid: int) -> None:
        """Explore everything reachable from ``sid`` (within the bounds)."""
        while not self.truncated and (todo := self._open_from(sid)):
            before = len(self.states), sum(self.expanded)
            self.explore(deque(todo))
            if (len(self.states), sum(self.expanded)) == before:
                return  # what is left open is beyond the depth bound

    def first(self, goal: Callable[[GameState], bool]) -> int | None:
        """The shallowest state where ``goal`` holds (fewest moves from the start)."""
        hits = [i for i, s in enumerate(self.states) if goal(s)]
        return min(hits, key=lambda i: (self.depth[i], i)) if hits else None

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
        can = {q: self.reach(lambda s, q=q: _completed(s, q)) for q in targets}  # type: ignore[misc]
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
                and not _completed(state, q)
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
                self._grow(can[q], start, c, lambda s, q=q: _completed(s, q))  # type: ignore[misc]
            if self.closure_open(sid):
                continue
            for q in suspects:
                if not can[q][sid]:
                    found[q] = sid
            if len(found) == len(targets):
                break
        return found

    def _grow(self, can: list[bool], start: int, switched: int, goal: Callable[[GameState], bool]) -> None:
        """Extend ``can`` (reach of ``goal``) to the states added since ``start`` and the switch to ``switched``."""
        n = len(can)
        can.extend(goal(s) for s in self.states[n:])
        seeds = [i for i in range(start, len(self.states)) if can[i] or any(can[j] for j in self.succ[i])]
        if can[switched]:
            seeds.append(switched)
        queue = deque(seeds)
        for i in seeds:
            can[i] = True
        while queue:
            for p in self.preds[queue.popleft()]:
                if not can[p]:
                    can[p] = True
                    queue.append(p)


def _quests_done(state: GameState) -> int:
    return sum(p.status == "completed" for p in state.quests.values())


def _steps_done(state: GameState) -> int:
    return sum(len(p.objectives_done) for p in state.quests.values())


def _done_in(state: GameState, quest_id: str) -> int:
    progress = state.quests.get(quest_id)
    return len(progress.objectives_done) if progress else 0


def _npcs_in(pack: ContentPack, routes: Routes) -> set[str]:
    return {n for node in routes for n in npcs_at(pack, node)}


def _describe(world: _World, effects: Effects) -> list[str]:
    if effects.talk_to:
        return [f"talk to {world.npc(effects.talk_to)}"]
    if effects.give_item:
        return [f"give {world.item(effects.give_item.item)} to {world.npc(effects.give_item.to)}"]
    if effects.use_item:
        return [f"use {world.item(effects.use_item)}"]
    return []


# ------------------------------------------------------------------ analysis
def check_pack(
    pack: ContentPack,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_losses: int = DEFAULT_MAX_LOSSES,
    fight_seeds: int = DEFAULT_FIGHT_SEEDS,
) -> CheckReport:
    """Check ``pack`` for soft-locks and dangling content (see the module docstring).

    ``max_states`` bounds each search (one for the main story, one per side
    quest it does not need), ``max_depth`` the decisions of a path.
    """
    started = time.perf_counter()
    report = CheckReport(story=pack.id, title=pack.story.title)
    report.bound = {"max_states": max_states, "max_depth": max_depth, "max_losses": max_losses}
    report.references = check_references(pack)
    report.mentions = mentions(pack)
    report.notes += _static_notes(pack)
    if report.references:
        report.notes.append("the state space was not explored: the pack names things that do not exist")
        report.seconds = time.perf_counter() - started
        return report
    world = _World(pack, fight_seeds)
    main = _focus(pack, world.rel, "main", set(pack.story.main_quest_order), endings=True)
    groups = [main] + [
        _focus(pack, world.rel, q.id, {q.id}, endings=False) for q in pack.quests.side if q.id not in main.quests
    ]
    groups[0] = main = replace(main, targets=main.quests, losable=main.items)
    locks: dict[str, QuestLock] = {}
    for focus in groups:
        search = _Search(world, focus, max_states=max_states, max_depth=max_depth, max_losses=max_losses)
        search.start()
        search.explore(deque([0]))
        if focus.name == "main":
            for ending in sorted(pack.endings, key=lambda e: -e.priority):
                eid = ending.id
                sid = search.cooperative_first(lambda s, eid=eid: s.ending == eid)  # type: ignore[misc]
                result = EndingResult(eid, ending.title, sid is not None)
                if sid is not None:
                    result.actions = search.path(sid)
                elif search.truncated:
                    report.notes.append(f"ending {eid!r} was not reached within the bound")
                report.endings.append(result)
        lockable: list[str] = []
        for quest_id in sorted(focus.targets):
            quest = pack.quest(quest_id)
            assert quest is not None
            qid = quest_id
            if search.cooperative_first(lambda s, qid=qid: _completed(s, qid)) is None:  # type: ignore[misc]
                if search.truncated:  # within a bound, "not completed" proves nothing
                    report.notes.append(f"quest {quest.id!r} was not completed within the bound")
                else:
                    report.never_completable.append(f"{quest.title} ({quest.id})")
            else:
                lockable.append(quest_id)
        needs = {q: _focus(pack, world.rel, q, {q}, endings=False).items for q in lockable}
        for quest_id, sid in search.locks(lockable, needs).items():
            quest = pack.quest(quest_id)
            assert quest is not None
            why = f" ({search.losses[sid]} avoidable loss)" if search.losses[sid] else ""
            # free moves cannot close a door: the quest is locked before them already
            locks[quest_id] = QuestLock(quest.id, quest.title, search.path(sid, trim=True), why)
        report.states += len(search.states)
        report.edges += sum(len(s) for s in search.succ)
        report.max_depth_reached = max(report.max_depth_reached, max(search.depth))
        report.complete &= not search.truncated
        report.searches.append(
            f"{focus.name}: {len(search.states)} states "
            f"({sum(m == COOPERATIVE for m in search.mode)} cooperative)"
            + (" - bound reached" if search.truncated else "")
        )
    order = {q.id: i for i, q in enumerate(pack.all_quests())}
    report.locks = sorted(locks.values(), key=lambda lock: order[lock.quest])
    for item_id, (lines, node) in sorted(world.wasted.items(), key=lambda kv: len(kv[1][0])):
        report.wasted.append(WastedItem(item_id, pack.items[item_id].name, node, lines))
    report.seconds = time.perf_counter() - started
    return report


def _completed(state: GameState, quest_id: str) -> bool:
    progress = state.quests.get(quest_id)
    return progress is not None and progress.status == "completed"


def _static_notes(pack: ContentPack) -> list[str]:
    out = []
    for item in pack.items.values():
        if not item.consumable and _raises_stats(item):
            out.append(f"item {item.id!r} raises stats and is not consumable: it can be used again and again")
    return out


# ------------------------------------------------------------------ mentions
# Nouns of things a player could carry. Scenery (door, tree, fire, lantern, bench) is left out on purpose.
# fmt: off
THING_NOUNS = frozenset([
    "letter", "note", "map", "key", "amulet", "ring", "necklace", "pendant", "locket", "brooch", "charm",
    "talisman", "medallion", "scroll", "tome", "book", "journal", "diary", "potion", "elixir", "tonic", "vial",
    "flask", "bottle", "draught", "salve", "ointment", "herb", "sword", "dagger", "knife", "blade", "axe", "bow",
    "longbow", "crossbow", "arrow", "spear", "staff", "wand", "shield", "helm", "helmet", "armour", "armor",
    "cloak", "mail", "gauntlet", "coin", "purse", "gem", "jewel", "crystal", "shard", "orb", "idol", "relic",
    "feather", "pelt", "fang", "claw", "scale", "crown", "circlet", "harp", "lute", "flute", "horn", "bell",
    "keycard", "card", "chip", "datachip", "datapad", "drive", "disk", "implant", "cell", "battery", "fuse",
    "relay", "glove", "jacket", "pistol", "gun", "rifle", "baton", "wire", "graft", "stim", "syringe", "injector",
    "core", "module", "sensor", "pearl", "ramen",
])
# fmt: on
# Verbs that put a thing in someone's hands, in what people say and what quests ask.
# fmt: off
_HANDLING = frozenset([
    "bring", "brought", "take", "took", "give", "gave", "hand", "handed", "carry", "carrying", "carried", "find",
    "found", "fetch", "deliver", "keep", "kept", "hold", "holding", "pocket", "pick",
])
# fmt: on
# A place's text names a thing the player could take when it is the subject of a verb of lying somewhere.
_LYING = re.compile(
    r"\b(?:a|an|the|some|one)\s+(?:[a-z-]+\s+){0,2}([a-z]+)\s+(?:lies|lie|lying|rests|sits|hangs|glints|waits|stands)\b",
    re.IGNORECASE,
)
PERSON_TITLES = (
    "Dr.",
    "Doctor",
    "Doc",
    "Captain",
    "Lord",
    "Lady",
    "Sir",
    "Queen",
    "King",
    "Prince",
    "Princess",
    "Master",
    "Elder",
    "Brother",
    "Sister",
    "Old",
)
_TITLED = re.compile(r"\b(" + "|".join(re.escape(t) for t in PERSON_TITLES) + r")\s+([A-Z][a-z]+)")
_DIRECTIVE = re.compile(
    r"\b(?:talk to|speak to|speak with|ask|find|meet|visit|bring (?:it|them|this) to|give (?:it|them) to)\s+"
    r"(?:the\s+)?([A-Z][\w.-]+(?:\s+[A-Z][\w-]+)*)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _texts(pack: ContentPack) -> Iterator[tuple[str, str]]:
    """(where, text) of every text a player reads that describes the world."""
    yield "story.json: intro", pack.story.intro
    for node in pack.nodes.values():
        yield f"map.json: [{node.id}].description", node.description
        for i, variant in enumerate(getattr(node, "variants", [])):
            yield f"map.json: [{node.id}].variants[{i}]", variant.text
    for npc in pack.npcs.values():
        yield f"npcs.json: [{npc.id}].greeting", npc.greeting
        for topic, said in npc.topics.items():
            yield f"npcs.json: [{npc.id}].topics.{topic}", said
        for i, mood in enumerate(npc.moods):
            if mood.greeting:
                yield f"npcs.json: [{npc.id}].moods[{i}].greeting", mood.greeting
            for topic, said in mood.topics.items():
                yield f"npcs.json: [{npc.id}].moods[{i}].topics.{topic}", said
    for quest in pack.all_quests():
        yield f"quests.json: [{quest.id}].description", quest.description
        for obj in quest.objectives:
            yield f"quests.json: [{quest.id}].objectives[{obj.id}]", obj.description


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def mentions(pack: ContentPack) -> list[Mention]:
    """Things the texts mention that the story does not have: a heuristic, kept strict to keep false alarms rare.

    - items: a noun of :data:`THING_NOUNS` (things a player could carry) that
      no item, person or enemy has among the words of its name, aliases or id,
      where the text puts it within the player's reach: a sentence of the
      intro that speaks of "you"; in a person's words or a quest, what follows
      a verb of handling (:data:`_HANDLING`: bring, give, carry, find, ...)
      to the end of its clause; in a place's text, the subject of a verb of lying somewhere ("a
      rusty key lies in the straw"); and not "a bottle of <an item>". Scenery
      ("a ring of white stones cradles the spring", "monitors scroll the
      feeds", "scrolls rest in alcoves") is not reported. Each noun once.
    - people: a titled name ("Captain Mira") or a capitalised name the player
      is told to find, meet, talk to or ask, when no word of it names a
      person, enemy, place, region, item or lore entry (the dead and the
      legendary are written into the knowledge base).
    """
    known: set[str] = set()
    for thing in [*pack.items.values(), *pack.npcs.values(), *pack.enemies.values()]:
        for name in thing.names:
            known.update(_singular(w) for w in _words(name))
    people = set(known)
    for text in [*(n.name for n in pack.nodes.values()), *(r.name for r in pack.story.regions), pack.story.title]:
        people.update(_words(text))
    for entry in pack.knowledge:
        people.update(_words(entry.title))
        for keyword in entry.keywords:
            people.update(_words(keyword))
    out: list[Mention] = []
    seen: set[tuple[str, str]] = set()
    for where, text in _texts(pack):
        for start, end in _thing_spans(where, text):
            word = text[start:end].lower()
            noun = _singular(word)
            if noun not in THING_NOUNS or noun in known or word in known or ("item", noun) in seen:
                continue
            after = _words(text[end:])[:4]
            if after[:1] == ["of"] and any(_singular(w) in known for w in after[1:]):
                continue  # "a bottle of amber tonic": the tonic is the item
            seen.add(("item", noun))
            out.append(Mention(where, "item", noun, _around(text, start, end)))
        for match in [*_TITLED.finditer(text), *_DIRECTIVE.finditer(text)]:
            phrase = match.group(0) if match.re is _TITLED else match.group(1)
            words = [w for w in _words(phrase) if w.capitalize() not in PERSON_TITLES and w != "dr"]
            if not words or any(w in people for w in words) or ("person", phrase) in seen:
                continue
            seen.add(("person", phrase))
            out.append(Mention(where, "person", phrase, _around(text, match.start(), match.end())))
    return out


def _thing_spans(where: str, text: str) -> Iterator[tuple[int, int]]:
    """Where ``text`` may name a thing within the player's reach (see :func:`mentions`)."""
    if where.startswith("map.json"):
        for match in _LYING.finditer(text):
            yield match.start(1), match.end(1)
        return
    if where == "story.json: intro":  # what the player sets out with
        offset = 0
        for sentence in _SENTENCE_END.split(text):
            offset = text.index(sentence, offset)
            if {"you", "your"} & set(_words(sentence)):
                for match in re.finditer(r"[A-Za-z]+", sentence):
                    yield offset + match.start(), offset + match.end()
            offset += len(sentence)
        return
    for verb in re.finditer(r"[A-Za-z]+", text):  # the things handled: the words after the verb, to the clause's end
        if verb.group(0).lower() in _HANDLING:
            clause = re.match(r"[^.,;:!?]*", text[verb.end() :])
            assert clause is not None
            for match in re.finditer(r"[A-Za-z]+", clause.group(0)):
                yield verb.end() + match.start(), verb.end() + match.end()


def _around(text: str, start: int, end: int, width: int = 40) -> str:
    left = max(0, start - width)
    right = min(len(text), end + width)
    return ("..." if left else "") + text[left:right].strip() + ("..." if right < len(text) else "")
