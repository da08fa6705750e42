"""Start-up (issue 11, target 1), each against its baseline in the same run, in fresh processes.

- **Title**: StoryEcho's first frame against a bare Textual "hello" app. Each
  measurement is a fresh Python process that imports what the ``storyecho``
  command imports (``game.main``, so the CLI's modules too) and runs the app
  headless with ``App.run_test``; the clock stops when the first frame has been
  drawn (``call_after_refresh`` from ``on_mount``), and the probe also lists
  the heavy libraries already imported by then.
- **First turn**: ``storyecho run`` playing one action of a new game, with the
  default embeddings against ``--no-embeddings``, whole process wall time. One
  warm-up run of each comes first and is not counted: it builds the index
  and the embedder's cache (the ONNX export), which a player's second start
  finds on disk.

The pairs alternate; the table reports medians, p95 and the ratios.

    python -m bench.startup [--repeats 7] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
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
    "imports": "import game.main\nfrom game.config import load_settings\nfrom game.tui.app import StoryEchoApp",
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


def _stats(times: dict[str, list[float]]) -> dict[str, Any]:
    return {
        "median_s": {k: statistics.median(v) for k, v in times.items()},
        "p95_s": {k: _p95(v) for k, v in times.items()},
    }


def title(repeats: int) -> dict[str, Any]:
    """The title's first frame against the bare app, alternating."""
    times: dict[str, list[float]] = {"hello": [], "storyecho": []}
    heavy: list[str] = []
    with tempfile.TemporaryDirectory() as data_dir:
        for _ in range(repeats):
            times["hello"].append(measure(HELLO, data_dir)[0])
            seconds, heavy = measure(STORYECHO, data_dir)
            times["storyecho"].append(seconds)
    out = _stats(times)
    out["ratio"] = out["median_s"]["storyecho"] / out["median_s"]["hello"]
    out["heavy_at_first_frame"] = heavy
    return out


def _run_once(data_dir: str, actions: str, *flags: str) -> float:
    command = [sys.executable, "-m", "game", "run", "--story", "fantasy_001", "--actions", actions]
    start = time.perf_counter()
    subprocess.run(
        [*command, "--data-dir", data_dir, "--llm", "scripted", *flags],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"},
    )
    return time.perf_counter() - start


def first_turn(repeats: int) -> dict[str, Any]:
    """``storyecho run`` playing one action, default embeddings against ``--no-embeddings``, alternating."""
    times: dict[str, list[float]] = {"no_embeddings": [], "embeddings": []}
    with tempfile.TemporaryDirectory() as folder:
        actions = str(Path(folder) / "actions.txt")
        Path(actions).write_text("look around\n", encoding="utf-8")
        plain, embedded = str(Path(folder) / "plain"), str(Path(folder) / "embedded")
        cold = {
            "no_embeddings": _run_once(plain, actions, "--no-embeddings"),
            "embeddings": _run_once(embedded, actions),
        }
        for _ in range(repeats):
            times["no_embeddings"].append(_run_once(plain, actions, "--no-embeddings"))
            times["embeddings"].append(_run_once(embedded, actions))
    out = _stats(times)
    out["cold_s"] = cold
    out["ratio"] = out["median_s"]["embeddings"] / out["median_s"]["no_embeddings"]
    return out


def run(repeats: int) -> dict[str, Any]:
    shown = title(repeats)
    turn = first_turn(max(3, repeats // 2))
    summary = [
        {
            "target": "1 start",
            "measure": "title first frame / bare Textual app (median)",
            "value": f"{shown['ratio']:.2f}x ({shown['median_s']['storyecho']:.3f} s / "
            f"{shown['median_s']['hello']:.3f} s)",
            "goal": "<= 2x",
            "met": shown["ratio"] <= 2.0,
        },
        {
            "target": "1 start",
            "measure": "heavy libraries imported at the title's first frame",
            "value": ", ".join(shown["heavy_at_first_frame"]) or "none",
            "goal": "none",
            "met": not shown["heavy_at_first_frame"],
        },
        {
            "target": "1 start",
            "measure": "run, first turn: embeddings / --no-embeddings (median)",
            "value": f"{turn['ratio']:.2f}x ({turn['median_s']['embeddings']:.2f} s / "
            f"{turn['median_s']['no_embeddings']:.2f} s)",
            "goal": "<= 2x",
            "met": turn["ratio"] <= 2.0,
        },
    ]
    return {"repeats": repeats, "title": shown, "first_turn": turn, "summary": summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="5 repeats")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "startup.json")
    args = parser.parse_args(argv)
    result = run(5 if args.quick else args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"{'start':<28}{'median s':>10}{'p95 s':>10}")
    for part, names in (("title", ("hello", "storyecho")), ("first_turn", ("no_embeddings", "embeddings"))):
        for name in names:
            label = f"{part}: {name}"
            print(f"{label:<28}{result[part]['median_s'][name]:>10.3f}{result[part]['p95_s'][name]:>10.3f}")
    for row in result["summary"]:
        print(f"{row['measure']}: {row['value']} (goal {row['goal']}) {'met' if row['met'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
