"""Fights with stakes: initiative, announced heavy attacks, defending, items in a fight, knock-outs, the seed."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from game.world.content import Aggression, ContentPack, Enemy, HeavyAttack, Weakness
from game.world.effects import Effects
from game.world.loader import content_root, load_pack
from game.world.rules import Outcome, Rules
from game.world.rules.combat import (
    AMBUSH_TURN,
    DEFEND_SHARE,
    FIRST_HEAVY_ROUND,
    ambush_coming,
    heavy_coming,
    heavy_round,
)
from game.world.state import GameState, new_game

TELL = "The brute plants its feet and hauls back its club."
HEAVY = HeavyAttack(chance=0.5, multiplier=3.0, tell=TELL, text="The club comes down.")


def brute(**changes: object) -> Enemy:
    """A plain enemy at the mini pack's bridge: 200 HP (fights last), attack 12, a heavy blow, weak to the stone."""
    fields: dict[str, object] = {
        "id": "brute", "name": "Brute", "category": "giant", "tier": 3, "hp": 200, "attack": 12,
        "nodes": ["bridge"], "encounter": "A brute blocks the bridge.", "heavy": HEAVY,
        "weaknesses": [Weakness(item="stone", damage=30, text="You hurl the stone into its eye.")],
    }  # fmt: skip
    fields.update(changes)
    return Enemy.model_validate(fields)


def pack_with(mini_pack: ContentPack, enemy: Enemy) -> ContentPack:
    nodes = dict(mini_pack.nodes)
    nodes["bridge"] = nodes["bridge"].model_copy(update={"enemies": [enemy.id]})
    return mini_pack.model_copy(update={"enemies": {**mini_pack.enemies, enemy.id: enemy}, "nodes": nodes})


def at_bridge(pack: ContentPack, seed: int = 1, agility: int = 0) -> GameState:
    state = new_game(pack, seed=seed)
    state.node, state.agility, state.hp, state.max_hp = "bridge", agility, 500, 500  # agility 0: nothing is dodged
    return state


def play(rules: Rules, state: GameState, **effects: object) -> Outcome:
    return rules.resolve_turn(state, Effects.model_validate(effects))


def seed_with_heavy_at(enemy: Enemy, round_no: int) -> int:
    return next(s for s in range(500) if heavy_round(new_game_like(s), enemy, round_no))


def new_game_like(seed: int) -> GameState:
    return GameState(story_id="x", node="x", hp=1, max_hp=1, strength=1, agility=1, intelligence=1, seed=seed)


# ------------------------------------------------------------------ initiative
def test_an_enemy_with_initiative_strikes_before_the_first_blow(mini_pack):
    pack = pack_with(mini_pack, brute(initiative=True, heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    out = play(rules, state, start_combat="brute")
    assert state.hp < 500  # hit before the player did anything
    assert out.messages[1] == "The Brute strikes before you are ready!"
    assert out.messages[2].startswith("The Brute hits you for")

    state = at_bridge(pack)
    out = play(rules, state, start_combat="brute", combat_action="attack")
    strike = next(i for i, m in enumerate(out.messages) if m.startswith("You strike"))
    hits = [i for i, m in enumerate(out.messages) if m.startswith("The Brute hits you")]
    assert len(hits) == 1 and hits[0] < strike  # its first strike is its blow of the round (issue 46: not two)


def test_an_enemy_without_initiative_waits_for_the_players_blow(mini_pack):
    pack = pack_with(mini_pack, brute(heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    out = play(rules, state, start_combat="brute")
    assert state.hp == 500 and len(out.messages) == 1


def test_the_dangerous_enemies_of_both_stories_strike_first():
    for story, dangerous in [("fantasy_001", "shadow_lord"), ("scifi_001", "dark_code")]:
        pack = load_pack(content_root() / story)
        assert pack.enemies[dangerous].initiative
        state = new_game(pack, seed=3)
        state.node, state.agility = pack.enemies[dangerous].nodes[0], 0
        hp = state.hp
        out = Rules(pack).resolve_turn(state, Effects(start_combat=dangerous))
        assert state.hp < hp and "strikes before you are ready" in " ".join(out.messages)


# ------------------------------------------------------- heavy attacks, defend
def test_a_heavy_attack_is_announced_the_round_before_it_lands(mini_pack):
    enemy = brute()
    pack = pack_with(mini_pack, enemy)
    seed = seed_with_heavy_at(enemy, FIRST_HEAVY_ROUND)
    rules, state = Rules(pack), at_bridge(pack, seed)
    out = play(rules, state, start_combat="brute", combat_action="attack")  # round 1
    assert heavy_coming(pack, state)
    assert out.messages[-1] == f"{TELL} (A heavy blow is coming: defend, or use an item.)"
    out = play(rules, state, combat_action="attack")  # round 2: the blow lands
    landed = [m for m in out.messages if m.startswith("The club comes down. It hits you for")]
    assert len(landed) == 1
    # never two heavy blows running, so nothing is announced for round 3
    assert not heavy_coming(pack, state) and not any("heavy blow is coming" in m for m in out.messages)


def test_no_announcement_before_an_ordinary_round(mini_pack):
    enemy = brute()
    pack = pack_with(mini_pack, enemy)
    seed = next(s for s in range(500) if not heavy_round(new_game_like(s), enemy, FIRST_HEAVY_ROUND))
    rules, state = Rules(pack), at_bridge(pack, seed)
    out = play(rules, state, start_combat="brute", combat_action="attack")
    assert not heavy_coming(pack, state) and not any(TELL in m for m in out.messages)


def heavy_damage(mini_pack: ContentPack, action: str, agility: int = 0, seed: int | None = None) -> int:
    enemy = brute()
    pack = pack_with(mini_pack, enemy)
    seed = seed_with_heavy_at(enemy, FIRST_HEAVY_ROUND) if seed is None else seed
    rules, state = Rules(pack), at_bridge(pack, seed, agility)
    play(rules, state, start_combat="brute", combat_action="attack")
    before = state.hp
    play(rules, state, combat_action=action)
    return before - state.hp


def test_defending_takes_a_share_of_the_heavy_blow(mini_pack):
    # attack 12, no armour: an ordinary hit is 11..13, the heavy one three times that
    taken = heavy_damage(mini_pack, "attack")
    assert 33 <= taken <= 39
    defended = heavy_damage(mini_pack, "defend")
    assert defended <= round(39 * DEFEND_SHARE) and defended < taken / 2


def test_a_heavy_blow_cannot_be_dodged(mini_pack):
    enemy = brute()
    seeds = [s for s in range(200) if heavy_round(new_game_like(s), enemy, FIRST_HEAVY_ROUND)][:15]
    # agility 100: an ordinary blow is dodged two times in five
    assert all(heavy_damage(mini_pack, "attack", agility=100, seed=s) >= 33 for s in seeds)


def test_defending_an_ordinary_round_also_blunts_the_hit(mini_pack):
    pack = pack_with(mini_pack, brute(heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    play(rules, state, start_combat="brute")
    out = play(rules, state, combat_action="defend")
    assert out.messages[0] == "You raise your guard against the Brute."
    assert 500 - state.hp <= round(13 * DEFEND_SHARE)
    assert out.messages[1].endswith(f", through your guard ({state.hp}/500 HP).")
    assert state.combat is not None and state.combat.enemy_hp == 200  # no blow struck


# --------------------------------------------------------------------- items
def test_a_healing_item_used_in_a_fight_heals_and_guards(mini_pack):
    pack = pack_with(mini_pack, brute(heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    play(rules, state, start_combat="brute")
    state.hp = 100
    out = play(rules, state, use_item="bread", combat_action="defend")
    heal = pack.items["bread"].use.heal  # type: ignore[union-attr]
    assert f"(+{heal} HP)" in " ".join(out.messages)
    assert "bread" not in state.inventory
    assert state.hp >= 100 + heal - round(13 * DEFEND_SHARE)  # the hit that followed was blunted: the heal shows
    assert not any(m.startswith("You raise your guard") for m in out.messages)  # the item's own message says it


def test_an_item_the_enemy_is_weak_to_breaks_its_heavy_attack(mini_pack):
    enemy = brute()
    pack = pack_with(mini_pack, enemy)
    rules, state = Rules(pack), at_bridge(pack, seed_with_heavy_at(enemy, FIRST_HEAVY_ROUND))
    state.inventory.append("stone")
    play(rules, state, start_combat="brute", combat_action="attack")
    enemy_hp, hp = state.combat.enemy_hp, state.hp  # type: ignore[union-attr]
    out = play(rules, state, use_item="stone", combat_action="defend")
    assert state.hp == hp  # the heavy blow never came
    assert state.combat is not None and state.combat.enemy_hp == enemy_hp - 30
    assert any(m.startswith("You hurl the stone into its eye. (The Brute takes 30") for m in out.messages)


def test_the_weakness_only_answers_a_heavy_attack(mini_pack):
    enemy = brute()
    pack = pack_with(mini_pack, enemy)
    seed = next(s for s in range(500) if not heavy_round(new_game_like(s), enemy, FIRST_HEAVY_ROUND))
    rules, state = Rules(pack), at_bridge(pack, seed)
    state.inventory.append("stone")
    play(rules, state, start_combat="brute", combat_action="attack")
    enemy_hp = state.combat.enemy_hp  # type: ignore[union-attr]
    play(rules, state, use_item="stone", combat_action="defend")
    assert state.combat is not None and state.combat.enemy_hp == enemy_hp and state.hp < 500


def test_the_weakness_items_of_both_stories_exist():
    for story in ("fantasy_001", "scifi_001"):
        pack = load_pack(content_root() / story)
        weak = [(e.id, w.item) for e in pack.enemies.values() for w in e.weaknesses]
        assert weak and all(item in pack.items for _, item in weak), story
        assert all(e.heavy is not None for e in pack.enemies.values()), story


# ----------------------------------------------------------------- knock-out
def test_a_first_strike_can_knock_the_player_out(mini_pack):
    pack = pack_with(mini_pack, brute(initiative=True))
    rules, state = Rules(pack), at_bridge(pack)
    state.hp, state.max_hp, state.gold = 5, 50, 30
    out = play(rules, state, start_combat="brute", combat_action="attack")
    assert any(a.effect == "knocked_out" for a in out.applied)
    assert state.combat is None and state.node == pack.story.start_node
    assert state.hp == 25 and state.gold == 27 and state.has_flag("knocked_out")
    assert not out.rejected  # the attack the fight never reached is not refused as "not fighting anyone"


def test_a_heavy_blow_can_knock_the_player_out(mini_pack):
    enemy = brute()
    pack = pack_with(mini_pack, enemy)
    rules, state = Rules(pack), at_bridge(pack, seed_with_heavy_at(enemy, FIRST_HEAVY_ROUND))
    play(rules, state, start_combat="brute", combat_action="attack")
    state.hp = 30  # survives an ordinary hit (<= 13), not the heavy one (>= 33)
    out = play(rules, state, combat_action="attack")
    assert any(a.effect == "knocked_out" for a in out.applied) and state.combat is None


# --------------------------------------------------------------- determinism
def fight_log(pack: ContentPack, seed: int) -> list[str]:
    rules, state = Rules(pack), at_bridge(pack, seed, agility=20)
    log = play(rules, state, start_combat="brute").messages
    for action in ["attack", "defend", "attack", "attack", "defend", "attack", "attack", "attack"]:
        log += play(rules, state, combat_action=action).messages
    return log


def test_fights_are_deterministic_per_seed(mini_pack):
    pack = pack_with(mini_pack, brute(initiative=True))
    assert fight_log(pack, 7) == fight_log(pack, 7)
    assert len({tuple(fight_log(pack, seed)) for seed in range(6)}) > 1


@pytest.mark.parametrize("seed", range(20))
def test_heavy_rounds_are_a_function_of_the_seed_and_never_follow_each_other(seed):
    enemy = brute()
    rounds = [heavy_round(new_game_like(seed), enemy, r) for r in range(12)]
    assert rounds == [heavy_round(new_game_like(seed), enemy, r) for r in range(12)]
    assert not any(rounds[:FIRST_HEAVY_ROUND])
    assert not any(a and b for a, b in itertools.pairwise(rounds))


def test_a_player_can_type_defend_and_is_offered_it_when_a_heavy_blow_is_announced():
    """The parser knows ``defend`` (and block, parry, brace); the scripted narrator sends it as a combat action."""
    from game.language.parser import parse
    from game.llm.scripted import ScriptedNarrator
    from game.world.choices import suggested
    from game.world.rules.combat import heavy_coming
    from tests.conftest import keyword_memory

    for said in ("defend", "block", "parry", "brace myself"):
        assert parse(said).verb == "defend", said
    from game.engine.pipeline import TurnPipeline
    from game.world.loader import content_root, load_pack
    from game.world.state import new_game

    pack = load_pack(content_root() / "fantasy_001")
    engine = TurnPipeline(pack, new_game(pack, seed=0), ScriptedNarrator(pack), keyword_memory(pack))
    for action in ("go west", "attack"):
        engine.play(action)
    assert engine.state.combat is not None
    for _ in range(12):
        if heavy_coming(pack, engine.state):
            break
        engine.play("attack")
    assert heavy_coming(pack, engine.state), "a heavy blow is announced within a dozen rounds"
    assert "defend" in suggested(engine.state, pack)
    result = engine.play("defend")
    assert ("combat_action", "defend") in [(a.effect, a.detail) for a in result.applied] or any(
        a.effect == "combat_action" and "defend" in a.detail for a in result.applied
    ), result.applied


# ---------------------------------------------------------- aggressive enemies
PROWL = "The brute sniffs the air and turns its small eyes on you."
AGGRESSIVE = Aggression(tell=PROWL, text="The brute charges!")


def wait_at_bridge(rules: Rules, state: GameState, turns: int) -> list[Outcome]:
    """``turns`` turns spent at the bridge without fighting (looking around: no effect at all)."""
    return [play(rules, state) for _ in range(turns)]


def test_an_aggressive_enemy_left_alone_attacks_within_three_turns(mini_pack):
    pack = pack_with(mini_pack, brute(aggressive=AGGRESSIVE, heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    outs = wait_at_bridge(rules, state, AMBUSH_TURN)
    assert AMBUSH_TURN <= 3
    assert state.combat is not None and state.combat.enemy_id == "brute"
    assert [a.effect for a in outs[-1].applied] == ["start_combat"]
    assert outs[-1].messages[0].startswith("The brute charges!")
    assert state.hp < 500  # it struck first (agility 0: nothing is dodged)
    assert all(not o.applied for o in outs[:-1])  # nothing before the last turn


def test_the_attack_is_announced_the_turn_before(mini_pack):
    pack = pack_with(mini_pack, brute(aggressive=AGGRESSIVE, heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    outs = wait_at_bridge(rules, state, AMBUSH_TURN - 1)
    assert not any(PROWL in m for o in outs[:-1] for m in o.messages)  # only the turn before
    assert outs[-1].messages == [f"{PROWL} (It will attack if you stay: fight it, or leave.)"]
    assert ambush_coming(pack, state) == "brute" and state.combat is None
    play(rules, state)
    assert state.combat is not None and ambush_coming(pack, state) is None


@pytest.mark.parametrize("count", ["zzz", "9" * 5000, "-1", "２", "2"])
def test_a_hostile_stalking_count_in_a_save_neither_crashes_nor_hangs(mini_pack, count):
    pack = pack_with(mini_pack, brute(aggressive=AGGRESSIVE, heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    state.flags.append(f"stalking:brute@{state.node}:{count}")
    outs = wait_at_bridge(rules, state, AMBUSH_TURN)  # the count starts again, or goes on from 2
    assert state.combat is not None and any(a.effect == "start_combat" for o in outs for a in o.applied)


def test_a_non_aggressive_enemy_never_attacks_first(mini_pack):
    pack = pack_with(mini_pack, brute(heavy=None))
    rules, state = Rules(pack), at_bridge(pack)
    outs = wait_at_bridge(rules, state, 3 * AMBUSH_TURN)
    assert state.combat is None and state.hp == 500
    assert not any(o.messages for o in outs) and ambush_coming(pack, state) is None


def test_leaving_or_fighting_starts_the_count_again(mini_pack):
    pack = pack_with(mini_pack, brute(aggressive=AGGRESSIVE, heavy=None, hp=5))
    rules, state = Rules(pack), at_bridge(pack)
    wait_at_bridge(rules, state, AMBUSH_TURN - 1)
    play(rules, state, move_to="woods")
    play(rules, state, move_to="bridge")  # back: its first turn here again
    assert ambush_coming(pack, state) is None and state.combat is None
    assert ambush_coming(pack, state) is None
    wait_at_bridge(rules, state, AMBUSH_TURN - 2)
    assert ambush_coming(pack, state) == "brute"
    out = play(rules, state, start_combat="brute", combat_action="attack")  # the player strikes first after all
    assert any(a.effect == "defeated" for a in out.applied) and ambush_coming(pack, state) is None
    assert not any(f.startswith("stalking:") for f in state.flags)


def test_a_fight_the_enemy_starts_goes_on_like_any_other(mini_pack):
    pack = pack_with(mini_pack, brute(aggressive=AGGRESSIVE, heavy=None, hp=30))
    rules, state = Rules(pack), at_bridge(pack)
    wait_at_bridge(rules, state, AMBUSH_TURN)
    for _ in range(10):
        if state.combat is None:
            break
        play(rules, state, combat_action="attack")
    assert state.combat is None and state.has_flag("defeated:brute") and state.has_flag("won_fight")
    assert not wait_at_bridge(rules, state, AMBUSH_TURN)[-1].applied  # a defeated enemy stays down


def test_a_boss_cannot_be_aggressive():
    with pytest.raises(ValidationError, match="aggressive"):
        brute(boss=True, aggressive=AGGRESSIVE)


def test_both_stories_have_aggressive_enemies_that_warn_before_they_attack():
    for story in ("fantasy_001", "scifi_001"):
        pack = load_pack(content_root() / story)
        aggressive = [e for e in pack.enemies.values() if e.aggressive]
        assert aggressive, story
        for enemy in aggressive:
            state = new_game(pack, seed=2)
            state.node = enemy.nodes[0]
            rules = Rules(pack)
            for _ in range(AMBUSH_TURN - 1):
                rules.resolve_turn(state, Effects())
            assert ambush_coming(pack, state) is not None, enemy.id
            rules.resolve_turn(state, Effects())
            assert state.combat is not None or state.has_flag("knocked_out"), enemy.id
