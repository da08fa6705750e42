"""Save and load time of a long game, beside a bare orjson dump/load of the same data.

Plays a real Misty Forest game of ``--turns`` turns (default 1,000: the
committed walkthroughs' actions cycled with neutral ones, never entering the
Throne of Shadows, so no ending is reached) with keyword memory (no
embeddings), then measures, ``--repeats`` times, interleaved in one run and in
a shuffled order each repeat (the machine is shared and noisy, so the figures
of each side must see the same noise):

- ``ours_write``: ``GameSession.snapshot(complete=True)`` (the memory's
  ``export_json``: the live models encoded by orjson, logged episodes reused
  from the previous save; then the save document) then ``SlotStore.write``
  (temporary file, fsync, hard-link backup, rename, fsync of the folder), with
  its two parts, and, measured apart, the snapshot split into its steps;
- ``bare_write``: ``orjson.dumps`` of the same document then
  open/write/close, no fsync (the requirement's baseline);
- ``bare_write_fsync``: the same with one fsync, so the cost of durability
  shows apart from the cost of our code;
- ``ours_load``: ``SlotStore.read`` (size check, read, strict parse and
  validation into the pydantic models) then ``check_against`` the story, and,
  measured apart, ``decode`` of bytes already in memory;
- ``bare_load``: read the file then ``orjson.loads``.

Files go to a temporary folder under ``--dir`` (default: the system's temporary
folder; it must be a real disk for fsync to mean anything). Reports the median
and p95 milliseconds, the ratios ours/bare (of the medians, and the median of
the per-repeat ratios), whether the 3x target holds, and, when it does not (or
with ``--profile``), where the time goes (cProfile).

    python bench/saves.py [--turns 1000] [--repeats 30] [--json] [--out bench/results/saves.json]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.saves.format import check_against, decode, encode
from game.saves.slots import SlotStore
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import new_game

ROOT = Path(__file__).resolve().parents[1]
WALKTHROUGHS = ROOT / "tests" / "walkthroughs"
STORY = "fantasy_001"
TARGET = 3.0
WARMUP = 3
SLOT = "bench"

NEUTRAL = [
    "look",
    "go north",
    "talk to garrick",
    "say my name is Ren",
    "go south",
    "ask alicia about silas",
    "say the fog never lifts here",
    "go east",
    "examine the milestone",
    "go west",
    "talk to elvin",
    "rest",
    "say I promised Garrick I would find Hal",
    "inventory",
]
GATE, THRONE = "shadow_gate", "shadow_throne"
"""Every ending of the story is reached in the throne room: the game never goes in."""

Timings = dict[str, float]


# ------------------------------------------------------------------- the game
def walkthrough_actions() -> list[str]:
    actions = []
    for path in sorted(WALKTHROUGHS.glob(f"{STORY}__*.txt")):
        lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
        actions += [line for line in lines if line and not line.startswith("#")]
    return actions


def play(pack: ContentPack, turns: int) -> tuple[GameSession, GameMemory]:
    """A game of ``turns`` committed turns: two walkthrough actions, then a neutral one, in a cycle."""
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, background=False)
    memory.prepare()
    engine = TurnPipeline(pack, new_game(pack), narrator, memory)
    session = GameSession(engine, None)  # played through the session, which keeps the game's history for saves
    walk = walkthrough_actions()
    i = 0
    while engine.state.turn < turns:
        if i > 3 * turns + 100:
            raise RuntimeError(f"only {engine.state.turn} turns committed after {i} actions")
        action = walk[(i - i // 3) % len(walk)] if i % 3 != 2 else NEUTRAL[(i // 3) % len(NEUTRAL)]
        i += 1
        if engine.state.node == GATE and "north" in action:
            continue
        session.play(action)
        if engine.state.ending or engine.state.node == THRONE:
            raise RuntimeError(f"the game reached {engine.state.node} ({engine.state.ending}) at turn {i}")
    return session, memory


# ------------------------------------------------------------- measurements
class Bench:
    """The operations measured, each returning its timings (ms) by name."""

    def __init__(self, session: GameSession, folder: Path) -> None:
        self.session = session
        self.pack = session.engine.pack
        self.store = SlotStore(folder / "slots")
        self.bare = folder / "bare.json"
        self.bare_fsync = folder / "bare_fsync.json"
        data = session.snapshot(complete=True)
        self.document: dict[str, Any] = orjson.loads(data)
        """The very document our save encodes, as orjson reads it back: the baseline dumps this."""
        self.save_bytes = len(data)
        self.store.write(SLOT, data)
        self.bare.write_bytes(data)
        self.bare_fsync.write_bytes(data)
        self.loaded_bytes = data

    def ours_write(self) -> Timings:
        t0 = time.perf_counter()
        data = self.session.snapshot(complete=True)
        t1 = time.perf_counter()
        self.store.write(SLOT, data)
        t2 = time.perf_counter()
        return {"ours_write": _ms(t0, t2), "ours_write.snapshot": _ms(t0, t1), "ours_write.slot_write": _ms(t1, t2)}

    def ours_snapshot_split(self) -> Timings:
        """What ``snapshot`` does, timed step by step (not written)."""
        engine = self.session.engine
        t0 = time.perf_counter()
        memory = engine.memory.export_json(complete=True)
        t1 = time.perf_counter()
        state = engine.state
        t2 = time.perf_counter()
        encode(self.pack, state, memory, kind="manual", session_id=engine.memory.session_id)
        t3 = time.perf_counter()
        return {
            "ours_snapshot.memory_dump": _ms(t0, t1),
            "ours_snapshot.state_dump": _ms(t1, t2),
            "ours_snapshot.encode": _ms(t2, t3),
        }

    def bare_write(self) -> Timings:
        return self._bare_write(self.bare, "bare_write", sync=False)

    def bare_write_fsync(self) -> Timings:
        return self._bare_write(self.bare_fsync, "bare_write_fsync", sync=True)

    def _bare_write(self, path: Path, name: str, *, sync: bool) -> Timings:
        t0 = time.perf_counter()
        data = orjson.dumps(self.document)
        t1 = time.perf_counter()
        with open(path, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        t2 = time.perf_counter()
        return {name: _ms(t0, t2), f"{name}.dumps": _ms(t0, t1), f"{name}.file_write": _ms(t1, t2)}

    def ours_load(self) -> Timings:
        t0 = time.perf_counter()
        loaded = self.store.read(SLOT)
        t1 = time.perf_counter()
        check_against(loaded.save, self.pack)
        t2 = time.perf_counter()
        if loaded.from_backup or loaded.save.turn != self.session.engine.state.turn:
            raise RuntimeError("the slot did not load as written")
        return {"ours_load": _ms(t0, t2), "ours_load.slot_read": _ms(t0, t1), "ours_load.check": _ms(t1, t2)}

    def ours_decode(self) -> Timings:
        """``decode`` alone: parse and validate bytes already in memory."""
        t0 = time.perf_counter()
        decode(self.loaded_bytes)
        return {"ours_load.decode_only": _ms(t0, time.perf_counter())}

    def bare_load(self) -> Timings:
        t0 = time.perf_counter()
        with open(self.bare, "rb") as handle:
            data = handle.read()
        t1 = time.perf_counter()
        orjson.loads(data)
        t2 = time.perf_counter()
        return {"bare_load": _ms(t0, t2), "bare_load.file_read": _ms(t0, t1), "bare_load.loads": _ms(t1, t2)}

    def operations(self) -> list[Callable[[], Timings]]:
        return [
            self.ours_write,
            self.ours_snapshot_split,
            self.bare_write,
            self.bare_write_fsync,
            self.ours_load,
            self.ours_decode,
            self.bare_load,
        ]


def _ms(start: float, end: float) -> float:
    return (end - start) * 1000


def measure(bench: Bench, repeats: int, seed: int = 7) -> dict[str, list[float]]:
    """Every operation once per repeat, in a shuffled order; the first ``WARMUP`` rounds are not kept."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {}
    for round_ in range(WARMUP + repeats):
        operations = bench.operations()
        rng.shuffle(operations)
        gc.collect()  # each round starts from the same heap; a collection inside an operation still counts
        for operation in operations:
            timings = operation()
            if round_ >= WARMUP:
                for name, ms in timings.items():
                    samples.setdefault(name, []).append(ms)
    return samples


# ------------------------------------------------------------------ profile
def profile(bench: Bench, calls: int = 5, top: int = 15) -> dict[str, str]:
    """The ``top`` functions by cumulative time of ``calls`` writes and of ``calls`` loads."""
    report = {}
    for name, operation in (("ours_write", bench.ours_write), ("ours_load", bench.ours_load)):
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            operation()
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.strip_dirs().sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top)
        report[name] = out.getvalue()
    return report


# ------------------------------------------------------------------ report
ROWS: list[tuple[str, str, str | None]] = [
    # (label, sample name, baseline sample name for the ratio)
    ("write: ours (snapshot + SlotStore.write)", "ours_write", "bare_write"),
    ("  snapshot (export + encode)", "ours_write.snapshot", "bare_write.dumps"),
    ("    memory export_json (apart)", "ours_snapshot.memory_dump", None),
    ("    (state: nothing to do)", "ours_snapshot.state_dump", None),
    ("    encode (apart)", "ours_snapshot.encode", None),
    ("  SlotStore.write (2 fsyncs, link, rename)", "ours_write.slot_write", "bare_write_fsync.file_write"),
    ("write: bare (orjson.dumps + write)", "bare_write", None),
    ("  orjson.dumps", "bare_write.dumps", None),
    ("  open/write/close", "bare_write.file_write", None),
    ("write: bare + 1 fsync", "bare_write_fsync", None),
    ("  open/write/fsync/close", "bare_write_fsync.file_write", None),
    ("write: ours vs bare + 1 fsync", "ours_write", "bare_write_fsync"),
    ("load: ours (SlotStore.read + check)", "ours_load", "bare_load"),
    ("  SlotStore.read", "ours_load.slot_read", None),
    ("  check_against", "ours_load.check", None),
    ("  decode of bytes in memory (apart)", "ours_load.decode_only", "bare_load.loads"),
    ("load: bare (read + orjson.loads)", "bare_load", None),
    ("  read", "bare_load.file_read", None),
    ("  orjson.loads", "bare_load.loads", None),
]


def stats(values: list[float]) -> dict[str, float]:
    array = np.array(values)
    return {
        "median_ms": round(float(np.median(array)), 3),
        "p95_ms": round(float(np.percentile(array, 95)), 3),
        "min_ms": round(float(array.min()), 3),
    }


def ratio(samples: dict[str, list[float]], ours: str, bare: str) -> dict[str, float]:
    """Ratio of the medians, and the median of the per-repeat ratios (each pair measured in the same round)."""
    paired = [a / b for a, b in zip(samples[ours], samples[bare], strict=True)]
    return {
        "of_medians": round(float(np.median(samples[ours]) / np.median(samples[bare])), 2),
        "paired_median": round(float(np.median(paired)), 2),
        "of_p95": round(float(np.percentile(samples[ours], 95) / np.percentile(samples[bare], 95)), 2),
    }


def summarise(samples: dict[str, list[float]]) -> dict[str, Any]:
    ratios = {
        "write_vs_bare": ratio(samples, "ours_write", "bare_write"),
        "write_vs_bare_fsync": ratio(samples, "ours_write", "bare_write_fsync"),
        "snapshot_vs_dumps": ratio(samples, "ours_write.snapshot", "bare_write.dumps"),
        "load_vs_bare": ratio(samples, "ours_load", "bare_load"),
        "decode_vs_loads": ratio(samples, "ours_load.decode_only", "bare_load.loads"),
    }
    return {
        "timings": {name: stats(values) for name, values in samples.items()},
        "ratios": ratios,
        "target": {
            "ratio": TARGET,
            "write_met": ratios["write_vs_bare"]["of_medians"] <= TARGET,
            "write_met_vs_bare_fsync": ratios["write_vs_bare_fsync"]["of_medians"] <= TARGET,
            "load_met": ratios["load_vs_bare"]["of_medians"] <= TARGET,
        },
    }


def table(result: dict[str, Any]) -> str:
    timings, ratios = result["timings"], result["ratios"]
    width = max(len(label) for label, _, _ in ROWS)
    lines = [
        f"{result['turns']}-turn save: {result['save_bytes']:,} bytes; {result['repeats']} interleaved repeats "
        f"(+{WARMUP} warm-up), files in {result['folder']}",
        "",
        f"{'':<{width}}  {'median ms':>10}  {'p95 ms':>9}  {'ours/bare':>9}",
    ]
    for label, name, baseline in ROWS:
        row = timings[name]
        versus = ""
        if baseline is not None:
            versus = f"{row['median_ms'] / timings[baseline]['median_ms']:.2f}x"
        lines.append(f"{label:<{width}}  {row['median_ms']:>10.2f}  {row['p95_ms']:>9.2f}  {versus:>9}")
    target = result["target"]

    def verdict(key: str, met: bool) -> str:
        r = ratios[key]
        return (
            f"{r['of_medians']:.2f}x (paired median {r['paired_median']:.2f}x, p95 {r['of_p95']:.2f}x): "
            f"{'MET' if met else 'NOT MET'}"
        )

    lines += [
        "",
        f"Target: within {TARGET:g}x of a bare orjson dump/load of the same data (ratio of medians).",
        f"  write vs bare dump + write (no fsync; the requirement's baseline)  {verdict('write_vs_bare', target['write_met'])}",  # noqa: E501
        f"  write vs bare dump + write + 1 fsync (like for like: both durable) {verdict('write_vs_bare_fsync', target['write_met_vs_bare_fsync'])}",  # noqa: E501
        f"  load vs bare read + orjson.loads (the requirement's baseline)      {verdict('load_vs_bare', target['load_met'])}",  # noqa: E501
        f"  (CPU only: snapshot vs orjson.dumps {ratios['snapshot_vs_dumps']['of_medians']:.2f}x, "
        f"decode vs orjson.loads {ratios['decode_vs_loads']['of_medians']:.2f}x)",
    ]
    return "\n".join(lines)


def run(turns: int, repeats: int, folder: Path | None, with_profile: bool) -> dict[str, Any]:
    pack = load_pack(content_root() / STORY)
    started = time.perf_counter()
    session, memory = play(pack, turns)
    play_seconds = time.perf_counter() - started
    work = Path(tempfile.mkdtemp(prefix="storyecho-bench-saves-", dir=folder))
    try:
        bench = Bench(session, work)
        samples = measure(bench, repeats)
        result: dict[str, Any] = {
            "turns": session.engine.state.turn,
            "repeats": repeats,
            "save_bytes": bench.save_bytes,
            "log_entries": len(memory.state.log),
            "summaries": len(memory.state.summaries),
            "bible_entries": len(memory.state.bible),
            "play_seconds": round(play_seconds, 1),
            "folder": str(work.parent),
            **summarise(samples),
        }
        target = result["target"]
        if with_profile or not (target["write_met"] and target["load_met"]):
            result["profile"] = profile(bench)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        memory.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary save folder goes")
    parser.add_argument("--profile", action="store_true", help="profile even when the target is met")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "saves.json")
    args = parser.parse_args(argv)
    result = run(args.turns, args.repeats, args.dir, args.profile)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "profile"}))
        return 0
    print(table(result))
    for name, text in result.get("profile", {}).items():
        print(f"\n--- cProfile: 5 x {name}\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
