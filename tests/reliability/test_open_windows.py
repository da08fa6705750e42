"""Two windows at once (issue 43, item 2), in real processes on one data folder: each plays its own game, neither
writes the other's, and a second window on a game open in the first is told and offered a branch.

Was: nothing marked a game open. A second ``storyecho run --slot one`` while a first one played slot ``one`` was
told nothing, wrote its turns over ``one``, and the first window, finding a later turn there, went on in
``one-1`` after the fact; a second window's new game set the first window's game aside.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import orjson

from game.config import load_settings
from game.engine.kept import start_fresh
from game.engine.window import OPEN_ELSEWHERE
from game.saves.slots import SlotStore
from game.saves.windows import held_elsewhere
from game.wiring import make_session
from tests.reliability.test_processes import ENV, ROOT

FAST = ("--llm", "scripted", "--no-embeddings")
BRANCHED = "as a branch of its own, in slot"


def storyecho(data: Path, *args: str, lines: list[str], command: str = "run") -> subprocess.CompletedProcess[str]:
    """``storyecho run --json`` (or ``command``) on ``data``, fed ``lines``, to its end."""
    json = ("--json",) if command == "run" else ()
    return subprocess.run(
        [sys.executable, "-m", "game", command, *json, *FAST, "--data-dir", str(data), *args],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def results(done: subprocess.CompletedProcess[str]) -> list[dict]:
    assert done.returncode == 0, done.stderr[-3000:]
    return [orjson.loads(line) for line in done.stdout.splitlines() if line.strip()]


class Window:
    """A first window: ``storyecho run --json --slot SLOT`` playing the lines it is given, as long as it lives."""

    def __init__(self, data: Path, slot: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "game", "run", "--json", *FAST, "--data-dir", str(data), "--slot", slot],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            cwd=ROOT,
        )

    def play(self, line: str) -> dict:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(f"{line}\n")
        stdin.flush()
        return orjson.loads(stdout.readline())

    def quit(self) -> None:
        """End of input: the window saves and exits."""
        _, err = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, err[-3000:]

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no cleanup of any kind
        self.process.communicate(timeout=30)
        assert self.process.returncode == -signal.SIGKILL


def game_in(data: Path, slot: str, lines: list[str], story: str = "fantasy_001") -> None:
    results(storyecho(data, "--story", story, "--slot", slot, lines=lines))


def actions(data: Path, slot: str) -> list[str]:
    """The actions the save in ``slot`` has told, oldest first."""
    return [episode.action for episode in SlotStore(data).read(slot).save.memory.log]


def test_a_second_window_is_told_and_goes_on_as_a_branch_writing_only_its_own_slot(tmp_path):
    game_in(tmp_path, "one", ["go east", "look", "look"])
    first = Window(tmp_path, "one")
    try:
        assert first.play("talk to garrick")["turn"] == 4  # the first window has the game open
        before = (tmp_path / "one.json").read_bytes()

        second = storyecho(tmp_path, "--slot", "one", lines=["ask garrick about hal", "look", "look"])

        told = results(second)
        assert OPEN_ELSEWHERE in second.stderr and BRANCHED in second.stderr  # said plainly, and where it goes on
        assert any(OPEN_ELSEWHERE in notice for notice in told[0]["notices"])  # and in --json, with its first turn
        assert (tmp_path / "one.json").read_bytes() == before  # the first window's slot: not one byte written
        assert SlotStore(tmp_path).read("one-1").save.turn == 6  # its own slot, every turn of it
        assert actions(tmp_path, "one-1")[-3:] == ["ask garrick about hal", "look", "look"]
        branch = (tmp_path / "one-1.json").read_bytes()

        assert first.play("look")["turn"] == 5
        first.quit()
    finally:
        first.process.kill()
    assert actions(tmp_path, "one")[-2:] == ["talk to garrick", "look"]  # the first window's moments, its own
    assert "ask garrick about hal" not in actions(tmp_path, "one")
    assert (tmp_path / "one-1.json").read_bytes() == branch  # and never the second's


def test_a_typed_load_of_an_open_game_asks_and_anything_else_leaves_everything_as_it_was(tmp_path):
    game_in(tmp_path, "one", ["go east", "look"])
    first = Window(tmp_path, "one")
    try:
        first.play("look")
        before = (tmp_path / "one.json").read_bytes()

        second = storyecho(tmp_path, "--story", "fantasy_001", "--slot", "two", lines=["go east", "load one", "look"])

        asked, kept_on = results(second)[1:]

        assert asked["meta"] == "load" and OPEN_ELSEWHERE in asked["narration"] and "again" in asked["narration"]
        assert asked["turn"] == 1 and kept_on["turn"] == 2  # its own game played on, never the one in slot one
        assert (tmp_path / "one.json").read_bytes() == before
        assert sorted(p.name for p in tmp_path.glob("*.json")) == ["one.json", "two.json"]  # no branch made
        assert actions(tmp_path, "two") == ["go east", "look"]

        branched = results(storyecho(tmp_path, "--slot", "two", lines=["load one", "load one", "look"]))
        assert BRANCHED in branched[1]["narration"] and branched[2]["turn"] == 3  # said twice: a branch
        assert (tmp_path / "one.json").read_bytes() == before
        assert actions(tmp_path, "two-1")[-2:] == ["look", "look"] and actions(tmp_path, "two") == ["go east", "look"]
        first.quit()
    finally:
        first.process.kill()


def test_the_mark_goes_with_the_window_when_it_exits_or_is_killed(tmp_path):
    game_in(tmp_path, "one", ["go east"])
    for end in (Window.quit, Window.kill):
        first = Window(tmp_path, "one")
        try:
            first.play("look")
            assert held_elsewhere(tmp_path, "one") is not None  # the game is open in the first window
            end(first)
        finally:
            first.process.kill()
        assert held_elsewhere(tmp_path, "one") is None, end.__name__

        after = storyecho(tmp_path, "--slot", "one", lines=["look"])

        assert results(after) and OPEN_ELSEWHERE not in after.stderr, end.__name__  # nothing open: no branch
        assert not (tmp_path / "one-1.json").exists()


def test_the_line_prompt_offers_a_branch_and_a_new_game_never_sets_the_open_game_aside(tmp_path):
    autosave = "autosave-fantasy_001"
    game_in(tmp_path, autosave, ["go east", "look"])
    first = Window(tmp_path, autosave)
    try:
        first.play("look")
        before = (tmp_path / f"{autosave}.json").read_bytes()

        headless = storyecho(tmp_path, "--story", "fantasy_001", "--headless", lines=["look", "quit"], command="play")

        assert headless.returncode == 0, headless.stderr[-3000:]
        assert OPEN_ELSEWHERE in headless.stdout and f"{BRANCHED} '{autosave}-1'" in headless.stdout
        assert SlotStore(tmp_path).read(f"{autosave}-1").save.turn == 3

        settings = load_settings(data_dir=tmp_path, llm="scripted", memory={"embeddings": False})
        session, _ = make_session("fantasy_001", settings)
        told = start_fresh(session, autosave, "F3")  # the New game of a second window
        assert session.slot == f"{autosave}-{session.game_id}" and "open in another window" in told[0]
        assert session.close() is None

        assert (tmp_path / f"{autosave}.json").read_bytes() == before
        assert not list(tmp_path.glob("*previous*"))  # the first window's game was not set aside
        first.quit()
    finally:
        first.process.kill()
