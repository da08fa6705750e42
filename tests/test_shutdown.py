"""Issue 31, part 6: nothing waits minutes.

Each test runs the real game in a child process against an endpoint stalled on purpose (the fault-injecting
servers of ``tests/fake_openai_server.py``: no real server stalls on demand) with the client's timeout left long
(60-120 s), and measures how long the process takes to end once it is asked to: under 10 s, where the work under
way is abandoned, not waited for.

- Quitting the game after "Test narrator" against a stalled endpoint (the check's thread used to be a Textual
  thread worker, joined when the app's event loop closed);
- quitting a headless game while a summary call is stalled (the memory worker's thread used to be joined on close
  and again when the interpreter exits);
- Ctrl-C in a headless turn that waits for the model (``storyecho run`` and ``storyecho play --headless``): a line
  saying so, no traceback, and the game saved as it was before that turn.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from game.saves.slots import SlotStore
from tests.fake_openai_server import Behaviour, FakeOpenAIServer, StalledServer, delay
from tests.fitness_models import FollowsTheAction

ROOT = Path(__file__).resolve().parents[1]
QUIT_WITHIN_S = 10.0
ENV = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
ACTIONS = ["go east", "talk to garrick", "go west", "go north", "look", "look"]


def _config(tmp_path: Path, timeout_s: float = 60) -> Path:
    config = tmp_path / "storyecho.toml"
    config.write_text(f'[openai]\ntimeout_s = {timeout_s}\nmax_attempts = 1\njson_mode = "json_schema"\n')
    return config


def _game(tmp_path: Path, url: str, *command: str) -> subprocess.Popen[str]:
    flags = ["--llm", "openai", "--base-url", url, "--model", "fake-model", "--no-embeddings"]
    flags += ["--data-dir", str(tmp_path / "saves"), "--config", str(_config(tmp_path))]
    return subprocess.Popen(
        [sys.executable, "-m", "game", *command, *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=ENV,
    )


def _until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class StallsFromTurn(FollowsTheAction):
    """Plays well until the turn call ``stall_at`` (1-based), which is answered after a minute."""

    def __init__(self, stall_at: int) -> None:
        super().__init__()
        self.stall_at = stall_at

    def __call__(self, body: dict[str, Any]) -> Behaviour:
        answer = super().__call__(body)
        return delay(60.0, answer) if self.calls["turn"] >= self.stall_at else answer


def _ended(game: subprocess.Popen[str], asked_at: float) -> tuple[float, str, str]:
    """Seconds from ``asked_at`` to the process's end (killed after 30 s: a failure), and what it printed."""
    try:
        out, err = game.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        game.kill()
        out, err = game.communicate()
        raise AssertionError(f"still running 30 s after asked to end:\n{err[-2000:]}") from None
    return time.monotonic() - asked_at, out, err


def test_ctrl_c_in_a_stalled_headless_run_ends_at_once_with_the_game_saved(tmp_path):
    with FakeOpenAIServer() as server:
        server.responder = model = StallsFromTurn(stall_at=3)
        game = _game(tmp_path, server.url, "run", "--story", "fantasy_001", "--slot", "kept", "--actions", "-")
        assert game.stdin is not None
        game.stdin.write("\n".join(ACTIONS[:3]) + "\n")
        game.stdin.flush()
        _until(lambda: model.calls["turn"] >= 3, 60, "the third turn's call")
        time.sleep(0.3)
        asked = time.monotonic()
        game.send_signal(signal.SIGINT)
        seconds, out, err = _ended(game, asked)
    print(f"storyecho run: ended {seconds:.2f} s after Ctrl-C")
    assert seconds < 5, err
    assert game.returncode == 130 and "Traceback" not in err + out, err
    assert "interrupted; the game is saved in slot 'kept' as it was at turn 2" in err
    assert SlotStore(tmp_path / "saves").read("kept").save.turn == 2  # the turn cut short is not in it


def test_ctrl_c_in_a_stalled_headless_play_ends_at_once_with_the_game_saved(tmp_path):
    with FakeOpenAIServer() as server:
        server.responder = model = StallsFromTurn(stall_at=2)
        game = _game(tmp_path, server.url, "play", "--headless", "--story", "fantasy_001")
        assert game.stdin is not None
        game.stdin.write("go east\ntalk to garrick\n")
        game.stdin.flush()
        _until(lambda: model.calls["turn"] >= 2, 60, "the second turn's call")
        time.sleep(0.3)
        asked = time.monotonic()
        game.send_signal(signal.SIGINT)
        seconds, out, err = _ended(game, asked)
    print(f"storyecho play --headless: ended {seconds:.2f} s after Ctrl-C")
    assert seconds < 5 and game.returncode == 130 and "Traceback" not in err + out, err
    assert "interrupted; the game is saved in slot 'autosave-fantasy_001' as it was at turn 1" in err
    assert SlotStore(tmp_path / "saves").read("autosave-fantasy_001").save.turn == 1


def test_quitting_while_a_summary_call_is_stalled_ends_within_seconds(tmp_path):
    with FakeOpenAIServer() as server:
        server.responder = model = FollowsTheAction(summaries=delay(120.0))
        game = _game(tmp_path, server.url, "play", "--headless", "--story", "fantasy_001")
        assert game.stdin is not None
        game.stdin.write("\n".join(ACTIONS[:5]) + "\n")  # the fifth turn starts the consolidation
        game.stdin.flush()
        _until(lambda: model.calls["summary"] >= 1, 60, "the summary call")
        time.sleep(0.3)
        asked = time.monotonic()
        game.stdin.write("quit\n")
        game.stdin.flush()
        seconds, out, err = _ended(game, asked)
    print(f"storyecho play --headless: quit {seconds:.2f} s after asked, a summary call stalled")
    assert seconds < QUIT_WITHIN_S, err
    assert game.returncode == 0 and "Traceback" not in err + out, err
    save = SlotStore(tmp_path / "saves").read("autosave-fantasy_001").save
    assert save.turn == 5 and save.memory.summaries == []  # saved without the summary, which a load queues again


_TEST_AND_QUIT = """
import asyncio, sys, time
from pathlib import Path
from textual.widgets import Button
from game.config import load_settings
from game.tui.app import StoryEchoApp
from game.tui.fitness import NarratorTestScreen
from tests.tui.test_screens import set_field, settle

async def main(url, config):
    app = StoryEchoApp(load_settings(Path(config)), config_path=Path(config))
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        app.action_settings()
        await settle(pilot)
        await set_field(pilot, app, "base-url", url)
        await set_field(pilot, app, "model", "fake-model")
        app.screen.query_one("#test", Button).press()
        await settle(pilot)
        assert isinstance(app.screen, NarratorTestScreen)
        await pilot.pause(1.0)  # its first turn call is stalled now
        print("QUIT", flush=True)
        app.action_request_quit()
        await pilot.pause(0.5)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_quitting_the_game_after_test_narrator_against_a_stalled_endpoint_ends_within_seconds(tmp_path):
    config = tmp_path / "storyecho.toml"
    data = json.dumps(str(tmp_path / "saves"))
    config.write_text(f'llm = "scripted"\ndata_dir = {data}\n\n[openai]\ntimeout_s = 120\nmax_attempts = 3\n')
    with StalledServer() as server:
        game = subprocess.Popen(
            [sys.executable, "-c", _TEST_AND_QUIT, server.url, str(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=ENV,
        )
        assert game.stdout is not None
        line = game.stdout.readline()  # the app is up, the test under way: its call to the endpoint hangs
        asked = time.monotonic()
        assert line.strip() == "QUIT", game.stderr.read() if game.stderr else ""
        connections = server.connections
        try:
            seconds, _, err = _ended(game, asked)
        finally:
            game.kill()
    print(f"storyecho: quit {seconds:.2f} s after asked, Test narrator stalled")
    assert connections >= 1  # the check had reached the endpoint
    assert seconds < QUIT_WITHIN_S and game.returncode == 0, err


_TURN_AND_QUIT = """
import asyncio, sys
from pathlib import Path
from game.config import load_settings
from game.tui.app import StoryEchoApp
from game.tui.confirm import ConfirmScreen
from tests.tui.test_app import new_game, play, until

async def main(url, data):
    openai = {"base_url": url, "model": "fake-model", "timeout_s": 60, "max_attempts": 1, "json_mode": "json_schema"}
    settings = load_settings(None, llm="openai", data_dir=Path(data), memory={"embeddings": False}, openai=openai)
    app = StoryEchoApp(settings)
    async with app.run_test(size=(110, 32)) as pilot:
        screen = await new_game(pilot, 0)
        await play(pilot, "go east")
        screen.query_one("#action").value = "look"
        await pilot.press("enter")
        await pilot.pause(1.0)  # the turn's call to the endpoint is stalled now
        assert screen.busy.is_set() and app.session.engine.state.turn == 1
        app.action_request_quit()
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the quit question")
        print("QUIT", flush=True)
        await pilot.press("y")
        await pilot.pause(0.5)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_quitting_the_game_during_a_stalled_turn_ends_within_seconds_with_the_game_saved(tmp_path):
    """Was: the turn ran on a Textual thread worker holding the game lock, so the quit waited for the endpoint
    (up to timeout_s x max_attempts: minutes) and asyncio's executor joined the thread at exit."""
    with FakeOpenAIServer() as server:
        server.responder = StallsFromTurn(stall_at=2)
        game = subprocess.Popen(
            [sys.executable, "-c", _TURN_AND_QUIT, server.url, str(tmp_path / "saves")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=ENV,
        )
        assert game.stdout is not None
        line = game.stdout.readline()
        asked = time.monotonic()
        assert line.strip() == "QUIT", game.stderr.read() if game.stderr else ""
        try:
            seconds, _, err = _ended(game, asked)
        finally:
            game.kill()
    print(f"storyecho: quit {seconds:.2f} s after asked, a turn stalled")
    assert seconds < QUIT_WITHIN_S and game.returncode == 0, err
    saves = SlotStore(tmp_path / "saves")
    assert [(i.name, i.turn) for i in saves.list() if i.name.startswith("autosave")] == [("autosave-fantasy_001", 1)]


def test_quitting_while_a_turn_is_told_again_keeps_the_last_telling(fantasy, tmp_path):
    """Was (issue 43): a retry put the game back before the last turn while the narrator told it again; a quit
    during a stalled retry saved that, and the autosave held turn 5 of 6. Until the new telling is in, the last
    one is the game, and a quit saves it."""
    import threading

    from game.engine.pipeline import TurnPipeline
    from game.engine.session import GameSession
    from game.llm.openai_compat import OpenAINarrator
    from game.llm.settings import OpenAISettings
    from game.world.state import new_game
    from tests.conftest import keyword_memory

    with FakeOpenAIServer() as server:
        server.responder = model = StallsFromTurn(stall_at=len(ACTIONS) + 1)  # the retry's call stalls
        narrator = OpenAINarrator(
            OpenAISettings(base_url=server.url, model="m", timeout_s=20, max_attempts=1), environ={}
        )
        engine = TurnPipeline(fantasy, new_game(fantasy, seed=3), narrator, keyword_memory(fantasy))
        game = GameSession(engine, SlotStore(tmp_path), slot="kept")
        for action in ACTIONS:
            assert game.play(action).ok, action
        told = game.engine.state.turn
        retry = threading.Thread(target=game.retry, daemon=True)
        retry.start()
        _until(lambda: model.calls["turn"] > len(ACTIONS), 30, "the retry's call")
        game.engine.abandon()
        assert game.close() is None
    assert SlotStore(tmp_path).read("kept").save.turn == told == len(ACTIONS)
