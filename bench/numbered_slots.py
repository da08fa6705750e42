"""What keeping the game's numbered slots to one a line costs each write (issue 43, ``game/saves/pruning.py``).

Plays one Misty Forest game of ``--turns`` turns (``bench/saves.py``'s player), writes its save under ``--slots``
names, ``--numbered`` of them the game's own ``autosave-<story>-<n>``, then measures, alternating, ``--repeats``
times: the check ``kept.write_own`` now makes after each write of the game to its slot (``pruning.prune``; here for
a moment of another line, so no slot is covered and every slot named like the game's own is read: the check's
whole cost, nothing removed) and the write itself (``SlotStore.write``), for comparison. Goal: the check costs at
most a quarter of the write in a folder of 100 slots with five numbered ones (it runs on the autosave thread, after
the turn).

Writes ``bench/results/numbered_slots.json`` and prints a table.

    python -m bench.numbered_slots [--turns 200] [--repeats 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.saves import STORY, play
from game.saves.pruning import Written, prune
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack

RESULTS = Path(__file__).parent / "results"
FOLDERS = ((10, 2), (100, 5), (100, 50))
"""(slots in the folder, of which the game's own numbered slots)."""
GOAL_SHARE = 0.25
"""The most the check may cost, as a share of the write, with 100 slots of which 5 numbered."""


def measure(data: bytes, line: str, slots: int, numbered: int, repeats: int) -> dict[str, Any]:
    """The check's and the write's median and worst, in ms, in a folder of ``slots`` saves."""
    with tempfile.TemporaryDirectory(prefix="storyecho-numbered-") as folder:
        store = SlotStore(Path(folder))
        own = f"autosave-{STORY}"
        for n in range(slots):
            store.write(f"{own}-{n + 1}" if n < numbered else f"other-{n}", data)
        other_line = Written(f"{line}.bench", 10**6, 0, {})
        checks, writes = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            removed = prune(store, own, other_line)
            checks.append((time.perf_counter() - start) * 1000)
            assert not removed
            start = time.perf_counter()
            store.write(own, data)
            writes.append((time.perf_counter() - start) * 1000)
    check, write = statistics.median(checks), statistics.median(writes)
    return {
        "slots": slots,
        "numbered": numbered,
        "check_ms": round(check, 3),
        "check_max_ms": round(max(checks), 3),
        "write_ms": round(write, 3),
        "share_of_write": round(check / write, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    session, _ = play(load_pack(content_root() / STORY), args.turns)
    data = session.snapshot(kind="autosave")
    rows = [measure(data, session.line, slots, numbered, args.repeats) for slots, numbered in FOLDERS]
    goal = next(r for r in rows if (r["slots"], r["numbered"]) == (100, 5))["share_of_write"] <= GOAL_SHARE
    print(f"save of {args.turns} turns: {len(data):,} bytes; {args.repeats} writes each")
    print(f"{'slots':>6} {'numbered':>9} {'check ms':>9} {'worst':>7} {'write ms':>9} {'check/write':>12}")
    for r in rows:
        print(
            f"{r['slots']:>6} {r['numbered']:>9} {r['check_ms']:>9.2f} {r['check_max_ms']:>7.2f} "
            f"{r['write_ms']:>9.2f} {r['share_of_write']:>12.2f}"
        )
    print(f"goal (100 slots, 5 numbered: the check <= {GOAL_SHARE} of the write): {'met' if goal else 'NOT met'}")
    RESULTS.mkdir(exist_ok=True)
    result = {"turns": args.turns, "bytes": len(data), "repeats": args.repeats, "rows": rows, "goal_met": goal}
    (RESULTS / "numbered_slots.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0 if goal else 1


if __name__ == "__main__":
    raise SystemExit(main())
