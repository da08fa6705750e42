"""Issue 45, item 2: every way out of the Textual game saves it, as ctrl+q does.

The real game runs in a real terminal (``python -m game`` in tmux, as ``tests/tui/test_terminal.py`` does); a turn
is played, and the process is sent SIGTERM or SIGHUP (as a service stop would), or its terminal is closed. The game
autosaves every 5 turns, so before this issue the first turn was lost: the signal killed the process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from game.saves.format import SaveError
from game.saves.slots import SlotStore
from tests.tui.test_terminal import Tmux, start_game

ROOT = Path(__file__).parents[2]


@pytest.fixture
def game(tmp_path):
    """``python -m game`` in tmux, exec'd so that the pane's process is the game's own."""
    session = start_game(tmp_path, own_pane=True)
    yield session
    if session.alive():
        subprocess.run(["tmux", "kill-session", "-t", session.name], check=False)


def _play_a_turn(game: Tmux) -> int:
    """A new game of the first story and one turn; the game's process id."""
    game.wait_for("New game")
    game.keys("n")
    game.wait_for("Choose your story")
    game.keys("Enter")
    game.wait_for("What do you do?")
    game.type("go east")
    game.wait_for("Turn 1")
    return int(game.run("display-message", "-p", "-t", game.name, "#{pane_pid}").strip())


def _saved_turn(saves: Path, timeout: float = 30.0) -> int | None:
    deadline = time.monotonic() + timeout
    while not (saves / "autosave-fantasy_001.json").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        return SlotStore(saves).read("autosave-fantasy_001").save.game.turn
    except SaveError:
        return None


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_ends_the_game_with_its_turn_saved(game, tmp_path, signum):
    os.kill(_play_a_turn(game), signum)
    deadline = time.monotonic() + 30
    while game.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not game.alive(), f"the game did not end on {signum.name}:\n{game.screen()}"
    saved = SlotStore(tmp_path / "saves").read("autosave-fantasy_001").save
    assert saved.game.turn == 1 and saved.game.node == "hunter_cabin"


def test_a_closed_terminal_ends_the_game_with_its_turn_saved(game, tmp_path):
    """The terminal itself goes (tmux's session killed: the game gets SIGHUP and its terminal is no more). Textual's
    stop could then wait for ever on its writes: the game saves first, and its process ends within seconds."""
    pid = _play_a_turn(game)
    subprocess.run(["tmux", "kill-session", "-t", game.name], check=True)
    assert _saved_turn(tmp_path / "saves") == 1
    deadline = time.monotonic() + 15
    while _running(pid):
        assert time.monotonic() < deadline, "the game's process did not end"
        time.sleep(0.1)


def _running(pid: int) -> bool:
    """Whether the process runs (a zombie does not: the game's parent, tmux's server, may have gone before it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status
