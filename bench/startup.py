"""Time to the title screen: StoryEcho's first frame against a bare Textual "hello" app, in the same run.

Each measurement is a fresh Python process (imports included, as a player
starts the game), run headless with ``App.run_test``; the clock stops when
the first frame has been drawn (``call_after_refresh`` from ``on_mount``).
The two apps alternate, and the table reports medians, p95 and the ratio.

    python bench/startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import time
start = time.perf_counter()
import asyncio, sys
{imports}

class Timed({base}):
    def on_mount(self):
        {mount}
        self.call_after_refresh(self.drawn)

    def drawn(self):
        self.first_frame = time.perf_counter() - start
        heavy = ("torch", "sentence_transformers", "chromadb", "llama_cpp", "openai")
        self.heavy = sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy}})
        self.exit()

async def main():
    app = {make}
    async with app.run_test() as pilot:
        while app.is_running:
            await pilot.pause(0.01)
    print(repr((app.first_frame, app.heavy)))

asyncio.run(main())
"""
HELLO = {
    "imports": "from textual.app import App\nfrom textual.widgets import Static",
    "base": "App",
    "mount": "self.mount(Static('hello'))",
    "make": "Timed()",
}
STORYECHO = {
    "imports": "from game.config import load_settings\nfrom game.tui.app import StoryEchoApp",
    "base": "StoryEchoApp",
    "mount": "super().on_mount()",
    "make": "Timed(load_settings(None, llm='scripted', data_dir=sys.argv[1]))",
}


def measure(kind: dict[str, str], data_dir: str) -> tuple[float, list[str]]:
    script = CHILD.format(**kind)
    done = subprocess.run(
        [sys.executable, "-c", script, data_dir], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True
    )
    seconds, heavy = eval(done.stdout.strip().splitlines()[-1])  # our own child's repr
    return float(seconds), list(heavy)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(repeats: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"hello": [], "storyecho": []}
    heavy: list[str] = []
    with tempfile.TemporaryDirectory() as data_dir:
        for _ in range(repeats):
            times["hello"].append(measure(HELLO, data_dir)[0])
            seconds, heavy = measure(STORYECHO, data_dir)
            times["storyecho"].append(seconds)
    medians = {k: statistics.median(v) for k, v in times.items()}
    return {
        "repeats": repeats,
        "median_s": medians,
        "p95_s": {k: _p95(v) for k, v in times.items()},
        "ratio": medians["storyecho"] / medians["hello"],
        "heavy_at_first_frame": heavy,
        "target": "title interactive within 2x the bare app",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "startup.json")
    args = parser.parse_args(argv)
    result = run(args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"{'app':<12}{'median s':>10}{'p95 s':>10}")
    for name in ("hello", "storyecho"):
        print(f"{name:<12}{result['median_s'][name]:>10.3f}{result['p95_s'][name]:>10.3f}")
    heavy = result["heavy_at_first_frame"]
    print(f"ratio {result['ratio']:.2f}x (target <= 2x); heavy modules at first frame: {heavy}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
