"""A real ``storyecho serve`` for the browser and HTTP tests (issue 45): started on a free port with the scripted
narrator and keyword memory (a game starts in a second), its output in a file, stopped at the end; and a tab
played over the websocket as the page plays it (:class:`Tab`)."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_env() -> dict[str, str]:
    """The environment each served game runs in: this checkout's code, the scripted narrator, no embedder."""
    return os.environ | {
        "PYTHONPATH": str(ROOT),
        "STORYECHO_LLM": "scripted",
        "STORYECHO_MEMORY__EMBEDDINGS": "false",
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }


def start_serve(
    folder: Path, data: Path, *flags: str, program: tuple[str, ...] = ("-m", "game", "serve")
) -> tuple[subprocess.Popen[str], str]:
    """``storyecho serve --data-dir data`` in ``folder`` on a free port (``program``: what Python runs instead),
    once it listens: the process and its URL on 127.0.0.1 (no trailing slash)."""
    port = free_port()
    command = [sys.executable, *program, "--port", str(port), "--data-dir", str(data), *flags]
    log = folder / f"serve-{port}.log"  # a file, not a pipe: a pipe nobody reads would stop the server once full
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=folder, env=serve_env(), stdout=out, stderr=subprocess.STDOUT, text=True
        )
    deadline = time.monotonic() + 30
    while not re.search(rf"StoryEcho on http://\S+:{port}\b", log.read_text()):
        assert process.poll() is None and time.monotonic() < deadline, f"no server: {log.read_text()}"
        time.sleep(0.1)
    return process, f"http://127.0.0.1:{port}"


def stop(process: subprocess.Popen[str]) -> None:
    """Stop a server still running (its games are told to quit and save), killing it after 30 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
"""Terminal escape sequences, taken out of what a game draws to read its text."""


class Tab:
    """A game played over its websocket as the page plays it (aiohttp: what textual-serve is built on): keys go
    as "stdin" messages, and what the game draws is read from the frames, escapes taken out."""

    def __init__(self, session: Any, url: str, headers: dict[str, str] | None = None) -> None:
        self.session, self.url, self.headers = session, url, headers or {}
        self.text: list[str] = []
        self.closed: tuple[int | None, str] | None = None
        """The websocket's close code and reason, once the server closed it."""

    async def __aenter__(self) -> Tab:
        address = self.url.replace("http://", "ws://") + "/ws?width=120&height=40"
        self.socket = await self.session.ws_connect(address, headers=self.headers)
        self.reader = asyncio.ensure_future(self._read())
        await self.socket.send_json(["resize", {"width": 120, "height": 40}])  # as the page does once open
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.socket.close()
        await self.reader

    async def _read(self) -> None:
        from aiohttp import WSMsgType

        while True:
            message = await self.socket.receive()
            if message.type == WSMsgType.BINARY:
                self.text.append(ESCAPES.sub("", message.data.decode("utf-8", "replace")))
            elif message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                reason = message.extra if message.type == WSMsgType.CLOSE else ""
                self.closed = (self.socket.close_code, str(reason or ""))
                return

    async def wait_for(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in "".join(self.text):
            assert time.monotonic() < deadline, f"{text!r} never appeared; the game drew:\n{''.join(self.text)}"
            await asyncio.sleep(0.1)

    async def keys(self, keys: str) -> None:
        await self.socket.send_json(["stdin", keys])

    async def new_game(self) -> None:
        """From the title: a new game of the first story, up to its first prompt."""
        await self.wait_for("New game")
        await self.keys("n")
        await self.wait_for("Choose your story")
        await self.keys("\r")
        await self.wait_for("What do you do?")

    async def play(self, action: str, turn: int) -> None:
        await self.keys(action + "\r")
        await self.wait_for(f"Turn {turn}")
