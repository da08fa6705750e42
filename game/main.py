"""The ``storyecho`` command: the Textual game in a terminal, the CLI for everything else.

``storyecho`` (or ``storyecho play``) starts the Textual game; ``storyecho
play --headless`` keeps the line prompt, ``serve`` plays the game in a browser
(``game.web``), and ``run``, ``slots``, ``content`` and ``doctor`` are the
CLI's. This module sits above them so that the CLI never imports Textual and
the game never imports the CLI's argument handling.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from game.args import configure_logging, game_args, parse, settings_for

if TYPE_CHECKING:
    from game.config import Settings


def _tui(args: argparse.Namespace, settings: Settings | Callable[[], Settings]) -> int:
    from game.tui.app import run_app  # Textual loads only when the game starts
    from game.tui.logs import TERMINAL

    try:
        return run_app(settings, story=args.story, config_path=args.config)
    finally:
        TERMINAL.replay()  # what was logged while the game was on screen, now that the terminal is back


def main(argv: list[str] | None = None) -> int:
    """Start the Textual game straight from the arguments; any other command goes to ``game.cli``.

    The game's path never imports ``game.cli``: its commands import the engine, memory stores and
    narrators, which the title screen does not need (the game loads them after its first frame).
    """
    args = parse(argv)
    if token := vars(args).get("chroma_token"):  # read where the store opens; serve's games inherit it
        os.environ["STORYECHO_CHROMA_TOKEN"] = token
    if args.command == "serve":  # the game in a browser (textual-serve: the web extra)
        from game.web.serve import serve

        configure_logging(args.verbose)
        return serve(args)
    play = game_args(args)
    if play is None:
        from game import cli

        return cli.main(argv, tui=_tui)
    configure_logging(args.verbose)
    # the settings are read and validated once the title is on screen (pydantic's import and the validation
    # would delay its first frame); a bad value closes the game with the same message and exit status as the CLI
    return _tui(play, lambda: settings_for(args))


if __name__ == "__main__":
    raise SystemExit(main())
