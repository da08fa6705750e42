"""Property tests: whatever a narrator proposes, the rules keep the state valid."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.world.conditions import holds
from game.world.effects import Effects
from game.world.loader import content_root, load_pack
from game.world.rules import Rules
from game.world.state import new_game

PACK = load_pack(content_root() / "fantasy_001")
NODES = [*sorted(PACK.nodes), "narnia"]
ITEMS = [*sorted(PACK.items), "excalibur"]
NPCS = [*sorted(PACK.npcs), "ghost"]
ENEMIES = [*sorted(PACK.enemies), "dragon"]
QUESTS = [q.id for q in PACK.all_quests()]

effects = st.builds(
    Effects,
    talk_to=st.none() | st.sampled_from(NPCS),
    move_to=st.none() | st.sampled_from(NODES),
    items_gained=st.lists(st.sampled_from(ITEMS), max_size=2),
    items_lost=st.lists(st.sampled_from(ITEMS), max_size=2),
    use_item=st.none() | st.sampled_from(ITEMS),
    hp_delta=st.integers(-200, 200),
    gold_delta=st.integers(-500, 500),
    exp_delta=st.integers(-50, 500),
    affinity=st.dictionaries(st.sampled_from(NPCS), st.integers(-60, 60), max_size=2),
    start_combat=st.none() | st.sampled_from(ENEMIES),
    combat_action=st.none() | st.sampled_from(["attack", "flee", "defend"]),
    rest=st.booleans(),
    choice=st.none() | st.sampled_from([c.id for c in PACK.story.choices] + ["surrender"]),
    trigger_side_quest=st.none() | st.sampled_from(QUESTS),
    ending=st.none() | st.sampled_from([e.id for e in PACK.endings]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(effects, min_size=1, max_size=25), st.integers(0, 1000))
def test_any_sequence_of_proposals_keeps_the_state_valid(proposals, seed):
    rules, state = Rules(PACK), new_game(PACK, seed=seed)
    for turn, proposal in enumerate(proposals):
        state.turn = turn
        gold_before = state.gold
        node_before = state.node
        out = rules.apply(state, proposal)
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
        if state.ending:
            ending = next(e for e in PACK.endings if e.id == state.ending)
            assert holds(ending.condition, state)
            break
