"""One tab's game under ``storyecho serve``: textual-serve's ``AppService`` with a deadline and an idle clock.

textual-serve stops a game by sending it "quit" and waiting for ever; a game that hangs (a stuck call, a loop that
no longer reads its pipe) kept its tab's slot under the cap, its 300-400 MB, and the server's stop, for good
(issue 45, item 4). :meth:`Game.stop` sends "quit" as before (the game saves and ends, ``game.tui.leaving``), then
after ``deadline_s`` SIGTERM (the game's own handler saves, ctrl+q's path), then after ``deadline_s`` more SIGKILL to
the game's process group: a stop takes at most about twice the deadline. The game runs in a session of its own (its
shell and whatever it starts are one process group, and a ctrl+c meant for the server does not reach it: the
server tells each game to quit itself).

:attr:`Game.last_input` is when the player last sent a key (the page's "stdin" messages: a resize, a focus change or
a ping is not the player), which ``storyecho serve --idle-minutes`` reads. A game the server ends says why when its
page closes (:attr:`Game.ended`: the websocket's close reason, which the page shows).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from asyncio.subprocess import PIPE, Process
from typing import Any

from aiohttp import web
from textual_serve.app_service import AppService

log = logging.getLogger("storyecho.serve")

DEADLINE_S = 8.0
"""How long a game gets after "quit", and again after SIGTERM, before the next step (SIGKILL last)."""

ENDED_CODE = 4000
"""The websocket close code of a game the server ended (an application code: 4000-4999)."""


class Game(AppService):
    """textual-serve's ``AppService`` for one tab, with a stop that cannot hang and the time of the last key.

    Args:
        command: the shell command of the game.
        websocket: the tab's websocket (the game's screen goes to it; it is closed when the game ends).
        download_manager: textual-serve's, for files a game delivers.
        debug: textual-serve's debug mode.
        deadline_s: see :data:`DEADLINE_S`.
    """

    def __init__(
        self,
        command: str,
        websocket: web.WebSocketResponse,
        download_manager: Any,
        debug: bool = False,
        deadline_s: float = DEADLINE_S,
    ) -> None:
        super().__init__(
            command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=self.close_page,
            download_manager=download_manager,
            debug=debug,
        )
        self.websocket = websocket
        self.deadline_s = deadline_s
        self.last_input = time.monotonic()
        """When the player last sent a key (or the game started)."""
        self.ended = ""
        """Why the server ended the game ("" when the game or its tab did): told to the page as it closes."""
        self.killed = False
        """Whether the game had to be killed (it answered neither "quit" nor SIGTERM in time)."""
        self._stopping: asyncio.Task[None] | None = None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        """textual-serve's own, with the game in a session (and process group) of its own."""
        self._process = process = await asyncio.create_subprocess_shell(
            self.command,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def send_bytes(self, data: bytes) -> bool:
        """A key from the player: the idle clock starts again."""
        self.last_input = time.monotonic()
        return await super().send_bytes(data)

    async def close_page(self) -> None:
        """Close the tab's websocket, with the reason when the server ended the game (the page shows it)."""
        if self.ended:
            await self.websocket.close(code=ENDED_CODE, message=self.ended.encode()[:120])
        else:
            await self.websocket.close()

    def end(self, why: str) -> None:
        """End the game for the server (idle too long): it saves and ends, and its page is told ``why``."""
        self.ended = self.ended or why
        self._stop_started()

    async def stop(self) -> None:
        """Stop the game (saved, as its tab closing does) and wait for it, killing it when it hangs; calls made
        meanwhile wait for the same stop."""
        stopping = self._stop_started()
        if stopping is not None:
            await asyncio.shield(stopping)

    def _stop_started(self) -> asyncio.Task[None] | None:
        """The game's stop, started now unless it is under way (None: the game never started)."""
        if self._stopping is None and self._task is not None:
            self._stopping = asyncio.ensure_future(self._stop(self._task))
        return self._stopping

    async def _stop(self, task: asyncio.Task[None]) -> None:
        """textual-serve's stop ("quit", then wait), with SIGTERM and SIGKILL past each deadline."""
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        await self.send_meta({"type": "quit"})
        for step in (signal.SIGTERM, signal.SIGKILL):
            if await self._ended_within(task, self.deadline_s):
                break
            self.killed = step == signal.SIGKILL
            log.warning(
                "a game did not end %g s after %s: %s",
                self.deadline_s,
                "SIGTERM" if self.killed else '"quit"',
                "killed" if self.killed else "SIGTERM sent",
            )
            self._signal(step)
        await task  # the game's output ends when its process does
        if self._process is not None:
            await self._process.wait()
        self._task = None
        await self.close_page()  # a game killed never said "exit": its page would stay open, and hold up a stop

    async def _ended_within(self, task: asyncio.Task[None], seconds: float) -> bool:
        done, _ = await asyncio.wait({task}, timeout=seconds)
        return bool(done)

    def _signal(self, signum: int) -> None:
        """Send ``signum`` to the game's process group (its shell, the game, and whatever the game started)."""
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signum)
