"""What of a game state can change what happens later: the checker's canonical key (see :mod:`game.checker`)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from game.world.conditions import armor_bonus, weapon_bonus
from game.world.content import Condition, ContentPack, Item
from game.world.state import GameState

Key = tuple[Hashable, ...]


def relevant_conditions(pack: ContentPack) -> Iterator[Condition]:
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


class Relevance:
    """What of a state can matter for what happens later (see :mod:`game.checker`)."""

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack
        conditions = list(relevant_conditions(pack))
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
        weak = {w.item for e in pack.enemies.values() for w in e.weaknesses}
        # an item a person whose trust matters likes is a gift worth making; one they dislike is never given on purpose
        liked = {i for npc in self.trust_npcs if npc in pack.npcs for i in pack.npcs[npc].likes}
        self.story_items = frozenset(
            i
            for i, item in pack.items.items()
            if i in named or i in targets or i in weak or i in liked or raises_stats(item)
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


def raises_stats(item: Item) -> bool:
    return bool(item.use and (item.use.stats or item.use.max_hp))
