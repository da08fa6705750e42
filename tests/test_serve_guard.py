"""Issue 45, item 4: ``storyecho serve`` safe to put in front of others, tested over HTTP.

textual-serve has no login and no cap: anyone who reached the port got a game process of 300-400 MB each. Now a
token guards the page, its files and the websocket (401 without it; ``?token=`` once, then a cookie; or a bearer
header), listening on any address but this machine's own needs one or a trusted login proxy's header, and
``--max-games`` caps the games at once (503 "try later" past it). The real server runs on a free port; the
websocket is opened with aiohttp (what textual-serve itself is built on), which starts a real game behind it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.serving import free_port, serve_env, start_serve, stop

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    started: list[subprocess.Popen[str]] = []

    def start(*flags: str) -> str:
        process, url = start_serve(tmp_path, tmp_path / "saves", *flags)
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=20) as answer:
            return answer.status, dict(answer.headers)
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers)


def test_without_the_token_nothing_is_served_and_with_it_everything_is(serve):
    url = serve("--token", TOKEN)
    assert _get(f"{url}/")[0] == 401
    assert _get(f"{url}/?token=wrong")[0] == 401
    assert _get(f"{url}/static/css/xterm.css")[0] == 401
    status, headers = _get(f"{url}/?token={TOKEN}")
    assert status == 200 and "storyecho_token=" in headers.get("Set-Cookie", "")
    assert _get(f"{url}/", {"Cookie": f"storyecho_token={TOKEN}"})[0] == 200
    assert _get(f"{url}/", {"Authorization": f"Bearer {TOKEN}"})[0] == 200

    assert asyncio.run(_websocket(url, {})) == 401


def test_listening_beyond_this_machine_without_a_token_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "game", "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        cwd=tmp_path,
        env={k: v for k, v in serve_env().items() if k != "STORYECHO_SERVE_TOKEN"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--token" in done.stderr and "answer anyone" in done.stderr
    assert "--user-header" in done.stderr  # the other way: a trusted proxy's login header


def test_behind_a_trusted_login_proxy_it_listens_beyond_this_machine_and_wants_the_proxys_header(serve):
    """A proxy that logs players in and sets their login in a header (``--user-header``) is trusted: serve listens
    beyond this machine without a token, and a request without the header (one that did not come through the
    proxy) is refused."""
    url = serve("--host", "0.0.0.0", "--user-header", "X-Forwarded-User")
    assert _get(f"{url}/")[0] == 401
    assert _get(f"{url}/", {"X-Forwarded-User": "  "})[0] == 401
    assert _get(f"{url}/", {"X-Forwarded-User": "alice"})[0] == 200

    assert asyncio.run(_websocket(url, {})) == 401


def test_a_tab_past_the_cap_is_told_to_try_later(serve):
    url = serve("--max-games", "1")

    async def one_game_then_a_page() -> tuple[int, int]:
        async with aiohttp.ClientSession() as session, session.ws_connect(f"{url}/ws") as game:
            await game.send_json(["stdin", ""])  # the game's process is up once textual-serve reads from it
            await asyncio.sleep(1.0)
            async with session.get(f"{url}/") as page:
                full = page.status
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the game saves and ends after its socket closes
            async with aiohttp.ClientSession() as session, session.get(f"{url}/") as page:
                if page.status == 200:
                    return full, 200
            await asyncio.sleep(0.3)
        return full, 503

    assert asyncio.run(one_game_then_a_page()) == (503, 200)


async def _websocket(url: str, headers: dict[str, str]) -> int:
    """The status the page's websocket answers with ``headers``: 101 when it opens, else the refusal's."""
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(f"{url}/ws", headers=headers) as socket_:
                await socket_.close()
                return 101
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status
