"""How the Textual game is left: every way out saves the game, once, as ctrl+q does.

ctrl+q asks first when the game is past its last save, then :meth:`LeavingApp.leave` closes the game (its complete
save) and the app exits. Every other way out takes the same :meth:`~LeavingApp.leave` once the app has stopped
(:func:`game.tui.app.run_app`), as when Textual's web driver is told by ``storyecho serve`` that the game's tab
has gone (textual-serve sends "quit": the tab closed, the connection lost, the server stopped); SIGTERM and SIGHUP
(a service stopped, the terminal closed) take ctrl+q's own path, without its question. Issue 45: only ctrl+q
saved, and a browser tab closed two turns after the last autosave left "no saves". :meth:`~LeavingApp.leave`
takes the game out of the app before it saves it, so a second call finds none: the game is saved once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work
from textual.app import App

from game.tui.confirm import ConfirmScreen
from game.tui.loading import unsaved

if TYPE_CHECKING:
    from game.engine.session import GameSession
    from game.memory.search.knowledge import BackgroundIndexing

QUIT_WAIT_S = 3.0
"""How long leaving waits for a turn under way (a stalled endpoint) before abandoning it."""

HUNG_UP_EXIT_S = 5.0
"""After SIGHUP and the save, how long the app gets to stop before the process ends regardless."""

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""The signals that leave the game as ctrl+q does (SIGINT is a key to Textual in a terminal: ctrl+c)."""


def quit_question(session: GameSession, saved: int) -> str | None:
    """What ctrl+q asks before it closes ``session``, whose last save is of turn ``saved``; None when quitting loses
    nothing. It asks when the game is past that save, and when the narrator is telling a turn (a retry among them):
    the quit drops that turn and saves the game as last told (issue 43, item 5: a quit during a stalled retry asked
    nothing, the game reading as at its save while the turn was told again)."""
    told, doing = session.told_turn, session.under_way
    if doing is None and told == saved:
        return None
    parts = ["Quit StoryEcho?"]
    if doing is not None:
        parts.append(f"The narrator is still telling {doing}: quitting drops it.")
    if told != saved:
        parts.append(f"Your game {unsaved(told, saved)}.")
    parts.append(f"The game is saved at turn {told}, as last told, before it closes.")
    return " ".join(parts)


def to_stderr(message: str) -> None:
    """Tell what closing found once the game is off screen (the terminal may have gone: then nobody is told)."""
    with contextlib.suppress(OSError):
        print(f"storyecho: {message}", file=sys.stderr, flush=True)


class LeavingApp(App[None]):
    """The app's ways out; :class:`game.tui.app.StoryEchoApp` holds the game they close."""

    session: GameSession | None
    saved_turn: int
    game_lock: threading.Lock
    _lore: BackgroundIndexing | None

    handles_signals = False
    """SIGTERM and SIGHUP make the app exit (set by ``run_app``; a test's app leaves the test runner's signals be)."""

    def on_mount(self) -> None:
        if self.handles_signals:
            loop = asyncio.get_running_loop()
            for signum in SIGNALS:
                loop.add_signal_handler(signum, self._quit, signum == signal.SIGHUP)

    def action_request_quit(self) -> None:
        question = quit_question(self.session, self.saved_turn) if self.session is not None else None
        if question is not None:
            self.push_screen(ConfirmScreen(question, yes="Quit", no="Keep playing"), self._quit_answer)
        else:
            self._quit()

    def _quit_answer(self, yes: bool | None) -> None:
        if yes:
            self._quit()

    @work(thread=True, group="game")
    def _quit(self, hung_up: bool = False) -> None:
        """Close the game and leave: ctrl+q once answered, SIGTERM and SIGHUP at once. The game is saved before the
        app stops: with its terminal gone (``hung_up``), Textual's stop can wait for ever on writes nobody reads, so
        the process then ends HUNG_UP_EXIT_S after the save, however far the app got."""
        self.leave()
        if hung_up:
            deadline = threading.Timer(HUNG_UP_EXIT_S, os._exit, args=(128 + signal.SIGHUP,))
            deadline.daemon = True  # a process that ends in time ends as it would have
            deadline.start()
        self.call_from_thread(self.exit)

    def leave(self, tell: Callable[[str], None] | None = None) -> None:
        """Close the game (its complete save), from any thread but the app's; a turn still out after QUIT_WAIT_S
        (a stalled endpoint) is abandoned. ``tell``: who hears that the save failed (default: a notification)."""
        held = self.game_lock.acquire(timeout=QUIT_WAIT_S)
        if not held and self.session is not None:
            self.session.engine.abandon()
        try:
            self._close_session(tell)
        finally:
            if held:
                self.game_lock.release()

    def _close_session(self, tell: Callable[[str], None] | None = None) -> None:
        """Close the current game (its complete save); call with :attr:`game_lock` held."""
        session, self.session = self.session, None
        lore, self._lore = self._lore, None
        if lore is not None:
            lore.stop()  # the batch under way ends before the store closes
        if session is None:
            return
        try:
            notice = session.close()
        except Exception as exc:  # noqa: BLE001 - closing must not stop a quit or a new game
            notice = f"The game could not be saved on close: {exc}"
        if notice:
            (tell or self._notify_error)(notice)

    def _notify_error(self, message: str) -> None:
        self.call_from_thread(self.notify, message, severity="error", markup=False)
