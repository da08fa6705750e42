"""``storyecho serve``: textual-serve, used as a library, starts one Textual game per browser tab.

Each websocket gets its own ``storyecho play --textual`` process (textual-serve talks to it over pipes under
Textual's web driver, so the game is told to start the Textual app: it is not in a terminal). The page is our
template (``templates/app_index.html``): fonts from textual-serve's own static files (no request leaves the
server), the terminal focused on load, a prompt before the page is left. Every way a game ends saves it as ctrl+q
does (``game.tui.leaving``): the tab closed or the connection lost (textual-serve sends the game "quit"), and the
server stopped (SIGINT, SIGTERM, SIGHUP: each game is sent "quit" and waited for before the server goes).

Safe to expose (issue 45, item 4): with a token (``--token`` or ``STORYECHO_SERVE_TOKEN``) every request (the
page, its files, the websocket) needs it, once as ``?token=`` and then from a cookie, or as a bearer header, else
it is answered 401. Listening on any address but this machine's own is refused without a token or a trusted
proxy's login header (``--user-header``: then a request without that header is answered 401), since
textual-serve has no login of its own. ``--max-games`` caps the games at once (each is a process of 300-400 MB),
and a tab past the cap gets a "try later" page (503). ``--idle-minutes`` (30) saves and closes a game with no key
for that long, and the page says so; a game that does not end when told is killed past a deadline
(``game.web.games``).

Each visitor's games live in a data folder of their own (``game.web.visitors``: a signed cookie, or a header an
authenticating proxy sets, ``--user-header``).

The server itself is :mod:`game.web.server`, imported only when serving (it needs the web extra).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import shlex
import sys
from pathlib import Path

TOKEN_ENV = "STORYECHO_SERVE_TOKEN"


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine's own address (only its own users can reach it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    if not token and not args.user_header and not loopback(args.host):
        print(
            f"storyecho: serve on {args.host} would answer anyone who can reach it, and textual-serve has no login: "
            f"give --token TOKEN (or {TOKEN_ENV}), or --user-header HEADER naming the login header that the "
            "authenticating proxy in front sets (it is trusted), or listen on 127.0.0.1",
            file=sys.stderr,
        )
        return 2
    if args.idle_minutes < 0:
        print("storyecho: --idle-minutes is a number of minutes, 0 or more (0: never closed)", file=sys.stderr)
        return 2
    try:
        from aiohttp.web_runner import GracefulExit

        from game.web.server import GameServer
    except ImportError:
        print("storyecho: serve needs the web extra: pip install -e '.[web]'", file=sys.stderr)
        return 2
    from game.config import default_data_dir
    from game.web.visitors import Visitors

    visitors = Visitors(Path(args.data_dir).resolve() if args.data_dir else default_data_dir(), args.user_header or "")
    server = GameServer(args, token, visitors, lambda folder: game_command(args, folder))
    server.header_required = bool(args.user_header) and not token and not loopback(args.host)
    with contextlib.suppress(GracefulExit):
        server.run()
    return 0
