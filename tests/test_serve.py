"""Issue 45, items 1 and 2: ``storyecho serve`` played in a real browser, and nothing lost when the page goes.

The real ``storyecho serve`` (textual-serve, one game process per tab) runs on a free port; Playwright from PyPI
drives Debian's chromium (``executable_path``: no browser is downloaded; ``.ci/run`` installs it). The game is
read from what the server sends the page (the websocket's frames, escape sequences taken out): xterm.js draws it
on a canvas, where no text can be read. Every request the page makes is recorded: none may leave 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from game.saves.format import SaveError
from game.saves.slots import SlotStore
from tests.serving import start_serve, stop

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
SLOT = "autosave-fantasy_001"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``storyecho serve`` on a free port (``tests.serving``)."""
    process, url = start_serve(tmp_path, tmp_path / "saves")
    yield process, f"{url}/"
    stop(process)


class Page:
    """A browser page on the game: keys go to it, and what the game draws is read from the websocket."""

    def __init__(self, browser: Any, url: str, requests: list[str]) -> None:
        self.page = browser.new_page()  # a context's page: the pages of one context are one visitor
        self.text: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda request: requests.append(request.url))
        self.page.on("websocket", self._watch)
        self.page.on("dialog", self._answer)
        self.page.goto(url)

    def _watch(self, websocket: Any) -> None:
        def received(payload: str | bytes) -> None:
            if isinstance(payload, bytes):
                self.text.append(ESCAPES.sub("", payload.decode("utf-8", "replace")))

        websocket.on("framereceived", received)

    def _answer(self, dialog: Any) -> None:
        self.dialogs.append(dialog.type)
        dialog.accept()

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in "".join(self.text):
            assert time.monotonic() < deadline, f"{text!r} never appeared; the page was sent:\n{''.join(self.text)}"
            self.page.wait_for_timeout(100)  # Playwright's events arrive while it waits, not in time.sleep

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)

    def play(self, action: str, turn: int) -> None:
        self.page.keyboard.type(action)
        self.press("Enter")
        self.wait_for(f"Turn {turn}")


def _saved_turn(saves: Path, turn: int = 0, timeout: float = 30.0) -> int:
    """The turn of the game's autosave in the visitor's folder, once one of ``turn`` or later is written (a game
    saves as its process ends, which is after its page has gone)."""
    deadline = time.monotonic() + timeout
    while True:
        saved = -1
        for folder in sorted((saves / "visitors").glob("*")):  # the one visitor's own folder (issue 45, item 3)
            with contextlib.suppress(SaveError):
                saved = max(saved, SlotStore(folder).read(SLOT).save.game.turn)
        if saved >= turn and saved >= 0:
            return saved
        assert time.monotonic() < deadline, f"the game was not saved (the save holds turn {saved})"
        time.sleep(0.1)


def test_a_browser_game_is_saved_when_its_page_goes_and_when_the_server_stops(server, tmp_path):
    process, url = server
    saves = tmp_path / "saves"
    requests: list[str] = []
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed for the browser test (.ci/run installs it)"
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        visitor = browser.new_context(viewport={"width": 1200, "height": 800})  # one visitor: their cookies kept
        first = Page(visitor, url, requests)
        first.wait_for("New game")  # no click: the page puts the keys in the game on load
        first.press("n")
        first.wait_for("Choose your story")
        first.press("Enter")
        first.wait_for("What do you do?")
        first.wait_for("Delete word")  # the footer's way to delete a word, as the browser keeps ctrl+w
        first.play("go east", 1)
        first.page.close()  # the tab closed
        assert _saved_turn(saves) == 1  # and its game saved: autosaves come only every 5 turns

        again = Page(visitor, url, requests)  # a new page of the same visitor offers Continue of the same game
        again.wait_for("Misty Forest, turn 1")
        again.press("c")
        again.wait_for("continuing at turn 1")
        again.play("talk to garrick", 2)
        again.text.clear()
        again.page.reload()  # the leave-page prompt is asked (and accepted): the game goes, saved
        assert again.dialogs == ["beforeunload"]
        assert _saved_turn(saves, turn=2) == 2
        again.wait_for("New game")
        again.press("c")  # Continue loads the newest save when pressed
        again.wait_for("continuing at turn 2")
        again.play("look", 3)
        process.send_signal(signal.SIGTERM)  # the server stops: its games are told to quit, and save
        assert process.wait(timeout=30) == 0
        assert _saved_turn(saves) == 3
        browser.close()
    assert requests
    assert {urlsplit(address).hostname for address in requests} == {"127.0.0.1"}, requests


def test_each_tab_runs_the_textual_game_with_the_flags_serve_was_given(tmp_path):
    """The game a tab starts is told to be the Textual one (it runs over pipes, where the terminal check would send
    it to the line prompt), with serve's game flags; serve itself listens on loopback unless told otherwise."""
    import shlex

    from game.args import game_args, parse
    from game.web.serve import game_command

    args = parse(["serve", "--port", "8123", "--data-dir", str(tmp_path), "--llm", "scripted", "--no-embeddings"])
    assert (args.host, args.port) == ("127.0.0.1", 8123)
    command = shlex.split(game_command(args))
    assert command[:5] == [sys.executable, "-m", "game", "play", "--textual"]
    assert command[5:] == ["--llm", "scripted", "--data-dir", str(tmp_path.resolve()), "--no-embeddings"]
    played = parse(command[3:])
    assert game_args(played) is played  # the Textual game, whether or not stdin and stdout are a terminal


IDLE_MINUTES = 0.2
"""12 s: the idle timeout for the test (``--idle-minutes`` takes fractions); long enough to start a game and play."""


def test_a_game_left_idle_is_saved_and_closed_and_the_page_says_so(tmp_path):
    """Issue 45, item 4: no idle timeout, a tab left open kept its game (300-400 MB) for ever. Now a game with no key
    for ``--idle-minutes`` is saved and closed as a closed tab's is, and the page tells why."""
    process, url = start_serve(tmp_path, tmp_path / "saves", "--idle-minutes", str(IDLE_MINUTES))
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            tab = Page(browser.new_context(viewport={"width": 1200, "height": 800}), f"{url}/", [])
            tab.wait_for("New game")
            tab.press("n")
            tab.wait_for("Choose your story")
            tab.press("Enter")
            tab.wait_for("What do you do?")
            tab.play("go east", 1)
            played = time.monotonic()
            closed = tab.page.locator("#closed-why")
            closed.wait_for(state="visible", timeout=(IDLE_MINUTES * 60 + 30) * 1000)
            assert time.monotonic() - played >= IDLE_MINUTES * 60 - 1  # not before the player had been idle
            assert "saved and closed after 12 seconds without a key" in closed.inner_text()
            assert _saved_turn(tmp_path / "saves", turn=1) == 1
            browser.close()
    finally:
        stop(process)
