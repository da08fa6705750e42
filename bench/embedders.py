"""Embedders: ONNX Runtime against sentence-transformers (PyTorch), in the same run, on the same sentences.

    python -m bench.embedders [--quick] [--data ../shared/bench/locomo] [--repeats N]
                              [--out bench/results/embedders.json]

Measured, the two embedders alternating so that a busy machine slows both alike:

- throughput (sentences/s) embedding the same sentences (the stories' content
  and LoCoMo dialog turns), median and p95 over repeats, and the ratio of the
  medians;
- single-query latency: one short sentence, as the game embeds a player's
  question, median and p95 in ms;
- whether an ONNX vector depends on the batch: 64 sentences embedded one per
  call and in the default batches, the largest difference (0 for int8);
- LoCoMo evidence recall@10 for each, through ``bench/locomo_recall.py``'s own
  rankings: ``ours`` (the game's memory search, in-process index) and
  ``dense`` (plain cosine over the turns);
- memory: a fresh process per embedder plays one turn of ``storyecho run
  --story fantasy_001`` (a new data folder, scripted narrator, the default
  Chroma store, ``memory.embedder`` set) and reports its peak and current
  resident memory, and whether torch or sentence_transformers were imported.

``--quick`` (under ~150 s here) uses fewer sentences, repeats and one LoCoMo
conversation; ``--recall-all`` keeps every conversation for the recall
(``bench/run_all.py`` passes it: one conversation's 38 questions cannot
resolve one point); the figures in ``docs/benchmarks.md`` come from a full run. The result JSON has
a ``summary``: one row per target (ratio >= 2, recall within 1 point, ONNX
memory under half of torch's, torch never imported).
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo_recall import baseline_rankings, load_conversation, ours_ranking, recall_at
from game.memory.vectors.embedders import Embedder, SentenceTransformerEmbedder, Vectors
from game.memory.vectors.inprocess import InProcessVectorStore
from game.memory.vectors.onnx_embedder import OnnxEmbedder

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo"
QUERY = "where is the old hunter?"
TARGET = "5 embeddings"
HEAVY = ("torch", "sentence_transformers", "transformers")

CHILD = """
import json, os, sys
from game.main import main

out, data_dir, actions = sys.argv[1:4]
with open(os.devnull, "w") as quiet:
    sys.stdout = quiet
    code = main(["run", "--story", "fantasy_001", "--llm", "scripted", "--data-dir", data_dir, "--actions", actions])
    sys.stdout = sys.__stdout__
# VmHWM, not getrusage's ru_maxrss: a child's ru_maxrss starts at its parent's peak (this benchmark holds torch)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
with open(out, "w") as handle:
    json.dump({
        "exit": code,
        "peak_rss_mb": round(int(status["VmHWM"].split()[0]) / 1024, 1),
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "heavy_imported": sorted({m.split(".")[0] for m in sys.modules} & set(%r)),
        "onnxruntime_imported": "onnxruntime" in sys.modules,
    }, handle)
"""


class Cached:
    """An embedder's vectors, each text embedded once (the LoCoMo rankings embed the same turns twice)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.model_version = inner.model_version
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Vectors:
        new = list(dict.fromkeys(t for t in texts if t not in self.seen))
        if new:
            self.seen.update(zip(new, self.inner.embed(new), strict=True))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self.seen[t] for t in texts]).astype(np.float32)


def content_sentences() -> list[str]:
    """Every text of four words or more in the two stories' data files."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if len(value.split()) >= 4:
                found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted((ROOT / "content").glob("*/*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return list(dict.fromkeys(found))


def sentences(files: list[Path], limit: int) -> list[str]:
    """Content and LoCoMo turns interleaved (so a prefix has both kinds), at most ``limit``."""
    game = content_sentences()
    turns = [t["text"] for path in files for t in load_conversation(path)["turns"]]
    mixed: list[str] = []
    for i in range(max(len(game), len(turns))):
        mixed += [s[i] for s in (game, turns) if i < len(s)]
    return list(dict.fromkeys(mixed))[:limit]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def throughput(embedders: dict[str, Embedder], texts: list[str], repeats: int) -> dict[str, Any]:
    seconds: dict[str, list[float]] = {name: [] for name in embedders}
    for repeat in range(repeats):
        order = list(embedders) if repeat % 2 == 0 else list(reversed(embedders))
        for name in order:
            started = time.perf_counter()
            embedders[name].embed(texts)
            seconds[name].append(time.perf_counter() - started)
    out: dict[str, Any] = {}
    for name, times in seconds.items():
        rates = [len(texts) / t for t in times]
        out[name] = {
            "median_per_s": round(statistics.median(rates), 1),
            "p95_seconds": round(percentile(times, 95), 2),
            "median_seconds": round(statistics.median(times), 2),
            "runs_per_s": [round(r, 1) for r in rates],
        }
    return out


def latency(embedders: dict[str, Embedder], repeats: int) -> dict[str, Any]:
    ms: dict[str, list[float]] = {name: [] for name in embedders}
    for repeat in range(repeats):
        order = list(embedders) if repeat % 2 == 0 else list(reversed(embedders))
        for name in order:
            started = time.perf_counter()
            embedders[name].embed([QUERY])
            ms[name].append((time.perf_counter() - started) * 1000)
    return {
        name: {"median_ms": round(statistics.median(v), 2), "p95_ms": round(percentile(v, 95), 2)}
        for name, v in ms.items()
    }


def load_turns(path: Path, limit: int | None) -> dict[str, Any]:
    """A LoCoMo conversation; with ``limit``, its first turns and the questions whose evidence is all in them."""
    conv = load_conversation(path)
    if limit is not None:
        conv["turns"] = conv["turns"][:limit]
        ids = {t["id"] for t in conv["turns"]}
        conv["questions"] = [q for q in conv["questions"] if set(q["evidence"]) <= ids]
    return conv


def recall10(embedder: Embedder, files: list[Path], limit: int | None = None) -> dict[str, Any]:
    """LoCoMo evidence recall@10 (categories 1-4), ours and dense, with locomo_recall's rankings.

    ``dense`` depends on the vectors alone; ``ours`` goes through the game's memory search, and is
    recorded as None (with the error) if that path fails, so the embedding figures still come out.
    """
    cached = Cached(embedder)
    rows: dict[str, list[float]] = {"ours": [], "dense": []}
    errors: list[str] = []
    started = time.perf_counter()
    for path in files:
        conv = load_turns(path, limit)
        ranked, _ = baseline_rankings(conv, cached, 10)
        rows["dense"] += [recall_at(q["evidence"], r, 10) for q, r in zip(conv["questions"], ranked, strict=True)]
        if errors:
            continue
        try:
            ours = ours_ranking(conv, cached, InProcessVectorStore(), 10)
        except Exception as exc:  # noqa: BLE001 - reported in the result
            errors.append(f"{path.stem}: {type(exc).__name__}: {exc}")
            continue
        rows["ours"] += [recall_at(q["evidence"], r, 10) for q, r in zip(conv["questions"], ours, strict=True)]
    return {
        "dense": round(float(np.mean(rows["dense"])), 4),
        "ours": None if errors else round(float(np.mean(rows["ours"])), 4),
        "ours_error": errors[0] if errors else None,
        "questions": len(rows["dense"]),
        "seconds": round(time.perf_counter() - started, 1),
    }


def resident(backend: str, cache_dir: Path | None) -> dict[str, Any]:
    """One turn of the game in a fresh process with ``memory.embedder = backend``: its memory and heavy imports."""
    with tempfile.TemporaryDirectory() as scratch:
        out, actions = Path(scratch) / "out.json", Path(scratch) / "actions.txt"
        actions.write_text("look\n", encoding="utf-8")
        env = {
            **os.environ,
            "STORYECHO_MEMORY__EMBEDDER": backend,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
            "PYTHONPATH": str(ROOT),
        }
        if cache_dir is not None:
            env["XDG_CACHE_HOME"] = str(cache_dir)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD % (HEAVY,), str(out), str(Path(scratch) / "data"), str(actions)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
            env=env,
        )
        if done.returncode != 0 or not out.is_file():
            raise SystemExit(f"the {backend} game process failed:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        result["seconds"] = round(time.perf_counter() - started, 1)
        return result


def summary(result: dict[str, Any]) -> list[dict[str, Any]]:
    speed, recall, rss = result["throughput"], result["recall@10"], result["memory"]
    ratio = result["throughput_ratio"]
    gaps = {
        m: round(100 * abs(recall["onnx"][m] - recall["torch"][m]), 2)
        for m in ("ours", "dense")
        if recall["onnx"][m] is not None and recall["torch"][m] is not None
    }
    figures = {
        name: "/".join(f"{recall[name][m]:.3f}" if recall[name][m] is not None else "-" for m in ("ours", "dense"))
        for name in ("onnx", "torch")
    }
    rss_ratio = rss["onnx"]["peak_rss_mb"] / rss["torch"]["peak_rss_mb"]
    return [
        {
            "target": TARGET,
            "measure": "throughput ONNX / torch (same sentences, medians)",
            "value": f"{ratio:.2f}x ({speed['onnx']['median_per_s']:.0f} vs {speed['torch']['median_per_s']:.0f}/s)",
            "goal": ">= 2x",
            "met": ratio >= 2,
        },
        {
            "target": TARGET,
            "measure": "LoCoMo recall@10 gap, ours / dense (points)",
            "value": f"{gaps.get('ours', '-')} / {gaps['dense']} (onnx {figures['onnx']}, torch {figures['torch']})",
            "goal": "<= 1 point",
            "met": "ours" in gaps and max(gaps.values()) <= 1.0,
        },
        {
            "target": TARGET,
            "measure": "ONNX vector of a text alone vs in its batch (max |difference|)",
            "value": f"{result['onnx_batch_dependence']:.2g}",
            "goal": "0 (int8)" if result["onnx"]["precision"] == "int8" else "<= 1e-6",
            "met": result["onnx_batch_dependence"] <= (0.0 if result["onnx"]["precision"] == "int8" else 1e-6),
        },
        {
            "target": TARGET,
            "measure": "peak RSS after one game turn, ONNX / torch",
            "value": f"{rss['onnx']['peak_rss_mb']:.0f} / {rss['torch']['peak_rss_mb']:.0f} MB ({rss_ratio:.2f})",
            "goal": "< 0.5",
            "met": rss_ratio < 0.5,
        },
        {
            "target": TARGET,
            "measure": "torch / sentence_transformers imported with embedder onnx",
            "value": ", ".join(rss["onnx"]["heavy_imported"]) or "none",
            "goal": "none",
            "met": not rss["onnx"]["heavy_imported"],
        },
    ]


def table(result: dict[str, Any]) -> str:
    speed, lat, recall, rss = result["throughput"], result["latency"], result["recall@10"], result["memory"]
    lines = [
        f"{result['sentences']} sentences x {result['repeats']} repeats; ONNX {result['onnx']['model_version']} on "
        f"{result['onnx']['provider']}; LoCoMo {', '.join(result['locomo_files'])} ({recall['torch']['questions']} q)",
        f"{'embedder':<8}{'sent/s':>9}{'p95 s':>8}{'query ms':>10}{'p95 ms':>8}"
        f"{'R@10 ours':>11}{'R@10 dense':>12}{'peak MB':>9}{'RSS MB':>8}  heavy imports",
    ]
    for name in ("torch", "onnx"):
        lines.append(
            f"{name:<8}{speed[name]['median_per_s']:>9.1f}{speed[name]['p95_seconds']:>8.2f}"
            f"{lat[name]['median_ms']:>10.2f}{lat[name]['p95_ms']:>8.2f}"
            f"{recall[name]['ours'] if recall[name]['ours'] is not None else float('nan'):>11.3f}"
            f"{recall[name]['dense']:>12.3f}"
            f"{rss[name]['peak_rss_mb']:>9.0f}{rss[name]['rss_mb']:>8.0f}"
            f"  {', '.join(rss[name]['heavy_imported']) or '-'}"
        )
    lines.append(f"throughput ratio {result['throughput_ratio']:.2f}x")
    lines += [
        f"[{'met' if r['met'] else 'NOT MET'}] {r['measure']}: {r['value']} (goal {r['goal']})"
        for r in result["summary"]
    ]
    return "\n".join(lines)


def run(
    data: Path, quick: bool, repeats: int | None, cache_dir: Path | None, recall_all: bool = False
) -> dict[str, Any]:
    files = sorted(data.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo *.json conversations in {data}")
    locomo_files = [min(files, key=lambda p: p.stat().st_size)] if quick and not recall_all else files
    texts = sentences(files, 200 if quick else 2000)
    repeats = repeats or (3 if quick else 5)
    started = time.perf_counter()

    def stage(label: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {label}", file=sys.stderr, flush=True)

    stage("loading both embedders")
    onnx = OnnxEmbedder(cache_dir=cache_dir / "storyecho" / "models" if cache_dir else None)
    torch = SentenceTransformerEmbedder(device="cpu")
    load_s = {}
    for name, embedder in (("onnx", onnx), ("torch", torch)):
        t0 = time.perf_counter()
        embedder.load()
        load_s[name] = round(time.perf_counter() - t0, 2)
    embedders: dict[str, Embedder] = {"torch": torch, "onnx": onnx}
    for model in embedders.values():  # warm-up
        model.embed(texts[:64])
    result: dict[str, Any] = {
        "quick": quick,
        "sentences": len(texts),
        "repeats": repeats,
        "onnx": {
            "model_version": onnx.model_version,
            "precision": onnx.precision,
            "provider": onnx.providers[0],
            "model_file": str(onnx.model_file),
            "built_now": onnx.built,
        },
        "torch": {"model_version": torch.model_version, "device": torch.device},
        "load_seconds": load_s,
        "cpu_count": os.cpu_count(),
        "locomo_files": [p.stem for p in locomo_files],
    }
    stage(f"throughput: {len(texts)} sentences x {repeats}")
    result["throughput"] = throughput(embedders, texts, repeats)
    result["throughput_ratio"] = round(
        result["throughput"]["onnx"]["median_per_s"] / result["throughput"]["torch"]["median_per_s"], 2
    )
    stage(f"throughput (sentences/s): {json.dumps({k: v['median_per_s'] for k, v in result['throughput'].items()})}")
    stage("single-query latency")
    result["latency"] = latency(embedders, 10 if quick else 30)
    stage("LoCoMo recall@10")
    limit = 150 if quick and not recall_all else None
    result["recall@10"] = {name: recall10(embedder, locomo_files, limit) for name, embedder in embedders.items()}
    result["recall_subset"] = f"first {limit} turns of each conversation" if limit else "all turns"
    probe = texts[:200]
    result["cosine_onnx_vs_torch"] = {
        "min": round(float((onnx.embed(probe) * torch.embed(probe)).sum(1).min()), 4),
        "mean": round(float((onnx.embed(probe) * torch.embed(probe)).sum(1).mean()), 4),
    }
    alone = np.vstack([onnx.embed([text]) for text in probe[:64]])
    result["onnx_batch_dependence"] = float(np.abs(onnx.embed(probe)[:64] - alone).max())
    stage(f"recall@10: {json.dumps(result['recall@10'])}")
    stage("one game turn per embedder, in fresh processes")
    result["memory"] = {name: resident(name, cache_dir) for name in ("torch", "onnx")}
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["summary"] = summary(result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sentences and repeats, one LoCoMo conversation")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo-format *.json files")
    parser.add_argument("--repeats", type=int, default=None, help="throughput repeats (default 5; 3 with --quick)")
    parser.add_argument(
        "--recall-all",
        action="store_true",
        help="LoCoMo recall over every conversation and question even with --quick (its one conversation's 38 "
        "questions cannot resolve the one-point goal: one question is 2.6 points)",
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="cache root for the exported ONNX model (default: the user's)"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "embedders.json")
    args = parser.parse_args(argv)
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("ANONYMIZED_TELEMETRY", "False")):
        os.environ.setdefault(name, value)
    result = run(args.data, args.quick, args.repeats, args.cache_dir, args.recall_all)
    flags = [flag for flag, on in (("--quick", args.quick), ("--recall-all", args.recall_all)) if on]
    result["command"] = " ".join(["python -m bench.embedders", *flags])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
