"""What each of memory's performance mechanisms earns: the start and turn figures with it switched off.

Issue 23: a mechanism stays only where removing it moves a figure past its
goal. For each variant (the game as it is, then with one mechanism switched
off, see ``bench/ablation/sitecustomize.py``) this runs ``bench.startup
--turn-only`` and ``bench.turn_overhead --quick`` in fresh processes and
collects the figures the goals are about:

- first turn's output, embeddings / ``--no-embeddings`` (goal <= 2x);
- turn overhead p95 at 10,000 memories, narrator 1 s a turn (goal <= 25 ms),
  and as a share of a local-model turn (goal <= 2%);
- information: the overhead median, the worst case (instant narrator) p95, and
  the whole ``run`` process to exit.

Variants run one after the other on a shared machine: compare a variant's
ratio rows (each measured against its own baseline in the same process) more
than its absolute times. Writes ``bench/results/ablation.json``.

    python -m bench.ablation [--only mirror,foreground]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).parent / "results" / "ablation.json"
VARIANTS = ("", "mirror", "embed_cache", "store_rows", "foreground", "onnx")
"""The game as it is, then each mechanism switched off alone."""


def _run(module: str, ablate: str, out: Path, *flags: str) -> dict[str, Any]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "STORYECHO_ABLATE": ablate,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent / "ablation"), str(ROOT)])),
    }
    command = [sys.executable, "-m", module, *flags, "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{module} with {ablate or 'nothing'} off failed: {done.stderr.strip()[-1500:]}")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def measure(ablate: str, folder: Path) -> dict[str, Any]:
    start = _run("bench.startup", ablate, folder / "startup.json", "--turn-only", "--repeats", "5")
    turns = _run("bench.turn_overhead", ablate, folder / "turn_overhead.json", "--quick")
    first = start["first_turn"]
    paced, instant = turns["paced"], turns["instant"]
    local_ms = turns["local_turn_ms"]["median"]
    return {
        "off": ablate or "nothing",
        "first_turn_ratio": round(first["output"]["ratio"], 2),
        "first_turn_s": round(first["output"]["median_s"]["embeddings"], 2),
        "exit_ratio": round(first["exit"]["ratio"], 2),
        "p95_ms": paced["overhead_ms"]["p95"],
        "median_ms": paced["overhead_ms"]["median"],
        "local_share": round(100 * paced["overhead_ms"]["p95"] / local_ms, 2) if local_ms else None,
        "instant_p95_ms": instant["overhead_ms"]["p95"],
        "goals_met": first["output"]["ratio"] <= 2.0
        and paced["overhead_ms"]["p95"] <= 25.0
        and (not local_ms or paced["overhead_ms"]["p95"] / local_ms <= 0.02),
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| switched off | first turn / no-embeddings (<= 2x) | p95 ms (<= 25) | % of local turn (<= 2) | median ms "
        "| instant p95 ms | run to exit / no-emb. | goals met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['off']} | {r['first_turn_ratio']:.2f}x ({r['first_turn_s']:.2f} s) | {r['p95_ms']:.1f} "
            f"| {r['local_share']} | {r['median_ms']:.1f} | {r['instant_p95_ms']:.1f} | {r['exit_ratio']:.2f}x "
            f"| {'yes' if r['goals_met'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated variants (default: all; '' is the game as is)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    variants = VARIANTS if args.only is None else tuple(v.strip() for v in args.only.split(","))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for variant in variants:
            rows.append(measure(variant, Path(folder)))
            print(f"{rows[-1]['off']}: done", file=sys.stderr, flush=True)
    print(table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
