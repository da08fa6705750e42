"""A second window at full speed (issue 33, item 6): two StoryEcho processes on one data folder.

The finding: a one-action ``storyecho run`` on a copy of a 171-turn save took 37.8 s with the Textual game open
on the same data folder, 2.8 s without. The game held the local index (``chroma.IndexLock``), so the second
process fell back to an empty in-process index and embedded the whole knowledge base and every memory of the
loaded game again before its first recall. Now it opens a reader of the index's snapshot
(``MirroredStore.open_reader``, ``game/memory/vectors/mirror.py``) and embeds only what that lacks.

Measured here, in real processes: a long game is played once (``--setup-turns``), then each repeat times
``storyecho run --json`` playing ``--actions`` actions of a copy of that save (wall time of the process: start,
load, the turns, the save and the exit; and to its first turn's line)

- **alone**: nothing else on the data folder;
- **beside an idle game**: another process has loaded a copy of the save, played a turn (it holds the index)
  and waits for the player, as the Textual game does (``SETTLE_S`` after its turn);
- **beside a playing game**: that process plays turns back to back meanwhile, and its own seconds per turn
  while the measured run runs are compared with its seconds per turn before it started (the first window must
  keep its speed too).

The three alternate in each repeat; the goal is each ratio <= 2x (medians). Alone, the run holds the index, so
its exit imports Chroma and writes its turns' vectors; beside another game it reads the snapshot and leaves its
few vectors out (``mirror.py``), which is why it can be faster than alone. Its first turn's output is reported
too: on a loaded 2-core machine, a game playing turns back to back (~1.4 cores) slows another process's start.

    python -m bench.two_windows [--repeats 3] [--setup-turns 171] [--actions 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
LOOP = [
    "go east",
    "talk to garrick",
    "ask garrick about hal",
    "ask garrick about silas",
    "look",
    "go west",
    "go north",
    "go north",
    "talk to alicia",
    "ask alicia about the circlet",
    "what did garrick tell me?",
    "go south",
    "go south",
    "rest",
]
"""Talk, questions and moves in the Misty Forest: a game that never ends, however long it is played."""
GOAL = 2.0
WARM_S = 10.0
"""How long the playing game plays alone before the measured run starts (its turn time alone: the last
``WARM_S - 2`` seconds of it)."""
SETTLE_S = 3.0
"""How long the idle game waits after its turn before the measured run starts: its turn's writes reach Chroma
(which it imports then) while its player reads, as a player who opens a second window finds it."""


def command(data: Path, slot: str) -> list[str]:
    return [sys.executable, "-m", "game", "run", "--json", "--llm", "scripted", "--data-dir", str(data), "--slot", slot]


def actions(count: int, start: int = 0) -> list[str]:
    return [LOOP[(start + n) % len(LOOP)] for n in range(count)]


def setup(data: Path, turns: int) -> float:
    """Play the long game (``long``) that every run loads a copy of; its seconds."""
    started = time.perf_counter()
    subprocess.run(
        [*command(data, "long"), "--story", "fantasy_001"],
        input="\n".join(actions(turns)) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        check=True,
        timeout=1200,
    )
    return time.perf_counter() - started


def copy_of_long(data: Path, slot: str) -> str:
    shutil.copyfile(data / "long.json", data / f"{slot}.json")
    return slot


def measured(data: Path, slot: str, count: int) -> dict[str, Any]:
    """One ``storyecho run`` of ``count`` actions on ``slot``: wall and first-turn seconds, and its strategy."""
    with tempfile.TemporaryFile("w+") as errors:
        start = time.perf_counter()
        child = subprocess.Popen(
            command(data, slot),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=ROOT,
            env=ENV,
        )
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write("\n".join(actions(count, 3)) + "\n")
        child.stdin.close()
        first_line = child.stdout.readline()
        first = time.perf_counter() - start
        rest = child.stdout.read()
        child.wait(600)
        wall = time.perf_counter() - start
        if child.returncode or not first_line.strip():
            errors.seek(0)
            raise RuntimeError(f"storyecho run failed ({child.returncode}): {errors.read()[-2000:]}")
    lines = [json.loads(line) for line in [first_line, *rest.splitlines()] if line.strip()]
    return {"wall_s": wall, "first_turn_s": first, "turns": len(lines), "store": lines[-1]["retrieval_meta"]["store"]}


class OtherWindow:
    """A second StoryEcho on the data folder: it loads ``slot``, plays one turn (so it holds the index) and then
    waits for the player, or with ``playing`` plays back to back, recording when each turn ends."""

    def __init__(self, data: Path, slot: str, *, playing: bool) -> None:
        self.child = subprocess.Popen(
            command(data, slot),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=ENV,
        )
        self.ends: list[float] = []
        self._stop = threading.Event()
        assert self.child.stdin is not None and self.child.stdout is not None
        self._say(self.child.stdin, "look")
        if not self.child.stdout.readline().strip():
            raise RuntimeError(f"the other window failed: {self.child.communicate()[1][-2000:]}")
        self._thread: threading.Thread | None = None
        if playing:
            self._thread = threading.Thread(target=self._play, daemon=True)
            self._thread.start()

    @staticmethod
    def _say(stdin: IO[str], action: str) -> None:
        stdin.write(action + "\n")
        stdin.flush()

    def _play(self) -> None:
        assert self.child.stdin is not None and self.child.stdout is not None
        n = 0
        while not self._stop.is_set():
            self._say(self.child.stdin, actions(1, n)[0])
            if not self.child.stdout.readline().strip():
                return
            self.ends.append(time.perf_counter())
            n += 1

    def window(self, start: float, end: float) -> dict[str, float]:
        """The turns that ended between ``start`` and ``end``, and the window's seconds (its seconds per turn:
        a turn waiting for the consolidation of the five before takes seconds, the others milliseconds)."""
        return {"turns": sum(start <= t <= end for t in self.ends), "seconds": end - start}

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(120)
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.stdin = None  # closed: communicate must not flush it
        _, err = self.child.communicate(timeout=600)
        if self.child.returncode:
            raise RuntimeError(f"the other window failed ({self.child.returncode}): {err[-2000:]}")


def repeat(data: Path, n: int, count: int) -> dict[str, Any]:
    """One repeat: alone, beside an idle game, beside a playing game (each on a fresh copy of the long save)."""
    out: dict[str, Any] = {"alone": measured(data, copy_of_long(data, f"alone-{n}"), count)}
    idle = OtherWindow(data, copy_of_long(data, f"idle-{n}"), playing=False)
    try:
        time.sleep(SETTLE_S)
        out["idle"] = measured(data, copy_of_long(data, f"beside-idle-{n}"), count)
    finally:
        idle.close()
    playing = OtherWindow(data, copy_of_long(data, f"playing-{n}"), playing=True)
    try:
        warm = time.perf_counter()
        time.sleep(WARM_S)
        start = time.perf_counter()
        out["playing"] = measured(data, copy_of_long(data, f"beside-playing-{n}"), count)
        end = time.perf_counter()
        out["other_alone"] = playing.window(warm + 2.0, start)  # past its first turns
        out["other_beside"] = playing.window(start, end)
    finally:
        playing.close()
    return out


def run(repeats: int, setup_turns: int, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        setup_s = setup(data, setup_turns)
        runs = [repeat(data, n, count) for n in range(repeats)]
    median = {mode: statistics.median(r[mode]["wall_s"] for r in runs) for mode in ("alone", "idle", "playing")}
    first = {mode: statistics.median(r[mode]["first_turn_s"] for r in runs) for mode in ("alone", "idle", "playing")}
    other_alone, other_beside = (  # seconds per turn over every repeat's window
        sum(r[key]["seconds"] for r in runs) / max(1, sum(r[key]["turns"] for r in runs))
        for key in ("other_alone", "other_beside")
    )
    ratios = {
        "idle": median["idle"] / median["alone"],
        "playing": median["playing"] / median["alone"],
        "first_window": other_beside / other_alone,
    }
    stores = sorted({r[mode]["store"] for r in runs for mode in ("idle", "playing")})
    row = "6 second window"
    summary = [
        {
            "target": row,
            "measure": f"run of {count} actions on a {setup_turns}-turn save beside an idle game / alone (median)",
            "value": f"{ratios['idle']:.2f}x ({median['idle']:.2f} s / {median['alone']:.2f} s)",
            "goal": f"<= {GOAL:g}x",
            "met": ratios["idle"] <= GOAL,
        },
        {
            "target": row,
            "measure": f"run of {count} actions on a {setup_turns}-turn save beside a game playing / alone (median)",
            "value": f"{ratios['playing']:.2f}x ({median['playing']:.2f} s / {median['alone']:.2f} s)",
            "goal": f"<= {GOAL:g}x",
            "met": ratios["playing"] <= GOAL,
        },
        {
            "target": row,
            "measure": "the playing game's seconds per turn while the second runs / before (all repeats)",
            "value": f"{ratios['first_window']:.2f}x ({other_beside * 1000:.0f} ms / {other_alone * 1000:.0f} ms)",
            "goal": f"<= {GOAL:g}x",
            "met": ratios["first_window"] <= GOAL,
        },
        {
            "target": row,
            "measure": "first turn's output beside an idle game / alone; beside a game playing / alone (median)",
            "value": f"{first['idle'] / first['alone']:.2f}x, {first['playing'] / first['alone']:.2f}x "
            f"({first['idle']:.2f} s, {first['playing']:.2f} s / {first['alone']:.2f} s)",
            "goal": "reported",
            "met": None,
        },
    ]
    return {
        "repeats": repeats,
        "setup_turns": setup_turns,
        "setup_s": setup_s,
        "actions": count,
        "median_wall_s": median,
        "median_first_turn_s": first,
        "ratios": ratios,
        "second_window_stores": stores,
        "runs": runs,
        "summary": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--setup-turns", type=int, default=171)
    parser.add_argument("--actions", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 repeats on an 80-turn save")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.setup_turns = 2, 80
    result = run(args.repeats, args.setup_turns, args.actions)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "two_windows.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"setup: {args.setup_turns} turns in {result['setup_s']:.1f} s; second window's store: ", end="")
    print(", ".join(result["second_window_stores"]))
    print(f"{'mode':<10} {'wall (median)':>14} {'first turn':>11}")
    for mode in ("alone", "idle", "playing"):
        print(f"{mode:<10} {result['median_wall_s'][mode]:>12.2f} s {result['median_first_turn_s'][mode]:>9.2f} s")
    print("| target | measure | value | goal | met |\n|---|---|---|---|---|")
    for row in result["summary"]:
        print(f"| {row['target']} | {row['measure']} | {row['value']} | {row['goal']} | {row['met']} |")


if __name__ == "__main__":
    main()
