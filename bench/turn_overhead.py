"""Turn overhead: everything a turn costs but the narrator's own generation, in a big game.

Target 2 of issue 11: with 10,000 history memories and 1,000 Story Bible
entries, the p95 of a turn's overhead (recall, embedding the query, store
queries, composing, validating, applying, recording, autosave, and any wait
for background work) is at most 3x one query embedding measured in the same
run, and under 5% of a local-model turn.

What runs:

1. A Misty Forest game built with the game's own factories (``wiring.make_session``:
   the default embedder from ``wiring.make_embedder``, the default Chroma
   ``PersistentClient`` under a temporary data dir, the background worker, the
   session's autosave every 5 turns), whose memory holds a generated history:
   ``--episodes`` played turns (10,000; in the log, indexed as memories with
   their neighbouring turns as context), a summary every 5 turns (2,000, in the
   history collection) and ``--bible`` active Story Bible entries (1,000, with
   varied keys, types and NPCs) beside the story's seeded ones. The state is
   built directly (no turn is played to make it), restored into memory, and
   embedded once; the data dir (Chroma index and the save) is cached under
   ``bench/.cache/`` (git-ignored), keyed by the sizes and the embedder, so a
   later run copies it and loads the save: the restore finds every vector in
   the store and embeds nothing.
2. ``--turns`` turns (60; ``--quick`` 30) played through ``GameSession.play``
   with the scripted narrator, after ``--warmup`` turns that are not counted.
   A turn's overhead is its wall time minus the time spent inside the
   narrator's ``narrate`` calls (a timing wrapper around the narrator), so it
   holds recall (and any wait for consolidation or restore), compose,
   validation, the rules, recording and the autosave (every 5th turn).
   The narrator takes ``--narrator-ms`` (1,000) a call, as a model does (the
   local SmolLM2 takes about 2 s a turn here): the memory worker embeds the
   last turn and consolidates in that time, as in a real game; a turn that
   still waits for it counts. One query embedding
   (``embedder.embed([action])``, warmed up first) is timed in every turn, at
   the end of the narrator's pause. Then ``--instant-turns`` (60; ``--quick``
   20) turns with an instant narrator, the worst case: the worker's embedding
   and consolidation then compete with the next turns (reported apart, with
   the query embedding timed right after each turn). The paced turns whose
   action was played before (warm-up included) are also reported apart, as
   information: their query vectors are remembered, so they show what a turn
   costs with no embedding in it.
3. ``--local-turns`` turns (3) played the same way with the local llama.cpp
   narrator (the bundled SmolLM2, default settings): their wall time is the
   local-model turn the overhead is compared with.

Writes ``bench/results/turn_overhead.json`` (``summary``: rows of target,
measure, value, goal, met) and prints a table.

    python -m bench.turn_overhead [--quick] [--embedder onnx|torch|auto] [--rebuild]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np

from bench import memory_lag
from game.config import MemorySettings, Settings, load_settings
from game.engine.session import GameSession
from game.llm.base import PromptBundle
from game.memory.bible import StoryBible
from game.memory.records import BibleEntry, Episode, MemoryState, Summary
from game.wiring import make_embedder, make_session
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import GameState, new_game

STORY = "fantasy_001"
P95_GOAL_MS = 25.0
"""Issue 23's goal for the turn overhead: p95 at most 25 ms at 10,000 memories on this machine (invisible beside
a model's turn); issue 11's 3x one embedding is blocked (its note)."""
SLOT = "bench"
CACHE = Path(os.environ.get("STORYECHO_BENCH_CACHE") or Path(__file__).parent / ".cache")
"""Where the built big game is kept between runs (git-ignored)."""
RESULTS = Path(__file__).parent / "results" / "turn_overhead.json"
ACTIONS = [
    *memory_lag.ACTIONS,  # the memory-lag bench's round, then two recall questions
    "what did I promise Garrick?",
    "what did I find on the Fogbound Path?",
]
WORDS = [
    "lantern",
    "moss",
    "river",
    "bridge",
    "ember",
    "whisper",
    "rune",
    "shard",
    "tower",
    "cellar",
    "ferry",
    "bell",
    "crow",
    "willow",
    "ash",
    "lake",
    "storm",
    "cloak",
    "dagger",
    "ledger",
    "map",
    "compass",
    "ring",
    "bone",
    "salt",
    "copper",
    "wheel",
    "mill",
    "forge",
    "harp",
    "candle",
    "thorn",
    "frost",
    "meadow",
    "quarry",
    "shrine",
    "vault",
    "chain",
    "hollow",
    "beacon",
    "reed",
    "marsh",
    "cairn",
    "orchard",
    "kiln",
    "loom",
    "anvil",
]


# ----------------------------------------------------------------- the data
def generate_state(pack: ContentPack, episodes: int, bible: int, seed: int = 11) -> MemoryState:
    """A memory state as after ``episodes`` played turns: the log, a summary every 5 turns, ``bible`` facts."""
    rng = random.Random(seed)
    nodes = list(pack.nodes.values())
    npcs = list(pack.npcs.values())
    items = list(pack.items.values())

    def phrase(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    state = MemoryState(session_id="bench" + hashlib.sha1(f"{episodes}:{bible}:{seed}".encode()).hexdigest()[:7])
    log = state.log
    for turn in range(1, episodes + 1):
        node = rng.choice(nodes)
        npc = rng.choice(npcs)
        item = rng.choice(items)
        kind = rng.randrange(6)
        if kind == 0:
            action, narration = "look", f"{node.description[:220]} You notice a {phrase(2)} near the {phrase(1)}."
        elif kind == 1:
            action = f"ask {npc.name.split()[0].lower()} about the {phrase(1)}"
            narration = f'{npc.name} says: "The {phrase(2)} by the {phrase(2)} was never what it seemed." ' + phrase(8)
        elif kind == 2:
            action = f"take the {item.name.lower()}"
            narration = f"You take the {item.name}. {item.description[:160]}"
        elif kind == 3:
            action = f"say I keep a {phrase(2)} for the {phrase(1)}"
            narration = f"You speak of the {phrase(3)}; {npc.name} listens. {phrase(10)}."
        elif kind == 4:
            action = f"go {rng.choice(['north', 'south', 'east', 'west'])}"
            narration = f"You make your way to {node.name}. {node.description[:180]}"
        else:
            action = f"examine the {phrase(1)}"
            narration = f"The {phrase(2)} bears marks of {phrase(3)}. Somewhere a {phrase(1)} creaks."
        events = [f"items_gained {item.id}"] if kind == 2 else []
        log.append(
            Episode(
                turn=turn,
                action=action,
                narration=narration,
                node=node.name,
                npcs=[npc.id] if kind in (1, 3) else [],
                events=events,
                when=f"Day {1 + turn // 48}, {8 + (turn % 16):02d}:00",
                importance=50 if events else 60 if kind == 3 else 20,
            )
        )
        if turn % 5 == 0:
            state.summaries.append(
                Summary(
                    first_turn=turn - 4,
                    turn=turn,
                    text=f"At {node.name} the player met {npc.name}, spoke of the {phrase(3)} and found {phrase(4)}. "
                    + phrase(20),
                    node=node.name,
                    npcs=[npc.id],
                    synopsis=f"The traveller wanders the forest seeking Hal; lately {phrase(12)}.",
                )
            )
    state.last_consolidated_turn = episodes - episodes % 5
    StoryBible(state, pack).seed_from_content()
    for n in range(bible):
        npc = rng.choice(npcs)
        turn = rng.randint(1, episodes)
        roll = rng.randrange(10)
        if roll < 5:
            entry_type, key, title = "event", f"said:{phrase(2).replace(' ', '-')}-{n}", f"The {phrase(2)}"
        elif roll < 6:
            entry_type, key, title = "open_thread", f"thread:promise:{npc.id}-{n}", f"Promise to {npc.name}"
        elif roll < 7:
            entry_type, key, title = "relationship", f"relationship:{npc.id}-{n}", f"{npc.name}'s regard"
        elif roll < 8:
            entry_type, key, title = "location", f"location:{rng.choice(list(pack.nodes))}:{n}", "A place remembered"
        elif roll < 9:
            entry_type, key, title = "character", f"character:player:{phrase(1)}-{n}", "The player's past"
        else:
            entry_type, key, title = "event", f"event:with:{npc.id}:{n}", f"Last time with {npc.name}"
        state.bible.append(
            BibleEntry(
                id=f"bible-{state.next_entry}",
                entry_type=entry_type,
                canonical_key=key,
                title=title,
                content=f"{npc.name} and the {phrase(3)}: {phrase(12)}",
                importance=rng.choice([40, 50, 55, 60, 65, 70, 80]),
                status="active",
                source_turn=turn,
                npcs=[npc.id],
                source="memory_note" if roll in (0, 1, 8) else "consolidation",
            )
        )
        state.next_entry += 1
    return state


def big_game(pack: ContentPack, turn: int) -> GameState:
    state = new_game(pack)
    state.turn = turn
    state.clock_minutes += turn * 10
    return state


# ---------------------------------------------------------------- the setup
class WordMeanEmbedder:
    """Builds the big game's vectors fast: a text's vector is the normalised mean of its words' real vectors.

    Embedding 22,000 texts of up to 256 tokens takes the better part of an hour on this shared CPU; the
    mean of word vectors (each word embedded once by the real model) lies in the same space at a
    fraction of the cost. It carries the real embedder's name and version, so the vectors land under
    the ids and collections the real embedder's game looks up. Only the generated history is embedded
    this way; the turns the bench plays, the queries and the knowledge base use the real model.
    """

    def __init__(self, real: Any) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.words: dict[str, np.ndarray] = {}

    def embed(self, texts: Any) -> np.ndarray:
        tokenised = [re.findall(r"[a-z0-9']+", text.lower()) or ["empty"] for text in texts]
        new = sorted({w for words in tokenised for w in words} - set(self.words))
        if new:
            for start in range(0, len(new), 256):
                chunk = new[start : start + 256]
                self.words.update(zip(chunk, self.real.embed(chunk), strict=True))
        out = np.stack([np.mean([self.words[w] for w in words], axis=0) for words in tokenised]).astype(np.float32)
        normalised: np.ndarray = out / np.linalg.norm(out, axis=1, keepdims=True)
        return normalised


def bench_settings(data_dir: Path, embedder: str | None) -> Settings:
    memory: dict[str, Any] = {}
    if embedder and "embedder" in MemorySettings.model_fields:
        memory["embedder"] = embedder
    return load_settings(llm="scripted", data_dir=data_dir, memory=memory or None)


def cache_key(args: argparse.Namespace, model: str) -> str:
    text = f"v1:{args.episodes}:{args.bible}:{model}"
    return f"{args.episodes}-{args.bible}-" + hashlib.sha1(text.encode()).hexdigest()[:10]


def build(cache_dir: Path, args: argparse.Namespace) -> float:
    """Build the big game's data dir (save + Chroma index) under ``cache_dir``; returns seconds."""
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="turn-overhead-build-"))
    try:
        settings = bench_settings(work / "data", args.embedder)
        session, _ = make_session(STORY, settings, slot=SLOT)
        pack = session.engine.pack
        state = generate_state(pack, args.episodes, args.bible)
        last = [0.0]

        def progress(label: str, done: int, total: int) -> None:
            if time.perf_counter() - last[0] > 10 or done == total:
                last[0] = time.perf_counter()
                print(f"  {label}: {done}/{total} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

        memory: Any = session.engine.memory
        memory.embedder = WordMeanEmbedder(memory.embedder)  # the indexes made by restore embed with it
        memory.restore(state, progress=progress)
        session.engine.state = big_game(pack, args.episodes)
        session.save(SLOT)
        session.close(save=False)
        if cache_dir.exists():
            shutil.rmtree(cache_dir)
        cache_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(work / "data", cache_dir / "data")
        (cache_dir.parent / ".gitignore").write_text("*\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return time.perf_counter() - started


def rebuild(cache_dir: Path, args: argparse.Namespace) -> float:
    print(f"building the big game ({args.episodes} turns, {args.bible} Bible entries) in {cache_dir}", file=sys.stderr)
    return round(build(cache_dir, args), 1)


def load(cache_dir: Path, work: Path, args: argparse.Namespace, embedder: Any) -> tuple[GameSession, float, int]:
    """A session of the cached big game, from a copy of its data dir; (session, seconds, vectors still pending)."""
    started = time.perf_counter()
    shutil.copytree(cache_dir / "data", work / "data")
    settings = bench_settings(work / "data", args.embedder)
    session, _ = make_session(STORY, settings, slot=SLOT, embedder=embedder)
    memory: Any = session.engine.memory
    pending = len(memory.memories.pending_ids() | memory.history.pending_ids())
    return session, time.perf_counter() - started, pending


class TimedNarrator:
    """The pipeline's narrator, with the time spent inside ``narrate`` added up."""

    def __init__(self, inner: Any, think_s: float = 0.0, probe: Any = None) -> None:
        self.inner = inner
        self.think_s = think_s
        self.probe = probe
        """Called at the end of the pause (the memory worker idle by then, as when a real model answers)."""
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        """CPU time of the calling thread inside ``narrate`` (the probe's embedding included)."""

    def narrate(self, bundle: PromptBundle) -> str:
        started = time.perf_counter()
        cpu = time.thread_time()
        try:
            if self.think_s:
                time.sleep(self.think_s)  # a model's generation time: the CPU is free for the memory worker
                if self.probe is not None:
                    self.probe(bundle.action)
            return str(self.inner.narrate(bundle))
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += time.thread_time() - cpu

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def play(session: GameSession, narrator: TimedNarrator, action: str) -> tuple[float, float, dict[str, float]]:
    """Play one action; returns (wall ms, narrator ms, stage timings).

    The timings also hold ``cpu``: the CPU time of the thread that played the turn (what it computed, not
    what it waited for: another process, the background threads, a sleep) outside the narrator, as extra detail.
    """
    narrator.seconds = 0.0
    narrator.cpu_seconds = 0.0
    started = time.perf_counter()
    cpu = time.thread_time()
    result = session.play(action)
    wall = (time.perf_counter() - started) * 1000
    cpu_ms = (time.thread_time() - cpu - narrator.cpu_seconds) * 1000
    if not result.ok:
        raise RuntimeError(f"turn failed: {result.error}")
    timings = dict(result.trace.timings_ms)
    timings["wait"] = float(result.trace.memory.retrieval_meta.get("wait_ms", 0.0)) if result.trace.memory else 0.0
    timings["cpu"] = round(cpu_ms, 2)
    return wall, narrator.seconds * 1000, timings


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else 0.0


def run(args: argparse.Namespace) -> dict[str, Any]:
    pack = load_pack(content_root() / STORY)
    probe = bench_settings(Path(tempfile.gettempdir()), args.embedder)
    embedder = make_embedder(probe)
    if embedder is None:
        raise SystemExit("no embedder could load: this bench measures the default (embedding) configuration")
    model = f"{type(embedder).__name__}:{embedder.model_name}:{embedder.model_version}"
    cache_dir = CACHE / cache_key(args, model)
    cold_s = None
    if args.rebuild or not (cache_dir / "data" / f"{SLOT}.json").is_file():
        cold_s = rebuild(cache_dir, args)
    work = Path(tempfile.mkdtemp(prefix="turn-overhead-"))
    try:
        session, load_s, pending = load(cache_dir, work, args, embedder)
        if pending > 50:  # a cache made by other code (vector ids or collections changed): build it again
            print(f"the cache is stale ({pending} vectors missing); rebuilding", file=sys.stderr)
            session.close(save=False)
            shutil.rmtree(work / "data", ignore_errors=True)
            cold_s = rebuild(cache_dir, args)
            session, load_s, pending = load(cache_dir, work, args, embedder)
        settings = bench_settings(work / "data", args.embedder)
        memory: Any = session.engine.memory
        for text in ("warm up the embedder", "where is hal?", "look"):
            embedder.embed([text])
        scenarios = {
            "paced": scenario(session, embedder, args.turns, args.warmup, args.narrator_ms / 1000),
            "instant": scenario(session, embedder, args.instant_turns, args.warmup, 0.0),
        }
        local = local_turns(session, pack, settings, args.local_turns)
        memory_sizes = {
            "log": len(memory.state.log),
            "summaries": len(memory.state.summaries),
            "bible_active": sum(1 for e in memory.state.bible if e.status == "active"),
            "memories_indexed": len(memory.memories.items),
            "history_indexed": len(memory.history.items),
            "save_bytes": (work / "data" / f"{SLOT}.json").stat().st_size,
        }
        session.close(save=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return summarise(args, scenarios, local, model, cold_s, load_s, pending, memory_sizes)


def scenario(session: GameSession, embedder: Any, turns: int, warmup: int, think_s: float) -> list[dict[str, Any]]:
    """Play ``warmup`` + ``turns`` turns, the scripted narrator taking ``think_s`` a call; rows of the counted ones.

    One query embedding is timed per turn: with a pause, at its end (inside the narrator's time, the memory
    worker idle as when a model answers); without, right after the turn (the worker busy for both).
    """
    probes: list[float] = []

    def probe(text: str) -> None:
        started = time.perf_counter()
        embedder.embed([text])
        probes.append((time.perf_counter() - started) * 1000)

    narrator = TimedNarrator(getattr(session.engine.narrator, "inner", session.engine.narrator), think_s, probe)
    session.engine.narrator = narrator
    rows = []
    played: set[str] = set()
    for i in range(warmup + turns):
        action = ACTIONS[i % len(ACTIONS)]
        repeat = action in played  # its query vectors are remembered (CachedEmbedder): the turn embeds nothing
        played.add(action)
        probes.clear()
        wall, narrate_ms, timings = play(session, narrator, action)
        if not probes:
            probe(action)
        if i >= warmup:
            rows.append(
                {
                    "turn": session.engine.state.turn,
                    "action": action,
                    "wall_ms": round(wall, 2),
                    "narrate_ms": round(narrate_ms, 2),
                    "overhead_ms": round(wall - narrate_ms, 2),
                    "embed_ms": round(probes[0], 2),
                    "autosave": session.engine.state.turn % session.autosave_every == 0,
                    "repeat": repeat,
                    "stages": timings,
                }
            )
    return rows


def stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    overhead = [r["overhead_ms"] for r in rows]
    embeds = [r["embed_ms"] for r in rows]
    stages = sorted({k for r in rows for k in r["stages"]} - {"narrate", "cpu"})
    cpu = [r["stages"].get("cpu", 0.0) for r in rows]
    saves = [r["overhead_ms"] for r in rows if r["autosave"]]
    return {
        "turns": len(rows),
        "overhead_ms": {
            "median": round(statistics.median(overhead), 2),
            "p95": round(percentile(overhead, 95), 2),
            "max": round(max(overhead), 2),
        },
        "autosave_turn_overhead_ms": {
            "median": round(statistics.median(saves), 2) if saves else None,
            "max": round(max(saves), 2) if saves else None,
        },
        "query_embedding_ms": {"median": round(statistics.median(embeds), 2), "p95": round(percentile(embeds, 95), 2)},
        "turn_cpu_ms": {"median": round(statistics.median(cpu), 2), "p95": round(percentile(cpu, 95), 2)},
        "stage_ms_median": {k: round(statistics.median([r["stages"].get(k, 0.0) for r in rows]), 2) for k in stages},
        "stage_ms_p95": {k: round(percentile([r["stages"].get(k, 0.0) for r in rows], 95), 2) for k in stages},
    }


def local_turns(session: GameSession, pack: ContentPack, settings: Settings, turns: int) -> list[dict[str, float]]:
    """Wall time of ``turns`` turns narrated by the local llama.cpp model (the bundled SmolLM2)."""
    if turns <= 0:
        return []
    from game.llm.local import LocalNarrator

    try:
        inner = LocalNarrator(settings.local, pack)
    except Exception as exc:  # noqa: BLE001 - reported, the rest of the bench stands
        print(f"local narrator unavailable: {exc}", file=sys.stderr)
        return []
    narrator = TimedNarrator(inner)
    scripted = session.engine.narrator
    session.engine.narrator = narrator
    out = []
    try:
        play(session, narrator, "look")  # loads the model
        for i in range(turns):
            wall, narrate_ms, _ = play(session, narrator, ACTIONS[(i + 1) % len(ACTIONS)])
            out.append({"wall_ms": round(wall, 1), "narrate_ms": round(narrate_ms, 1)})
    finally:
        session.engine.narrator = scripted
    return out


def summarise(
    args: argparse.Namespace,
    scenarios: dict[str, list[dict[str, Any]]],
    local: list[dict[str, float]],
    model: str,
    cold_s: float | None,
    load_s: float,
    pending: int,
    sizes: dict[str, int],
) -> dict[str, Any]:
    found = {name: stats(rows) for name, rows in scenarios.items() if rows}
    paced = found["paced"]
    p95, med = paced["overhead_ms"]["p95"], paced["overhead_ms"]["median"]
    embed = paced["query_embedding_ms"]["median"]
    ratio = p95 / embed if embed else float("inf")
    called = [t["wall_ms"] for t in local if t["narrate_ms"] >= 50]  # prose mode skips the model on some turns
    local_ms = statistics.median(called) if called else None
    pause = f"narrator {args.narrator_ms:g} ms a turn"
    summary = [
        {
            "target": "2 turn overhead",
            "measure": f"overhead p95 / median query embedding ({pause})",
            "value": f"{ratio:.2f}x ({p95:.1f} ms / {embed:.1f} ms)",
            "goal": "<= 3x",
            "met": ratio <= 3,
        },
        {
            "target": "2 turn overhead (issue 23's goal)",
            "measure": f"overhead p95 ({pause}; {args.episodes:,} memories)",
            "value": f"{p95:.1f} ms",
            "goal": f"<= {P95_GOAL_MS:.0f} ms",
            "met": p95 <= P95_GOAL_MS,
        },
        {
            "target": "2 turn overhead (information)",
            "measure": f"overhead median ({pause})",
            "value": f"{med:.1f} ms ({med / embed:.2f}x the query embedding)",
            "goal": "reported",
            "met": None,
        },
    ]
    again = [r["overhead_ms"] for r in scenarios["paced"] if r.get("repeat")]
    if again and embed:
        a50, a95 = statistics.median(again), percentile(again, 95)
        summary.append(
            {
                "target": "2 turn overhead (information)",
                "measure": "overhead median / p95 of the turns whose action was played before (its vectors "
                f"remembered: the turn embeds nothing; {pause})",
                "value": f"{a50:.1f} / {a95:.1f} ms ({a50 / embed:.2f}x / {a95 / embed:.2f}x the query embedding; "
                f"{len(again)} turns)",
                "goal": "reported",
                "met": None,
            }
        )
    if local_ms:
        share = p95 / local_ms
        summary.append(
            {
                "target": "2 turn overhead",
                "measure": "overhead p95 / median local-model turn (SmolLM2, llama.cpp)",
                "value": f"{100 * share:.2f}% ({p95:.1f} ms / {local_ms / 1000:.2f} s)",
                "goal": "< 5%",
                "met": share < 0.05,
            }
        )
    else:
        summary.append(
            {
                "target": "2 turn overhead",
                "measure": "overhead / local-model turn",
                "value": "not measured (no local narrator)",
                "goal": "< 5%",
                "met": False,
            }
        )
    if "instant" in found:
        instant = found["instant"]
        i95, iembed = instant["overhead_ms"]["p95"], instant["query_embedding_ms"]["median"]
        summary.append(
            {
                "target": "2 turn overhead (worst case, information)",
                "measure": "overhead p95 / median query embedding (instant narrator: the worker's embedding and "
                "consolidation land on the next turns)",
                "value": f"{i95 / iembed:.2f}x ({i95:.1f} ms / {iembed:.1f} ms; "
                f"median {instant['overhead_ms']['median']:.1f} ms)",
                "goal": "reported",
                "met": None,
            }
        )
    return {
        "summary": summary,
        "config": {
            "episodes": args.episodes,
            "bible": args.bible,
            "turns": {name: len(rows) for name, rows in scenarios.items()},
            "warmup": args.warmup,
            "narrator_ms": args.narrator_ms,
            "embedder": model,
            "store": "chroma (PersistentClient)",
            "narrator": "scripted (overhead), local SmolLM2 (local turn)",
        },
        "memory": sizes,
        **{name: value for name, value in found.items()},
        "local_turn_ms": {"median": local_ms, "turns": local},
        "cold_build_s": cold_s,
        "load_s": round(load_s, 2),
        "pending_vectors_after_load": pending,
        "rows": scenarios,
    }


def table(result: dict[str, Any]) -> str:
    rows = [dict(r, met="reported" if r["met"] is None else r["met"]) for r in result["summary"]]
    keys = list(rows[0])
    widths = [max(len(str(r[k])) for r in [*rows, {k: k for k in keys}]) for k in keys]
    lines = ["  ".join(f"{k:<{w}}" for k, w in zip(keys, widths, strict=True))]
    lines += ["  ".join(f"{r[k]!s:<{w}}" for k, w in zip(keys, widths, strict=True)) for r in rows]
    for name in ("paced", "instant"):
        if name in result:
            part = result[name]
            lines.append("")
            lines.append(f"{name}: overhead {part['overhead_ms']}, query embedding {part['query_embedding_ms']}")
            lines.append(f"  CPU time of the playing thread (information): {part['turn_cpu_ms']}")
            lines.append(f"  stages, median ms: {part['stage_ms_median']}")
            lines.append(f"  stages, p95 ms:    {part['stage_ms_p95']}")
            lines.append(f"  autosave turns:    {part['autosave_turn_overhead_ms']}")
    lines.append("")
    lines.append(f"memory: {result['memory']}")
    lines.append(f"local-model turns: {result['local_turn_ms']}")
    lines.append(
        f"load {result['load_s']} s (pending vectors after load: {result['pending_vectors_after_load']}); "
        f"cold build: {result['cold_build_s'] if result['cold_build_s'] is not None else 'cached'} s"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 turns paced, 20 instant, 3 local")
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--instant-turns", type=int, default=None, help="turns with an instant narrator (worst case)")
    parser.add_argument("--local-turns", type=int, default=None)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--bible", type=int, default=1_000)
    parser.add_argument("--embedder", choices=["onnx", "torch", "auto"], default=None)
    parser.add_argument(
        "--narrator-ms",
        type=float,
        default=1000.0,
        help="the scripted narrator takes this long per call (a model's generation time), counted as narrator time",
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached big game")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    args.turns = args.turns if args.turns is not None else 30 if args.quick else 60
    args.local_turns = args.local_turns if args.local_turns is not None else 3 if args.quick else 5
    args.instant_turns = args.instant_turns if args.instant_turns is not None else 20 if args.quick else 60
    started = time.perf_counter()
    result = run(args)
    result["seconds"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result["summary"]) if args.json else table(result))
    print(f"({result['seconds']} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
