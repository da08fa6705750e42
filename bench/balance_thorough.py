"""The thorough player of ``bench.balance``, and when each stat gate opens for it.

**Thorough routes.** The thorough player does every side quest before the main
path. Its route is played out by the content checker's cooperative player
(:class:`game.checker.cooperative.Cooperative` with an empty focus), which from
a new game takes every step as soon as the rules accept it: it walks into every
place and takes what lies there, uses the items that raise stats, starts every
side quest it can, makes each quest step once it can, gives tokens where trust
opens something and fights every enemy it meets; it stops short of an ending.
For the stories here that completes every side quest before the second act. A
route per committed walkthrough then walks to the place where that
walkthrough's last two segments start (the lines after a block of comments)
and plays them (the last steps and the ending's choice or fight): the thorough
player of every ending. Fight rounds and heals are left out, as in every route: the
(careful) policy decides them.

**Stat gates.** A gate is a condition with ``min_stats`` or an objective's
``requires`` (talents are growth, not gates; moods, variants and achievements
only change words). Only the stat clause is weighed. The act that needs a gate
is the index in ``story.main_quest_order`` of the first act in which a player
can stand before it:

- an objective of a main quest: that quest's act;
- an objective or the trigger of a side quest: the act in which the quest can
  first be started (the act after the last main quest its trigger needs; 0);
- a locked exit or a story choice: the act of the first main quest with a step
  at the place behind the exit (the choice's ``at_node``), else 0 (the last act
  for a choice);
- an ending: the last act.

Growth is what the rules give for playing on: the stats of the story's start,
level-ups, talents and quest rewards. Items that raise stats do not count: each
is one thing in one place that the player decides to use, the author's key to a
gate rather than growth (they are reported apart, as "with items"). A gate
"opens by growth" in the act (and turn) where the player's stats minus
everything items gave first meet it; the act of a turn is the index of the main
quest not yet completed (``len(main_quest_order)`` once all are). The goal: no
gate opens by growth alone more than one act before the act that needs it
(``GATE_EARLY_MAX``), in the median thorough run.

**Quarters** (issue 35: growth that keeps choices). Each thorough run is cut
into four quarters by turns. Per quarter, per story:

- the share of the story's stat gates (every gate above) that growth alone
  passes at the quarter's last turn (median over the runs; "with items" apart),
  and the gates still ahead in most runs;
- the lowest HP of each fight started in the quarter, as a share of max HP
  (a knock-out is 0), median over all the quarter's fights of all runs.

Goals, for the thorough player, who fights and quests the most and so grows
the most: growth alone passes at most half the gates by the end of the first
quarter, at most three in four by the end of the second and at most 85% by the
end of the third (``GATES_PASSED_MAX``): with four to seven gates a story, the
player reaches the last quarter with at least one gate that still asks for an
item, a quest's talent or a route taken, whatever else it did. The last
quarter has no goal: the ending's gate is meant to be passable there. And the
median fight of the second and third quarters takes the player to 70% of max
HP or below (``FIGHT_LOWEST_MAX``): the careful player starts a fight at 60%
or more (it rests below that), so a mid-game fight that leaves it above 70%
costs it next to nothing (the play-tester's troll: 4 blows, 11 HP lost). A
quarter without a fight has no fight to judge ("-").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from game.checker.bounds import DEFAULT_FIGHT_SEEDS
from game.checker.cooperative import Cooperative
from game.checker.focus import Focus
from game.checker.world import World
from game.world.conditions import objective_places
from game.world.content import ContentPack, Stat
from game.world.state import GameState, new_game

GATE_EARLY_MAX = 1
"""A gate may open by growth alone at most this many acts before the act that needs it."""
STATS = ("strength", "agility", "intelligence")
ENDING_SEGMENTS = 2
QUARTERS = 4
GATES_PASSED_MAX = {1: 0.5, 2: 0.75, 3: 0.85}
"""Per quarter of a thorough run: the most of the story's stat gates that growth alone may pass at its end (see the
module's docstring)."""
FIGHT_LOWEST_MAX = {2: 0.7, 3: 0.7}
"""Per mid-game quarter: the highest median lowest HP (share of max HP) of its fights (see the module's docstring)."""
"""How many of a walkthrough's last segments (its way to the ending) end the thorough route to that ending."""


# ------------------------------------------------------------------- routes
def thorough_routes(
    pack: ContentPack, walkthroughs: list[Path], keep: Callable[[str], bool]
) -> list[tuple[str, list[str]]]:
    """(ending, route) of the thorough player for each walkthrough, with only the lines ``keep``."""
    world = World(pack, DEFAULT_FIGHT_SEEDS)
    nothing: frozenset[str] = frozenset()
    focus = Focus("thorough", nothing, nothing, nothing, nothing, nothing, nothing, nothing, endings=False)
    lines: list[str] = []
    state = Cooperative(world, focus).play_out(new_game(pack, seed=0), lines)
    out = []
    for path in walkthroughs:
        node, tail = ending_tail(pack, path)
        found = world.routes(state)
        walk = world.way(found, node) if node in found else []
        out.append((path.stem.split("__", 1)[1], [line for line in [*lines, *walk, *tail] if keep(line)]))
    return out


def ending_tail(pack: ContentPack, path: Path, segments: int = ENDING_SEGMENTS) -> tuple[str, list[str]]:
    """The place where a walkthrough's last ``segments`` segments start (following its "go" lines on the map) and
    their lines; a segment is the lines after a block of comments."""
    blocks: list[list[str]] = [[]]
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("#") and blocks[-1]:
            blocks.append([])
        elif line and not line.startswith("#"):
            blocks[-1].append(line)
    before = [line for block in blocks[:-segments] for line in block]
    node = pack.story.start_node
    for line in before:
        words = line.split()
        if words[0].lower() == "go" and len(words) > 1 and words[1] in pack.nodes[node].exits:
            node = pack.nodes[node].exits[words[1]]
    return node, [line for block in blocks[-segments:] for line in block]


# -------------------------------------------------------------------- gates
@dataclass(frozen=True)
class Gate:
    where: str
    need: Mapping[Stat, int]
    act: int


def gates(pack: ContentPack) -> list[Gate]:
    """Every stat gate of the story, with the act that needs it (see the module's docstring)."""
    order, last = pack.story.main_quest_order, len(pack.story.main_quest_order) - 1
    found: list[Gate] = []
    for quest in pack.all_quests():
        main = quest.id in order
        act = order.index(quest.id) if main else _side_act(pack, quest.id)
        kind = "main" if main else "side"
        for o in quest.objectives:
            if o.requires:
                found.append(Gate(f"{kind} quest {quest.id}: {o.id}", o.requires, act))
        if quest.trigger and quest.trigger.condition.min_stats:
            found.append(Gate(f"side quest {quest.id}: trigger", quest.trigger.condition.min_stats, act))
    for node in pack.nodes.values():
        for direction, lock in node.locked_exits.items():
            if lock.condition.min_stats:
                act = _first_act_at(pack, node.exits[direction], 0)
                found.append(Gate(f"exit {node.id} {direction}", lock.condition.min_stats, act))
    for choice in pack.story.choices:
        if choice.condition.min_stats:
            act = _first_act_at(pack, choice.condition.at_node, last)
            found.append(Gate(f"choice {choice.id}", choice.condition.min_stats, act))
    for ending in pack.endings:
        if ending.condition.min_stats:
            found.append(Gate(f"ending {ending.id}", ending.condition.min_stats, last))
    return found


def _side_act(pack: ContentPack, quest_id: str, depth: int = 0) -> int:
    quest = pack.quest(quest_id)
    if quest is None or quest.trigger is None or depth > 10:
        return 0
    order = pack.story.main_quest_order
    needs = [
        order.index(q) + 1 if q in order else _side_act(pack, q, depth + 1)
        for q in quest.trigger.condition.quests_completed
    ]
    return max(needs, default=0)


def _first_act_at(pack: ContentPack, node: str | None, default: int) -> int:
    for act, quest_id in enumerate(pack.story.main_quest_order):
        quest = pack.quest(quest_id)
        if node and quest and any(node in objective_places(o, pack) for o in quest.objectives):
            return act
    return default


# ------------------------------------------------------------ the gate trace
def act_of(pack: ContentPack, state: GameState) -> int:
    """The index of the main quest not yet completed (the number of acts once all are)."""
    order = pack.story.main_quest_order
    done = (i for i, q in enumerate(order) if (p := state.quests.get(q)) is None or p.status != "completed")
    return next(done, len(order))


def stats_of(state: GameState) -> dict[str, int]:
    return {s: state.stat(s) for s in STATS}


def gate_report(
    pack: ContentPack, traces: list[list[tuple[int, int, dict[str, int], dict[str, int]]]]
) -> list[dict[str, Any]]:
    """Per gate: the act that needs it, and the act and turn where growth alone (and with items) first met it.

    ``traces``: per thorough run, per turn, (turn, act, stats by growth, stats with items). Medians over the
    runs; a run where it never opens counts as opening after the last act.
    """
    never = len(pack.story.main_quest_order)
    rows = []
    for gate in gates(pack):
        growth = [_opened(trace, gate.need, 2) for trace in traces]
        items = [_opened(trace, gate.need, 3) for trace in traces]
        act = _median([a if a is not None else never for a, _ in growth])
        turns = [t for _, t in growth if t is not None]
        rows.append({
            "gate": gate.where,
            "needs": ", ".join(f"{s} {n}" for s, n in gate.need.items()),
            "needed_in_act": gate.act,
            "growth_act_median": act if act < never else None,
            "growth_act_earliest": min((a for a, _ in growth if a is not None), default=None),
            "growth_turn_median": _median(turns) if turns else None,
            "growth_share_of_runs": round(len(turns) / max(1, len(traces)), 2),
            "items_act_median": _median([a if a is not None else never for a, _ in items]),
            "acts_early": gate.act - act if act < never else 0,
            "ok": act >= gate.act - GATE_EARLY_MAX,
        })  # fmt: skip
    return rows


def _opened(
    trace: list[tuple[int, int, dict[str, int], dict[str, int]]], need: Mapping[Stat, int], which: int
) -> tuple[int | None, int | None]:
    for row in trace:
        stats: dict[str, int] = row[which]  # type: ignore[assignment]
        if all(stats[s] >= n for s, n in need.items()):
            return row[1], row[0]
    return None, None


def _median(values: list[int]) -> int:
    return int(np.floor(np.median(values))) if values else 0


def gate_table(report: dict[str, list[dict[str, Any]]], acts: dict[str, list[str]]) -> str:
    lines = [
        "| story | gate | needs | needed in act | opens by growth (act, median) | earliest run | turn (median) "
        "| with items (act) | ok |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for story, rows in report.items():
        for r in rows:
            growth = "never" if r["growth_act_median"] is None else str(r["growth_act_median"])
            earliest = "-" if r["growth_act_earliest"] is None else str(r["growth_act_earliest"])
            turn = "-" if r["growth_turn_median"] is None else str(r["growth_turn_median"])
            lines.append(
                f"| {story} | {r['gate']} | {r['needs']} | {r['needed_in_act']} | {growth} | {earliest} | {turn} "
                f"| {r['items_act_median']} | {'yes' if r['ok'] else 'NO'} |"
            )
    lines.append("")
    for story, order in acts.items():
        lines.append(f"Acts of {story}: " + ", ".join(f"{i} {q}" for i, q in enumerate(order)))
    return "\n".join(lines)


# ---------------------------------------------------------------- quarters
Trace = list[tuple[int, int, dict[str, int], dict[str, int]]]


def quarter_of(turn: int, turns: int) -> int:
    """The quarter (1-4) of a run of ``turns`` turns that ``turn`` falls in."""
    return min(QUARTERS, 1 + (max(1, turn) - 1) * QUARTERS // max(1, turns))


def passed_share(pack_gates: list[Gate], trace: Trace, until: float, which: int = 2) -> tuple[float, set[str]]:
    """The share of the gates that the stats of the last turn up to ``until`` meet (growth alone, or with items for
    ``which`` 3), and the gates they do not meet."""
    rows = [row for row in trace if row[0] <= until] or trace[:1]
    if not rows or not pack_gates:
        return 0.0, {g.where for g in pack_gates}
    stats: dict[str, int] = rows[-1][which]  # type: ignore[assignment]
    ahead = {g.where for g in pack_gates if not all(stats[s] >= n for s, n in g.need.items())}
    return 1 - len(ahead) / len(pack_gates), ahead


def quarter_report(
    pack: ContentPack, runs: list[tuple[int, Trace, list[tuple[int, str, float]]]]
) -> list[dict[str, Any]]:
    """Per quarter of the thorough runs (by turns): the share of the story's stat gates passed by growth alone at the
    quarter's end (median over the runs; with items apart), the gates still ahead in most runs, and the lowest HP of
    each fight started in the quarter as a share of max HP (median over all its fights); with the goals met.

    ``runs``: per thorough run, (its turns, its gate trace, its fights as (start turn, enemy, lowest HP share)).
    """
    story_gates = gates(pack)
    rows = []
    for q in range(1, QUARTERS + 1):
        shares, with_items, ahead = [], [], Counter[str]()
        for turns, trace, _ in runs:
            share, left = passed_share(story_gates, trace, q * turns / QUARTERS)
            shares.append(share)
            ahead.update(left)
            with_items.append(passed_share(story_gates, trace, q * turns / QUARTERS, which=3)[0])
        quarter = [
            (enemy, low) for turns, _, fights in runs for start, enemy, low in fights if quarter_of(start, turns) == q
        ]
        lows = [low for _, low in quarter]
        passed = round(float(np.median(shares)), 3) if shares else 0.0
        lowest = round(float(np.median(lows)), 3) if lows else None
        gate_goal, fight_goal = GATES_PASSED_MAX.get(q), FIGHT_LOWEST_MAX.get(q)
        rows.append({
            "quarter": q,
            "gates": len(story_gates),
            "gates_passed_share": passed,
            "gates_passed_with_items_share": round(float(np.median(with_items)), 3) if with_items else 0.0,
            "gates_ahead": sorted(g for g, n in ahead.items() if n * 2 > len(runs)),
            "fights": len(lows),
            "fight_lowest_hp_median": lowest,
            "fight_lowest_hp_by_enemy": _by_enemy(quarter),
            "gates_goal_max": gate_goal,
            "gates_met": None if gate_goal is None else passed <= gate_goal,
            "fight_goal_max": fight_goal,
            "fight_met": None if fight_goal is None else lowest is not None and lowest <= fight_goal,
        })  # fmt: skip
    return rows


def _by_enemy(fights: list[tuple[str, float]]) -> dict[str, float]:
    """The median lowest HP of the fights against each enemy."""
    return {e: round(float(np.median([low for f, low in fights if f == e])), 3) for e in sorted({f for f, _ in fights})}


def quarters_met(rows: list[dict[str, Any]]) -> dict[str, bool]:
    """Whether every quarter with a goal meets it: gates passed, and mid-game fights' lowest HP."""
    return {
        "quarter_gates_passed_max": all(r["gates_met"] is not False for r in rows),
        "quarter_fight_lowest_hp_max": all(r["fight_met"] is not False for r in rows),
    }


def quarter_table(report: dict[str, list[dict[str, Any]]]) -> str:
    def met(value: bool | None) -> str:
        return "-" if value is None else "yes" if value else "NO"

    lines = [
        "| story | quarter | gates passed by growth | with items | gates ahead (most runs) | fights "
        "| fight lowest HP (median) | gates met | fights met |",
        "|---|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for story, rows in report.items():
        for r in rows:
            low = "-" if r["fight_lowest_hp_median"] is None else f"{r['fight_lowest_hp_median']:.0%}"
            lines.append(
                f"| {story} | {r['quarter']} | {r['gates_passed_share']:.0%} of {r['gates']} "
                f"| {r['gates_passed_with_items_share']:.0%} | {', '.join(r['gates_ahead']) or '-'} | {r['fights']} "
                f"| {low} | {met(r['gates_met'])} | {met(r['fight_met'])} |"
            )
    return "\n".join(lines)
