"""The thorough player of bench.balance and its stat-gate report (issue 25)."""

from __future__ import annotations

from functools import partial

import pytest

from bench.balance import WALKTHROUGHS, Game, _route_line, play
from bench.balance_thorough import (
    GATES_PASSED_MAX,
    Gate,
    act_of,
    gate_report,
    gates,
    passed_share,
    quarter_of,
    quarter_report,
    thorough_routes,
)
from game.world.loader import content_root, load_pack
from game.world.rules.growth import level_for
from game.world.state import new_game


def test_every_stat_gate_of_the_stories_is_found_with_the_act_that_needs_it():
    fantasy = {g.where: g for g in gates(load_pack(content_root() / "fantasy_001"))}
    assert fantasy["ending peace"].need == {"intelligence": 34} and fantasy["ending peace"].act == 5
    assert fantasy["side quest free_thieves: break_charm"].act == 0  # its trigger needs nothing
    scifi = {g.where: g for g in gates(load_pack(content_root() / "scifi_001"))}
    assert scifi["side quest echo_diagnostics: install_relay"].act == 3  # opens once restore_power (act 2) is done
    assert {"choice rewrite", "ending rewrite"} <= set(scifi)


def test_the_thorough_player_reaches_the_peace_ending_and_its_gate_is_not_opened_early():
    pack = load_pack(content_root() / "fantasy_001")
    paths = sorted(WALKTHROUGHS.glob("fantasy_001__*.txt"))
    (name, route), *_ = [r for r in thorough_routes(pack, paths, partial(_route_line, pack)) if r[0] == "peace"]
    assert route[-1] == "negotiate" and not any(line.startswith("#") or line == "attack" for line in route)
    result = play(pack, "thorough", name, route, seed=0)
    assert result.ending == "peace"
    assert act_of(pack, new_game(pack)) == 0
    report = {r["gate"]: r for r in gate_report(pack, [result.trace])}
    assert report["ending peace"]["needed_in_act"] == 5 and report["ending peace"]["ok"]


def test_a_gate_open_from_the_start_is_reported_early():
    pack = load_pack(content_root() / "scifi_001")
    trace = [
        (1, 0, {"strength": 99, "agility": 99, "intelligence": 99}, {"strength": 99, "agility": 99, "intelligence": 99})
    ]
    rows = {r["gate"]: r for r in gate_report(pack, [trace])}
    assert rows["ending rewrite"]["growth_act_median"] == 0 and not rows["ending rewrite"]["ok"]
    assert rows["side quest ice_run: kill_ice"]["ok"]  # needed from act 0: never early


# ------------------------------------------------- issue 35: growth that keeps choices
@pytest.mark.parametrize("story", ["fantasy_001", "scifi_001"])
def test_before_the_last_quarter_of_a_thorough_playthrough_a_stat_gate_is_still_ahead_of_growth(story):
    """Was: levels, talents and quest rewards alone passed every stat gate of the story by its third quarter (Misty
    Forest: intelligence 36 against the peace ending's 30; Cyber: 26 against the rewrite's 24)."""
    pack = load_pack(content_root() / story)
    paths = sorted(WALKTHROUGHS.glob(f"{story}__*.txt"))
    name, route = thorough_routes(pack, paths, partial(_route_line, pack))[0]
    result = play(pack, "thorough", name, route, seed=0)
    rows = quarter_report(pack, [(result.turns, result.trace, result.fight_lows)])
    for row in rows[:3]:
        assert row["gates_ahead"] and row["gates_met"], row
    assert [r["quarter"] for r in rows] == [1, 2, 3, 4] and rows[0]["gates_passed_share"] <= GATES_PASSED_MAX[1]


def test_a_fight_is_logged_with_its_lowest_hp_and_a_knock_out_counts_as_nothing_left():
    pack = load_pack(content_root() / "fantasy_001")
    game = Game(pack, seed=3)
    for action in ["go north", "attack wolf", "attack", "attack", "attack", "attack"]:
        game.act(action)
    assert len(game.fight_lows) == 1 and game.state.has_flag("defeated:mist_wolf")
    start, enemy, lowest = game.fight_lows[0]
    assert start == 2 and enemy == "mist_wolf" and 0 < lowest < 1 and lowest <= game.lowest + 1e-9
    game.state.hp = 1
    game.state.node = "shadow_gate"
    for _ in range(10):
        game.act("attack knight" if game.state.combat is None and not game.knockouts else "attack")
        if game.knockouts:
            break
    assert game.knockouts == 1 and game.fight_lows[-1][1:] == ("shadow_knight", 0.0)


def test_quarters_split_a_run_by_turns_and_count_the_gates_growth_alone_passes():
    assert [quarter_of(t, 8) for t in range(1, 9)] == [1, 1, 2, 2, 3, 3, 4, 4]
    story_gates = [
        Gate("a", {"intelligence": 13}, 0),
        Gate("b", {"intelligence": 18}, 0),
        Gate("c", {"agility": 13}, 0),
        Gate("d", {"strength": 13, "intelligence": 13}, 0),
    ]
    low = {"strength": 11, "agility": 11, "intelligence": 11}
    trace = [(1, 0, low, low), (2, 0, {**low, "intelligence": 13}, {**low, "intelligence": 13, "agility": 20})]
    assert passed_share(story_gates, trace, until=1)[0] == 0.0
    share, ahead = passed_share(story_gates, trace, until=2)
    assert share == 0.25 and ahead == {"b", "c", "d"}
    assert passed_share(story_gates, trace, until=2, which=3)[0] == 0.5  # with items: the agility gate too


def test_each_level_costs_more_than_the_one_before():
    """A flat 100 exp a level let a thorough player reach level 10 while a hurried one reached 5 (issue 35)."""
    assert [level_for(e) for e in (0, 99, 100, 299, 300, 599, 600, 999, 1000)] == [1, 1, 2, 2, 3, 3, 4, 4, 5]
    assert level_for(-5) == 1 and level_for(10**15) == 4472136
