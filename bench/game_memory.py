"""Does the narrator's prompt still hold what matters after 100+ unrelated turns?

A scripted Misty Forest game plants facts (the player tells NPCs who they are,
makes a promise, shares a secret, learns where Hal was last seen, picks things
up), then plays 100+ unrelated turns, then asks probe questions. For each probe
we check whether its answer appears in what each memory would inject:

- ``ours``: the blocks ``GameMemory.recall`` returns for the question, plus the
  L1 window sent with them;
- ``l1_window``: the last ``window_messages`` messages only;
- ``summaries_top3``: the 8 most recent consolidation summaries plus the top 3
  summaries by cosine similarity to the question (the seed design's recall).

    python bench/game_memory.py [--filler 110] [--json] [--out bench/results/game_memory.json]

Prints a table per probe and the hit rate of each memory, with the mean tokens
each injects (estimated, 4 characters per token); ``--json`` prints the
summary object only.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.llm.tokens import estimate_tokens
from game.memory.embedders import SentenceTransformerEmbedder
from game.memory.manager import GameMemory, MemoryConfig
from game.memory.stores import open_chroma
from game.world.loader import content_root, load_pack
from game.world.state import new_game

PLANT = [
    "my name is Ren",
    "I come from the salt marshes of Vel",
    "go east",
    "ask garrick about hal",
    "tell garrick I promise to bring Hal home before the first snow",
    "tell garrick my secret is that I cannot swim",
    "take the tonic",
    "go west",
    "say I buried my father's ring under the crooked willow",
    "go north",
    "take the healing herb",
    "go north",
    "ask alicia about her mother",
    "tell alicia my sister Mira waits for me in Westhold",
    "go south",
    "go south",
    "say I owe the ferryman twelve silver coins",
    "say my favourite song is the Lament of the Tide",
]
FILLER = [
    "look",
    "go east",
    "examine the shelves",
    "rest",
    "go west",
    "examine the milestone",
    "say the fog never lifts here",
    "look around",
    "wait",
    "listen to the owls",
]
PROBES = [
    ("what is my name?", "Ren"),
    ("where do I come from?", "salt marshes"),
    ("where is Hal?", "Shadow Swamp"),
    ("what did I promise Garrick?", "first snow"),
    ("what is my secret?", "cannot swim"),
    ("where did I bury my father's ring?", "crooked willow"),
    ("what happened to Alicia's mother?", "Shadow War"),
    ("who is waiting for me in Westhold?", "Mira"),
    ("how much do I owe the ferryman?", "twelve"),
    ("what is my favourite song?", "Lament of the Tide"),
    ("what did I pick up at the hunter's lodge?", "Tonic"),
    ("what did I find on the Fogbound Path?", "Healing Herb"),
]


def play(filler_turns: int, index_dir: Path) -> tuple[TurnPipeline, GameMemory, SentenceTransformerEmbedder]:
    pack = load_pack(content_root() / "fantasy_001")
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, store=open_chroma(index_dir), embedder=embedder, config=MemoryConfig())
    engine = TurnPipeline(pack, new_game(pack), narrator, memory)
    for action in PLANT:
        result = engine.play(action)
        if not result.ok:
            raise SystemExit(f"planting failed at {action!r}: {result.error}")
    planted_turn = engine.state.turn
    i = 0
    while engine.state.turn < planted_turn + filler_turns:
        engine.play(FILLER[i % len(FILLER)])
        i += 1
    memory.flush()
    return engine, memory, embedder


def contains(texts: list[str], answer: str) -> bool:
    pattern = re.compile(rf"\b{re.escape(answer)}\b", re.I)
    return any(pattern.search(t) for t in texts)


def run(filler_turns: int) -> dict[str, Any]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as index_dir:
        engine, memory, embedder = play(filler_turns, Path(index_dir))
        state = engine.state
        window = [m["content"] for m in memory.state.window]
        summaries = [s.labelled() for s in memory.state.summaries]
        summary_vectors = embedder.embed(summaries) if summaries else np.zeros((0, 384), dtype=np.float32)
        rows = []
        for question, answer in PROBES:
            context = memory.recall(question, state)
            ours = [i.text for b in context.blocks for i in b.items] + window
            qv = embedder.embed([question])[0]
            top3 = [summaries[i] for i in np.argsort(-(summary_vectors @ qv))[:3]] if summaries else []
            seed = list(dict.fromkeys(summaries[-8:] + top3))
            rows.append(
                {
                    "question": question,
                    "answer": answer,
                    "ours": contains(ours, answer),
                    "l1_window": contains(window, answer),
                    "summaries_top3": contains(seed, answer),
                    "tokens": {
                        "ours": sum(estimate_tokens(t) for t in ours),
                        "l1_window": sum(estimate_tokens(t) for t in window),
                        "summaries_top3": sum(estimate_tokens(t) for t in seed),
                    },
                    "strategy": context.retrieval_meta["strategy"],
                }
            )
        memory.close()
    methods = ("ours", "l1_window", "summaries_top3")
    return {
        "turns_played": state.turn,
        "filler_turns": filler_turns,
        "probes": len(rows),
        "hit_rate": {m: round(sum(r[m] for r in rows) / len(rows), 3) for m in methods},
        "mean_tokens": {m: round(float(np.mean([r["tokens"][m] for r in rows]))) for m in methods},
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }


def table(result: dict[str, Any]) -> str:
    lines = [f"{'probe':<45}{'answer':<20}{'ours':>6}{'L1':>6}{'sum+3':>7}"]
    for row in result["rows"]:
        marks = ["yes" if row[m] else "-" for m in ("ours", "l1_window", "summaries_top3")]
        lines.append(f"{row['question']:<45}{row['answer']:<20}{marks[0]:>6}{marks[1]:>6}{marks[2]:>7}")
    rate, tokens = result["hit_rate"], result["mean_tokens"]
    lines.append(
        f"{'hit rate':<65}{rate['ours']:>6.0%}{rate['l1_window']:>6.0%}{rate['summaries_top3']:>7.0%}\n"
        f"{'mean tokens injected':<65}{tokens['ours']:>6}{tokens['l1_window']:>6}{tokens['summaries_top3']:>7}\n"
        f"({result['turns_played']} turns played, {result['filler_turns']} of them unrelated; {result['seconds']} s)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filler", type=int, default=110, help="unrelated turns between planting and probing")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "game_memory.json")
    args = parser.parse_args(argv)
    result = run(args.filler)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps({k: result[k] for k in ("hit_rate", "mean_tokens", "turns_played", "probes")}))
    else:
        print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
