"""What one search of the checker plays move by move, and everything that needs (see :mod:`game.checker`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from game.world.content import Condition, ContentPack


@dataclass(frozen=True)
class Focus:
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
    """Items whose loss the adversary tries: those the targets themselves need (the main search: all its items)."""
    endings: bool
    """Whether the story's choices are played (the main search, which decides the endings)."""


@dataclass
class _Needs:
    """What a focus needs so far (grown to a fixed point by :func:`focus_of`)."""

    quests: set[str]
    npcs: set[str] = field(default_factory=set)
    enemies: set[str] = field(default_factory=set)
    items: set[str] = field(default_factory=set)
    visits: set[str] = field(default_factory=set)
    stats: set[str] = field(default_factory=set)

    def size(self) -> tuple[int, ...]:
        return len(self.quests), len(self.npcs), len(self.enemies), len(self.items), len(self.visits)


def focus_of(pack: ContentPack, name: str, targets: set[str], *, endings: bool) -> Focus:
    """The targets, the main quests, and everything they need: quests, people, enemies, items, places.

    Needs are followed to a fixed point: a condition naming a quest (an exit
    lock, an ending, a choice, a trigger) needs that quest; a quest needs its
    objectives' people, enemies, items and places, its trigger, and the quest
    whose reward is an item it needs; an enemy needs the items it is weak to;
    a stat a step checks or a condition asks for needs the items that raise it.
    """
    needs = _Needs(quests=set(targets) | set(pack.story.main_quest_order))
    fixed: list[Condition] = [lock.condition for node in pack.nodes.values() for lock in node.locked_exits.values()]
    if endings:  # the main search decides the endings; a side quest's needs no choice or ending
        fixed += [e.condition for e in pack.endings] + [c.condition for c in pack.story.choices]
    while True:
        before = needs.size()
        triggers = [q.trigger.condition for q in pack.all_quests() if q.id in needs.quests and q.trigger]
        for cond in fixed + triggers:
            _condition_needs(cond, needs)
        _quest_needs(pack, needs)
        for enemy in needs.enemies:
            if enemy in pack.enemies:
                needs.items.update(w.item for w in pack.enemies[enemy].weaknesses)
        for item_id, item in pack.items.items():
            if item.use and any(s in needs.stats for s in item.use.stats):
                needs.items.add(item_id)
        if needs.size() == before:
            break
    return Focus(
        name,
        frozenset(targets),
        frozenset(needs.quests),
        frozenset(needs.npcs),
        frozenset(needs.enemies),
        frozenset(needs.items),
        frozenset(needs.visits),
        _own_items(pack, targets),
        endings,
    )


def _condition_needs(cond: Condition, needs: _Needs) -> None:
    """What a condition names: quests, items, enemies, stats, and the people, places and things of its flags."""
    needs.quests.update(cond.quests_completed)
    needs.items.update(cond.has_items)
    needs.enemies.update(cond.defeated)
    needs.stats.update(cond.min_stats)
    for flag in (*cond.flags, *cond.not_flags):
        kind, _, rest = flag.partition(":")
        head = rest.partition(":")[0].partition("@")[0]
        if kind == "talked":
            needs.npcs.add(head)
        elif kind == "visited":
            needs.visits.add(head)
        elif kind == "defeated":
            needs.enemies.add(head)
        elif kind in ("used", "gave", "obtained"):
            needs.items.add(head)
        elif kind == "quest_done":
            needs.quests.add(head)


def _quest_needs(pack: ContentPack, needs: _Needs) -> None:
    """What the quests needed so far need; and a quest whose reward is an item needed becomes needed itself."""
    for quest in pack.all_quests():
        if quest.id not in needs.quests:
            if quest.reward.item and quest.reward.item in needs.items:
                needs.quests.add(quest.id)
            continue
        if quest.trigger:
            needs.npcs.add(quest.trigger.npc)
        for o in quest.objectives:
            needs.stats.update(o.requires)
            if o.kind == "talk":
                needs.npcs.add(o.target)
            elif o.kind == "visit":
                needs.visits.add(o.target)
            elif o.kind == "defeat":
                needs.enemies.add(o.target)
            elif o.kind in ("obtain", "use", "give"):
                needs.items.add(o.target)
            if o.to_npc:
                needs.npcs.add(o.to_npc)


def _own_items(pack: ContentPack, targets: set[str]) -> frozenset[str]:
    """The items the targets themselves need: their steps', their triggers', and those raising the stats they check."""
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
    return frozenset(own)
