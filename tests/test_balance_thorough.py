"""The thorough player of bench.balance and its stat-gate report (issue 25)."""

from __future__ import annotations

from functools import partial

from bench.balance import WALKTHROUGHS, _route_line, play
from bench.balance_thorough import act_of, gate_report, gates, thorough_routes
from game.world.loader import content_root, load_pack
from game.world.state import new_game


def test_every_stat_gate_of_the_stories_is_found_with_the_act_that_needs_it():
    fantasy = {g.where: g for g in gates(load_pack(content_root() / "fantasy_001"))}
    assert fantasy["ending peace"].need == {"intelligence": 30} and fantasy["ending peace"].act == 5
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
