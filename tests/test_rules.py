"""Every effect kind, allowed and rejected, on the small test pack."""

from __future__ import annotations

from game.world.effects import Effects, GiveItem, QuestUpdate
from game.world.rules import Rules
from game.world.state import GameState, QuestProgress


def apply(rules: Rules, state: GameState, **effects: object):
    return rules.apply(state, Effects.model_validate(effects))


def rejected(outcome, effect: str) -> list[str]:
    return [r.reason for r in outcome.rejected if r.effect == effect]


def test_move_to_adjacent_node(rules, state):
    out = apply(rules, state, move_to="woods")
    assert state.node == "woods"
    assert state.has_flag("visited:woods")
    assert not out.rejected


def test_move_to_non_adjacent_or_unknown_node_is_rejected(rules, state):
    before = state.snapshot()
    out = apply(rules, state, move_to="bridge")
    assert "not reachable" in rejected(out, "move_to")[0]
    out = apply(rules, state, move_to="narnia")
    assert "no such place" in rejected(out, "move_to")[0]
    assert state == before


def test_take_item_present_here(rules, state):
    apply(rules, state, items_gained=["sword"])
    assert "sword" in state.inventory
    # a taken item is gone from the node
    out = apply(rules, state, items_gained=["sword"])
    assert rejected(out, "items_gained")
    assert state.inventory.count("sword") == 1


def test_take_item_not_here_or_unknown_is_rejected(rules, state):
    out = apply(rules, state, items_gained=["stone", "excalibur"])
    reasons = rejected(out, "items_gained")
    assert len(reasons) == 2
    assert "no Smooth Stone here" in reasons[0]
    assert "no such item" in reasons[1]
    assert state.inventory == ["bread"]


def test_drop_and_pick_up_again(rules, state):
    apply(rules, state, items_lost=["bread"])
    assert "bread" not in state.inventory
    assert state.dropped_items["camp"] == ["bread"]
    apply(rules, state, items_gained=["bread"])
    assert "bread" in state.inventory


def test_drop_item_not_carried_is_rejected(rules, state):
    out = apply(rules, state, items_lost=["sword"])
    assert rejected(out, "items_lost")


def test_use_consumable_heals_and_is_consumed(rules, state):
    state.hp = 20
    apply(rules, state, use_item="bread")
    assert state.hp == 35
    assert "bread" not in state.inventory
    assert state.has_flag("used:bread@camp")


def test_use_stat_item_raises_stat(rules, state):
    apply(rules, state, items_gained=["tome"])
    apply(rules, state, use_item="tome")
    assert state.intelligence == 13


def test_use_item_not_carried_is_rejected(rules, state):
    out = apply(rules, state, use_item="sword")
    assert rejected(out, "use_item")


def test_give_liked_item_raises_affinity(rules, state):
    state.intelligence = 12  # the stone is also a quest gift with an INT 12 check: met, so the sage takes it now
    state.inventory.append("stone")
    apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert state.affinity["sage"] == 25
    assert state.has_flag("gave:stone:sage")
    assert "stone" not in state.inventory


def test_give_to_absent_npc_or_missing_item_is_rejected(rules, state):
    out = apply(rules, state, give_item={"item": "bread", "to": "troll_npc"})
    assert "not here" in rejected(out, "give_item")[0]
    out = apply(rules, state, give_item=GiveItem(item="stone", to="sage").model_dump())
    assert "do not carry" in rejected(out, "give_item")[0]
    assert state.inventory == ["bread"]


def test_gold_from_thin_air_is_rejected_but_paying_is_allowed(rules, state):
    out = apply(rules, state, gold_delta=100)
    assert rejected(out, "gold_delta")
    assert state.gold == 10
    apply(rules, state, gold_delta=-4)
    assert state.gold == 6
    out = apply(rules, state, gold_delta=-50)
    assert "only 6 gold" in rejected(out, "gold_delta")[0]


def test_hp_delta_rules(rules, state):
    out = apply(rules, state, hp_delta=30)
    assert rejected(out, "hp_delta")
    apply(rules, state, hp_delta=-5)
    assert state.hp == 45
    out = apply(rules, state, hp_delta=-500)
    assert rejected(out, "hp_delta")
    assert state.hp == 45


def test_exp_delta_is_capped(rules, state):
    apply(rules, state, exp_delta=5)
    assert state.exp == 5
    out = apply(rules, state, exp_delta=1000)
    assert rejected(out, "exp_delta")
    assert state.exp == 5


def test_affinity_needs_presence_and_small_steps(rules, state):
    apply(rules, state, affinity={"sage": 5})
    assert state.affinity["sage"] == 15
    out = apply(rules, state, affinity={"sage": 50, "troll_npc": 5, "ghost": 1})
    assert len(rejected(out, "affinity")) == 3
    assert state.affinity["sage"] == 15


def test_affinity_threshold_crossing_is_announced(rules, state):
    state.intelligence = 12  # see test_give_liked_item_raises_affinity
    state.inventory.append("stone")
    out = apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert state.has_flag("affinity:sage:friendly")
    assert any("friendly" in m for m in out.messages)


def test_talk_requires_presence_and_starts_side_quest(rules, state):
    out = apply(rules, state, talk_to="troll_npc")
    assert rejected(out, "talk_to")
    apply(rules, state, talk_to="sage")
    assert state.has_flag("talked:sage")
    assert "riddle" not in state.quests  # trigger condition not met yet
    apply(rules, state, items_gained=["sword"])
    assert state.quests["find_sword"].status == "completed"
    apply(rules, state, talk_to="sage")
    assert state.quests["riddle"].status == "active"


def test_trigger_side_quest_is_validated(rules, state):
    out = apply(rules, state, trigger_side_quest="riddle")
    assert "quest 'A Blade' not completed" in rejected(out, "trigger_side_quest")[0]
    out = apply(rules, state, trigger_side_quest="nope")
    assert rejected(out, "trigger_side_quest")


def test_objective_attribute_check(rules, state):
    apply(rules, state, items_gained=["sword"])
    apply(rules, state, talk_to="sage")
    state.inventory.append("stone")
    out = apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert "bring_stone" not in state.quests["riddle"].objectives_done
    assert any("your mind is not yet sharp enough" in m for m in out.messages)  # in words, not "8 < 12"
    assert "stone" in state.inventory  # the gift is refused, not lost: the step can be tried again
    out = apply(rules, state, quest_updates=[QuestUpdate(quest="riddle", objective="bring_stone").model_dump()])
    assert "not done yet" in rejected(out, "quest_updates")[0]
    state.intelligence = 12
    out = apply(rules, state, quest_updates=["riddle:bring_stone"])  # a claim alone never completes a step
    assert rejected(out, "quest_updates") and state.quests["riddle"].status == "active"
    apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert state.quests["riddle"].status == "completed"
    assert state.intelligence == 14  # quest reward


def test_quest_update_for_undone_objective_is_rejected(rules, state):
    out = apply(rules, state, quest_updates=["find_sword:take_sword"])
    assert "not done yet" in rejected(out, "quest_updates")[0]
    out = apply(rules, state, quest_updates=["troll_bridge:reach"])
    assert "not active" in rejected(out, "quest_updates")[0]


def test_main_chain_advances_with_rewards(rules, state):
    apply(rules, state, items_gained=["sword"])
    assert state.quests["find_sword"].status == "completed"
    assert state.quests["troll_bridge"].status == "active"
    assert state.exp == 20 and state.gold == 15


def test_combat_start_attack_victory_and_loot(rules, state):
    apply(rules, state, items_gained=["sword"])
    apply(rules, state, move_to="woods")
    apply(rules, state, start_combat="wolf", combat_action="attack")
    # 4 + 10//2 + 5 + (0..2) >= 14 > 12 hp: one blow
    assert state.combat is None
    assert state.has_flag("defeated:wolf")
    assert "fang" in state.inventory  # chance 1.0
    out = apply(rules, state, start_combat="wolf")
    assert rejected(out, "start_combat")


def test_combat_rules_reject_bad_actions(rules, state):
    out = apply(rules, state, start_combat="troll")
    assert "no Bridge Troll here" in rejected(out, "start_combat")[0]
    out = apply(rules, state, combat_action="attack")
    assert rejected(out, "combat_action")
    apply(rules, state, move_to="woods")
    apply(rules, state, start_combat="wolf")
    out = apply(rules, state, move_to="camp")
    assert "flee first" in rejected(out, "move_to")[0]


def test_fleeing_bosses_is_impossible(rules, state):
    state.node = "bridge"
    apply(rules, state, start_combat="troll")
    out = apply(rules, state, combat_action="flee")
    assert "no escaping" in rejected(out, "combat_action")[0]
    assert state.combat is not None


def test_knockout_returns_player_to_start(rules, state):
    state.node = "bridge"
    state.hp = 1
    state.gold = 50
    apply(rules, state, start_combat="troll")
    for turn in range(5):
        state.turn = turn
        apply(rules, state, combat_action="attack")
        if state.has_flag("knocked_out"):
            break
    assert state.has_flag("knocked_out")
    assert state.node == "camp" and state.combat is None
    assert state.hp == 25 and state.gold == 45


def test_combat_is_deterministic_for_a_seed(mini_pack):
    from game.world.state import new_game

    def fight(seed: int) -> list[str]:
        rules, state = Rules(mini_pack), new_game(mini_pack, seed=seed)
        state.node = "bridge"
        apply(rules, state, start_combat="troll")
        log = []
        for turn in range(4):
            state.turn = turn
            log += apply(rules, state, combat_action="attack").messages
        return log

    assert fight(7) == fight(7)


def test_rest_only_when_safe(rules, state):
    state.hp = 10
    apply(rules, state, rest=True)
    assert state.hp == 25
    state.node = "woods"
    out = apply(rules, state, rest=True)
    assert "too dangerous" in rejected(out, "rest")[0]


def test_choice_requires_its_condition(rules, state):
    out = apply(rules, state, choice="negotiate")
    assert rejected(out, "choice")[0] == "Not yet: this is not the place for it"  # never the ending's name or flags
    out = apply(rules, state, choice="surrender")
    assert rejected(out, "choice")


def test_ending_conditions_are_checked(rules, state):
    out = apply(rules, state, ending="victory")
    assert "Bridge Troll not defeated" in rejected(out, "ending")[0]
    assert state.ending is None
    state.node = "bridge"
    out = apply(rules, state, choice="negotiate")  # intelligence 8 < 14: no peace yet
    assert state.ending is None
    assert "It does not succeed yet: your mind is not yet sharp enough." in out.messages  # no numbers or flags
    # a failed choice is taken back: meeting the condition later does not end the game by itself
    assert not state.has_flag("choice:negotiate")
    state.intelligence = 14
    apply(rules, state, exp_delta=1)
    assert state.ending is None
    apply(rules, state, choice="negotiate")
    assert state.ending == "peace"
    out = apply(rules, state, move_to="woods")
    assert state.node == "bridge" and rejected(out, "*")


def test_locked_exit_opens_when_its_condition_holds(mini_pack):
    from game.world.content import Condition, ExitLock

    woods = mini_pack.nodes["woods"]
    locked = woods.model_copy(
        update={
            "locked_exits": {
                "east": ExitLock(condition=Condition(has_items=["sword"]), message="A troll bars the way.")
            }
        }
    )
    pack = mini_pack.model_copy(update={"nodes": {**mini_pack.nodes, "woods": locked}})
    rules = Rules(pack)
    from game.world.state import new_game

    state = new_game(pack)
    apply(rules, state, move_to="woods")
    out = apply(rules, state, move_to="bridge")
    assert rejected(out, "move_to") == ["A troll bars the way."]
    state.inventory.append("sword")
    apply(rules, state, move_to="bridge")
    assert state.node == "bridge"


def test_ordered_quest_needs_each_event_after_the_previous_step(mini_pack):
    from game.world.content import Quest
    from game.world.state import new_game

    ordered = Quest.model_validate(
        {
            "id": "find_sword",
            "title": "Scout, then report",
            "description": "Scout the woods, then tell the sage.",
            "ordered": True,
            "objectives": [
                {"id": "scout", "description": "Scout the woods", "kind": "visit", "target": "woods"},
                {"id": "report", "description": "Report to the sage", "kind": "talk", "target": "sage"},
            ],
        }
    )
    pack = mini_pack.model_copy(
        update={"quests": mini_pack.quests.model_copy(update={"main": [ordered, mini_pack.quests.main[1]]})}
    )
    rules, state = Rules(pack), new_game(pack)
    apply(rules, state, talk_to="sage")  # talking first does not count as the report
    apply(rules, state, move_to="woods")
    apply(rules, state, move_to="camp")
    assert state.quests["find_sword"].objectives_done == ["scout"]
    apply(rules, state, talk_to="sage")
    assert state.quests["find_sword"].status == "completed"


def test_item_usable_only_at_its_place_is_not_wasted(mini_pack):
    from game.world.content import UseEffect
    from game.world.state import new_game

    stone = mini_pack.items["stone"].model_copy(update={"consumable": True, "use": UseEffect(only_at=["bridge"])})
    pack = mini_pack.model_copy(update={"items": {**mini_pack.items, "stone": stone}})
    rules, state = Rules(pack), new_game(pack)
    state.inventory.append("stone")
    out = apply(rules, state, use_item="stone")
    assert "of no use here (only at Troll Bridge)" in rejected(out, "use_item")[0]
    assert "stone" in state.inventory
    state.node = "bridge"
    apply(rules, state, use_item="stone")
    assert "stone" not in state.inventory and state.has_flag("used:stone@bridge")


def test_a_failed_attribute_check_is_retried_by_acting_again(rules, state):
    apply(rules, state, items_gained=["sword"])
    apply(rules, state, talk_to="sage")  # starts the riddle (needs intelligence 12)
    state.inventory += ["stone", "stone"]
    out = apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert any("your mind is not yet sharp enough" in m for m in out.messages)
    state.intelligence = 12
    out = apply(rules, state, exp_delta=1)  # getting cleverer elsewhere does not finish it by itself
    assert "bring_stone" not in state.quests["riddle"].objectives_done
    out = apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert state.quests["riddle"].status == "completed"


def test_failed_check_is_reported_each_attempt(rules, state):
    apply(rules, state, items_gained=["sword"])
    apply(rules, state, talk_to="sage")
    state.inventory += ["stone", "stone"]
    for _ in range(2):
        out = apply(rules, state, give_item={"item": "stone", "to": "sage"})
        assert any(m.startswith("Not yet: Give the sage a smooth stone: your mind") for m in out.messages)
    out = apply(rules, state, rest=True)
    assert not any(m.startswith("Not yet") for m in out.messages)


def test_using_an_item_in_a_fight_gives_the_enemy_its_turn(rules, state):
    state.node = "bridge"
    apply(rules, state, start_combat="troll")
    state.hp = 20
    out = apply(rules, state, use_item="bread", combat_action="defend")
    assert any(a.effect == "combat_action" and a.detail == "defend" for a in out.applied)
    assert any("Bridge Troll hits you" in m or "dodge" in m for m in out.messages)
    assert state.combat is not None and state.combat.enemy_hp == 40  # no blow struck


def test_a_consumable_is_not_used_up_by_a_failing_quest_check(mini_pack):
    from game.world.content import Quest, UseEffect
    from game.world.state import QuestProgress, new_game

    tome = mini_pack.items["tome"].model_copy(update={"use": UseEffect(only_at=["tower"])})
    quest = Quest.model_validate(
        {
            "id": "find_sword",
            "title": "Read at the tower",
            "description": "Read the tome at the far tower.",
            "objectives": [
                {"id": "read", "description": "Read the tome at the tower", "kind": "use", "target": "tome",
                 "at_node": "tower", "requires": {"intelligence": 12}}
            ],
        }
    )  # fmt: skip
    pack = mini_pack.model_copy(
        update={
            "items": {**mini_pack.items, "tome": tome},
            "quests": mini_pack.quests.model_copy(update={"main": [quest, mini_pack.quests.main[1]]}),
        }
    )
    rules, state = Rules(pack), new_game(pack)
    state.quests = {"find_sword": QuestProgress()}
    state.inventory.append("tome")
    state.node = "tower"
    out = apply(rules, state, use_item="tome")
    assert "not ready to use the Old Tome here: your mind is not yet sharp enough" in rejected(out, "use_item")[0]
    assert "tome" in state.inventory
    state.intelligence = 12
    apply(rules, state, use_item="tome")
    assert "tome" not in state.inventory and state.quests["find_sword"].status == "completed"


def test_a_narrator_claim_never_completes_an_objective_the_rules_would_not():
    """find_hal is ordered: Hal is freed after the serpent dies, and only with strength 16."""
    from game.world.loader import content_root, load_pack
    from game.world.state import new_game

    pack = load_pack(content_root() / "fantasy_001")
    rules, state = Rules(pack), new_game(pack)
    state.quests["find_hal"] = QuestProgress()
    state.node = pack.npcs["hal"].location
    state.strength = 30
    gold, exp = state.gold, state.exp
    out = apply(rules, state, talk_to="hal", quest_updates=["find_hal:free_hal"])  # the serpent still lives
    assert "first: Kill the Mire Serpent" in rejected(out, "quest_updates")[0]
    assert state.quests["find_hal"].objectives_done == [] and (state.gold, state.exp) == (gold, exp)
    state.add_flag("defeated:mire_serpent")  # the serpent dies, but not on a turn of talking to Hal
    out = apply(rules, state, quest_updates=["find_hal:slay_serpent", "find_hal:free_hal"])
    assert state.quests["find_hal"].objectives_done == ["slay_serpent"]  # the rules' own pass counts the defeat
    assert "not done yet" in rejected(out, "quest_updates")[0]  # talking to Hal must happen after it
    assert state.quests["find_hal"].status == "active" and "garricks_longbow" not in state.inventory
    apply(rules, state, talk_to="hal")
    assert state.quests["find_hal"].status == "completed" and "garricks_longbow" in state.inventory


def test_a_claim_cannot_skip_a_retry_after_a_failed_check():
    from game.world.loader import content_root, load_pack
    from game.world.state import new_game

    pack = load_pack(content_root() / "fantasy_001")
    rules, state = Rules(pack), new_game(pack)
    state.quests["find_hal"] = QuestProgress(objectives_done=["slay_serpent"])
    state.node = pack.npcs["hal"].location
    out = apply(rules, state, talk_to="hal")  # strength too low: the attempt fails
    assert any("not yet strong enough" in m for m in out.messages)
    state.strength = 30
    out = apply(rules, state, quest_updates=["find_hal:free_hal"])
    assert "not done yet: Talk to Hal" in rejected(out, "quest_updates")[0]  # talking again is the retry
    assert state.quests["find_hal"].status == "active"
    apply(rules, state, talk_to="hal")
    assert state.quests["find_hal"].status == "completed"


def test_a_quest_gift_whose_check_would_fail_is_kept_until_it_can_pass(rules, state):
    """Taken early with INT 8, the stone would skip the sage's INT 12 step for good (a soft-lock)."""
    state.inventory.append("stone")
    out = apply(rules, state, give_item={"item": "stone", "to": "sage"})
    assert rejected(out, "give_item") and "stone" in state.inventory


def test_a_turn_refused_before_it_changes_the_world_costs_no_time(rules, state):
    """Issue 35: a refusal (or a word in a fight) leaves the turn, the clock and the enemies where they were."""
    from game.language.reading import Reading
    from game.world.state import CombatState

    before = state.snapshot()
    out = rules.resolve_turn(state, Effects(move_to="bridge"), Reading.of("go to the bridge"))
    assert out.free and rejected(out, "move_to") and state == before
    out = rules.resolve_turn(state, Effects(), Reading.of("go down"))  # nothing came of an act: no time either
    assert out.free and state == before
    out = rules.resolve_turn(state, Effects(), Reading.of("look"))  # a look outside a fight: time passes
    assert not out.free and state.turn == 1 and state.clock_minutes > before.clock_minutes
    state.node, state.combat = "woods", CombatState(enemy_id="wolf", enemy_hp=5)
    fight = state.snapshot()
    out = rules.resolve_turn(state, Effects(), Reading.of("what is it afraid of?"))  # a question in a fight
    assert out.free and state == fight
    out = rules.resolve_turn(state, Effects(combat_action="attack"), Reading.of("attack"))
    assert not out.free and state.turn == fight.turn + 1
