"""Indexing the knowledge base (target 6): one pass over both stories, nothing twice, one model per collection.

    python -m bench.indexing [--quick] [--out bench/results/indexing.json]

In a fresh data folder with the default local Chroma index and copies of both
stories, through ``wiring.index_knowledge`` (what ``storyecho index`` and the
game's warm-up run), with the game's default embedder behind a counter:

1. cold: both stories indexed in one pass (documents, embedded, seconds, the
   progress reports);
2. a second start: the store closed and reopened in this process, and
   ``storyecho index`` in a fresh process (its wall time includes Python,
   the imports and loading the model): embedded 0;
3. one content file changed (one NPC's trait in ``npcs.json``): which
   documents were embedded again;
4. a switch of embedder (the other backend: sentence-transformers when the
   default is ONNX, and the reverse): every document re-embedded into a
   collection of its own, the first model's collection untouched, and a query
   of one model on the other's collection refused;
5. switching back: embedded 0.

``--quick`` (under 60 s here) switches embedder on one story only. The result
JSON has a ``summary``: one row per measure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

TARGET = "6 indexing"
EDITED_NPC_FILE = "npcs.json"


class Counting:
    """Counts the texts a real embedder is asked to embed."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.real.embed(texts)


def other_embedder(default: Any) -> Any:
    """The other backend than ``default``'s, loaded (None when it cannot load here)."""
    from game.memory.vectors.embedders import EmbedderUnavailable, SentenceTransformerEmbedder
    from game.memory.vectors.onnx_embedder import OnnxEmbedder, onnx_available

    other: Any
    if isinstance(default, SentenceTransformerEmbedder):
        if not onnx_available():
            return None
        other = OnnxEmbedder()
    else:
        other = SentenceTransformerEmbedder(device="cpu")
    try:
        other.load()
    except EmbedderUnavailable:
        return None
    return other


def run(quick: bool) -> dict[str, Any]:
    from game import wiring
    from game.config import load_settings
    from game.memory.vectors.chroma import open_chroma
    from game.memory.vectors.embedders import space_of
    from game.memory.vectors.stores import SpaceMismatch
    from game.world.loader import available_stories, content_root

    started = time.perf_counter()

    def stage(label: str) -> None:
        print(f"[{time.perf_counter() - started:5.1f} s] {label}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="storyecho-indexing-") as scratch:
        root = Path(scratch)
        content = root / "content"
        stories = available_stories()
        for story in stories:
            shutil.copytree(content_root() / story, content / story)
        settings = load_settings(None, data_dir=root / "data", memory={"vector_store": "chroma", "chroma_url": None})
        stage("loading the default embedder")
        default = wiring.make_embedder(settings)
        if default is None:
            raise SystemExit("no embedder can load here")

        def index(embedder: Any, only: list[str] | None = None) -> dict[str, Any]:
            counting = Counting(embedder)
            seen: list[tuple[str, int, int]] = []
            t0 = time.perf_counter()
            bases = wiring.index_knowledge(
                settings,
                counting,
                content_dir=content,
                stories=only or stories,
                progress=lambda *report: seen.append(report),
            )
            seconds = time.perf_counter() - t0
            assert bases is not None, "the local index did not open"
            return {
                "documents": sum(b.stats.documents for b in bases if b.stats),
                "embedded": len(counting.texts),
                "embedded_ids": [i for b in bases if b.stats for i in b.stats.embedded_ids],
                "seconds": round(seconds, 2),
                "collection": bases[0].index.collection,
                "progress_first": list(seen[0]),
                "progress_last": list(seen[-1]),
                "progress_reports": len(seen),
                "model": space_of(embedder).label(),
            }

        result: dict[str, Any] = {
            "quick": quick,
            "stories": stories,
            "cpu_count": os.cpu_count(),
            "load_average_at_start": os.getloadavg()[0],
        }
        stage(f"cold: {', '.join(stories)} with {space_of(default).label()}")
        result["cold"] = index(default)
        stage(f"cold: {json.dumps({k: result['cold'][k] for k in ('documents', 'embedded', 'seconds')})}")
        result["second_start"] = index(default)
        stage(f"second start: {result['second_start']['embedded']} embedded")
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "game.main", "index", "--data-dir", str(settings.data_dir)],
            capture_output=True,
            text=True,
            env={**os.environ, "STORYECHO_MEMORY__EMBEDDER": getattr(settings.memory, "embedder", "auto")},
        )
        result["second_start_process"] = {
            "embedded": sum(int(n) for n in re.findall(r"(\d+) embedded", done.stdout)),
            "seconds": round(time.perf_counter() - t0, 2),
            "output": done.stdout.strip().splitlines(),
            "returncode": done.returncode,
        }
        stage(f"second start, fresh process: {result['second_start_process']}")

        npcs_file = content / stories[0] / EDITED_NPC_FILE
        npcs = json.loads(npcs_file.read_text(encoding="utf-8"))
        npcs[0]["trait"] = npcs[0]["trait"] + " Lately he hums old marching songs."
        npcs_file.write_text(json.dumps(npcs, indent=2), encoding="utf-8")
        result["one_file_changed"] = index(default) | {
            "file": f"{stories[0]}/{EDITED_NPC_FILE}",
            "expected_ids": [f"{stories[0]}:npc:{npcs[0]['id']}"],
        }
        stage(f"one file changed: {result['one_file_changed']['embedded_ids']}")

        stage("loading the other embedder")
        other = other_embedder(default)
        if other is not None:
            only = stories[:1] if quick else None
            result["switch"] = index(other, only)
            stage(f"switch: {result['switch']['embedded']} embedded in {result['switch']['seconds']} s")
            store = open_chroma(settings.data_dir / ".index")
            try:
                listed = store.collections()
                result["collections"] = {name: meta.get("count", 0) for name, meta in sorted(listed.items())}
                probe = np.asarray(other.embed(["Who guards the forest?"])[0])
                try:
                    store.query(result["cold"]["collection"], probe, 3, space=space_of(other))
                    result["cross_model_query"] = "answered"
                except SpaceMismatch as exc:
                    result["cross_model_query"] = f"refused: {exc}"
            finally:
                store.close()
            result["switch_back"] = index(default, only)
            stage(f"switch back: {result['switch_back']['embedded']} embedded")
        result["seconds"] = round(time.perf_counter() - started, 1)
    result["summary"] = summary(result)
    return result


def summary(result: dict[str, Any]) -> list[dict[str, Any]]:
    cold, again, edit = result["cold"], result["second_start"], result["one_file_changed"]
    fresh = result["second_start_process"]
    total = cold["documents"]
    rows = [
        {
            "measure": "cold index of both stories, one pass (docs, embedded, s)",
            "value": f"{total} docs, {cold['embedded']} embedded, {cold['seconds']:.1f} s; "
            f"progress {tuple(cold['progress_first'][1:])} .. {tuple(cold['progress_last'][1:])} "
            f"in {cold['progress_reports']} reports",
            "goal": "each document embedded once; progress over all ends at (total, total)",
            "met": cold["embedded"] == total and cold["progress_last"][1:] == [total, total],
        },
        {
            "measure": "second start, unchanged content (embedded, s)",
            "value": f"{again['embedded']} embedded, {again['seconds']:.2f} s (store reopened); fresh process "
            f"`storyecho index`: {fresh['embedded']} embedded, {fresh['seconds']:.1f} s wall",
            "goal": "0 embedded",
            "met": again["embedded"] == 0 and fresh["embedded"] == 0 and fresh["returncode"] == 0,
        },
        {
            "measure": f"one content file changed ({edit['file']})",
            "value": f"{edit['embedded']} embedded: {', '.join(edit['embedded_ids']) or 'none'}",
            "goal": f"only {', '.join(edit['expected_ids'])}",
            "met": edit["embedded_ids"] == edit["expected_ids"] and edit["embedded"] == len(edit["expected_ids"]),
        },
    ]
    switch = result.get("switch")
    if switch is None:
        rows.append(
            {"measure": "switch of embedder", "value": "no other embedder here", "goal": "re-embed all", "met": False}
        )
    else:
        back = result["switch_back"]
        rows += [
            {
                "measure": f"switch of embedder to {switch['model']}",
                "value": f"{switch['embedded']}/{switch['documents']} re-embedded into {switch['collection']} "
                f"in {switch['seconds']:.1f} s; {cold['collection']} kept; cross-model query "
                f"{result['cross_model_query'].split(':')[0]}",
                "goal": "all re-embedded into a new collection; never compared with the other model's",
                "met": switch["embedded"] == switch["documents"]
                and switch["collection"] != cold["collection"]
                and result["cross_model_query"].startswith("refused"),
            },
            {
                "measure": "switch back to the default embedder",
                "value": f"{back['embedded']} embedded, {back['seconds']:.2f} s",
                "goal": "0 embedded",
                "met": back["embedded"] == 0,
            },
        ]
    return [{"target": TARGET} | row for row in rows]


def table(result: dict[str, Any]) -> str:
    lines = [f"{'measure':<58} {'met':<4} value"]
    for row in result["summary"]:
        lines.append(f"{row['measure']:<58} {'yes' if row['met'] else 'NO':<4} {row['value']}  (goal: {row['goal']})")
    lines.append(f"total {result['seconds']} s (load average {result['load_average_at_start']:.1f} at the start)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="switch embedder on one story only")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "indexing.json")
    args = parser.parse_args(argv)
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("ANONYMIZED_TELEMETRY", "False")):
        os.environ.setdefault(name, value)
    result = run(args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    return 0 if all(row["met"] for row in result["summary"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
