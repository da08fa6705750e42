"""Many players on one ``storyecho serve`` (issue 45, item 5): memory per player and turn latency at N = 1, 4, 8.

Each N starts the real server (``storyecho serve``, textual-serve, one game process per tab) on a fresh copy of a
data folder whose lore index was built once (``storyecho index``: each visitor's folder is seeded from it, as in a
deployment, docs/serving.md), with the scripted narrator (the narrator's own time, a model's, is not the server's
to measure) and the default memory (embeddings on, each player's own embedded index). N players open the
websocket as the page does (aiohttp, keys as the page sends them; no browser: xterm.js draws in the browser's
process, not the server's), each with a login of their own (``--user-header``), start a new game together, then
all play ``--turns`` turns back to back at once, the worst case: no one reads.

Measured per N:

- **turn latency**: from the Enter of an action to its "Turn k" on the player's screen (the game's answer through
  the server), median and p95 over every player's turns;
- **memory per player**: each game's process tree once its turns are played, RSS (what ``ps`` shows: shared
  libraries counted in every process) and PSS (shared pages split between the processes that share them: what
  N players really cost), and the server's own RSS;
- **start**: from opening the page to the new game's first prompt, median over the players.

    python -m bench.serve_players [--players 1,4,8] [--turns 6] [--quick]

Not in ``bench.run_all``: eight games starting at once take minutes on this 2-core machine (``--quick``: N = 1, 2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "STORYECHO_LLM": "scripted",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
}
ACTIONS = ["go east", "talk to garrick", "ask garrick about hal", "look", "go west", "go north", "look", "go south"]
ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
HEADER = "X-Player"
TIMEOUT_S = 600.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Player:
    """One browser tab's worth of player: keys in, the game's screen read (escapes out) from the websocket."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.text = ""
        self.turns: list[float] = []
        self.start_s = 0.0

    async def play(self, session: Any, url: str, turns: int, go: asyncio.Event, ready: asyncio.Event) -> None:
        from aiohttp import WSMsgType

        opened = time.perf_counter()
        socket_ = await session.ws_connect(f"{url}/ws?width=120&height=40", headers={HEADER: self.name})

        async def read() -> None:
            async for message in socket_:
                if message.type == WSMsgType.BINARY:
                    self.text += ESCAPES.sub("", message.data.decode("utf-8", "replace"))

        reader = asyncio.ensure_future(read())
        await socket_.send_json(["resize", {"width": 120, "height": 40}])
        await self.wait_for("New game", 0)
        await socket_.send_json(["stdin", "n"])
        await self.wait_for("Choose your story", 0)
        await socket_.send_json(["stdin", "\r"])
        await self.wait_for("What do you do?", 0)
        self.start_s = time.perf_counter() - opened
        ready.set()
        await go.wait()
        for turn in range(1, turns + 1):
            seen = len(self.text)
            sent = time.perf_counter()
            await socket_.send_json(["stdin", ACTIONS[(turn - 1) % len(ACTIONS)] + "\r"])
            await self.wait_for(f"Turn {turn}", seen)
            self.turns.append(time.perf_counter() - sent)
        await socket_.close()
        await reader

    async def wait_for(self, text: str, since: int) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while text not in self.text[since:]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: {text!r} never came")
            await asyncio.sleep(0.02)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        at = todo.pop()
        out.append(at)
        todo.extend(_children(at))
    return out


def _memory_mb(pids: list[int]) -> tuple[float, float]:
    """RSS and PSS of ``pids`` together, in MB (``/proc/<pid>/smaps_rollup``)."""
    rss = pss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024


async def _session(url: str, count: int, turns: int, server: int) -> dict[str, Any]:
    import aiohttp

    players = [Player(f"p{n}") for n in range(count)]
    go = asyncio.Event()
    readies = [asyncio.Event() for _ in players]
    async with aiohttp.ClientSession() as session:
        tasks = [
            asyncio.ensure_future(p.play(session, url, turns, go, r)) for p, r in zip(players, readies, strict=True)
        ]
        await asyncio.gather(*(r.wait() for r in readies))
        go.set()
        while not all(len(p.turns) == turns for p in players):  # games at their peak: measured before they close
            for task in tasks:
                if task.done() and task.exception():
                    raise task.exception()  # type: ignore[misc]
            await asyncio.sleep(0.05)
        games = [_tree(child) for child in _children(server)]
        memory = [_memory_mb(tree) for tree in games]
        server_rss, _ = _memory_mb([server])
        await asyncio.gather(*tasks)
    times = sorted(t for p in players for t in p.turns)
    return {
        "players": count,
        "games_measured": len(games),
        "turn_ms_median": statistics.median(times) * 1000,
        "turn_ms_p95": times[max(0, round(0.95 * len(times)) - 1)] * 1000,
        "start_s_median": statistics.median(p.start_s for p in players),
        "rss_mb_per_player": statistics.mean(m[0] for m in memory),
        "pss_mb_per_player": statistics.mean(m[1] for m in memory),
        "pss_mb_total": sum(m[1] for m in memory),
        "server_rss_mb": server_rss,
    }


def measure(template: Path, count: int, turns: int) -> dict[str, Any]:
    """N players on a fresh server over a copy of ``template``."""
    with tempfile.TemporaryDirectory(prefix="serve-players-") as folder:
        data = Path(folder) / "data"
        shutil.copytree(template, data)
        port = free_port()
        log = Path(folder) / "serve.log"
        flags = ["--port", str(port), "--data-dir", str(data), "--max-games", str(count), "--user-header", HEADER]
        with log.open("w") as out:
            server = subprocess.Popen(
                [sys.executable, "-m", "game", "serve", *flags], cwd=folder, env=ENV, stdout=out, stderr=out
            )
        try:
            deadline = time.monotonic() + 60
            while f":{port}" not in log.read_text():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log.read_text())
                time.sleep(0.1)
            return asyncio.run(_session(f"http://127.0.0.1:{port}", count, turns, server.pid))
        finally:
            server.terminate()
            server.wait(timeout=60)


def lore_index(folder: Path) -> float:
    """Build the lore index every visitor's folder is seeded from; its seconds."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "game", "index", "--data-dir", str(folder)], env=ENV, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="1,4,8", help="the N to measure, comma-separated")
    parser.add_argument("--turns", type=int, default=6, help="turns each player plays")
    parser.add_argument("--quick", action="store_true", help="N = 1, 2 and 3 turns")
    args = parser.parse_args()
    counts = [1, 2] if args.quick else [int(n) for n in args.players.split(",")]
    turns = 3 if args.quick else args.turns
    with tempfile.TemporaryDirectory(prefix="serve-lore-") as folder:
        template = Path(folder)
        index_s = lore_index(template)
        rows = [measure(template, count, turns) for count in counts]
    summary = [
        {
            "target": "45 many players",
            "measure": f"N={row['players']}: turn latency median / p95; memory per player (PSS; RSS)",
            "value": f"{row['turn_ms_median']:.0f} / {row['turn_ms_p95']:.0f} ms; "
            f"{row['pss_mb_per_player']:.0f} MB ({row['rss_mb_per_player']:.0f} MB)",
            "goal": "reported",
            "met": None,
        }
        for row in rows
    ]
    result = {"turns": turns, "lore_index_s": index_s, "cpus": os.cpu_count(), "rows": rows, "summary": summary}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "serve_players.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{turns} turns each, scripted narrator, embeddings on; lore index built once in {index_s:.0f} s")
    head = f"{'N':>3} {'turn median':>12} {'turn p95':>9} {'start':>7} {'PSS/player':>11} {'RSS/player':>11}"
    print(head + f" {'PSS total':>10} {'server RSS':>11}")
    for row in rows:
        print(
            f"{row['players']:>3} {row['turn_ms_median']:>9.0f} ms {row['turn_ms_p95']:>6.0f} ms "
            f"{row['start_s_median']:>5.1f} s {row['pss_mb_per_player']:>8.0f} MB {row['rss_mb_per_player']:>8.0f} MB "
            f"{row['pss_mb_total']:>7.0f} MB {row['server_rss_mb']:>8.0f} MB"
        )


if __name__ == "__main__":
    main()
