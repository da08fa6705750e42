"""Issue 45, item 4: a game that hangs is killed after a deadline, when its tab closes and when the server stops,
and a game that does not hang is still saved.

textual-serve stops a game by sending it "quit" and waiting for ever: a hung game kept its process (300-400 MB) and
its place under the cap, and held up the server's stop until aiohttp gave up, its process left behind. The real
server runs here (``tests/serve_hanging.py``: ``game.web.server`` as ``storyecho serve`` runs it), with a deadline of
3 s; visitors named ``hung...`` get ``tests/hung_game.py``, a fake game that ignores "quit" and SIGTERM (a fault
injected), and another visitor plays the real game over its websocket (``tests.serving.Tab``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path

import aiohttp

from game.saves.format import SaveError
from game.saves.slots import SlotStore
from tests.serving import Tab, start_serve, stop

DEADLINE_S = 3.0
HEADER = "X-Player"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, is not running)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _pid(folder: Path, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while not (folder / "pid").exists() or not (folder / "pid").read_text():
        assert time.monotonic() < deadline, "the hung game never started"
        time.sleep(0.1)
    return int((folder / "pid").read_text())


def _gone_within(pid: int, seconds: float) -> float:
    """How long process ``pid`` took to end (at most ``seconds``, else the test fails)."""
    start = time.monotonic()
    while _alive(pid):
        assert time.monotonic() - start < seconds, f"the hung game {pid} still runs after {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - start


def _saved_turn(folder: Path) -> int:
    with contextlib.suppress(SaveError):
        return SlotStore(folder).read("autosave-fantasy_001").save.game.turn
    return -1


def test_a_hung_game_is_killed_past_its_deadline_and_a_game_that_is_not_still_saves(tmp_path):
    data = tmp_path / "data"
    process, url = start_serve(
        tmp_path, data, "--user-header", HEADER, program=("-m", "tests.serve_hanging", str(DEADLINE_S))
    )
    try:

        async def play() -> tuple[int, int, float]:
            async with aiohttp.ClientSession() as session:
                async with Tab(session, url, {HEADER: "hung-1"}):  # its tab closes: the server stops the game
                    first = _pid(data / "visitors" / "hung-1")
                took = await asyncio.to_thread(_gone_within, first, 2 * DEADLINE_S + 5)
                async with Tab(session, url, {HEADER: "ann"}) as ann, Tab(session, url, {HEADER: "hung-2"}):
                    await ann.new_game()
                    await ann.play("go east", 1)
                    second = _pid(data / "visitors" / "hung-2")
                    process.send_signal(signal.SIGTERM)  # the server stops with both games running
                    await asyncio.to_thread(process.wait, 2 * DEADLINE_S + 8)
            return first, second, took

        _, second, took = asyncio.run(play())
        assert took >= DEADLINE_S  # "quit" and SIGTERM were each given their time before SIGKILL
        assert process.returncode == 0
        assert not _alive(second)  # killed before the server ended, not left behind
        assert _saved_turn(data / "visitors" / "ann") == 1  # the game that answered "quit" saved its turn
    finally:
        stop(process)
