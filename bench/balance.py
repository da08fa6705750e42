"""Combat balance: how often fights knock a careless and a careful player out, how low they go, how long endings take.

Plays each story ``--runs`` times per policy through the real rules and the
scripted narrator (``ScriptedNarrator.turn``, the call the pipeline makes,
without memory: fights do not depend on recall), so every blow, heal and rest
is the rules' own. Run ``i`` follows the route of one committed walkthrough
(``tests/walkthroughs``, route ``i`` mod their number) with seed ``i``; every
policy plays the same seeds and routes. A route is a walkthrough without its
fight rounds, heals and rests, which are the policy's to decide:

- careless: in a fight, a random one of the suggested choices (attack, flee,
  use a healing item: ``game.world.choices.suggested``); out of one, a random
  suggested choice instead of the route one turn in five (so it wanders into
  fights off the route too); never rests (after a knock-out it walks back at
  half HP); does not read the announcements.
- careful: answers an announced heavy attack (an item the enemy is weak to,
  else a healing item when below 60% HP, else ``defend``); heals with an item
  below 40% HP in a fight and below 50% out of one; flees a fight it cannot
  heal through (not a boss), rests at a safe place below 70% HP, and walks to
  the nearest safe place to rest before a fight below 60% or whenever below 40%.
- heedless: the careful player who does not read the announcements (attacks
  through every heavy blow, stays when an enemy is about to attack): what the
  announcements are worth.
- thorough: the careful player on thorough routes, which do every side quest
  before the main path (:mod:`bench.balance_thorough`); its goals are the
  careful ones.

The careful player also reads the announcement that an aggressive enemy is
about to attack (``ambush_coming``): below 60% HP it walks to a safe place
instead of waiting for the blow.

Every action is a line of text played through the scripted narrator and the rules, as a player's would be
(an item used in a fight: the narrator proposes the use and a defend).

A fight on the route counts as done when its enemy is defeated: after a flight
or a knock-out (the rules send the player back to the story's start) the player
walks back the shortest way and fights again. A run stops at an ending or after
``MAX_TURNS`` turns.

Reports, per story and policy: the share of runs reaching an ending (and, in the
JSON, their route's), the knock-out rate (runs with at least one) and knock-outs
per run, the lowest HP of the run as a share of max HP (median and p10; a
knock-out counts as 0), fights per run and the turns to each ending (median);
then checks the targets (``TARGETS``). For the thorough player, the report of
when each stat gate of the story opens by growth alone against the act that
needs it (:mod:`bench.balance_thorough`, goal ``GATE_EARLY_MAX``), and per
quarter of its runs (by turns) the share of the gates growth alone already
passes and the median lowest HP of its fights (goals ``GATES_PASSED_MAX`` and
``FIGHT_LOWEST_MAX``, justified in :mod:`bench.balance_thorough`), in the table
and in the JSON's ``quarters``.

    python -m bench.balance [--runs 50] [--stories fantasy_001 scifi_001 victorian_001] [--json]
        [--out bench/results/balance.json]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench.balance_thorough import (
    FIGHT_LOWEST_MAX,
    GATE_EARLY_MAX,
    GATES_PASSED_MAX,
    act_of,
    gate_report,
    gate_table,
    quarter_report,
    quarter_table,
    quarters_met,
    stats_of,
    thorough_routes,
)
from game.language.parser import parse
from game.llm.base import PromptBundle
from game.llm.scripted import ScriptedNarrator
from game.memory.base import MemoryContext
from game.text import best_match
from game.world.choices import suggested
from game.world.conditions import holds
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.loader import content_root, load_pack
from game.world.rules import Outcome, Rules
from game.world.rules.combat import ambush_coming, heavy_coming
from game.world.state import GameState, new_game

ROOT = Path(__file__).resolve().parents[1]
WALKTHROUGHS = ROOT / "tests" / "walkthroughs"
STORIES = ["fantasy_001", "scifi_001", "victorian_001"]
POLICIES = ["careless", "heedless", "careful", "thorough"]
MAX_TURNS = 500
WANDER = 0.2
"""Share of the careless player's turns out of a fight spent on a random suggested choice instead of the route."""

TARGETS = {
    "careless_ko_rate_min": 0.25,
    "careful_ko_rate_max": 0.10,
    "careful_lowest_hp_median_max": 0.60,
    "careful_ending_rate_min": 0.95,
}
"""Fights matter: a careless player is knocked out in a meaningful share of runs, a careful one rarely, and even
careful play goes below 60% HP in a typical run; careful play still reaches its route's ending. The careful
targets hold for the thorough player too."""
CAREFUL = ("careful", "thorough")

Action = str


# ------------------------------------------------------------------- routes
def routes(pack: ContentPack) -> list[tuple[str, list[str]]]:
    """(ending, route) of every committed walkthrough of the story: its lines without fight rounds, heals and rests."""
    out = []
    for path in sorted(WALKTHROUGHS.glob(f"{pack.id}__*.txt")):
        lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
        steps = [line for line in lines if line and not line.startswith("#") and not _policy_line(pack, line)]
        out.append((path.stem.split("__", 1)[1], steps))
    return out


def _policy_line(pack: ContentPack, line: str) -> bool:
    command = parse(line)
    if command.verb == "rest" or (command.verb == "attack" and not command.target):
        return True
    if command.verb == "use" and (item := best_match(command.target, [(i.id, i.names) for i in pack.items.values()])):
        use = pack.items[item].use
        return bool(use and use.heal)
    return False


# --------------------------------------------------------------------- game
class Game:
    """One game played through the scripted narrator and the rules, with what the balance report counts."""

    def __init__(self, pack: ContentPack, seed: int) -> None:
        self.pack = pack
        self.rules = Rules(pack)
        self.narrator = ScriptedNarrator(pack)
        self.state: GameState = new_game(pack, seed=seed)
        self.knockouts = 0
        self.lowest = 1.0
        self.fights = 0
        self.knocked_out_by: list[str] = []
        self.from_items = dict.fromkeys(stats_of(self.state), 0)
        self.trace: list[tuple[int, int, dict[str, int], dict[str, int]]] = []
        """Per turn: (turn, act, stats by growth alone, stats with items) (see ``bench.balance_thorough``)."""
        self.fight_lows: list[tuple[int, str, float]] = []
        """Per fight: (the turn it started, the enemy, its lowest HP as a share of max HP; a knock-out is 0)."""
        self._fight: tuple[int, str, float] | None = None

    def act(self, action: Action) -> tuple[dict[str, Any], Outcome]:
        """Play one turn: the text through the narrator, then its effects through the rules."""
        bundle = PromptBundle(
            system="", user="", messages=[], blocks=[], tokens=0, action=action, command=parse(action),
            state=self.state, memory=MemoryContext(),
        )  # fmt: skip
        proposed = self.narrator.turn(bundle)["effects"]
        effects = Effects.model_validate(proposed)
        fighting = self.state.combat.enemy_id if self.state.combat else effects.start_combat
        out = self.rules.resolve_turn(self.state, effects)
        knocked_out = any(a.effect == "knocked_out" for a in out.applied)
        if knocked_out:
            self.knockouts += 1
            self.knocked_out_by.append(fighting or "?")
            self.lowest = 0.0
        else:
            self.lowest = min(self.lowest, max(0, self.state.hp) / self.state.max_hp)
        self.fights += sum(a.effect == "start_combat" for a in out.applied)
        self._follow_fight(out, 0.0 if knocked_out else self.share)
        for used in (a.detail for a in out.applied if a.effect == "use_item"):
            for stat, bonus in (((use := self.pack.items[used].use) and use.stats) or {}).items():
                self.from_items[stat] += bonus
        stats = stats_of(self.state)
        growth = {s: n - self.from_items[s] for s, n in stats.items()}
        self.trace.append((self.state.turn, act_of(self.pack, self.state), growth, stats))
        return proposed, out

    def _follow_fight(self, out: Outcome, share: float) -> None:
        """Keep the lowest HP of the fight under way; log it when the fight ends (won, fled or knocked out)."""
        started = next((a.detail for a in out.applied if a.effect == "start_combat"), None)
        if self._fight is None and started is not None:
            self._fight = (self.state.turn, started, share)
        if self._fight is not None:
            turn, enemy, lowest = self._fight
            self._fight = (turn, enemy, min(lowest, max(0.0, share)))
            if self.state.combat is None:
                self.fight_lows.append((turn, enemy, round(self._fight[2], 3)))
                self._fight = None

    # ------------------------------------------------------------- helpers
    @property
    def share(self) -> float:
        return self.state.hp / self.state.max_hp

    def healing(self) -> list[str]:
        """Healing items carried, the smallest heal first."""
        items = [i for i in dict.fromkeys(self.state.inventory) if (use := self.pack.items[i].use) and use.heal]
        return sorted(items, key=lambda i: self.pack.items[i].use.heal)  # type: ignore[union-attr]

    def use(self, item: str) -> str:
        return f"use {self.pack.items[item].name}"

    def way(self, goal: str | None = None) -> str | None:
        """``go <direction>``: the first step of the shortest way to ``goal`` (or to the nearest safe place)."""
        pack, start = self.pack, self.state.node
        seen, queue = {start}, deque([(start, "")])
        while queue:
            node, first = queue.popleft()
            if (node == goal) if goal else pack.nodes[node].safe:
                return f"go {first}" if first else None
            here = pack.nodes[node]
            for direction, target in here.exits.items():
                lock = here.locked_exits.get(direction)
                if target in seen or (lock and not holds(lock.condition, self.state)):
                    continue
                seen.add(target)
                queue.append((target, first or direction))
        return None


# ----------------------------------------------------------------- policies
class Careless:
    name = "careless"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def fight(self, game: Game) -> Action:
        return self.rng.choice(suggested(game.state, game.pack))

    def before_step(self, game: Game, step: str) -> Action | None:
        if self.rng.random() < WANDER:
            return self.rng.choice(suggested(game.state, game.pack))
        return None


class Careful:
    name = "careful"
    reads_tells = True

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.recovering = False

    def fight(self, game: Game) -> Action:
        assert game.state.combat is not None
        enemy = game.pack.enemies[game.state.combat.enemy_id]
        heals = game.healing()
        if self.reads_tells and heavy_coming(game.pack, game.state):
            weak = [w.item for w in enemy.weaknesses if w.item in game.state.inventory]
            if weak:
                return game.use(weak[0])
            if heals and game.share < 0.6:
                return game.use(heals[-1])
            return "defend"  # an announced heavy attack and nothing better to use
        if game.share < 0.4:
            if heals:
                return game.use(heals[-1])
            if not enemy.boss:
                return "flee"
        return "attack"

    def before_step(self, game: Game, step: str) -> Action | None:
        heals = game.healing()
        if game.share < 0.5 and heals:
            return game.use(heals[0])
        fight_next = parse(step).verb == "attack" or (self.reads_tells and ambush_coming(game.pack, game.state))
        if game.share < 0.4 or (fight_next and game.share < 0.6):
            self.recovering = True
        if self.recovering and game.share >= 0.7:
            self.recovering = False
        if game.pack.nodes[game.state.node].safe and game.share < 0.7:
            return "rest"
        if self.recovering:
            return game.way()  # None when no safe place can be reached: go on
        return None


class Heedless(Careful):
    """The careful player who does not read the announcements: attacks through every heavy blow."""

    name = "heedless"
    reads_tells = False


class Thorough(Careful):
    """The careful player on the thorough routes (every side quest before the main path)."""

    name = "thorough"


POLICY_CLASSES: dict[str, type[Careless | Careful]] = {
    "careless": Careless, "heedless": Heedless, "careful": Careful, "thorough": Thorough,
}  # fmt: skip


# --------------------------------------------------------------------- runs
@dataclass
class RunResult:
    story: str
    policy: str
    route: str
    seed: int
    ending: str | None
    turns: int
    knockouts: int
    lowest_hp: float
    fights: int
    knocked_out_by: list[str]
    trace: list[tuple[int, int, dict[str, int], dict[str, int]]] = field(default_factory=list, repr=False)
    fight_lows: list[tuple[int, str, float]] = field(default_factory=list, repr=False)


def play(pack: ContentPack, policy_name: str, route_name: str, route: list[str], seed: int) -> RunResult:
    game = Game(pack, seed)
    rng = random.Random(f"{policy_name}:{seed}")
    policy = POLICY_CLASSES[policy_name](rng)
    state = game.state
    step, target = 0, state.node
    fighting: str | None = None
    while state.turn < MAX_TURNS and not state.ending:
        if state.combat:
            game.act(policy.fight(game))
            continue
        if fighting is not None:  # the route's fight is over: won, fled, or knocked out
            if state.has_flag(f"defeated:{fighting}"):
                step, target = step + 1, state.node
            fighting = None
            continue
        if step >= len(route):
            break
        action = policy.before_step(game, route[step])
        if action is not None:
            game.act(action)
            continue
        if state.node != target:
            way = game.way(target)
            if way is None:
                break
            game.act(way)
            continue
        proposed, out = game.act(route[step])
        enemy = proposed.get("start_combat")
        if isinstance(enemy, str) and any(a.effect == "start_combat" for a in out.applied):
            fighting = enemy
        elif not any(a.effect == "knocked_out" for a in out.applied):
            step, target = step + 1, state.node
    return RunResult(
        story=pack.id,
        policy=policy_name,
        route=route_name,
        seed=seed,
        ending=state.ending,
        turns=state.turn,
        knockouts=game.knockouts,
        lowest_hp=round(game.lowest, 3),
        fights=game.fights,
        knocked_out_by=game.knocked_out_by,
        trace=game.trace,
        fight_lows=game.fight_lows,
    )


def run(stories: list[str], runs: int) -> dict[str, Any]:
    started = time.perf_counter()
    results: list[RunResult] = []
    gates: dict[str, list[dict[str, Any]]] = {}
    quarters: dict[str, list[dict[str, Any]]] = {}
    acts: dict[str, list[str]] = {}
    for story in stories:
        pack = load_pack(content_root() / story)
        walkthroughs = routes(pack)
        paths = sorted(WALKTHROUGHS.glob(f"{story}__*.txt"))
        thorough = thorough_routes(pack, paths, keep=partial(_route_line, pack))
        for policy in POLICIES:
            story_routes = thorough if policy == "thorough" else walkthroughs
            for seed in range(runs):
                name, route = story_routes[seed % len(story_routes)]
                results.append(play(pack, policy, name, route, seed))
        thorough_runs = [r for r in results if r.story == story and r.policy == "thorough"]
        gates[story], acts[story] = (
            gate_report(pack, [r.trace for r in thorough_runs]),
            list(pack.story.main_quest_order),
        )
        quarters[story] = quarter_report(pack, [(r.turns, r.trace, r.fight_lows) for r in thorough_runs])
    summary = {
        f"{s}/{p}": summarise([r for r in results if r.story == s and r.policy == p]) for s in stories for p in POLICIES
    }
    return {
        "runs_per_policy": runs,
        "max_turns": MAX_TURNS,
        "seconds": round(time.perf_counter() - started, 1),
        "summary": summary,
        "targets": check(summary, stories, gates, quarters),
        "gates": gates,
        "quarters": quarters,
        "acts": acts,
        "runs": [{k: v for k, v in asdict(r).items() if k not in ("trace", "fight_lows")} for r in results],
    }


def _route_line(pack: ContentPack, line: str) -> bool:
    """Whether a thorough route keeps ``line``: not a comment, nor a line a policy decides (rounds, heals, rests)."""
    return not (line.startswith("#") or parse(line).verb in ("defend", "flee") or _policy_line(pack, line))


def summarise(results: list[RunResult]) -> dict[str, Any]:
    lowest = np.array([r.lowest_hp for r in results])
    endings: dict[str, list[int]] = {}
    for r in results:
        if r.ending is not None:
            endings.setdefault(r.ending, []).append(r.turns)
    return {
        "runs": len(results),
        "ending_rate": round(sum(r.ending is not None for r in results) / len(results), 3),
        "route_ending_rate": round(sum(r.ending == r.route for r in results) / len(results), 3),
        "ko_rate": round(sum(r.knockouts > 0 for r in results) / len(results), 3),
        "ko_per_run": round(sum(r.knockouts for r in results) / len(results), 2),
        "lowest_hp_median": round(float(np.median(lowest)), 3),
        "lowest_hp_p10": round(float(np.percentile(lowest, 10)), 3),
        "fights_per_run": round(sum(r.fights for r in results) / len(results), 1),
        "turns_to_ending": {e: int(np.median(t)) for e, t in sorted(endings.items())},
        "ending_counts": {e: len(t) for e, t in sorted(endings.items())},
        "knocked_out_by": dict(Counter(e for r in results for e in r.knocked_out_by).most_common()),
    }


def check(
    summary: dict[str, Any],
    stories: list[str],
    gates: dict[str, list[dict[str, Any]]],
    quarters: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    met = {}
    for story in stories:
        careless = summary[f"{story}/careless"]
        met[story] = {"careless_ko_rate_min": careless["ko_rate"] >= TARGETS["careless_ko_rate_min"]}
        for policy in CAREFUL:
            s = summary[f"{story}/{policy}"]
            prefix = "careful" if policy == "careful" else f"{policy}_careful"
            met[story] |= {
                f"{prefix}_ko_rate_max": s["ko_rate"] <= TARGETS["careful_ko_rate_max"],
                f"{prefix}_lowest_hp_median_max": s["lowest_hp_median"] <= TARGETS["careful_lowest_hp_median_max"],
                f"{prefix}_ending_rate_min": s["route_ending_rate"] >= TARGETS["careful_ending_rate_min"],
            }
        met[story]["gates_early_max"] = all(g["ok"] for g in gates.get(story, []))
        met[story] |= quarters_met(quarters.get(story, []))
    targets = {
        **TARGETS,
        "gates_early_max": GATE_EARLY_MAX,
        "quarter_gates_passed_max": GATES_PASSED_MAX,
        "quarter_fight_lowest_hp_max": FIGHT_LOWEST_MAX,
    }
    return {"targets": targets, "met": met, "all_met": all(all(m.values()) for m in met.values())}


# ------------------------------------------------------------------- report
def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['runs_per_policy']} runs per story and policy (at most {result['max_turns']} turns each), "
        f"{result['seconds']}s",
        "",
        "| story | policy | ending reached | KO rate | KOs/run | lowest HP median | lowest HP p10 | fights/run "
        "| turns to ending (median) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key, s in result["summary"].items():
        story, policy = key.split("/")
        turns = ", ".join(f"{e} {t}" for e, t in s["turns_to_ending"].items()) or "-"
        lines.append(
            f"| {story} | {policy} | {s['ending_rate']:.0%} | {s['ko_rate']:.0%} | {s['ko_per_run']:.2f} "
            f"| {s['lowest_hp_median']:.0%} | {s['lowest_hp_p10']:.0%} | {s['fights_per_run']:.1f} | {turns} |"
        )
    t = result["targets"]["targets"]
    lines += [
        "",
        f"Targets: careless KO rate >= {t['careless_ko_rate_min']:.0%}, "
        f"careful KO rate <= {t['careful_ko_rate_max']:.0%}, "
        f"careful lowest HP median <= {t['careful_lowest_hp_median_max']:.0%}, "
        f"careful ending reached >= {t['careful_ending_rate_min']:.0%} (careful and thorough); "
        f"no stat gate opened by growth alone more than {t['gates_early_max']} act early (thorough); "
        "stat gates passed by growth alone at the end of quarter "
        + ", ".join(f"{q} <= {m:.0%}" for q, m in t["quarter_gates_passed_max"].items())
        + "; fights' lowest HP median in quarter "
        + ", ".join(f"{q} <= {m:.0%}" for q, m in t["quarter_fight_lowest_hp_max"].items())
        + " (thorough)",
    ]
    for story, met in result["targets"]["met"].items():
        missed = [k for k, ok in met.items() if not ok]
        lines.append(f"  {story}: {'MET' if not missed else 'NOT MET: ' + ', '.join(missed)}")
    lines += [
        "",
        "Quarters of the thorough playthrough (by turns): stat gates passed at the quarter's end, fights' lowest HP:",
        "",
        quarter_table(result["quarters"]),
        "",
        "Stat gates against the acts that need them (thorough player):",
        "",
        gate_table(result["gates"], result["acts"]),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="runs per story and policy")
    parser.add_argument("--stories", nargs="+", default=STORIES)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "balance.json")
    args = parser.parse_args(argv)
    result = run(args.stories, args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "runs"}))
        return 0
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
