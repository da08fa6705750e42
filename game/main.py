"""The ``storyecho`` command: the Textual game in a terminal, the CLI for everything else.

``storyecho`` (or ``storyecho play``) starts the Textual game; ``storyecho
play --headless`` keeps the line prompt, and ``run``, ``slots``, ``content``
and ``doctor`` are the CLI's. This module sits above both so that the CLI
never imports Textual and the game never imports the CLI's argument handling.
"""

from __future__ import annotations

import argparse

from game import cli
from game.config import Settings


def _tui(args: argparse.Namespace, settings: Settings) -> int:
    from game.tui.app import run_app  # Textual loads only when the game starts

    return run_app(settings, story=getattr(args, "story", None), config_path=getattr(args, "config", None))


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, tui=_tui)


if __name__ == "__main__":
    raise SystemExit(main())
