"""``storyecho serve`` whose visitors named ``hung...`` (by the ``--user-header`` a test sends) get
``tests/hung_game.py``, a game that hangs (a fault injected), and every other visitor the real game; for
``tests/test_serve_deadline.py``. The server is the real one (``game.web.server``), with its deadline for a
stopping game given first: ``python -m tests.serve_hanging DEADLINE_S serve-flags...``."""

from __future__ import annotations

import contextlib
import shlex
import sys
from pathlib import Path

from aiohttp.web_runner import GracefulExit

from game.args import parse
from game.web.serve import game_command
from game.web.server import GameServer
from game.web.visitors import Visitors

HUNG = Path(__file__).with_name("hung_game.py")


def main(argv: list[str]) -> None:
    args = parse(["serve", *argv[1:]])

    def command(folder: Path | None) -> str:
        if folder is not None and folder.name.startswith("hung"):
            return shlex.join([sys.executable, str(HUNG), str(folder / "pid")])
        return game_command(args, folder)

    server = GameServer(args, "", Visitors(Path(args.data_dir).resolve(), args.user_header or ""), command)
    server.deadline_s = float(argv[0])
    with contextlib.suppress(GracefulExit):
        server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
