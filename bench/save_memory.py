"""Peak memory and time of loading hostile and honest saves; what an honest game's history and undo timeline keep.

Every measurement runs in a fresh process (``python -c``, in the checkout given by ``--code``: the same files can be
loaded by the previous main, ``git worktree add /tmp/oldmain fbce072``), which reports its own peak RSS (``VmHWM``:
``ru_maxrss`` keeps the parent's peak across fork and exec) before and after the load: each row is one process's:

- ``load``: ``GameSession.load`` of the file (``SlotStore.read`` -> ``format.decode`` -> ``check_against``, then what
  a load builds: ``GameHistory.of``, the memory restore with keyword memory, the session's timeline); goal: the
  process peaks under 500 MB and the load takes under 5 s of CPU (the machine is shared by other work: the CPU
  time the load took stands for its time alone; wall seconds are shown too). An accepted save then plays a turn
  and saves again.
- ``caches`` (honest games): the RSS the history and the export keep once built (``GameHistory.of`` + its
  ``saved()``, a ``StateEncoder().encode``); goal: under 10 MB at 5,000 turns.
- ``timeline`` (honest 5,000-turn game): the RSS the undo timeline keeps after 2,000 moments recorded as a session
  records them (``MemoryState.frozen`` of the growing memory, ``Timeline.record``); goal: under 10 MB.

The hostile shapes: ``history_500k`` (500,000 one-field history turns, 7.5 MB), ``log_100k`` (100,000 minimal
episodes, 7.4 MB), and, filled up to 47.6 MB (under the previous 64 MB cap, issue 33) or to the cap of the code
measured, ``*_full``: history turns, minimal episodes, empty objects and empty strings. The previous main is run
with its address space limited (``--limit-gb``): a load that needs more fails with MemoryError, shown as ``> limit``.

    python -m bench.save_memory [--quick] [--code /tmp/oldmain] [--turns 100,1000,5000] [--keep DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from game.saves.format import MAX_SAVE_OBJECTS, MAX_SAVE_VALUES

ROOT = Path(__file__).resolve().parents[1]
PEAK_MB, LOAD_SECONDS, CACHES_MB, TIMELINE_MB = 500, 5.0, 10.0, 10.0
TIMELINE_TURNS = 2000
FULL_BYTES = 47_600_000
"""The size the ``*_full`` shapes fill to (the issue's 47.6 MB file), or the cap of the code measured if lower."""

_PRELUDE = """
import gc, json, resource, sys, time
from pathlib import Path
def rss_now():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
def peak():  # VmHWM, not ru_maxrss: that one keeps the parent's peak across fork and exec
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:')) / 1024
from game.saves.slots import SlotStore
folder, name = Path(sys.argv[1]), sys.argv[2]
"""

_LOAD = (
    _PRELUDE
    + """
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.saves.format import SaveError
from game.world.loader import content_root, load_pack
from game.world.state import new_game
pack = load_pack(content_root() / 'fantasy_001')
narrator = ScriptedNarrator(pack)
memory = GameMemory(pack, narrator, background=False)
memory.prepare()
session = GameSession(TurnPipeline(pack, new_game(pack), narrator, memory), SlotStore(folder), autosave_every=0)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
out = {'base_mb': peak()}
started, started_cpu = time.perf_counter(), cpu()
try:
    session.load(name)
    out['seconds'], out['cpu_seconds'] = time.perf_counter() - started, cpu() - started_cpu
    out['peak_mb'] = peak()
    turn = session.engine.state.turn
    played = session.play('look')
    session.save('again')
    SlotStore(folder).read('again')
    out['outcome'] = f'loaded turn {turn}; played, saved, read again' if played.ok else f'loaded; turn failed'
except SaveError as exc:
    out['seconds'], out['cpu_seconds'] = time.perf_counter() - started, cpu() - started_cpu
    out['peak_mb'] = peak()
    out['outcome'] = f'refused: {exc}'[:160]
except MemoryError:
    out['seconds'] = time.perf_counter() - started
    out['peak_mb'] = None
    out['outcome'] = 'MemoryError (over the address-space limit)'
print(json.dumps(out))
"""
)

_CACHES = (
    _PRELUDE
    + """
from game.memory.export import StateEncoder
from game.saves.history import GameHistory
save = SlotStore(folder).read(name).save
gc.collect()
before = rss_now()
history = GameHistory.of(save.history, save.game)
history.saved()
encoder = StateEncoder()
encoder.encode(save.memory)
gc.collect()
print(json.dumps({'caches_mb': rss_now() - before, 'turns': save.turn}))
"""
)

_TIMELINE = (
    _PRELUDE
    + """
from game.engine.timeline import Moment, Timeline
from game.saves.history import GameHistory
count = int(sys.argv[3])
save = SlotStore(folder).read(name).save
history = GameHistory.of(save.history, save.game)
first = history.last - count  # a session loaded late in a long game, then played on: moments of a long log
states = [history.state_at(turn) for turn in range(first, first + count + 1)]
memory = save.memory.as_of(first)
later = [e for e in save.memory.log if e.turn > first]
del history
gc.collect()
before = rss_now()
timeline = Timeline()
mark = memory.frozen()
timeline.start(Moment(states[0], mark))
for game in states[1:]:
    while later and later[0].turn <= game.turn:
        memory.log.append(later.pop(0))
    mark = memory.frozen(mark)
    timeline.record(Moment(game, mark, 'look', 'here', 'You look around.'))
del mark
gc.collect()
print(json.dumps({'timeline_mb': rss_now() - before, 'moments': count}))  # the states are in both figures
"""
)


def child(code: Path, script: str, args: list[str], limit_gb: float | None, timeout: float = 300) -> dict[str, Any]:
    """Run ``script`` in a fresh process in the checkout ``code``; its last line of output, as JSON."""
    limit = ""
    if limit_gb:
        size = int(limit_gb * 2**30)
        limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({size}, {size}))\n"
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", limit + script, *args],
            cwd=code,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"outcome": f"timed out after {timeout:.0f} s", "seconds": time.perf_counter() - started}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        over = f" (address space limited to {limit_gb} GB)" if limit_gb else ""
        return {"outcome": f"crashed: {tail[0][:120]}{over}", "seconds": time.perf_counter() - started}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


# ------------------------------------------------------------------- the files
def honest(turns: int, folder: Path) -> Path:
    """A save of an honest ``turns``-turn game (``bench/saves.py``'s game: walkthroughs and neutral actions)."""
    path = folder / f"honest_{turns}.json"
    if not path.exists():
        from bench.saves import STORY, play
        from game.world.loader import content_root, load_pack

        session, memory = play(load_pack(content_root() / STORY), turns)
        path.write_bytes(session.snapshot(complete=True))
        memory.close()
    return path


def _filled(document: dict[str, Any], size: int, grow: Callable[[dict[str, Any], int], None]) -> bytes:
    """``document`` with ``grow(document, count)`` making it just under ``size`` bytes."""
    count = 1000
    while True:
        copy = orjson.loads(orjson.dumps(document))
        grow(copy, count)
        data = orjson.dumps(copy)
        if size * 0.98 <= len(data) <= size:
            return data
        count = max(1, int(count * size * 0.99 / len(data)))


Grow = Callable[[dict[str, Any], int], None]


def _most(bound: int, mark: bytes, grow: Grow) -> Grow:
    """``grow`` to just under the save's ``bound`` on the count of ``mark`` (``{``: objects, ``,``: values)."""

    def most(doc: dict[str, Any], _: int) -> None:
        grow(doc, bound - orjson.dumps(doc).count(mark) - 50)

    return most


def _history_turns(doc: dict[str, Any], count: int) -> None:
    start = doc["game"]["turn"]
    doc["history"] = {"start": dict(doc["game"]), "turns": [{"turn": start + i} for i in range(1, count + 1)]}
    doc["game"]["turn"] = doc["turn"] = start + count


def _episodes(doc: dict[str, Any], count: int) -> None:
    doc["memory"]["log"] += [{"turn": 1, "action": "", "narration": "", "node": ""}] * count


def _empty_objects(doc: dict[str, Any], count: int) -> None:
    doc["history"] = {"start": dict(doc["game"]), "turns": [{}] * count}


def _empty_strings(doc: dict[str, Any], count: int) -> None:
    doc["memory"]["pending_vectors"] = [""] * count


def _strings(doc: dict[str, Any], count: int) -> None:
    doc["memory"]["pending_vectors"] = [f"v{n}" for n in range(count)]


def _long_texts(doc: dict[str, Any], count: int) -> None:
    """Episodes of 30,000 characters of narration (memory keeps 1,200 of a turn's)."""
    words = "the fog rolls over the old road and a lantern swings "
    doc["memory"]["log"] += [
        {"turn": 1, "action": "look", "narration": (words * 600)[: 30_000 - n % 7], "node": "Path"}
        for n in range(count)
    ]


def _entries(doc: dict[str, Any], count: int) -> None:
    fields = {"entry_type": "event", "canonical_key": "event:x", "title": "", "status": "active", "source": "content"}
    doc["memory"]["bible"] += [{"id": f"b{n}", "content": f"fact {n}", **fields} for n in range(count)]


def _reviews(doc: dict[str, Any], count: int) -> None:
    entry = doc["memory"]["bible"][0]
    review = {"entry": entry["id"], "key": entry["canonical_key"], "content": entry["content"], "turn": 1}
    doc["memory"]["reviews"] += [{**review, "action": "pin" if n % 2 else "unpin"} for n in range(count)]


SHAPES: dict[str, tuple[Callable[[dict[str, Any], int], None], int | None]] = {
    "history_500k": (_history_turns, 500_000),
    "log_100k": (_episodes, 100_000),
    "history_full": (_history_turns, None),
    "log_full": (_episodes, None),
    "empty_objects_full": (_empty_objects, None),
    "empty_strings_full": (_empty_strings, None),
    "long_texts_full": (_long_texts, None),
    # the largest parts a save accepts: just under the bounds of the new code
    "history_most": (_most(MAX_SAVE_OBJECTS, b"{", _history_turns), 0),
    "log_most": (_most(MAX_SAVE_OBJECTS, b"{", _episodes), 0),
    "bible_most": (_most(MAX_SAVE_OBJECTS, b"{", _entries), 0),
    "reviews_most": (_most(MAX_SAVE_OBJECTS, b"{", _reviews), 0),
    "values_most": (_most(MAX_SAVE_VALUES, b",", _strings), 0),
}


def hostile(shape: str, base: Path, folder: Path, cap: int) -> Path:
    path = folder / f"{shape}.json"
    if not path.exists():
        grow, count = SHAPES[shape]
        document = orjson.loads(base.read_bytes())
        if count is not None:
            grow(document, count)
            data = orjson.dumps(document)
        else:
            data = _filled(document, min(FULL_BYTES, cap) - 1000, grow)
        path.write_bytes(data)
    return path


def cap_of(code: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", "from game.saves.format import MAX_SAVE_BYTES; print(MAX_SAVE_BYTES)"],
        cwd=code,
        env=dict(os.environ, PYTHONPATH=str(code)),
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


# ------------------------------------------------------------------------- run
def run(code: Path, turns: list[int], folder: Path, limit_gb: float | None) -> dict[str, Any]:
    cap = cap_of(code)
    rows: list[dict[str, Any]] = []
    files = {f"honest_{n}": honest(n, folder) for n in turns}
    base = files[f"honest_{min(turns)}"]
    hostile_folder = folder / f"cap_{cap}"
    hostile_folder.mkdir(exist_ok=True)
    files |= {shape: hostile(shape, base, hostile_folder, cap) for shape in SHAPES}
    for name, path in files.items():
        with tempfile.TemporaryDirectory(prefix="storyecho-bench-load-") as work:
            os.link(path, Path(work) / "slot.json")
            row: dict[str, Any] = {"file": name, "mb": round(path.stat().st_size / 1e6, 1)}
            row |= child(code, _LOAD, [work, "slot"], limit_gb)
            peak, seconds = row.get("peak_mb"), row.get("cpu_seconds", row.get("seconds", 0.0))
            row["met"] = peak is not None and peak < PEAK_MB and seconds < LOAD_SECONDS
            if name.startswith("honest_"):
                row |= child(code, _CACHES, [work, "slot"], None)
                row["caches_met"] = row.get("caches_mb", 1e9) < CACHES_MB
            rows.append(row)
    timeline: dict[str, Any] = {}
    longest = max(turns)
    if longest >= TIMELINE_TURNS:
        with tempfile.TemporaryDirectory(prefix="storyecho-bench-load-") as work:
            os.link(files[f"honest_{longest}"], Path(work) / "slot.json")
            timeline = child(code, _TIMELINE, [work, "slot", str(TIMELINE_TURNS)], None)
            timeline["met"] = timeline.get("timeline_mb", 1e9) < TIMELINE_MB
    result = {"code": str(code), "cap_bytes": cap, "rows": rows, "timeline": timeline}
    return result | {"summary": summary(rows, timeline, longest)}


def summary(rows: list[dict[str, Any]], timeline: dict[str, Any], longest: int) -> list[dict[str, Any]]:
    """The rows ``bench.run_all`` shows: each goal computed (a game shorter than 5,000 turns, ``--quick``, gives its
    caches scaled up to 5,000 turns, said in the row)."""
    target = "issue 33: memory bounded by the file"
    worst_peak = max(rows, key=lambda r: r.get("peak_mb") or 1e9)
    worst_time = max(rows, key=lambda r: r.get("cpu_seconds", r.get("seconds", 0.0)))
    peak, seconds = worst_peak.get("peak_mb"), worst_time.get("cpu_seconds", worst_time.get("seconds", 0.0))
    honest = next(r for r in rows if r["file"] == f"honest_{longest}")
    caches = honest.get("caches_mb", 1e9) * (5000 / longest if longest < 5000 else 1)
    scaled = f", scaled from {longest:,} turns" if longest < 5000 else ""
    moments = timeline.get("timeline_mb")
    return [
        {
            "target": target,
            "measure": f"peak RSS of loading any of {len(rows)} files (hostile shapes up to the cap, honest games)",
            "value": f"{_fmt(peak)} MB ({worst_peak['file']})",
            "goal": f"< {PEAK_MB} MB",
            "met": peak is not None and peak < PEAK_MB,
        },
        {
            "target": target,
            "measure": f"CPU seconds of loading any of {len(rows)} files (load, restore, timeline)",
            "value": f"{seconds:.2f} s ({worst_time['file']})",
            "goal": f"< {LOAD_SECONDS:.0f} s",
            "met": seconds < LOAD_SECONDS,
        },
        {
            "target": target,
            "measure": f"RSS of an honest 5,000-turn game's history and export caches{scaled}",
            "value": f"{caches:.1f} MB",
            "goal": f"< {CACHES_MB:.0f} MB",
            "met": caches < CACHES_MB,
        },
        {
            "target": target,
            "measure": f"RSS the undo timeline keeps after {TIMELINE_TURNS:,} turns of a long game",
            "value": f"{_fmt(moments, 1)} MB",
            "goal": f"< {TIMELINE_MB:.0f} MB",
            "met": moments is not None and moments < TIMELINE_MB,
        },
    ]


def _fmt(value: Any, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def table(result: dict[str, Any]) -> str:
    lines = [
        f"code: {result['code']}   save cap: {result['cap_bytes']:,} bytes",
        f"{'file':<20} {'MB':>5} {'peak MB':>8} {'load s':>7} {'cpu s':>6} {'caches MB':>9}  met  outcome",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['file']:<20} {row['mb']:>5.1f} {_fmt(row.get('peak_mb')):>8} {_fmt(row.get('seconds'), 2):>7} "
            f"{_fmt(row.get('cpu_seconds'), 2):>6} "
            f"{_fmt(row.get('caches_mb'), 1):>9}  {'yes' if row['met'] else 'NO ':<4} {row.get('outcome', '')}"
        )
    timeline = result["timeline"]
    if timeline:
        kept = _fmt(timeline.get("timeline_mb"), 1)
        lines.append(f"undo timeline after {timeline.get('moments')} moments: {kept} MB")
    lines += [
        f"goal {'met    ' if r['met'] else 'NOT MET'}  {r['measure']}: {r['value']} ({r['goal']})"
        for r in result["summary"]
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose code loads the files")
    parser.add_argument("--turns", default="100,1000,5000", help="honest games, comma-separated turn counts")
    parser.add_argument("--quick", action="store_true", help="honest games of 100 and 2,000 turns (bench.run_all)")
    parser.add_argument("--keep", type=Path, default=None, help="folder keeping the generated saves between runs")
    parser.add_argument("--limit-gb", type=float, default=None, help="address-space limit of each load (old code)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "save_memory.json")
    args = parser.parse_args(argv)
    turns = [100, TIMELINE_TURNS] if args.quick else sorted(int(n) for n in args.turns.split(","))
    with tempfile.TemporaryDirectory(prefix="storyecho-bench-saves-") as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        result = run(args.code.resolve(), turns, folder, args.limit_gb)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
