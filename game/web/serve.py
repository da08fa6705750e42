"""``storyecho serve``: textual-serve, used as a library, starts one Textual game per browser tab.

Each websocket gets its own ``storyecho play --textual`` process (textual-serve talks to it over pipes under
Textual's web driver, so the game is told to start the Textual app: it is not in a terminal). The page is our
template (``templates/app_index.html``): fonts from textual-serve's own static files (no request leaves the
server), the terminal focused on load, a prompt before the page is left. Every way a game ends saves it as ctrl+q
does (``game.tui.leaving``): the tab closed or the connection lost (textual-serve sends the game "quit"), and the
server stopped (SIGINT, SIGTERM, SIGHUP: each game is sent "quit" and waited for before the server goes).

Safe to expose (issue 45, item 4, in part): with a token (``--token`` or ``STORYECHO_SERVE_TOKEN``) every request
(the page, its files, the websocket) needs it, once as ``?token=`` and then from a cookie, or as a bearer header,
else it is answered 401; listening on any address but this machine's own without a token is refused, since
textual-serve has no login of its own; ``--max-games`` caps the games at once (each is a process of 300-400 MB),
and a tab past the cap gets a "try later" page (503).

Each visitor's games live in a data folder of their own (``game.web.visitors``: a signed cookie, or a header an
authenticating proxy sets, ``--user-header``).

What is not built yet (issue 45, items 4-5; docs/serving.md): an idle timeout, a deadline for a hung game, the
many-player bench.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import ipaddress
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

SHUTDOWN_S = 20.0
"""How long a stopping server waits for its games to save and end (aiohttp's graceful shutdown)."""

TEMPLATES = Path(__file__).parent / "templates"
TITLE = "StoryEcho"
COOKIE = "storyecho_token"
TOKEN_ENV = "STORYECHO_SERVE_TOKEN"


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine's own address (only its own users can reach it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def game_command(args: argparse.Namespace, data_dir: Path | None = None) -> str:
    """The shell command each tab's game runs: ``storyecho play --textual`` with the game flags ``serve`` was given
    (``data_dir``: the visitor's own folder, in place of ``--data-dir``)."""
    flags = ["--textual"]
    given = {
        "--llm": args.llm,
        "--preset": args.preset,
        "--model": args.model,
        "--base-url": args.base_url,
        "--seed": args.seed,
        "--chroma-url": args.chroma_url,
        "--data-dir": data_dir or (args.data_dir and Path(args.data_dir).resolve()),
        "--config": args.config and Path(args.config).resolve(),
    }
    for flag, value in given.items():
        if value is not None:
            flags += [flag, str(value)]
    if args.embeddings is False:
        flags.append("--no-embeddings")
    if args.story:
        flags += ["--story", args.story]
    return shlex.join([sys.executable, "-m", "game", *(["-v"] if args.verbose else []), "play", *flags])


def serve(args: argparse.Namespace) -> int:
    """Serve the game on ``args.host``:``args.port`` until stopped; 2 when textual-serve is not installed."""
    token = args.token or os.environ.get(TOKEN_ENV) or ""
    if not token and not loopback(args.host):
        print(
            f"storyecho: serve on {args.host} would answer anyone who can reach it, and textual-serve has no login: "
            f"give --token TOKEN (or {TOKEN_ENV}), or listen on 127.0.0.1 behind a proxy that logs players in",
            file=sys.stderr,
        )
        return 2
    try:
        from aiohttp import web
        from aiohttp.web_runner import GracefulExit
        from textual_serve.app_service import AppService
        from textual_serve.server import Server, to_int
    except ImportError:
        print("storyecho: serve needs the web extra: pip install -e '.[web]'", file=sys.stderr)
        return 2

    from game.config import default_data_dir
    from game.web.visitors import COOKIE as VISITOR
    from game.web.visitors import Visitors

    visitors = Visitors(Path(args.data_dir).resolve() if args.data_dir else default_data_dir(), args.user_header or "")

    class GameServer(Server):
        """textual-serve's server with our page, each visitor's games in their own folder, and every game saved
        before the server stops."""

        def __init__(self) -> None:
            super().__init__(game_command(args), host=args.host, port=args.port, title=TITLE, templates_path=TEMPLATES)
            self.games: set[AppService] = set()

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            """textual-serve's own, with the game started in the visitor's folder."""
            visitor, _ = visitors.identify(request.headers, dict(request.cookies))
            command = game_command(args, visitors.folder(visitor))
            websocket = web.WebSocketResponse(heartbeat=15)
            width = to_int(request.query.get("width", "80"), 80)
            height = to_int(request.query.get("height", "24"), 24)
            game: AppService | None = None
            try:
                await websocket.prepare(request)
                game = AppService(
                    command,
                    write_bytes=websocket.send_bytes,
                    write_str=websocket.send_str,
                    close=websocket.close,  # type: ignore[arg-type]  # as textual-serve itself passes it
                    download_manager=self.download_manager,
                    debug=self.debug,
                )
                await game.start(width, height)
                await self._process_messages(websocket, game)
            except asyncio.CancelledError:
                await websocket.close()
            finally:
                if game is not None:
                    await game.stop()
            return websocket

        async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
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
            given, in_query = token_given(request, token) if token else (True, False)
            if not given:
                return web.Response(status=401, text="StoryEcho asks for its token: open the address with ?token=...")
            if request.path in ("/", "/ws") and len(self.games) >= args.max_games:
                return web.Response(
                    status=503, text="StoryEcho is full: every game it can run is being played. Try later."
                )
            response: web.StreamResponse = await handler(request)
            if isinstance(response, web.WebSocketResponse):
                return response
            if in_query:
                response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
            _, new = visitors.identify(request.headers, dict(request.cookies)) if request.path == "/" else ("", "")
            if new:  # a visitor the page has not met: their own folder from now on
                response.set_cookie(VISITOR, new, httponly=True, samesite="Strict", max_age=365 * 24 * 3600)
            return response

        async def on_startup(self, app: web.Application) -> None:
            print(f"StoryEcho on {self.public_url} (ctrl+c stops it; every game is saved first)", flush=True)

        async def on_shutdown(self, app: web.Application) -> None:
            # each game gets "quit" (as when its tab closes), saves and ends; its websocket then closes
            await asyncio.gather(*(game.stop() for game in list(self.games)), return_exceptions=True)

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

    with contextlib.suppress(GracefulExit):
        GameServer().run()
    return 0


def _quiet(*args: Any) -> None:
    """aiohttp's own start-up lines are not printed (``on_startup`` says where the game is)."""
