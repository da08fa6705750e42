"""The largest save a load accepts, loaded and played (issue 43, item 7): load time, first and second turn.

The finding: the largest save a load still accepted loaded in 4.8 s, then its first turn took 36 to 40 s. Its
first recall waited for every vector the store lacked (one embedding call for the whole save, bounded only by the
recall's 60 s wait for background work, ``MemoryConfig.consolidation_wait_s``), and the second turn waited again
while the call went on. Now the vectors are embedded in the background a chunk at a time, newest first, and no
turn waits for them (``game/memory/restore.py``).

The saves, each just under the bounds a load checks (``game/saves/format.py``: 30,000 JSON objects, 10 MiB) and
written the way the game writes them (every field), from the 100-turn honest game of ``bench/save_memory.py``:

- ``bible_most``: Story Bible entries up to the object bound, their facts as long as the byte cap leaves;
- ``memories_most``: free-standing memories (a conversation loaded into memory) the same way: each is embedded
  alone and with its neighbours, so twice the texts.

Each is loaded by a game already open (``make_session``: its embedder, index and lore ready, as the Textual game
is when F3 loads) with real embeddings in a fresh data folder: the store lacks every vector, as it does for a save
written by a game without embeddings, or brought from another machine. One fresh process per save and code
(``--code``: the checkout measured, e.g. a worktree of the previous main), in which ``GameSession.load`` is timed
(load), then ``play("look")`` (first turn) and ``play("what did garrick tell me?")`` (second turn), wall seconds.
Goal: the first turn in <= 5 s. The machine is shared: run the baseline in the same run (``--baseline``).

    python -m bench.largest_save [--quick] [--baseline /tmp/oldmain] [--keep DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from bench.save_memory import child, honest
from game.memory.records import BibleEntry, Episode
from game.saves.format import MAX_SAVE_BYTES, MAX_SAVE_OBJECTS, decode

ROOT = Path(__file__).resolve().parents[1]
FIRST_TURN_S = 5.0
WORDS = "the fog rolls over the old road and a lantern swings by the mill where Garrick waits for news of Hal "

_PLAY = """
import json, os, resource, shutil, sys, time
from pathlib import Path
from game.args import parse, settings_for
from game.wiring import make_session
data, save = Path(sys.argv[1]), Path(sys.argv[2])
settings = settings_for(parse(['run', '--story', 'fantasy_001', '--data-dir', str(data), '--llm', 'scripted']))
session, _ = make_session('fantasy_001', settings)  # a game open: embedder, index and lore ready
shutil.copyfile(save, data / 'big.json')
out = {}
started = time.perf_counter()
session.load('big')
out['load_s'] = time.perf_counter() - started
for name, action in (('first_s', 'look'), ('second_s', 'what did garrick tell me?')):
    started = time.perf_counter()
    result = session.play(action)
    out[name] = time.perf_counter() - started
    meta = result.trace.memory.retrieval_meta if result.trace and result.trace.memory else {}
    out[name[:-2] + '_meta'] = {k: meta.get(k) for k in ('strategy', 'fallback', 'restoring', 'wait_ms')}
    out['ok'] = out.get('ok', True) and result.ok
print(json.dumps(out), flush=True)
os._exit(0)  # not the save on quit: it embeds what is left (bounded in ours, minutes in the previous main)
"""


def _entry(n: int, text: str) -> dict[str, Any]:
    entry = BibleEntry(
        id=f"bible-x{n}", entry_type="event", canonical_key=f"event:x{n}", title="", content=text, source="content"
    )
    entry.status, entry.importance = "active", 40
    return entry.model_dump(mode="json")


def _memory(n: int, text: str) -> dict[str, Any]:
    return Episode(turn=n % 100 + 1, action="", narration=text, node="", segment=1, key=f"mem-x{n}").model_dump(
        mode="json"
    )


SHAPES: dict[str, tuple[str, Callable[[int, str], dict[str, Any]]]] = {
    "bible_most": ("bible", _entry),
    "memories_most": ("log", _memory),
}


def largest(shape: str, base: Path, folder: Path) -> Path:
    """``base`` with records of ``shape`` added up to the object bound, their texts as long as the byte cap leaves;
    checked to load (``decode``)."""
    path = folder / f"{shape}.json"
    if path.exists():
        return path
    part, record = SHAPES[shape]
    document = orjson.loads(base.read_bytes())
    count = MAX_SAVE_OBJECTS - orjson.dumps(document).count(b"{") - 50

    def filled(chars: int) -> bytes:
        doc = orjson.loads(orjson.dumps(document))
        doc["memory"][part] += [record(n, f"{n} " + (WORDS * 9)[n % 60 : n % 60 + chars]) for n in range(count)]
        return orjson.dumps(doc)

    low, high = 1, 800
    while low < high:  # the longest texts that keep the file under the cap
        mid = (low + high + 1) // 2
        low, high = (mid, high) if len(filled(mid)) <= MAX_SAVE_BYTES - 1000 else (low, mid - 1)
    data = filled(low)
    decode(data)  # a load accepts it
    path.write_bytes(data)
    return path


def measure(code: Path, save: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="storyecho-bench-largest-") as data:
        return child(code, _PLAY, [data, str(save)], None, timeout=900)


def run(shapes: list[str], folder: Path, baseline: Path | None) -> dict[str, Any]:
    base = honest(100, folder)
    rows: list[dict[str, Any]] = []
    for shape in shapes:
        save = largest(shape, base, folder)
        codes = [("ours", ROOT)] + ([("baseline", baseline.resolve())] if baseline is not None else [])
        for label, code in codes:
            row: dict[str, Any] = {"save": shape, "mb": round(save.stat().st_size / 1e6, 2), "code": label}
            row |= measure(code, save)
            rows.append(row)
    return {"rows": rows, "summary": summary(rows)}


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per save: ours against the goal, the baseline's figures beside them when measured."""
    out = []
    for row in (r for r in rows if r["code"] == "ours"):
        first = row.get("first_s")
        before = next((r for r in rows if r["code"] == "baseline" and r["save"] == row["save"]), None)
        was = f"; baseline load {_s(before.get('load_s'))}, first turn {_s(before.get('first_s'))}" if before else ""
        out.append(
            {
                "target": "issue 43: the largest save plays at once",
                "measure": f"largest accepted save ({row['save']}, {row['mb']} MB, no vector stored): load time, "
                "first turn time",
                "value": f"load {_s(row.get('load_s'))}, first turn {_s(first)}{was}",
                "goal": f"first turn <= {FIRST_TURN_S:.0f} s",
                "met": first is not None and bool(row.get("ok")) and first <= FIRST_TURN_S,
            }
        )
    return out


def _s(value: Any) -> str:
    return "-" if value is None else f"{value:.2f} s"


def table(result: dict[str, Any]) -> str:
    lines = [f"{'save':<14} {'MB':>5} {'code':<9} {'load s':>7} {'1st s':>7} {'2nd s':>7}  first turn's recall"]
    for row in result["rows"]:
        meta = row.get("first_meta") or {}
        said = f"{meta.get('strategy')}, restoring {meta.get('restoring')}, waited {meta.get('wait_ms')} ms"
        times = " ".join(_fmt(row.get(key)) for key in ("load_s", "first_s", "second_s"))
        lines.append(f"{row['save']:<14} {row['mb']:>5.2f} {row['code']:<9} {times}  {row.get('outcome', said)}")
    lines += [
        f"goal {'met    ' if r['met'] else 'NOT MET'}  {r['measure']}: {r['value']} ({r['goal']})"
        for r in result["summary"]
    ]
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    return f"{'-':>7}" if value is None else f"{value:>7.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the memories_most save only (bench.run_all)")
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout to measure beside ours")
    parser.add_argument("--keep", type=Path, default=None, help="folder keeping the generated saves between runs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "largest_save.json")
    args = parser.parse_args(argv)
    shapes = ["memories_most"] if args.quick else list(SHAPES)
    with tempfile.TemporaryDirectory(prefix="storyecho-bench-largest-saves-") as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        result = run(shapes, folder, args.baseline)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
