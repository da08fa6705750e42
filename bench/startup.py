"""Start-up (issue 11, target 1), each against its baseline in the same run, in fresh processes.

- **Title**: StoryEcho's first frame against a bare Textual "hello" app. Each
  measurement is a fresh Python process that imports what the ``storyecho``
  command imports (``game.main``, so the CLI's modules too) and runs the app
  headless with ``App.run_test``; the clock stops when the first frame has been
  drawn (``call_after_refresh`` from ``on_mount``), and the probe also lists
  the heavy libraries already imported by then. The app is given what reads
  its settings, as ``game.main`` gives it: pydantic and the validation load
  in a worker after the first frame.
- **First turn**: ``storyecho run --json`` playing one action of a new game,
  with the default embeddings against ``--no-embeddings``, timed twice per
  process: to the first turn's output (its JSON line on stdout: what the
  player sees, "plays its first turn"; the target row) and to the process's
  exit (the whole wall time, which includes writing the turn's vectors to
  Chroma and the snapshot). One warm-up run of each comes first and is not
  counted: it builds the index, its snapshot and the embedder's cache (the
  ONNX export), which a player's second start finds on disk.

  Mechanism (``game/memory/vectors/mirror.py``): Chroma is off the first turn's path.
  A clean exit leaves a snapshot of the index's collections beside it
  (``<data>/.index.mirror``, with a marker that any open of the index deletes
  first), so the next start loads the vectors without importing ``chromadb``;
  the index lock is still taken at start, and the game's writes go to the
  in-memory copy at once and to Chroma on a writer thread that waits until
  the game is idle (or the exit) before it imports and opens Chroma. And the
  vectors of texts embedded before are remembered beside the index
  (``game/memory/vectors/embed_cache.py``), so a new game's seeded Story Bible, which
  the first recall waits for, is not embedded again. What is left on the
  path beyond ``--no-embeddings`` is loading the embedder (ONNX Runtime, the
  weights' digest, the session) and the turn's own query embeddings.

- **Playable** (issue 33, target 7): the real Textual game in a fresh process, driven as a player: New game,
  the first story, "look", Enter. Seconds from the moment the process is started to the title, to that turn's
  answer drawn on the play screen (``playable``) and to the play screen saying "Lore ready" (``ready``; a start
  whose lore needed no indexing is ready as it starts). A **first start** has a fresh data folder (no vector
  index yet: every lore document is embedded, while the game plays); a **second start** is the same folder
  again. The exported ONNX model is in the user's cache folder, as for any player after their first game, and
  the game's bytecode is cached (``player_env``: this machine sets ``PYTHONDONTWRITEBYTECODE``, a player's
  does not).
  Goals: playable within 5 s of a first start, within 2 s of a second. Each moment is stamped by the app's
  own hooks once drawn; the harness never polls with ``Pilot.pause``, which repaints the screen each time.

The pairs alternate; the table reports medians, p95 and the ratios.

    python -m bench.startup [--repeats 7] [--quick] [--playable-only] [--starts 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLAYABLE_REPEATS = 2
"""First/second start pairs of the game (each a fresh data folder, then the same folder again)."""
CHILD = """
import time
start = time.perf_counter()
import asyncio, sys
{imports}

class Timed({base}):
    def on_mount(self):
        {mount}
        self.call_after_refresh(self.drawn)

    def drawn(self):
        self.first_frame = time.perf_counter() - start
        heavy = ("torch", "sentence_transformers", "chromadb", "llama_cpp", "openai")
        self.heavy = sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy}})
        self.exit()

async def main():
    app = {make}
    async with app.run_test() as pilot:
        while app.is_running:
            await pilot.pause(0.01)
    print(repr((app.first_frame, app.heavy)))

asyncio.run(main())
"""
HELLO = {
    "imports": "from textual.app import App\nfrom textual.widgets import Static",
    "base": "App",
    "mount": "self.mount(Static('hello'))",
    "make": "Timed()",
}
STORYECHO = {  # as game.main starts it: the settings are read by the app once its title is drawn
    "imports": (
        "import game.main\nfrom game.args import build_parser, settings_for\nfrom game.tui.app import StoryEchoApp"
    ),
    "base": "StoryEchoApp",
    "mount": "super().on_mount()",
    "make": "Timed(lambda: settings_for(build_parser().parse_args(['play', '--llm', 'scripted', '--data-dir', "
    "sys.argv[1]])))",
}
PLAYABLE = """
import time
stamps = {"start": time.time()}
import asyncio, json, sys
import game.main
from game.args import build_parser, settings_for
from game.tui.app import StoryEchoApp

class Timed(StoryEchoApp):
    # each moment is stamped once drawn (call_after_refresh), by the app's own hooks: a harness polling
    # with Pilot.pause would force a full repaint every time it looks, and slow the game it measures
    def stamp(self, what):
        self.call_after_refresh(lambda: stamps.setdefault(what, time.time()))

    def _after_first_frame(self):
        stamps.setdefault("title", time.time())
        super()._after_first_frame()

    def turn_played(self, result):
        super().turn_played(result)
        self.stamp("playable")

    def notify(self, message, *, title="", **kwargs):
        super().notify(message, title=title, **kwargs)
        if title == "Lore ready":
            self.stamp("ready")

def showing(app, name):  # by name: the game imports its screens when it needs them, and so must this harness
    return type(app.screen).__name__ == name

async def main():
    args = build_parser().parse_args(["play", "--llm", "scripted", "--data-dir", sys.argv[1]])
    app = Timed(lambda: settings_for(args))
    async with app.run_test(size=(100, 32)) as pilot:
        async def until(condition, what, timeout=300.0):
            deadline = time.monotonic() + timeout
            while not condition():
                if time.monotonic() > deadline or not app.is_running:
                    raise SystemExit(f"timed out waiting for {what}")
                await asyncio.sleep(0.01)
        await until(lambda: "title" in stamps and app.screen.query("#menu"), "title")
        await pilot.press("n")
        await until(lambda: showing(app, "StoryScreen"), "story choice")
        await pilot.press("enter")
        await until(lambda: showing(app, "PlayScreen") and app.screen.query("#action"), "play screen")
        stamps["play screen"] = time.time()
        app.screen.query_one("#action").value = "look"
        await pilot.press("enter")
        await until(lambda: "playable" in stamps, "playable")
        knowledge = app.session.engine.memory.knowledge
        if knowledge.stats.embedded == 0 and knowledge.vectors_ready.is_set():
            stamps.setdefault("ready", stamps["playable"])  # nothing to index: ready as the game started
        await until(lambda: "ready" in stamps, "ready")
        stamps["embedded"] = knowledge.stats.embedded
        app._quit()  # as Ctrl+Q does once confirmed: the game closes (its index snapshot written), the app exits
        await until(lambda: not app.is_running, "exit")
    print(json.dumps(stamps))

asyncio.run(main())
"""


def player_env() -> dict[str, str]:
    """The environment of a measured start: offline, and Python's bytecode cached as on a player's machine.

    Python caches each module's compiled bytecode beside it (``__pycache__``) unless told not to; a machine
    that sets ``PYTHONDONTWRITEBYTECODE`` (this one does) compiles the game's source on every start: 0.15 s of
    each start here (``builtins.compile`` under cProfile, 101 modules). A player's second start reads the cache.
    """
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_game() -> None:
    """Cache the game's bytecode before any start is measured (as ``pip install`` does for a wheel)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "game")], check=True, env=player_env())


def measure(kind: dict[str, str], data_dir: str) -> tuple[float, list[str]]:
    script = CHILD.format(**kind)
    done = subprocess.run(
        [sys.executable, "-c", script, data_dir],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
        env=player_env(),
    )
    seconds, heavy = eval(done.stdout.strip().splitlines()[-1])  # our own child's repr
    return float(seconds), list(heavy)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _stats(times: dict[str, list[float]]) -> dict[str, Any]:
    return {
        "median_s": {k: statistics.median(v) for k, v in times.items()},
        "p95_s": {k: _p95(v) for k, v in times.items()},
    }


def title(repeats: int) -> dict[str, Any]:
    """The title's first frame against the bare app, alternating."""
    times: dict[str, list[float]] = {"hello": [], "storyecho": []}
    heavy: list[str] = []
    with tempfile.TemporaryDirectory() as data_dir:
        for _ in range(repeats):
            times["hello"].append(measure(HELLO, data_dir)[0])
            seconds, heavy = measure(STORYECHO, data_dir)
            times["storyecho"].append(seconds)
    out = _stats(times)
    out["ratio"] = out["median_s"]["storyecho"] / out["median_s"]["hello"]
    out["heavy_at_first_frame"] = heavy
    return out


def _run_once(data_dir: str, actions: str, *flags: str) -> tuple[float, float]:
    """One ``storyecho run --json``: seconds to the first turn's output line, and to the process's exit."""
    command = [sys.executable, "-m", "game", "run", "--json", "--story", "fantasy_001", "--actions", actions]
    start = time.perf_counter()
    child = subprocess.Popen(
        [*command, "--data-dir", data_dir, "--llm", "scripted", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=player_env(),
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    first = time.perf_counter() - start
    _, err = child.communicate(timeout=300)
    done = time.perf_counter() - start
    if child.returncode or not line.strip():
        raise RuntimeError(f"storyecho run failed ({child.returncode}): {err[-2000:]}")
    json.loads(line)  # the first turn's JSON, whole
    return first, done


def first_turn(repeats: int) -> dict[str, Any]:
    """``storyecho run`` playing one action, default embeddings against ``--no-embeddings``, alternating.

    ``output``: seconds to the first turn's JSON line; ``exit``: the whole process.
    """
    names = ("no_embeddings", "embeddings")
    output: dict[str, list[float]] = {name: [] for name in names}
    exits: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as folder:
        actions = str(Path(folder) / "actions.txt")
        Path(actions).write_text("look around\n", encoding="utf-8")
        plain, embedded = str(Path(folder) / "plain"), str(Path(folder) / "embedded")
        flags = {"no_embeddings": ("--no-embeddings",), "embeddings": ()}
        dirs = {"no_embeddings": plain, "embeddings": embedded}
        cold = {name: _run_once(dirs[name], actions, *flags[name])[1] for name in names}
        for _ in range(repeats):
            for name in names:
                first, done = _run_once(dirs[name], actions, *flags[name])
                output[name].append(first)
                exits[name].append(done)
    out = {"output": _stats(output), "exit": _stats(exits), "cold_s": cold}
    for part in ("output", "exit"):
        medians = out[part]["median_s"]
        out[part]["ratio"] = medians["embeddings"] / medians["no_embeddings"]
    return out


def _start_once(data_dir: str) -> dict[str, Any]:
    """One start of the real Textual game, driven as a player: New game, the first story, "look", Enter.

    Seconds from the moment the process is started to the title, to the answer of that turn (``playable``) and
    to the lore being ready (the play screen says "Lore ready", or its lore needed no indexing); ``embedded``:
    the lore documents embedded in this start.
    """
    env = player_env()
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", PLAYABLE, data_dir], capture_output=True, text=True, cwd=ROOT, timeout=600, env=env
    )
    if done.returncode:
        raise RuntimeError(f"the game's start failed ({done.returncode}): {done.stderr[-2000:]}")
    stamps = json.loads(done.stdout.strip().splitlines()[-1])
    out: dict[str, Any] = {k: stamps[k] - started for k in ("title", "playable", "ready")}
    out["embedded"] = stamps["embedded"]
    return out


def playable(repeats: int) -> dict[str, Any]:
    """First starts (a fresh data folder: no lore index) and second starts (the same folder again), alternating."""
    runs: dict[str, list[dict[str, Any]]] = {"first": [], "second": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as data_dir:
            runs["first"].append(_start_once(data_dir))
            runs["second"].append(_start_once(data_dir))
    out: dict[str, Any] = {"runs": runs}
    for start, measured in runs.items():
        out[start] = _stats({part: [run[part] for run in measured] for part in ("title", "playable", "ready")})
    return out


def playable_rows(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The goals of issue 33 (target 7): playable within 5 s of a first start, 2 s of a second."""
    first, second = found["first"]["median_s"], found["second"]["median_s"]
    embedded = [run["embedded"] for run in found["runs"]["first"]]
    return [
        {
            "target": "7 first start",
            "measure": "first start: playable, process start to the first turn's answer (fresh data folder, median; "
            "the lore is searched by keyword while it indexes)",
            "value": f"{first['playable']:.2f} s (title {first['title']:.2f} s)",
            "goal": "<= 5 s",
            "met": first["playable"] <= 5.0,
        },
        {
            "target": "7 first start",
            "measure": "second start: playable, process start to the first turn's answer (same folder, median)",
            "value": f"{second['playable']:.2f} s (title {second['title']:.2f} s)",
            "goal": "<= 2 s",
            "met": second["playable"] <= 2.0,
        },
        {
            "target": "7 first start (context)",
            "measure": "first start: until the play screen says 'Lore ready' (median; lore documents embedded "
            "meanwhile)",
            "value": f"{first['ready']:.2f} s ({min(embedded)}-{max(embedded)} embedded)",
            "goal": "reported",
            "met": None,
        },
    ]


def title_rows(shown: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "target": "1 start",
            "measure": "title first frame / bare Textual app (median)",
            "value": f"{shown['ratio']:.2f}x ({shown['median_s']['storyecho']:.3f} s / "
            f"{shown['median_s']['hello']:.3f} s)",
            "goal": "<= 2x",
            "met": shown["ratio"] <= 2.0,
        },
        {
            "target": "1 start",
            "measure": "heavy libraries imported at the title's first frame",
            "value": ", ".join(shown["heavy_at_first_frame"]) or "none",
            "goal": "none",
            "met": not shown["heavy_at_first_frame"],
        },
    ]


def turn_rows(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "target": "1 start",
            "measure": "run, time to the first turn's output: embeddings / --no-embeddings (median; the target row: "
            "Chroma off the first turn's path: vectors from the index snapshot, writes behind; seeded Bible vectors "
            "remembered by text)",
            "value": f"{turn['output']['ratio']:.2f}x ({turn['output']['median_s']['embeddings']:.2f} s / "
            f"{turn['output']['median_s']['no_embeddings']:.2f} s)",
            "goal": "<= 2x",
            "met": turn["output"]["ratio"] <= 2.0,
        },
        {
            "target": "1 start (context)",
            "measure": "run, whole process to exit: embeddings / --no-embeddings (median; includes the Chroma "
            "import and writes after the turn)",
            "value": f"{turn['exit']['ratio']:.2f}x ({turn['exit']['median_s']['embeddings']:.2f} s / "
            f"{turn['exit']['median_s']['no_embeddings']:.2f} s)",
            "goal": "reported",
            "met": None,
        },
    ]


def run(repeats: int, *, part: str = "all", starts: int = PLAYABLE_REPEATS) -> dict[str, Any]:
    """``part``: ``all``, ``turn`` (the first turn only, every repeat) or ``playable`` (the game's starts only)."""
    out: dict[str, Any] = {"repeats": repeats, "summary": []}
    compile_game()
    if part in ("all", "turn"):
        out["first_turn"] = first_turn(repeats if part == "turn" else max(3, repeats // 2))
    if part == "all":
        out["title"] = title(repeats)
        out["summary"] += title_rows(out["title"])
    if "first_turn" in out:
        out["summary"] += turn_rows(out["first_turn"])
    if part in ("all", "playable"):
        out["playable"] = playable(starts)
        out["summary"] += playable_rows(out["playable"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="5 repeats")
    parser.add_argument("--turn-only", action="store_true", help="only the first turn (every repeat), no title")
    parser.add_argument("--playable-only", action="store_true", help="only the game's first and second starts")
    parser.add_argument(
        "--starts", type=int, default=PLAYABLE_REPEATS, help=f"first/second start pairs (default {PLAYABLE_REPEATS})"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "startup.json")
    args = parser.parse_args(argv)
    part = "turn" if args.turn_only else "playable" if args.playable_only else "all"
    result = run(5 if args.quick else args.repeats, part=part, starts=args.starts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"{'start':<36}{'median s':>10}{'p95 s':>10}")
    rows = [(f"title: {name}", result["title"], name) for name in ("hello", "storyecho") if "title" in result]
    for part_name in ("output", "exit"):
        rows += [
            (f"first turn {part_name}: {name}", result["first_turn"][part_name], name)
            for name in ("no_embeddings", "embeddings")
            if "first_turn" in result
        ]
    for start in ("first", "second"):
        rows += [
            (f"{start} start: {name}", result["playable"][start], name)
            for name in ("title", "playable", "ready")
            if "playable" in result
        ]
    for label, stats, name in rows:
        print(f"{label:<36}{stats['median_s'][name]:>10.3f}{stats['p95_s'][name]:>10.3f}")
    for row in result["summary"]:
        mark = "reported" if row["met"] is None else "met" if row["met"] else "NOT met"
        print(f"{row['measure']}: {row['value']} (goal {row['goal']}) {mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
