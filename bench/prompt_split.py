"""Issue 42: where a model's turn prompt goes, measured on what a model was really sent.

Reads the turn requests of a game played through the relay (``../shared/tools/model_relay.py``): a relay folder of
``req-K.json`` files, or a recording kept in the repo (``requests.jsonl.gz``, ``tests/relay_recording.py``). Each
turn prompt is cut into its parts by their ``## `` headings and each part counted with the engine's estimate
(:func:`game.text.estimate_tokens`):

- ``fixed``: the same every turn (the persona, the answer format, the reminder, the memory header);
- ``state``: this turn's world (the context line, the place, the quests, the combat, the action and what it asks);
- ``memory``: what memory gave (the synopsis, the Story Bible, lore, recalled memories, summaries, recent events,
  and the window of earlier exchanges);
- ``schema``: a JSON schema pasted into the messages (0 since issue 42: it goes as ``response_format`` only).

It also counts how often the five-turn summaries and the synopsis reached a turn prompt. Prints a table (medians,
and the share of the prompt) and writes ``bench/results/prompt_split.json``.

    python -m bench.prompt_split [SOURCE ...]   # default: tests/data/relay/misty_forest
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from game.text import MESSAGE_TOKENS, estimate_tokens

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "tests" / "data" / "relay" / "misty_forest"
OUT = ROOT / "bench" / "results" / "prompt_split.json"
PARTS = ("fixed", "state", "memory", "schema")

FIXED = ("Answer format", "Your answer", "Memory")
STATE = ("Current context", "Node info", "Main quest", "Active side quests", "Combat", "Player action")
_HEADING = re.compile(r"^## (?P<title>[^\n]*)$", re.M)


def load(source: Path) -> list[dict[str, Any]]:
    """The requests of a relay folder or a kept recording, in the order the model was asked them."""
    if (source / "requests.jsonl.gz").exists():
        with gzip.open(source / "requests.jsonl.gz", "rt", encoding="utf-8") as fh:
            return [json.loads(line) for line in fh]
    found = sorted(source.glob("req-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    return [json.loads(p.read_text(encoding="utf-8")) for p in found]


def _kind(title: str) -> str:
    if title.startswith(FIXED):
        return "fixed"
    if title.startswith(STATE):
        return "state"
    return "memory"


def split(text: str) -> dict[str, int]:
    """The tokens of one message by part: the text before its first heading is the persona (fixed) unless it
    tells the story so far ("Previously: ..."), and each heading's section goes by its title."""
    out = dict.fromkeys(PARTS, 0)
    marks = list(_HEADING.finditer(text))
    head = text[: marks[0].start()] if marks else text
    for paragraph in head.split("\n\n"):
        out["memory" if paragraph.startswith("Previously:") else "fixed"] += estimate_tokens(paragraph)
    for n, mark in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
        section = text[mark.start() : end]
        for paragraph in section.split("\n\n"):  # the synopsis may follow a section, set apart by a blank line
            kind = "memory" if paragraph.startswith("Previously:") else _kind(mark.group("title"))
            if '"$schema"' in paragraph or '"properties"' in paragraph:
                kind = "schema"
            out[kind] += estimate_tokens(paragraph)
    return out


def measure(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Per turn prompt: tokens by part (the window's earlier exchanges count as memory), and what reached it."""
    rows = []
    for body in requests:
        messages = body.get("messages") or []
        if not messages or "## Player action" not in str(messages[-1].get("content", "")):
            continue  # a summary, a synopsis, an extraction, or a turn asked again
        parts = dict.fromkeys(PARTS, 0)
        for n, message in enumerate(messages):
            content = str(message.get("content", ""))
            if n in (0, len(messages) - 1):
                for key, value in split(content).items():
                    parts[key] += value
            else:
                parts["memory"] += estimate_tokens(content) + MESSAGE_TOKENS
        text = json.dumps(messages, ensure_ascii=False)
        rows.append(
            {
                **parts,
                "total": sum(parts.values()),
                "summaries": "## History (summaries)" in text,
                "synopsis": "Previously:" in text,
                "window_exchanges": (len(messages) - 2) // 2,
            }
        )
    return {"turns": len(rows), "rows": rows, "median": _medians(rows)}


def _medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    if not rows:
        return {}
    out: dict[str, float] = {key: statistics.median(r[key] for r in rows) for key in (*PARTS, "total")}
    out["window_exchanges"] = statistics.median(r["window_exchanges"] for r in rows)
    out["summaries_reached"] = sum(r["summaries"] for r in rows) / len(rows)
    out["synopsis_reached"] = sum(r["synopsis"] for r in rows) / len(rows)
    return out


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'source':<32} {'turns':>5} {'fixed':>6} {'state':>6} {'memory':>7} {'schema':>7} {'total':>6}"]
    lines[0] += f" {'memory%':>8} {'window':>7} {'summ.':>6} {'synop.':>6}"
    for name, result in results.items():
        m = result["median"]
        if not m:
            lines.append(f"{name:<32} {0:>5}")
            continue
        share = m["memory"] / m["total"] if m["total"] else 0.0
        lines.append(
            f"{name[-32:]:<32} {result['turns']:>5} {m['fixed']:>6.0f} {m['state']:>6.0f} {m['memory']:>7.0f}"
            f" {m['schema']:>7.0f} {m['total']:>6.0f} {share:>8.0%} {m['window_exchanges']:>7.1f}"
            f" {m['summaries_reached']:>6.0%} {m['synopsis_reached']:>6.0%}"
        )
    return "\n".join(lines)


def _shown(source: Path) -> str:
    path = source.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", type=Path, default=[DEFAULT])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    results = {_shown(s): measure(load(s)) for s in args.sources}
    print(table(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary = {name: {"turns": r["turns"], "median": r["median"]} for name, r in results.items()}
    args.out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
