"""Issue 24: the memory autopilot on the local narrator: time per turn and delivered recall, off and on.

A Misty Forest game plants the eight facts of ``bench/memory_delivery.py`` (its planting narrator, real
embeddings, Chroma) and plays 20 ordinary turns after them. From that same moment (``Memory.mark``, returned to
with ``restore``) it plays ``--turns`` ordinary turns narrated by SmolLM2 in llama.cpp (``LocalNarrator`` in
``full`` mode: the model reads the whole prompt, so prefill grows with it) twice: the autopilot off, then on with
a target of ``--share`` of the off run's median narrator time (or ``--target`` seconds). Each run reports the
narrator's median and p95 time per turn (all turns, and the second half: once the autopilot has settled), the
median prompt tokens, the budget at the end, and the delivered recall of the eight planted questions at that
budget (``probe`` of ``bench/memory_delivery.py``: the evidence is in the prompt the narrator would receive).

The two runs are sequential, not interleaved (the autopilot's state is the run's own); run it twice to see the
noise. Goals: the settled median within 15% of the target, and delivered recall the price of it, reported.

    python -m bench.autopilot [--turns 12] [--share 0.6] [--out bench/results/autopilot.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.memory_delivery import ORDINARY, PLANTS, PlantingNarrator, check_unplanted, probe
from bench.turn_overhead import percentile
from game.engine.autopilot import Autopilot
from game.engine.pipeline import TurnPipeline
from game.llm.local import LocalNarrator
from game.llm.settings import LocalSettings
from game.memory.manager import GameMemory
from game.memory.vectors.chroma import open_chroma
from game.memory.vectors.embedders import SentenceTransformerEmbedder
from game.text import DEFAULT_PROMPT_BUDGET
from game.world.loader import content_root, load_pack
from game.world.state import new_game

OUT = Path(__file__).resolve().parent / "results" / "autopilot.json"
SETTLED_WITHIN = 0.15
AFTER_PLANTS = 20


def play(engine: TurnPipeline, actions: list[str]) -> dict[str, Any]:
    seconds, tokens, notes = [], [], []
    for action in actions:
        result = engine.play(action)
        if result.trace.prompt is None or "narrate" not in result.trace.timings_ms:
            continue
        seconds.append(result.trace.timings_ms["narrate"] / 1000)
        tokens.append(result.trace.prompt.tokens)
        notes.append(result.trace.autopilot)
    half = seconds[len(seconds) // 2 :]
    return {
        "turns": len(seconds),
        "narrator_s_median": round(statistics.median(seconds), 2),
        "narrator_s_p95": round(percentile(seconds, 95), 2),
        "settled_s_median": round(statistics.median(half), 2),
        "prompt_tokens_median": statistics.median(tokens),
        "seconds": [round(s, 2) for s in seconds],
        "prompt_tokens": tokens,
        "autopilot": notes,
    }


def run(turns: int, share: float, target: float | None) -> dict[str, Any]:
    started = time.perf_counter()
    pack = load_pack(content_root() / "fantasy_001")
    check_unplanted(pack)
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    local = LocalNarrator(LocalSettings(mode="full"), pack)
    with tempfile.TemporaryDirectory() as folder:
        planting = PlantingNarrator(pack, {a: n for a, n, _, _ in PLANTS if n})
        memory = GameMemory(pack, planting, store=open_chroma(Path(folder)), embedder=embedder)
        engine = TurnPipeline(pack, new_game(pack), planting, memory)
        for action in [a for a, _, _, _ in PLANTS] + [ORDINARY[i % len(ORDINARY)] for i in range(AFTER_PLANTS)]:
            engine.play(action)
        memory.flush()
        moment, state = memory.mark(), engine.state
        actions = [ORDINARY[(AFTER_PLANTS + i) % len(ORDINARY)] for i in range(turns)]
        runs: dict[str, dict[str, Any]] = {}
        for name in ("off", "on"):
            memory.restore(moment.thawed())
            engine.state, engine.narrator = state.snapshot(), local
            if name == "on":
                target = target or round(share * runs["off"]["narrator_s_median"], 2)
                engine.autopilot = Autopilot(target, DEFAULT_PROMPT_BUDGET)
            runs[name] = play(engine, actions)
            budget = engine.autopilot.budget if engine.autopilot is not None else DEFAULT_PROMPT_BUDGET
            memory.flush()
            rows = probe(engine, (budget,))
            runs[name]["budget_end"] = budget
            runs[name]["delivered"] = round(sum(r[f"delivered@{budget}"] for r in rows) / len(rows), 3)
            runs[name]["retrieved"] = round(sum(r["retrieved"] for r in rows) / len(rows), 3)
        memory.close()
    settled = runs["on"]["settled_s_median"]
    return {
        "model": local.model_name,
        "turns": turns,
        "target_s": target,
        "runs": runs,
        "settled_within_target": settled <= (target or 0) * (1 + SETTLED_WITHIN),
        "seconds": round(time.perf_counter() - started, 1),
    }


def table(result: dict[str, Any]) -> str:
    off, on = result["runs"]["off"], result["runs"]["on"]
    rows = [
        ("narrator s per turn, median", off["narrator_s_median"], on["narrator_s_median"]),
        ("narrator s per turn, p95", off["narrator_s_p95"], on["narrator_s_p95"]),
        ("narrator s, second half (settled), median", off["settled_s_median"], on["settled_s_median"]),
        ("prompt tokens, median", off["prompt_tokens_median"], on["prompt_tokens_median"]),
        ("budget at the end", off["budget_end"], on["budget_end"]),
        ("retrieved recall (8 planted questions)", off["retrieved"], on["retrieved"]),
        ("delivered recall at that budget", off["delivered"], on["delivered"]),
    ]
    lines = [
        f"Memory autopilot, {result['model']} (local, full mode), {result['turns']} turns each, "
        f"target {result['target_s']} s",
        "",
        f"{'':44} {'off':>10} {'on':>10}",
    ]
    lines += [f"{label:44} {a!s:>10} {b!s:>10}" for label, a, b in rows]
    verdict = "MET" if result["settled_within_target"] else "NOT MET"
    lines.append(f"\nsettled median within {SETTLED_WITHIN:.0%} of the target: {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--share", type=float, default=0.6, help="target: this share of the off run's median")
    parser.add_argument("--target", type=float, default=None, help="target in seconds (instead of --share)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    result = run(args.turns, args.share, args.target)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(table(result))
    print(f"\n{result['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
