"""``storyecho serve``: textual-serve, used as a library, starts one Textual game per browser tab.

Each websocket gets its own ``storyecho play --textual`` process (textual-serve talks to it over pipes under
Textual's web driver, so the game is told to start the Textual app: it is not in a terminal). The page is our
template (``templates/app_index.html``): fonts from textual-serve's own static files (no request leaves the
server), the terminal focused on load, a prompt before the page is left. Every way a game ends saves it as ctrl+q
does (``game.tui.leaving``): the tab closed or the connection lost (textual-serve sends the game "quit"), and the
server stopped (SIGINT, SIGTERM, SIGHUP: each game is sent "quit" and waited for before the server goes).

What is not built yet (issue 45, items 3-5; docs/serving.md): a data folder per visitor, a token, a cap on games,
an idle timeout, a deadline for a hung game.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

SHUTDOWN_S = 20.0
"""How long a stopping server waits for its games to save and end (aiohttp's graceful shutdown)."""

TEMPLATES = Path(__file__).parent / "templates"
TITLE = "StoryEcho"


def game_command(args: argparse.Namespace) -> str:
    """The shell command each tab's game runs: ``storyecho play --textual`` with the game flags ``serve`` was given."""
    flags = ["--textual"]
    given = {
        "--llm": args.llm,
        "--preset": args.preset,
        "--model": args.model,
        "--base-url": args.base_url,
        "--seed": args.seed,
        "--chroma-url": args.chroma_url,
        "--data-dir": args.data_dir and Path(args.data_dir).resolve(),
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
    try:
        from aiohttp import web
        from aiohttp.web_runner import GracefulExit
        from textual_serve.app_service import AppService
        from textual_serve.server import Server
    except ImportError:
        print("storyecho: serve needs the web extra: pip install -e '.[web]'", file=sys.stderr)
        return 2

    class GameServer(Server):
        """textual-serve's server with our page, and every game saved before the server stops."""

        def __init__(self) -> None:
            super().__init__(game_command(args), host=args.host, port=args.port, title=TITLE, templates_path=TEMPLATES)
            self.games: set[AppService] = set()

        async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
            self.games.add(app_service)
            try:
                await super()._process_messages(websocket, app_service)
            finally:
                self.games.discard(app_service)

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
