"""Evidence recall@k on LoCoMo-format conversations: our memory vs dense and BM25.

Each conversation is loaded into a fresh ``GameMemory`` session as one memory
per dialog turn (``"speaker: text"`` plus the shared image's caption, with the
session date and the session as the segment), and each question of categories
1-4 is asked through ``GameMemory.search_memories``, the path the game's
"relevant memories" block uses. Beside it, in the same process and on the same
embeddings: a plain dense-cosine retriever over the turns and BM25 (``bm25s``)
over the turns.

    python bench/locomo_recall.py --data ../shared/bench/locomo [--k 5 10 25] [--json]
                                  [--store chroma|inprocess] [--out bench/results/locomo_recall.json]

With ``--json`` stdout is one JSON object:
``{"ours": {"5": r, ...}, "dense": {...}, "bm25": {...}}``. The tables go to
stderr then, and the full result to ``--out``. The tables: all conversations;
the held-out ones (every conversation but 26 and 41, on which the retrieval
constants were chosen), with the baselines; ours by question category.

Recency is switched off for this run (``recency_half_life_turns=0``): LoCoMo
dialog turns are not game turns, and the questions ask about any point of the
conversation. Importance is the same for every turn.

The delivered form (issue 21): each question is also recalled the way a turn
is (``GameMemory.recall``: the relevant-memories block, 12 items) and composed
into a prompt under the game's own budget (``DEFAULT_PROMPT_BUDGET``, the fixed
parts of a Misty Forest turn at its start), and the share of evidence turns
inside that prompt (``delivered``) is reported beside the share inside what
recall found (``found``).
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

from game.engine.prompt import compose
from game.language.parser import parse
from game.llm.digest import ExtractiveSummarizer
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from game.memory.vectors.chroma import open_chroma
from game.memory.vectors.embedders import Embedder, SentenceTransformerEmbedder
from game.memory.vectors.inprocess import InProcessVectorStore
from game.memory.vectors.stores import VectorStore
from game.text import DEFAULT_PROMPT_BUDGET
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import GameState, new_game

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TUNED_ON = frozenset({"26", "41"})
"""Conversations the retrieval constants were chosen on; the others are reported apart as held out."""


def load_conversation(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    conv = data.get("conversation", data)  # the original release nests the sessions
    sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    turns = []
    for session in sessions:
        for turn in conv[f"session_{session}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            when = conv.get(f"session_{session}_date_time", "")
            turns.append(
                {"id": turn["dia_id"], "speaker": turn["speaker"], "text": text, "session": session, "when": when}
            )
    questions = [q for q in data["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
    return {"speakers": (conv["speaker_a"], conv["speaker_b"]), "turns": turns, "questions": questions}


def recall_at(evidence: list[str], ranked: list[str], k: int) -> float:
    wanted = set(evidence)
    return len(wanted & set(ranked[:k])) / len(wanted)


def first_hit(evidence: list[str], ranked: list[str]) -> tuple[float, float]:
    """(reciprocal rank of the first evidence turn in ``ranked``, 0 if none; whether it is ranked first)."""
    wanted = set(evidence)
    rank = next((n for n, dia in enumerate(ranked, 1) if dia in wanted), 0)
    return (1 / rank if rank else 0.0), float(rank == 1)


def load_memory(
    conv: dict[str, Any], embedder: Embedder, store: VectorStore
) -> tuple[GameMemory, dict[str, str], GameState]:
    """A fresh memory session holding the conversation, each memory's dialog id, and the state to recall at."""
    memory = GameMemory(
        None, ExtractiveSummarizer(), store=store, embedder=embedder,
        config=MemoryConfig(recency_half_life_turns=0), background=False,
    )  # fmt: skip
    for speaker in conv["speakers"]:
        memory.register_entity(speaker.lower(), [speaker])
    key_to_dia = {}
    for index, turn in enumerate(conv["turns"], 1):
        key = memory.remember(
            turn["text"], index, npcs=[turn["speaker"].lower()], segment=turn["session"], when=turn["when"]
        )
        key_to_dia[key] = turn["id"]
    memory.embed_pending()
    state = GameState(
        story_id="locomo", node="-", hp=1, max_hp=1, strength=0, agility=0, intelligence=0, turn=len(conv["turns"])
    )
    return memory, key_to_dia, state


def ours_ranking(conv: dict[str, Any], embedder: Embedder, store: VectorStore, top: int) -> list[list[str]]:
    return _ranked(*load_memory(conv, embedder, store), conv["questions"], top)


def _ranked(
    memory: GameMemory, key_to_dia: dict[str, str], state: GameState, questions: list[dict[str, Any]], top: int
) -> list[list[str]]:
    return [[key_to_dia[m.id] for m in memory.search_memories(q["question"], state, top)] for q in questions]


def _delivered(
    memory: GameMemory, key_to_dia: dict[str, str], state: GameState, questions: list[dict[str, Any]], pack: ContentPack
) -> list[tuple[list[str], list[str]]]:
    """Each question's evidence candidates: (what recall found, what the prompt delivered) as dialog ids."""
    game = new_game(pack)  # the fixed parts of the prompt: a Misty Forest turn at its start
    game.turn = state.turn
    out = []
    for question in questions:
        text = question["question"]
        context = memory.recall(text, state)
        bundle = compose(text, parse(text), game, pack, context, DEFAULT_PROMPT_BUDGET)
        found, sent = (
            [key_to_dia[i.source] for i in block.items if i.source in key_to_dia] if block is not None else []
            for block in (context.block("relevant_memories"), bundle.memory.block("relevant_memories"))
        )
        out.append((found, sent))
    return out


def baseline_rankings(conv: dict[str, Any], embedder: Embedder, top: int) -> tuple[list[list[str]], list[list[str]]]:
    import bm25s

    ids = [t["id"] for t in conv["turns"]]
    texts = [t["text"] for t in conv["turns"]]
    questions = [q["question"] for q in conv["questions"]]
    turn_vectors = embedder.embed(texts)
    question_vectors = embedder.embed(questions)
    dense = [[ids[i] for i in np.argsort(-(turn_vectors @ q), kind="stable")[:top]] for q in question_vectors]
    index = bm25s.BM25()
    index.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)
    keyword = []
    for question in questions:
        tokens = bm25s.tokenize([question], stopwords=None, show_progress=False)
        scores = np.asarray(index.get_scores([w for w in tokens.vocab if w]))
        keyword.append([ids[i] for i in np.argsort(-scores, kind="stable")[:top]])
    return dense, keyword


def run(data: Path, ks: list[int], store_kind: str) -> dict[str, Any]:
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    files = sorted(data.glob("*.json"))
    if not files:
        raise SystemExit(f"no *.json conversations in {data}")
    top = max(ks)
    per_method: dict[str, list[tuple[int, list[float]]]] = {"ours": [], "dense": [], "bm25": []}
    delivery: list[tuple[float, float]] = []
    """Each question's share of evidence in what recall found and in the prompt delivered."""
    pack = load_pack(content_root() / "fantasy_001")
    per_file: dict[str, dict[str, float]] = {}
    firsts: dict[str, list[tuple[float, float]]] = {}
    """Each method's (reciprocal rank, hit@1) per question, over its top ``max(ks)``."""
    file_of: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as index_dir:
        store: VectorStore = open_chroma(Path(index_dir)) if store_kind == "chroma" else InProcessVectorStore()
        for path in files:
            conv = load_conversation(path)
            loaded = load_memory(conv, embedder, store)
            rankings = {"ours": _ranked(*loaded, conv["questions"], top)}
            for q, (found, sent) in zip(conv["questions"], _delivered(*loaded, conv["questions"], pack), strict=True):
                delivery.append(
                    (recall_at(q["evidence"], found, len(found)), recall_at(q["evidence"], sent, len(sent)))
                )
            rankings["dense"], rankings["bm25"] = baseline_rankings(conv, embedder, top)
            for method, ranked in rankings.items():
                rows = [
                    (q["category"], [recall_at(q["evidence"], r, k) for k in ks])
                    for q, r in zip(conv["questions"], ranked, strict=True)
                ]
                per_method[method] += rows
                firsts.setdefault(method, []).extend(
                    first_hit(q["evidence"], r) for q, r in zip(conv["questions"], ranked, strict=True)
                )
                if method == "ours":
                    file_of += [path.stem] * len(rows)
                per_file.setdefault(path.stem, {})[method] = (
                    float(np.mean([r[1][ks.index(10)] for r in rows])) if 10 in ks else 0.0
                )
    elapsed = time.perf_counter() - started
    summary = {
        m: {str(k): round(float(np.mean([r[1][i] for r in rows])), 3) for i, k in enumerate(ks)}
        for m, rows in per_method.items()
    }
    by_category = {
        m: {
            str(k): {
                CATEGORIES[c]: round(float(np.mean([r[1][i] for r in rows if r[0] == c])), 3)
                for c in CATEGORIES
                if any(r[0] == c for r in rows)
            }
            for i, k in enumerate(ks)
        }
        for m, rows in per_method.items()
    }
    held_out = [n for n, name in enumerate(file_of) if name not in TUNED_ON]
    return {
        **summary,
        "delivered": {
            "found": round(float(np.mean([d[0] for d in delivery])), 3),
            "prompt": round(float(np.mean([d[1] for d in delivery])), 3),
            "budget": DEFAULT_PROMPT_BUDGET,
        },
        "questions": len(per_method["ours"]),
        "mrr": {m: round(float(np.mean([f[0] for f in rows])), 3) for m, rows in firsts.items()},
        "hit@1": {m: round(float(np.mean([f[1] for f in rows])), 3) for m, rows in firsts.items()},
        "files": [p.stem for p in files],
        "per_file_recall@10": per_file,
        "by_category": by_category,
        "held_out": {
            "files": sorted({file_of[n] for n in held_out}),
            "questions": len(held_out),
            **{
                m: {str(k): round(float(np.mean([rows[n][1][i] for n in held_out])), 3) for i, k in enumerate(ks)}
                for m, rows in per_method.items()
            },
        }
        if held_out
        else None,
        "store": store_kind,
        "seconds": round(elapsed, 1),
    }


def table(result: dict[str, Any], ks: list[int]) -> str:
    lines = [f"{'retriever':<12}" + "".join(f"{'recall@' + str(k):>12}" for k in ks) + f"{'MRR':>8}{'hit@1':>8}"]
    for method in ("dense", "bm25", "ours"):
        lines.append(
            f"{method:<12}"
            + "".join(f"{result[method][str(k)]:>12.3f}" for k in ks)
            + f"{result['mrr'][method]:>8.3f}{result['hit@1'][method]:>8.3f}"
        )
    lines.append(
        f"({result['questions']} questions from {len(result['files'])} conversations, "
        f"store {result['store']}, {result['seconds']} s)"
    )
    held = result["held_out"]
    if held:
        lines.append(f"\nheld out ({', '.join(held['files'])}: {held['questions']} questions)")
        for method in ("dense", "bm25", "ours"):
            lines.append(f"{method:<12}" + "".join(f"{held[method][str(k)]:>12.3f}" for k in ks))
    delivered = result["delivered"]
    lines.append(
        f"\ndelivered form: evidence in what recall found {delivered['found']:.3f}, "
        f"in the prompt under {delivered['budget']} tokens {delivered['prompt']:.3f}"
    )
    lines.append("\nours by category")
    categories = list(result["by_category"]["ours"][str(ks[0])])
    lines.append(f"{'category':<12}" + "".join(f"{'recall@' + str(k):>12}" for k in ks))
    for category in categories:
        lines.append(
            f"{category:<12}" + "".join(f"{result['by_category']['ours'][str(k)][category]:>12.3f}" for k in ks)
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of LoCoMo-format *.json files")
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10, 25])
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--store", choices=["chroma", "inprocess"], default="chroma")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "locomo_recall.json")
    args = parser.parse_args(argv)
    result = run(args.data, sorted(set(args.k)), args.store)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(table(result, sorted(set(args.k))), file=sys.stderr)
        print(json.dumps({m: result[m] for m in ("ours", "dense", "bm25")}))
    else:
        print(table(result, sorted(set(args.k))))
        print(json.dumps(result["per_file_recall@10"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
