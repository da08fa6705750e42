"""Long games stay savable (issue 43, item 3): autosave time at 1,000 and 50,000 turns, and the load of the longest.

The game: ``bench/saves.py``'s honest Misty Forest game (walkthrough and neutral actions, scripted narrator,
keyword memory) played for real for ``--played`` turns (default 1,000; its actions are
``bench/saves.py``'s, of which about a third are turns), then grown to each length measured by
repeating its own turns, renumbered: each episode of the log and each turn's change of the game's history again
(one a turn), each summary again (one every 5 turns, as consolidation writes them); the Story Bible and the game
state stay as played (a game's Bible holds its story's facts, not one per turn). The grown game goes through the
real save code (``StateEncoder``, ``GameHistory``, ``format.encode``, ``SlotStore.write``) into a slot, so its
parts are the ones a game that played those turns writes. Playing 50,000 turns through the pipeline would take
about 40 minutes here; the save code cannot tell the two apart.

Each game is then loaded in a fresh session (``GameSession.load``: read, join, validate, memory restored; timed:
the load of the longest game is its row), and played on: a turn, then its autosave (``GameSession.autosave`` and
the wait for its thread: export, encode, parts, slot write, all of it), ``--repeats`` times; the rows are the
median autosave of each length, measured side by side in one run, and the goal is flat: the 50,000-turn game's
within 2x of the 1,000-turn game's. Before parts, each autosave rewrote the whole file, and a game past ~12,000
turns could not be saved at all.

    python -m bench.long_games [--quick] [--played 1000] [--turns 1000,50000] [--repeats 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.saves import GATE, NEUTRAL, STORY, THRONE, walkthrough_actions
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.export import StateEncoder
from game.memory.manager import GameMemory
from game.memory.records import MemoryState
from game.saves.format import SaveError, encode
from game.saves.history import GameHistory
from game.saves.slots import SlotStore
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import GameState, new_game

ROOT = Path(__file__).resolve().parents[1]
FLAT = 2.0
"""The goal: the longest game's autosave within this many times the shortest's."""
LOAD_S = 30.0
"""The goal for the load of the longest game (the previous main could not save it at all)."""

ACTIONS = ["look", "go north", "go south", "talk to garrick", "rest", "inventory"]


def played_game(pack: ContentPack, turns: int) -> bytes:
    """The save of ``bench/saves.py``'s game played for ``turns`` turns (or as many as its actions commit)."""
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, background=False)
    memory.prepare()
    session = GameSession(TurnPipeline(pack, new_game(pack), narrator, memory), None)
    walk, i = walkthrough_actions(), 0
    while session.engine.state.turn < turns and i < 10 * turns:  # about a third of these lines are turns
        action = walk[(i - i // 3) % len(walk)] if i % 3 != 2 else NEUTRAL[(i // 3) % len(NEUTRAL)]
        i += 1
        if session.engine.state.node == GATE and "north" in action:
            continue
        session.play(action)
        if session.engine.state.ending or session.engine.state.node == THRONE:
            raise RuntimeError(f"the game reached {session.engine.state.node} at turn {session.engine.state.turn}")
    data = session.snapshot(complete=True)
    memory.close()
    return data


def whole_document(data: bytes, folder: Path) -> dict[str, Any]:
    """The document of the save ``data`` as a load reads it (written to ``folder`` and read back)."""
    store = SlotStore(folder)
    store.write("base", data)
    return store.read("base").save.model_dump(mode="json")


def grown(base: dict[str, Any], turns: int) -> dict[str, Any]:
    """``base``, its turns repeated up to ``turns`` (see the module docstring)."""
    doc: dict[str, Any] = orjson.loads(orjson.dumps(base))
    log, summaries, changes = doc["memory"]["log"], doc["memory"]["summaries"], doc["history"]["turns"]
    told = [e for e in log if e["action"]]
    last = doc["game"]["turn"]
    for turn in range(last + 1, turns + 1):
        log.append(dict(told[(turn - 1) % len(told)], turn=turn))
        changes.append(dict(changes[(turn - 1) % len(changes)], turn=turn))
        if turn % 5 == 0:
            summaries.append(dict(summaries[(turn // 5) % len(summaries)], first_turn=turn - 4, turn=turn))
    doc["game"]["turn"] = doc["turn"] = max(turns, last)
    doc["memory"]["last_consolidated_turn"] = max(s["turn"] for s in summaries)
    return doc


def written(pack: ContentPack, doc: dict[str, Any], store: SlotStore, name: str) -> tuple[int, int]:
    """``doc`` written to slot ``name`` by the real save code, memory and history encoded as the game encodes them;
    the slot file's bytes and the whole game's (the file and every part in the folder)."""
    state = GameState.model_validate(doc["game"])
    memory = MemoryState.model_validate(doc["memory"])
    history = GameHistory(GameState.model_validate(doc["history"]["start"]), doc["history"]["turns"])
    data = encode(
        pack,
        state,
        StateEncoder().encode_parted(memory),
        kind="autosave",
        session_id=memory.session_id,
        line=doc["session_id"],
        history=history.saved(parted=True),
    )
    store.write(name, data)
    parts = sum(p.stat().st_size for p in store.parts.folder.glob("*.json")) if store.parts.folder.exists() else 0
    return len(data), len(data) + parts


def loaded_and_autosaved(pack: ContentPack, folder: Path, name: str, repeats: int) -> dict[str, Any]:
    """Slot ``name`` loaded in a fresh session, then a turn played and autosaved ``repeats`` times (timed)."""
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, background=False)
    memory.prepare()
    game = GameSession(
        TurnPipeline(pack, new_game(pack), narrator, memory), SlotStore(folder), slot=name, autosave_every=0
    )
    started = time.perf_counter()
    game.load(name)
    load_s = time.perf_counter() - started
    times = []
    for i in range(repeats + 1):
        game.play(ACTIONS[i % len(ACTIONS)])
        started = time.perf_counter()
        game.autosave()
        game.wait_for_autosave()
        if i:  # the first checks the parts the load read, once: not a turn's cost
            times.append((time.perf_counter() - started) * 1000)
    failed = [n for n in game.notices if "Autosave failed" in n]
    game.close(save=False)
    return {
        "load_s": load_s,
        "autosave_ms": statistics.median(times),
        "autosave_p90_ms": sorted(times)[max(0, int(len(times) * 0.9) - 1)],
        "slot_bytes_after": (folder / f"{name}.json").stat().st_size,
        "failed": failed[:1],
    }


def child(folder: Path, played: int, lengths: list[int], repeats: int) -> dict[str, Any]:
    """What one fresh process measures: the game played, grown to each length, written, loaded and autosaved."""
    pack = load_pack(content_root() / STORY)
    started = time.perf_counter()
    base = whole_document(played_game(pack, played), folder / "base")
    out: dict[str, Any] = {"played_s": time.perf_counter() - started, "played": base["turn"], "rows": []}
    for turns in lengths:
        name = f"long-{turns}"
        try:
            slot_bytes, whole_bytes = written(pack, grown(base, turns), SlotStore(folder / "slots"), name)
        except SaveError as exc:
            out["rows"].append({"turns": turns, "error": str(exc)})
            continue
        gc.collect()
        row = {"turns": turns, "slot_bytes": slot_bytes, "whole_bytes": whole_bytes}
        out["rows"].append(row | loaded_and_autosaved(pack, folder / "slots", name, repeats))
        gc.collect()
    return out


_CHILD = "import json, sys; from pathlib import Path; from bench.long_games import child; " + (
    "print(json.dumps(child(Path(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]))))"
)


def measure(code: Path, played: int, lengths: list[int], repeats: int) -> dict[str, Any]:
    """One fresh process in checkout ``code``: the game played, grown to each length, loaded and autosaved."""
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    with tempfile.TemporaryDirectory(prefix="storyecho-bench-long-") as folder:
        args = [folder, str(played), json.dumps(lengths), str(repeats)]
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *args], cwd=code, env=env, capture_output=True, text=True, timeout=1800
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no output")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def summary(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows ``bench.run_all`` shows: each length's autosave, the flat goal on the longest, its load."""
    rows = [r for r in result["rows"] if "autosave_ms" in r]
    out: list[dict[str, Any]] = []
    if not rows:
        return [
            {
                "target": "issue 43: long games stay savable",
                "measure": "autosave",
                "value": "no game saved",
                "goal": "saves",
                "met": False,
            }
        ]
    shortest, longest = rows[0], rows[-1]
    for row in rows:
        ratio = row["autosave_ms"] / shortest["autosave_ms"]
        out.append(
            {
                "target": "issue 43: long games stay savable",
                "measure": f"autosave time per turn at {row['turns']:,} turns (median of a turn's autosave; slot "
                f"file {row['slot_bytes_after'] / 1e6:.2f} MB, whole game {row['whole_bytes'] / 1e6:.1f} MB)",
                "value": f"{row['autosave_ms']:.1f} ms ({ratio:.2f}x the {shortest['turns']:,}-turn game's)",
                "goal": "the reference of the flat goal"
                if row is shortest
                else f"flat: <= {FLAT:.0f}x the {shortest['turns']:,}-turn game's",
                "met": None if row is shortest else ratio <= FLAT and not row["failed"],
            }
        )
    out.append(
        {
            "target": "issue 43: long games stay savable",
            "measure": f"load of the longest game ({longest['turns']:,} turns, {longest['whole_bytes'] / 1e6:.1f} MB "
            "in parts): GameSession.load",
            "value": f"{longest['load_s']:.2f} s",
            "goal": f"loads, in <= {LOAD_S:.0f} s",
            "met": longest["load_s"] <= LOAD_S,
        }
    )
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"{'code':<9} {'turns':>7} {'slot MB':>8} {'whole MB':>9} {'load s':>7} {'autosave ms':>12} {'p90 ms':>7}"]
    for code, measured in result["codes"].items():
        for row in measured["rows"]:
            if "error" in row:
                lines.append(f"{code:<9} {row['turns']:>7,} cannot be saved: {row['error']}")
                continue
            lines.append(
                f"{code:<9} {row['turns']:>7,} {row['slot_bytes_after'] / 1e6:>8.2f} {row['whole_bytes'] / 1e6:>9.1f} "
                f"{row['load_s']:>7.2f} {row['autosave_ms']:>12.1f} {row['autosave_p90_ms']:>7.1f}"
            )
    lines += [f"goal {_said(r['met'])} {r['measure']}: {r['value']} ({r['goal']})" for r in result["summary"]]
    return "\n".join(lines)


def _said(met: bool | None) -> str:
    return "reported" if met is None else "met     " if met else "NOT MET "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 turns played, fewer repeats (bench.run_all)")
    parser.add_argument("--played", type=int, default=1000, help="turns played for real before the game is grown")
    parser.add_argument("--turns", default="1000,50000", help="the lengths measured, shortest first")
    parser.add_argument("--repeats", type=int, default=30, help="autosaves timed at each length")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "long_games.json")
    args = parser.parse_args(argv)
    lengths = [int(n) for n in args.turns.split(",")]
    repeats = 12 if args.quick else args.repeats
    played = min(args.played, 300) if args.quick else args.played
    started = time.perf_counter()
    codes = {"ours": measure(ROOT, played, lengths, repeats)}
    result = {"codes": codes, "summary": summary(codes["ours"]), "seconds": round(time.perf_counter() - started, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
