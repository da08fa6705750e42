"""Does background consolidation keep up with play? Summary and vector lag per turn.

Plays a scripted Misty Forest game of ``--turns`` quick turns with the default
memory (all-MiniLM-L6-v2 embeddings, Chroma under a temporary folder, the
background worker) and reads, for every turn, what recall saw:

- ``summaries``: consolidation summaries in the memory state at recall time,
  against the number the invariant requires (every summary of turns N-4..N
  exists before turn N+5 is recalled);
- ``pending_vectors``: texts still waiting for their vector;
- ``vector_lag_turns``: how many turns old the oldest pending vector is;
- whether the L3 synopsis reached the system prompt and the history block was
  filled;
- the wall time of the turn (median and p95), and the time recall spent waiting
  for the worker.

    python bench/memory_lag.py [--turns 480] [--json] [--out bench/results/memory_lag.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from game.memory.vectors.chroma import open_chroma
from game.memory.vectors.embedders import SentenceTransformerEmbedder
from game.world.loader import content_root, load_pack
from game.world.state import new_game

ACTIONS = [
    "look",
    "go east",
    "ask garrick about hal",
    "say my name is Ren",
    "go west",
    "examine the milestone",
    "go north",
    "take the healing herb",
    "go south",
    "rest",
    "say the fog never lifts here",
    "where is hal?",
]


def run(turns: int) -> dict[str, Any]:
    pack = load_pack(content_root() / "fantasy_001")
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    narrator = ScriptedNarrator(pack)
    config = MemoryConfig()
    interval = config.summary_interval_turns
    rows = []
    with tempfile.TemporaryDirectory() as index_dir:
        memory = GameMemory(pack, narrator, store=open_chroma(Path(index_dir)), embedder=embedder, config=config)
        memory.prepare()
        engine = TurnPipeline(pack, new_game(pack), narrator, memory)
        started = time.perf_counter()
        i = 0
        while engine.state.turn < turns:
            t0 = time.perf_counter()
            result = engine.play(ACTIONS[i % len(ACTIONS)])
            elapsed = (time.perf_counter() - t0) * 1000
            i += 1
            if not result.ok or result.meta:
                continue
            context, prompt = result.trace.memory, result.trace.prompt
            assert context is not None and prompt is not None
            meta = context.retrieval_meta
            turn = result.turn
            required = max(0, (turn - interval) // interval)  # summaries of turns <= turn - interval
            history = context.block("history_recall")
            rows.append(
                {
                    "turn": turn,
                    "ms": round(elapsed, 1),
                    "wait_ms": float(meta.get("wait_ms", 0.0)),
                    "summaries": int(meta["summaries"]),
                    "required": required,
                    "pending_vectors": int(meta["pending_vectors"]),
                    "vector_lag_turns": int(meta.get("vector_lag_turns", -1)),
                    "synopsis": "Previously:" in prompt.system,
                    "history_items": len(history.items) if history else 0,
                }
            )
        seconds = time.perf_counter() - started
        memory.close()
    times = np.array([r["ms"] for r in rows])
    late = [r for r in rows if r["summaries"] < r["required"]]
    return {
        "turns": len(rows),
        "seconds": round(seconds, 1),
        "turn_ms_median": round(float(np.median(times)), 1),
        "turn_ms_p95": round(float(np.percentile(times, 95)), 1),
        "wait_ms_total": round(sum(r["wait_ms"] for r in rows), 1),
        "turns_missing_a_summary": len(late),
        "max_summary_deficit": max((r["required"] - r["summaries"] for r in rows), default=0),
        "final_summaries": rows[-1]["summaries"] if rows else 0,
        "max_pending_vectors": max((r["pending_vectors"] for r in rows), default=0),
        "max_vector_lag_turns": max((r["vector_lag_turns"] for r in rows), default=0),
        "first_synopsis_turn": next((r["turn"] for r in rows if r["synopsis"]), None),
        "turns_with_empty_history": sum(1 for r in rows if r["turn"] > 2 * interval and not r["history_items"]),
        "rows": rows,
    }


def table(result: dict[str, Any]) -> str:
    keys = [k for k in result if k != "rows"]
    width = max(len(k) for k in keys)
    return "\n".join(f"{k:<{width}}  {result[k]}" for k in keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=480)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "memory_lag.json")
    args = parser.parse_args(argv)
    result = run(args.turns)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    else:
        print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
