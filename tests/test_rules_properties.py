"""Property tests: whatever a narrator proposes, the rules keep the state valid and decide every outcome."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.world.conditions import holds, objective_event_happened
from game.world.effects import Effects, GiveItem, QuestUpdate
from game.world.loader import content_root, load_pack
from game.world.rules import Rules
from game.world.state import QuestProgress, new_game

PACK = load_pack(content_root() / "fantasy_001")
NODES = [*sorted(PACK.nodes), "narnia"]
ITEMS = [*sorted(PACK.items), "excalibur"]
NPCS = [*sorted(PACK.npcs), "ghost"]
ENEMIES = [*sorted(PACK.enemies), "dragon"]
QUESTS = [q.id for q in PACK.all_quests()]
OBJECTIVES = [(q.id, o.id) for q in PACK.all_quests() for o in q.objectives] + [("find_hal", "nope"), ("nope", "x")]
EVENT_FLAGS = sorted({o.event_flag() for q in PACK.all_quests() for o in q.objectives})

effects = st.builds(
    Effects,
    talk_to=st.none() | st.sampled_from(NPCS),
    move_to=st.none() | st.sampled_from(NODES),
    items_gained=st.lists(st.sampled_from(ITEMS), max_size=2),
    items_lost=st.lists(st.sampled_from(ITEMS), max_size=2),
    use_item=st.none() | st.sampled_from(ITEMS),
    give_item=st.none() | st.builds(GiveItem, item=st.sampled_from(ITEMS), to=st.sampled_from(NPCS)),
    hp_delta=st.integers(-200, 200),
    gold_delta=st.integers(-500, 500),
    exp_delta=st.integers(-50, 500),
    affinity=st.dictionaries(st.sampled_from(NPCS), st.integers(-60, 60), max_size=2),
    start_combat=st.none() | st.sampled_from(ENEMIES),
    combat_action=st.none() | st.sampled_from(["attack", "flee", "defend"]),
    rest=st.booleans(),
    choice=st.none() | st.sampled_from([c.id for c in PACK.story.choices] + ["surrender"]),
    trigger_side_quest=st.none() | st.sampled_from(QUESTS),
    quest_updates=st.lists(
        st.sampled_from(OBJECTIVES).map(lambda p: QuestUpdate(quest=p[0], objective=p[1])), max_size=3
    ),
    ending=st.none() | st.sampled_from([e.id for e in PACK.endings]),
)
# where a game may stand when the proposals start: anywhere, some quests open, some events long past
starts = st.fixed_dictionaries(
    {
        "node": st.sampled_from(sorted(PACK.nodes)),
        "quests": st.lists(st.sampled_from(QUESTS), max_size=4, unique=True),
        "flags": st.lists(st.sampled_from(EVENT_FLAGS), max_size=6, unique=True),
        "inventory": st.lists(st.sampled_from(sorted(PACK.items)), max_size=4),
        "strength": st.integers(5, 30),
        "intelligence": st.integers(5, 30),
    }
)


def explained_items(applied, state_before_quests) -> Counter[str]:
    """Items this step's applied effects may have added: taken here, looted, or a quest's reward."""
    allowed: Counter[str] = Counter()
    for a in applied:
        if a.effect == "items_gained":
            allowed[a.detail] += 1
        elif a.effect == "defeated":
            allowed.update(loot.item for loot in PACK.enemies[a.detail].loot)
        elif a.effect == "quest_completed" and (reward := PACK.quest(a.detail).reward.item):
            allowed[reward] += 1
    return allowed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(starts, st.lists(effects, min_size=1, max_size=25), st.integers(0, 1000))
def test_any_sequence_of_proposals_keeps_the_state_valid(start, proposals, seed):
    rules, state = Rules(PACK), new_game(PACK, seed=seed)
    state.node = start["node"]
    state.strength, state.intelligence = start["strength"], start["intelligence"]
    state.inventory += start["inventory"]
    for quest in start["quests"]:
        state.quests.setdefault(quest, QuestProgress())
    for flag in start["flags"]:  # events that happened at some point before the quest steps may count
        state.add_flag(flag)
    completed: Counter[str] = Counter()
    for proposal in proposals:
        gold_before, node_before = state.gold, state.node
        inventory_before = Counter(state.inventory)
        done_before = {q: list(p.objectives_done) for q, p in state.quests.items()}
        out = rules.resolve_turn(state, proposal)
        assert state.node in PACK.nodes
        assert 0 < state.hp <= state.max_hp
        assert state.gold >= 0
        assert all(item in PACK.items for item in state.inventory)
        assert all(-100 <= a <= 100 for a in state.affinity.values())
        assert state.combat is None or state.combat.enemy_id in PACK.enemies
        gained = {a.effect for a in out.applied} & {"defeated", "quest_completed"}
        if state.gold > gold_before:  # gold only from loot and quest rewards
            assert gained, out.applied
        knocked_out = any(a.effect == "knocked_out" for a in out.applied)
        if state.node != node_before and not knocked_out:
            assert state.node in PACK.nodes[node_before].exits.values()
        # no item from nowhere
        new_items = Counter(state.inventory) - inventory_before
        assert not new_items - explained_items(out.applied, done_before), (new_items, out.applied)
        # no objective completes out of order, without its event, or by a claim alone
        for a in out.applied:
            if a.effect != "objective_done":
                continue
            quest_id, objective_id = a.detail.split(":")
            quest = PACK.quest(quest_id)
            index = [o.id for o in quest.objectives].index(objective_id)
            objective = quest.objectives[index]
            assert objective_event_happened(objective, state)
            assert not [stat for stat, need in objective.requires.items() if state.stat(stat) < need]
            if quest.ordered:
                assert all(o.id in state.quests[quest_id].objectives_done for o in quest.objectives[:index])
        for update in proposal.quest_updates:  # a claim is accepted only for what the rules completed
            progress = state.quests.get(update.quest)
            accepted = not any(
                r.effect == "quest_updates" and r.value.endswith(f":{update.objective}") for r in out.rejected
            )
            if accepted:
                assert progress is not None and update.objective in progress.objectives_done
        # no reward twice
        completed.update(a.detail for a in out.applied if a.effect == "quest_completed")
        assert all(n == 1 for n in completed.values()), completed
        if state.ending:
            ending = next(e for e in PACK.endings if e.id == state.ending)
            assert holds(ending.condition, state)
            break
