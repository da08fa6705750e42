"""The game in a real terminal: ``storyecho`` in tmux, driven by send-keys and read by capture-pane.

Pilot tests run the app headless; this one runs the installed command in a
pseudo-terminal, so it catches what only a terminal shows (the app starting at
all from ``python -m game``, keys arriving as a player types them, the
autosave written when the player quits).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from game.saves.slots import SlotStore

ROOT = Path(__file__).parents[2]


class Tmux:
    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self.run("send-keys", "-t", self.name, "-l", text)
        self.keys("Enter")

    def wait_for(self, text: str, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")
            time.sleep(0.2)

    def alive(self) -> bool:
        return subprocess.run(["tmux", "has-session", "-t", self.name], capture_output=True).returncode == 0


def start_game(folder: Path, *, own_pane: bool = False) -> Tmux:
    """``python -m game`` in a new tmux session in ``folder`` (saves in ``folder/saves``, the scripted narrator);
    ``own_pane``: exec'd, so that the pane's process is the game's own (else the pane stays a second after it)."""
    assert shutil.which("tmux"), "tmux is needed for the terminal test (.ci/run installs it)"
    name = f"storyecho-{uuid.uuid4().hex[:8]}"
    env = {
        "STORYECHO_DATA_DIR": str(folder / "saves"),
        "STORYECHO_LLM": "scripted",
        "STORYECHO_MEMORY__EMBEDDINGS": "false",
        "HF_HUB_OFFLINE": "1",
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    game = f"env {exports} PYTHONPATH={ROOT} {sys.executable} -m game"
    command = f"cd {folder} && exec {game}" if own_pane else f"cd {folder} && {game}; sleep 1"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30", command],
        check=True,
        env={**os.environ, "TMUX": ""},
    )
    return Tmux(name)


@pytest.fixture
def tmux(tmp_path):
    session = start_game(tmp_path)
    yield session
    if session.alive():
        subprocess.run(["tmux", "kill-session", "-t", session.name], check=False)


def test_a_new_game_and_three_turns_in_a_real_terminal(tmux, tmp_path):
    tmux.wait_for("New game")
    tmux.keys("n")
    tmux.wait_for("Choose your story")
    tmux.keys("Enter")
    tmux.wait_for("What do you do?")
    for turn, action in enumerate(("look", "go east", "talk to garrick"), start=1):
        tmux.type(action)
        screen = tmux.wait_for(f"Turn {turn}")
    assert "Old Hunter's Lodge" in screen and "Garrick" in screen
    tmux.keys("C-q")
    tmux.wait_for("Quit StoryEcho?")
    tmux.keys("y")
    deadline = time.monotonic() + 60
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    saved = SlotStore(tmp_path / "saves").read("autosave-fantasy_001").save
    assert saved.game.turn == 3 and saved.game.node == "hunter_cabin"
