"""Does the narrator's prompt still hold what matters after 100+ unrelated turns?

A scripted Misty Forest game plants facts (the player tells NPCs who they are,
makes a promise, shares a secret, learns where Hal was last seen, picks things
up), then plays 100+ unrelated turns, then asks probe questions. A control game
is played the same way with every planting action replaced by a neutral filler
action (same turn count, same filler afterwards) and probed identically, so
answers that static content already holds (the story's lore says Hal is in the
Shadow Swamp; the lodge's item list names the tonic) are told apart from
answers memory kept. Probes are read-only: nothing is played after the filler.

For each probe we check (case-insensitive, whole words) whether its answer
appears in what each memory injects:

- ``ours``: all the blocks ``GameMemory.recall`` returns for the question, plus
  the L1 window sent with them;
- ``retrieval``: only the blocks chosen for the question (``relevant_memories``,
  ``history_recall``, ``knowledge``);
- ``always``: only the blocks injected whatever the question (``bible_core``,
  ``pinned``, ``open_threads``, ``recent_story``) plus the
  L1 window;
- ``answer``: the scripted narrator's narration for the question, from the
  prompt bundle the turn pipeline would build (``compose``, under the default
  budget: what a narrator receives) but without playing the turn;
- ``l1_window``: the last ``window_messages`` messages only;
- ``summaries_top3``: the 8 most recent consolidation summaries plus the top 3
  summaries by cosine similarity to the question (the seed design's recall).

The running synopsis (sent in the system prompt) is not counted in any of them;
each row records whether it holds the answer (``synopsis``), which blocks do
(``via``) and the first item of each that does (``evidence``).

    python bench/game_memory.py [--filler 110] [--json] [--out bench/results/game_memory.json]

Prints a table per probe (planted/control marks) and, for each scoring, the hit
rate of the planted game, of the control and their difference, with the mean
tokens each injects (estimated, 4 characters per token); ``--json`` prints the
summary object only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from game.engine.pipeline import TurnPipeline
from game.engine.prompt import compose
from game.language.parser import parse
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.search import retrieval
from game.memory.settings import MemoryConfig
from game.memory.vectors.chroma import open_chroma
from game.memory.vectors.embedders import SentenceTransformerEmbedder
from game.text import DEFAULT_PROMPT_BUDGET, estimate_tokens
from game.world.content import ContentPack
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
CONTROL = [FILLER[i % len(FILLER)] for i in range(len(PLANT))]
"""The control game's opening: as many neutral actions as PLANT has (it ends where PLANT ends, at the start)."""
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
RETRIEVAL_BLOCKS = ("relevant_memories", "history_recall", "knowledge")
ALWAYS_BLOCKS = ("pinned", "bible_core", "open_threads", "recent_story")
SCORES = ("ours", "retrieval", "always", "answer", "l1_window", "summaries_top3")
LABELS = {
    "ours": "ours: all blocks + L1 window",
    "retrieval": "ours: retrieval blocks only",
    "always": "ours: always-injected + L1",
    "answer": "narrator's answer",
    "l1_window": "L1 window only",
    "summaries_top3": "recent 8 summaries + top-3",
}
SHORT = {
    "bible_core": "core",
    "pinned": "pinned",
    "open_threads": "threads",
    "recent_story": "recent",
    "relevant_memories": "relevant",
    "history_recall": "history",
    "knowledge": "kb",
    "l1_window": "L1",
}


def play(
    opening: list[str], filler_turns: int, pack: ContentPack, embedder: SentenceTransformerEmbedder, index_dir: Path
) -> tuple[TurnPipeline, GameMemory]:
    """Play ``opening`` (every action must be a committed turn), then ``filler_turns`` turns of FILLER."""
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, store=open_chroma(index_dir), embedder=embedder, config=MemoryConfig())
    engine = TurnPipeline(pack, new_game(pack), narrator, memory)
    for action in opening:
        result = engine.play(action)
        if not result.ok:
            raise SystemExit(f"opening failed at {action!r}: {result.error}")
    opened = engine.state.turn
    i = 0
    while engine.state.turn < opened + filler_turns:
        engine.play(FILLER[i % len(FILLER)])
        i += 1
        if i > 2 * filler_turns + len(FILLER):
            raise SystemExit("filler actions stopped committing turns")
    memory.flush()
    return engine, memory


def contains(texts: list[str], answer: str) -> bool:
    pattern = re.compile(rf"\b{re.escape(answer)}\b", re.I)
    return any(pattern.search(t) for t in texts)


def probe(
    engine: TurnPipeline, memory: GameMemory, embedder: SentenceTransformerEmbedder, unknown: set[str]
) -> list[dict[str, Any]]:
    """Score every probe on the finished game without playing a turn (block names not classified go to ``unknown``)."""
    pack, narrator = engine.pack, ScriptedNarrator(engine.pack)
    summaries = [s.labelled() for s in memory.state.summaries]
    summary_vectors = embedder.embed(summaries) if summaries else np.zeros((0, 384), dtype=np.float32)
    rows = []
    for question, answer in PROBES:
        state = engine.state.snapshot()
        context = memory.recall(question, state)
        window = [m["content"] for m in context.window]
        blocks = {b.name: [i.text for i in b.items] for b in context.blocks}
        unknown |= set(blocks) - set(RETRIEVAL_BLOCKS) - set(ALWAYS_BLOCKS)
        texts = {
            "ours": [t for items in blocks.values() for t in items] + window,
            "retrieval": [t for name in RETRIEVAL_BLOCKS for t in blocks.get(name, [])],
            "always": [t for name in ALWAYS_BLOCKS for t in blocks.get(name, [])] + window,
            "l1_window": window,
        }
        qv = embedder.embed([question])[0]
        top3 = [summaries[i] for i in np.argsort(-(summary_vectors @ qv))[:3]] if summaries else []
        texts["summaries_top3"] = list(dict.fromkeys(summaries[-8:] + top3))
        bundle = compose(question, parse(question), state, pack, context, DEFAULT_PROMPT_BUDGET)
        narration = str(narrator.turn(bundle)["narration"])
        hits = {name: contains(t, answer) for name, t in texts.items()}
        hits["answer"] = contains([narration], answer)
        evidence = {}  # block -> first item holding the answer
        for name, items in blocks.items():
            found = [t for t in items if contains([t], answer)]
            if found:
                evidence[name] = found[0]
        rows.append(
            {
                "question": question,
                "answer": answer,
                "hits": {name: hits[name] for name in SCORES},
                "via": [*evidence, *(["l1_window"] if hits["l1_window"] else [])],
                "evidence": evidence,
                "synopsis": contains([context.synopsis], answer),
                "narration": narration,
                "tokens": {name: sum(estimate_tokens(x) for x in t) for name, t in texts.items()}
                | {"prompt": bundle.tokens},
                "strategy": context.retrieval_meta["strategy"],
            }
        )
    return rows


def rates(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {m: round(sum(r["hits"][m] for r in rows) / len(rows), 3) for m in SCORES}


def mean_tokens(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {m: round(float(np.mean([r["tokens"][m] for r in rows]))) for m in rows[0]["tokens"]}


def run(filler_turns: int) -> dict[str, Any]:
    started = time.perf_counter()
    pack = load_pack(content_root() / "fantasy_001")
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    unknown: set[str] = set()
    games: dict[str, tuple[int, str, list[dict[str, Any]]]] = {}
    for name, opening in (("planted", PLANT), ("control", CONTROL)):
        with tempfile.TemporaryDirectory() as index_dir:
            engine, memory = play(opening, filler_turns, pack, embedder, Path(index_dir))
            games[name] = (engine.state.turn, engine.state.node, probe(engine, memory, embedder, unknown))
            memory.close()
    if unknown:
        names = ", ".join(sorted(unknown))
        print(
            f"warning: blocks neither retrieval nor always-injected (counted in 'ours' only): {names}", file=sys.stderr
        )
    turns, node, rows = games["planted"]
    control_turns, control_node, control_rows = games["control"]
    hit_rate, control_rate = rates(rows), rates(control_rows)
    for row, control in zip(rows, control_rows, strict=True):
        row["control"] = {k: v for k, v in control.items() if k not in ("question", "answer")}
    return {
        "turns_played": turns,
        "filler_turns": filler_turns,
        "probes": len(rows),
        "hit_rate": hit_rate,
        "mean_tokens": mean_tokens(rows),
        "control": {
            "turns_played": control_turns,
            "opening": CONTROL,
            "hit_rate": control_rate,
            "mean_tokens": mean_tokens(control_rows),
            "same_place": node == control_node,
        },
        "minus_control": {m: round(hit_rate[m] - control_rate[m], 3) for m in SCORES},
        "unclassified_blocks": sorted(unknown),
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _mark(row: dict[str, Any], name: str) -> str:
    return ("Y" if row["hits"][name] else "-") + "/" + ("Y" if row["control"]["hits"][name] else "-")


def table(result: dict[str, Any]) -> str:
    cols = ("ours", "retrieval", "always", "answer", "l1_window", "summaries_top3")
    heads = ("all", "retr", "always", "answer", "L1", "sum+3")
    lines = [
        "per probe: planted/control (Y = answer found); 'via' = planted-game blocks holding it (control's after '|')",
        f"{'probe':<43}{'answer':<20}" + "".join(f"{h:>8}" for h in heads) + "  via",
    ]
    for row in result["rows"]:
        via = ",".join(SHORT.get(v, v) for v in row["via"]) or "-"
        control_via = ",".join(SHORT.get(v, v) for v in row["control"]["via"]) or "-"
        lines.append(
            f"{row['question']:<43}{row['answer']:<20}"
            + "".join(f"{_mark(row, c):>8}" for c in cols)
            + f"  {via} | {control_via}"
        )
    rate, control = result["hit_rate"], result["control"]["hit_rate"]
    diff, tokens, control_tokens = result["minus_control"], result["mean_tokens"], result["control"]["mean_tokens"]
    lines += ["", f"{'scoring':<32}{'ours':>7}{'control':>9}{'ours-ctl':>10}{'tokens':>9}{'ctl tok':>9}"]
    for name in SCORES:
        tok = (f"{tokens[name]:>9}{control_tokens[name]:>9}") if name in tokens else f"{'':>18}"
        lines.append(f"{LABELS[name]:<32}{rate[name]:>7.0%}{control[name]:>9.0%}{diff[name]:>+10.0%}{tok}")
    lines.append(
        f"({result['turns_played']} turns played, {result['filler_turns']} of them unrelated; control "
        f"{result['control']['turns_played']} turns; whole prompt {tokens['prompt']} tokens on average; "
        f"{result['seconds']} s)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filler", type=int, default=110, help="unrelated turns between planting and probing")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "game_memory.json")
    parser.add_argument(
        "--place-prior",
        type=float,
        default=None,
        help=f"override recall's place prior (default {retrieval.PLACE_PRIOR}; 0 measures what it is worth)",
    )
    args = parser.parse_args(argv)
    if args.place_prior is not None:
        retrieval.PLACE_PRIOR = args.place_prior
    result = run(args.filler)
    result["place_prior"] = retrieval.PLACE_PRIOR
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        keys = ("hit_rate", "mean_tokens", "minus_control", "turns_played", "probes")
        summary = {k: result[k] for k in keys}
        summary["control"] = {k: result["control"][k] for k in ("hit_rate", "mean_tokens", "turns_played")}
        print(json.dumps(summary))
    else:
        print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
