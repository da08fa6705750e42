"""What reading the player first costs (issue 41): lines of regular-expression English, and time per line.

Two measures, printed as a table and written to ``bench/results/understanding.json``:

- **Lines of regular-expression English**: physical source lines holding a raw string literal with a word of three
  letters or more (the patterns that read English), in the modules that read the player's words, now and at a git
  revision (by default the last commit before issue 41's work); and over all of ``game/``. The issue asked that
  they go down, not up, once one lexicon serves every reader.
- **Time to read a line**: the reading and its resolution against the world (``Reading.of`` then
  ``game.world.asked.understand``), per line of a fixed set of player lines in their scenes, median and p95, beside
  the parser alone (what the engine did before it read a line first) in the same run.

    python -m bench.understanding [--quick] [--before REV]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import subprocess
import time
import tokenize
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
BEFORE = "b8af226"
"""The last commit before issue 41's work."""
READERS_BEFORE = (
    "game/world/parser.py",
    "game/world/verbs.py",
    "game/world/vocabulary.py",
    "game/world/reading.py",
    "game/world/intent.py",
    "game/memory/search/question.py",
    "game/engine/voice.py",
    "game/llm/scripted_reading.py",
    "game/llm/scripted_talk.py",
    "game/llm/recollection.py",
)
READERS_NOW = (
    "game/language/**/*.py",
    "game/world/intent.py",
    "game/world/acts.py",
    "game/world/resolve.py",
    "game/world/asked.py",
    "game/memory/search/question.py",
    "game/engine/voice.py",
    "game/llm/scripted_reading.py",
    "game/llm/scripted_talk.py",
    "game/llm/recollection.py",
)
LINES = (
    ("fantasy_001", "misty_path", "nab the herb"),
    ("fantasy_001", "misty_path", "take the herb, then go north"),
    ("fantasy_001", "shadow_throne", "over my dead body will I kneel"),
    ("fantasy_001", "hunter_cabin", "pass the letter to garrick"),
    ("fantasy_001", "sanctuary_gate", "talk to the elf"),
    ("scifi_001", "black_market", "yeah, right, sell my pearl for pocket change. No deal."),
    ("scifi_001", "storage_area", "grab everything on the shelves"),
    ("victorian_001", "chapel", "Reverend, may I have a word?"),
    ("victorian_001", "drowned_man", "I'll have a hot toddy, please"),
    ("victorian_001", "harbour", "what did Jory tell me about the tide?"),
)


def regex_lines(source: str) -> int:
    """Physical lines of ``source`` that hold a raw string literal with a word of three letters or more."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.STRING:
            continue
        prefix = token.string[: len(token.string) - len(token.string.lstrip("rRbBuUfF"))].lower()
        if "r" in prefix and re.search(r"[a-z]{3,}", token.string):
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines)


def _files_now(patterns: tuple[str, ...]) -> list[Path]:
    return sorted({p for pattern in patterns for p in ROOT.glob(pattern)})


def _at(rev: str, path: str) -> str:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def _tree_at(rev: str) -> list[str]:
    done = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "game"], cwd=ROOT, capture_output=True, text=True
    )
    return [p for p in done.stdout.split() if p.endswith(".py")]


def count_lines(before: str) -> dict[str, int]:
    return {
        "readers_before": sum(regex_lines(_at(before, p)) for p in READERS_BEFORE),
        "readers_now": sum(regex_lines(p.read_text(encoding="utf-8")) for p in _files_now(READERS_NOW)),
        "game_before": sum(regex_lines(_at(before, p)) for p in _tree_at(before)),
        "game_now": sum(regex_lines(p.read_text(encoding="utf-8")) for p in (ROOT / "game").rglob("*.py")),
    }


def time_lines(repeats: int) -> dict[str, float]:
    """Microseconds to read and resolve a line, and to parse it alone (medians and p95 over every repeat)."""
    from game.language.parser import parse
    from game.language.reading import Reading
    from game.world.asked import story_names, story_people, understand
    from game.world.loader import content_root, load_pack
    from game.world.state import new_game

    packs = {s: load_pack(content_root() / s) for s in {story for story, _, _ in LINES}}
    names = {s: (story_names(p), story_people(p)) for s, p in packs.items()}
    read_us: list[float] = []
    parse_us: list[float] = []
    for _ in range(repeats):
        for story, node, line in LINES:
            state = new_game(packs[story])
            state.node = node
            start = time.perf_counter()
            understand(Reading.of(line, *names[story]), state, packs[story])
            middle = time.perf_counter()
            parse(line)
            end = time.perf_counter()
            read_us.append((middle - start) * 1e6)
            parse_us.append((end - middle) * 1e6)

    def p95(values: list[float]) -> float:
        return sorted(values)[int(len(values) * 0.95) - 1]

    return {
        "read_median_us": statistics.median(read_us),
        "read_p95_us": p95(read_us),
        "parse_median_us": statistics.median(parse_us),
        "parse_p95_us": p95(parse_us),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--before", default=BEFORE, help="the git revision to count the lines of before")
    args = parser.parse_args(argv)
    lines = count_lines(args.before)
    times = time_lines(20 if args.quick else 200)
    summary: list[dict[str, Any]] = [
        {
            "target": "issue 41: one lexicon",
            "measure": "lines of regular-expression English in the readers of the player's words, before / now",
            "value": f"{lines['readers_before']} / {lines['readers_now']}",
            "goal": "down, not up",
            "met": lines["readers_now"] < lines["readers_before"],
        },
        {
            "target": "issue 41: one lexicon",
            "measure": "lines of regular-expression English in all of game/, before / now",
            "value": f"{lines['game_before']} / {lines['game_now']}",
            "goal": "reported",
            "met": None,
        },
        {
            "target": "issue 41: read first",
            "measure": "read and resolve a line / parse it alone, median (p95), microseconds",
            "value": f"{times['read_median_us']:.0f} ({times['read_p95_us']:.0f}) / "
            f"{times['parse_median_us']:.0f} ({times['parse_p95_us']:.0f})",
            "goal": "reported",
            "met": None,
        },
    ]
    for row in summary:
        print(f"{row['measure']}: {row['value']} (goal: {row['goal']})")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "understanding.json").write_text(
        json.dumps({"summary": summary, "lines": lines, "times_us": times}, indent=1), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
