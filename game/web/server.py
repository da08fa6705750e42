"""The server ``storyecho serve`` runs: textual-serve's ``Server`` with our page, a token, a trusted proxy's
header and a cap (``_guard``), each visitor's games in their own folder (``handle_websocket``), a game idle for
``--idle-minutes`` saved and ended, and every game saved before the server stops, a hung one killed past its
deadline (``game.web.games``). Imported only when serving: it needs the web extra (``game.web.serve`` says so
when it is missing).
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from game.web.games import DEADLINE_S, Game
from game.web.visitors import COOKIE as VISITOR
from game.web.visitors import Visitors

SHUTDOWN_S = 2 * DEADLINE_S + 4
"""How long a stopping server waits for its games to save and end (aiohttp's graceful shutdown); a game that
hangs is killed before (``game.web.games``)."""

TEMPLATES = Path(__file__).parent / "templates"
TITLE = "StoryEcho"
COOKIE = "storyecho_token"


def token_given(request: Any, token: str) -> tuple[bool, bool]:
    """Whether ``request`` carries ``token`` (in its query, its cookie or a bearer header), and whether it came in
    the query (then a cookie keeps it for the page's own requests)."""
    header = request.headers.get("Authorization", "")
    bearer = header[7:] if header.startswith("Bearer ") else ""
    query = request.query.get("token", "")
    for supplied in (query, request.cookies.get(COOKIE, ""), bearer):
        if supplied and hmac.compare_digest(supplied.encode(), token.encode()):
            return True, supplied == query
    return False, False


class GameServer(Server):
    """textual-serve's server with our page, each visitor's games in their own folder, and every game saved
    before the server stops."""

    def __init__(
        self, args: argparse.Namespace, token: str, visitors: Visitors, command: Callable[[Path | None], str]
    ) -> None:
        """``args``: serve's own (host, port, cap); ``token``: needed when given; ``visitors``: who each request
        comes from, and their folder; ``command``: the shell command of a game in a folder (None: serve's own)."""
        super().__init__(command(None), host=args.host, port=args.port, title=TITLE, templates_path=TEMPLATES)
        self.args, self.token, self.visitors, self.command_in = args, token, visitors, command
        self.games: set[Game] = set()
        self.deadline_s = DEADLINE_S
        """How long a stopping game gets after "quit", and again after SIGTERM, before it is killed."""
        self.idle_s = max(0.0, float(vars(args).get("idle_minutes") or 0)) * 60
        """A game with no key for this long is saved and ended (0: never)."""
        self.header_required = False
        """Listening beyond this machine behind a login proxy: a request without its header did not come through it
        (``game.web.serve`` says when)."""
        self._watching: asyncio.Task[None] | None = None

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's own, with the game started in the visitor's folder (a :class:`Game`: stopped within a
        deadline, its last key timed)."""
        visitor, _ = self.visitors.identify(request.headers, dict(request.cookies))
        command = self.command_in(self.visitors.folder(visitor))
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        game: Game | None = None
        try:
            await websocket.prepare(request)
            game = Game(command, websocket, self.download_manager, self.debug, self.deadline_s)
            await game.start(width, height)
            await self._process_messages(websocket, game)
        except asyncio.CancelledError:
            await websocket.close()
        finally:
            if game is not None:
                await game.stop()
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        assert isinstance(app_service, Game)
        self.games.add(app_service)
        try:
            await super()._process_messages(websocket, app_service)
        finally:
            self.games.discard(app_service)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """401 without the token; 503 for a new game past the cap; the token kept in a cookie once given."""
        given, in_query = token_given(request, self.token) if self.token else (True, False)
        if not given:
            return web.Response(status=401, text="StoryEcho asks for its token: open the address with ?token=...")
        if self.header_required and not request.headers.get(self.args.user_header, "").strip():
            return web.Response(status=401, text="StoryEcho is played through its login page (its proxy).")
        if request.path in ("/", "/ws") and len(self.games) >= self.args.max_games:
            return web.Response(status=503, text="StoryEcho is full: every game it can run is being played. Try later.")
        response: web.StreamResponse = await handler(request)
        if isinstance(response, web.WebSocketResponse):
            return response
        if in_query:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        _, new = self.visitors.identify(request.headers, dict(request.cookies)) if request.path == "/" else ("", "")
        if new:  # a visitor the page has not met: their own folder from now on
            response.set_cookie(VISITOR, new, httponly=True, samesite="Strict", max_age=365 * 24 * 3600)
        return response

    async def on_startup(self, app: web.Application) -> None:
        if self.idle_s:
            self._watching = asyncio.ensure_future(self._end_idle_games())
        print(f"StoryEcho on {self.public_url} (ctrl+c stops it; every game is saved first)", flush=True)

    async def on_shutdown(self, app: web.Application) -> None:
        if self._watching is not None:
            self._watching.cancel()
        # each game gets "quit" (as when its tab closes), saves and ends, or is killed past its deadline
        await asyncio.gather(*(game.stop() for game in list(self.games)), return_exceptions=True)

    async def _end_idle_games(self) -> None:
        """Every so often, end (saved) each game whose player has sent no key for :attr:`idle_s`."""
        why = f"Your game was saved and closed after {_minutes(self.idle_s)} without a key. Play again to continue."
        while True:
            await asyncio.sleep(min(30.0, self.idle_s / 4))
            now = time.monotonic()
            for game in list(self.games):
                if not game.ended and now - game.last_input >= self.idle_s:
                    game.end(why)

    def run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=_quiet,
            shutdown_timeout=SHUTDOWN_S,
        )


def _minutes(seconds: float) -> str:
    minutes = seconds / 60
    if minutes >= 1:
        return f"{minutes:g} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g} seconds"


def _quiet(*args: Any) -> None:
    """aiohttp's own start-up lines are not printed (``on_startup`` says where the game is)."""
