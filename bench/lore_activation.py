"""What firing imported lore by its keys costs a turn (issue 44, ``game/memory/search/activation.py``).

A lorebook of ``--entries`` entries (each with two one-word keys and, for a quarter, a secondary key; a tenth in
inclusion groups; a twentieth with a 50% probability) is built over the mini story, and measured:

- **A turn's scan**: :meth:`LoreActivation.at` for a line that names three entries, with no timed entries (only
  the last messages are read): the median of ``--repeats`` calls, per lorebook size.
- **A cold replay**: the same lorebook with a tenth of its entries sticky or on a cooldown, whose timed effects
  are worked out from a log of ``--turns`` turns in a fresh :class:`LoreActivation` (the first turn after a load),
  then the next turn (the cache's work: one scan).

Writes ``bench/results/lore_activation.json`` (``summary`` rows) and prints a table. Goals: a turn's scan of a
3,000-entry lorebook under 20 ms (a turn's recall is tens of ms here); a cold replay of 1,000 turns under 5 s.

    python -m bench.lore_activation [--entries 300 3000] [--turns 1000] [--repeats 9] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from game.memory.search.activation import LoreActivation
from game.world.content import KnowledgeEntry
from game.world.loader import load_pack
from game.world.lore import Activation
from game.world.state import new_game

RESULTS = Path(__file__).parent / "results"
MINI = Path(__file__).resolve().parents[1] / "tests" / "data" / "mini"
TURN_GOAL_MS = 20.0
REPLAY_GOAL_S = 5.0


def lorebook(size: int, *, timed: bool, seed: int = 1) -> LoreActivation:
    """``size`` made-up entries (keys ``wordN``), as described in the module's docstring."""
    rng = random.Random(seed)
    entries = []
    for n in range(size):
        fields: dict[str, Any] = {"keys": [f"word{n}", f"name{n}"]}
        if n % 4 == 0:
            fields["secondary_keys"] = [f"word{rng.randrange(size)}"]
        if n % 10 == 1:
            fields["group"] = f"group{n % 7}"
        if n % 20 == 2:
            fields["probability"] = 50
        if timed and n % 10 == 3:
            fields["sticky" if n % 20 == 3 else "cooldown"] = 2
        entries.append(
            KnowledgeEntry(id=f"e{n}", category="history", title=f"Entry {n}",
                           content=f"Entry {n} tells of word{rng.randrange(size)} and more.",
                           activation=Activation(**fields))
        )  # fmt: skip
    pack = load_pack(MINI)
    return LoreActivation(pack.model_copy(update={"knowledge": entries}))


def line(size: int, rng: random.Random) -> str:
    return " ".join(f"word{rng.randrange(size)}" for _ in range(3)) + " and the weather"


def measure(sizes: list[int], turns: int, repeats: int) -> dict[str, Any]:
    rng = random.Random(7)
    state = new_game(load_pack(MINI))
    out: dict[str, Any] = {"turn_scan_ms": {}, "cold_replay_s": {}, "next_turn_ms": {}, "turns": turns}
    for size in sizes:
        lore = lorebook(size, timed=False)
        log = [(t, line(size, rng), "The wind moves over word1.") for t in range(1, 6)]
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            lore.at(log, line(size, rng), state.model_copy(update={"turn": len(log)}))
            times.append((time.perf_counter() - started) * 1000)
        out["turn_scan_ms"][size] = round(statistics.median(times), 2)
        timed = lorebook(size, timed=True)
        long_log = [(t, line(size, rng), "The wind moves.") for t in range(1, turns + 1)]
        started = time.perf_counter()
        timed.at(long_log, line(size, rng), state.model_copy(update={"turn": turns}))
        out["cold_replay_s"][size] = round(time.perf_counter() - started, 2)
        long_log.append((turns + 1, line(size, rng), "The wind moves."))
        started = time.perf_counter()
        timed.at(long_log, line(size, rng), state.model_copy(update={"turn": turns + 1}))
        out["next_turn_ms"][size] = round((time.perf_counter() - started) * 1000, 2)
    return out


def summarise(result: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for size, ms in result["turn_scan_ms"].items():
        rows.append({"measure": f"a turn's scan, {size} entries (ms, median)", "value": ms,
                     "goal": f"< {TURN_GOAL_MS:.0f}", "met": ms < TURN_GOAL_MS})  # fmt: skip
    for size, seconds in result["cold_replay_s"].items():
        rows.append({"measure": f"cold replay of {result['turns']} turns, {size} entries (s)", "value": seconds,
                     "goal": f"< {REPLAY_GOAL_S:.0f}", "met": seconds < REPLAY_GOAL_S})  # fmt: skip
    for size, ms in result["next_turn_ms"].items():
        rows.append({"measure": f"the turn after, timed entries, {size} entries (ms)", "value": ms,
                     "goal": "reported", "met": None})  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    width = max(len(r["measure"]) for r in rows)
    lines = [f"{'measure':<{width}}  {'value':>8}  goal   met"]
    lines += [f"{r['measure']:<{width}}  {r['value']:>8}  {r['goal']:<5}  {r['met']}" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[300, 3000])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a test")
    parser.add_argument("--out", type=Path, default=RESULTS / "lore_activation.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.entries, args.turns, args.repeats = [50], 30, 3
    result = measure(args.entries, args.turns, args.repeats)
    result["summary"] = summarise(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(table(result["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
