"""Issue 45, item 3: each visitor of ``storyecho serve`` plays in a data folder of their own.

Before, every tab's game used the server's one data folder, so Continue offered the last visitor's game and F3 listed
everyone's slots. The real server runs on a free port; a visitor is a cookie jar (aiohttp's client, what
textual-serve is built on), and a game is started by opening the websocket, as the page does. A visitor's folder is
where their game writes (its log and index), so the tests read which folders the games made.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.serving import start_serve, stop


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    started: list[subprocess.Popen[str]] = []

    def start(*flags: str) -> tuple[str, Path]:
        process, url = start_serve(tmp_path, tmp_path / "data", *flags)
        started.append(process)
        return url, tmp_path / "data"

    yield start
    for process in started:
        stop(process)


async def _visit(url: str, headers: dict[str, str] | None = None, cookie: str | None = None) -> str:
    """A visitor opens the page and starts a game (the websocket); their visitor cookie, as the page set it."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar, headers=headers or {}) as session:
        if cookie is not None:
            jar.update_cookies({"storyecho_visitor": cookie})
        async with session.get(f"{url}/") as page:
            assert page.status == 200
        held = {c.key: c.value for c in jar}.get("storyecho_visitor", "")
        async with session.ws_connect(f"{url}/ws") as game:
            await game.send_json(["stdin", ""])
            await asyncio.sleep(1.5)
    return held


def _folders(data: Path, timeout: float = 20.0, at_least: int = 1) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(p.name for p in (data / "visitors").iterdir()) if (data / "visitors").is_dir() else []
        if len(found) >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_two_visitors_play_in_two_folders_and_a_visitor_comes_back_to_theirs(serve):
    url, data = serve()
    first = asyncio.run(_visit(url))
    second = asyncio.run(_visit(url))
    assert first and second and first != second
    folders = _folders(data, at_least=2)
    assert folders == sorted([first.split(".")[0], second.split(".")[0]])
    again = asyncio.run(_visit(url, cookie=first))
    assert again == first and _folders(data) == folders  # the same visitor, the same folder: no third


def test_a_forged_visitor_cookie_is_a_new_visitor(serve):
    url, data = serve()
    forged = asyncio.run(_visit(url, cookie="alice.0000000000000000"))
    assert forged and not forged.startswith("alice.")
    assert "alice" not in _folders(data)


def test_a_proxys_login_header_is_the_visitor_and_is_cleaned_to_a_folder_name(serve):
    url, data = serve("--user-header", "X-Forwarded-User")
    asyncio.run(_visit(url, headers={"X-Forwarded-User": "alice"}))
    asyncio.run(_visit(url, headers={"X-Forwarded-User": "../../etc"}))
    folders = _folders(data, at_least=2)
    assert "alice" in folders and any(f.startswith("h-") for f in folders)
    assert not (data.parent / "etc").exists()


def test_a_new_visitor_is_seeded_with_the_servers_lore_index(serve, tmp_path):
    index = tmp_path / "data" / ".index"
    index.mkdir(parents=True)
    (index / "built.txt").write_text("the lore index storyecho index built")
    url, data = serve()
    visitor = asyncio.run(_visit(url)).split(".")[0]
    assert (data / "visitors" / visitor / ".index" / "built.txt").exists()
