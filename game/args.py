"""The ``storyecho`` command line: its arguments and the settings they give, importable at once.

``game.main`` parses here and starts the Textual game without importing the
CLI's commands (``game.cli``: the engine, memory stores and narrators), so the
title screen does not wait for them; every other command goes to ``game.cli``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from game import __version__
from game.checker.bounds import DEFAULT_FIGHT_SEEDS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LOSSES, DEFAULT_MAX_STATES
from game.llm.presets import preset_names
from game.text import RedactingFilter

if TYPE_CHECKING:
    from game.config import Settings

NARRATOR_ORDER = ("openai", "local", "scripted")
"""Who narrates when the one asked for cannot start: the next in this order."""


CHROMA_TOKEN_HELP = "the Chroma server's token (better: STORYECHO_CHROMA_TOKEN, which others cannot read in ps)"

SETTING_FLAGS: tuple[str, ...] = ("story", "config", "llm", "seed", "data_dir", "embeddings", "chroma_url")
SETTING_FLAGS += ("preset", "model", "base_url")
"""The flags :func:`settings_for` and the game read; a command that does not take one leaves it None."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storyecho",
        description="StoryEcho: a text adventure that remembers.",
        epilog="Saves (and the memory index) go to --data-dir, else STORYECHO_DATA_DIR, else data_dir in "
        "storyecho.toml, else ./saves in a checkout of StoryEcho (the checkout's saves/ when the game runs from "
        "one started elsewhere), else the user data folder: "
        "~/.local/share/storyecho/saves on Linux ($XDG_DATA_HOME/storyecho/saves when set), "
        "~/Library/Application Support/storyecho/saves on macOS, "
        "%LOCALAPPDATA%\\storyecho\\storyecho\\saves on Windows.",
    )
    parser.add_argument("--version", action="version", version=f"storyecho {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    # the game's own flags before any command (``storyecho --data-dir DIR``, as this help words it); a command's
    # own flag wins (``parse`` merges them: a sub-command's default would otherwise overwrite these)
    parser.add_argument("--data-dir", dest="top_data_dir", type=Path, default=None, help="saves and index folder")
    parser.add_argument("--story", dest="top_story", default=None, help="the story to play (its id or title)")
    # every command's namespace has every setting's flag (None: not given), so settings_for reads them directly
    parser.set_defaults(**dict.fromkeys(SETTING_FLAGS))
    sub = parser.add_subparsers(dest="command")
    _add_play_and_run(sub)
    _add_slots(sub)
    _add_serve(sub)
    _add_doctor(sub)
    _add_index(sub)
    _add_content(sub)
    return parser


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, with ``--data-dir`` and ``--story`` given before the command taken when the command has none."""
    args = build_parser().parse_args(argv)
    args.data_dir = args.data_dir or args.top_data_dir
    args.story = args.story or args.top_story
    return args


def _add_game_flags(p: argparse.ArgumentParser) -> None:
    """The flags of the commands that play a game (``play``, ``run``): the narrator, dice, saves and memory."""
    p.add_argument("--llm", choices=["auto", *NARRATOR_ORDER], default=None, help="narrator (default auto; see README)")
    p.add_argument("--preset", default=None, help=f"OpenAI-compatible preset: {preset_names()}")
    p.add_argument("--model", default=None, help="model name at the OpenAI-compatible endpoint")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--seed", type=int, default=None, help="seed for combat and loot dice")
    p.add_argument("--data-dir", type=Path, default=None, help="saves and index folder")
    p.add_argument(
        "--no-embeddings",
        dest="embeddings",
        action="store_const",
        const=False,
        default=None,
        help="keyword recall only (fast start, no torch)",
    )
    p.add_argument("--chroma-url", default=None, help="use a Chroma server instead of the local index")
    p.add_argument("--chroma-token", default=None, help=CHROMA_TOKEN_HELP)
    p.add_argument("--config", type=Path, default=None, help="TOML settings file (default: ./storyecho.toml)")


def _add_play_and_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    play = sub.add_parser("play", help="play in the terminal (the Textual game; --headless: a line prompt)")
    play.add_argument("--story", default=None)
    play.add_argument("--headless", action="store_true", help="the line-based prompt instead of the Textual game")
    play.add_argument(
        "--textual", action="store_true", help="the Textual game even when not in a terminal (what 'serve' runs)"
    )
    _add_game_flags(play)
    run = sub.add_parser("run", help="play actions from a file or stdin")
    run.add_argument("--story", default=None, help="the story (optional when --slot names an existing save)")
    run.add_argument("--slot", default=None, help="resume from this save slot if it exists; save to it as you go")
    run.add_argument("--actions", default=None, help="file of actions, one per line ('-' for stdin)")
    run.add_argument("--json", action="store_true", help="print one JSON object per turn")
    _add_game_flags(run)


def _add_slots(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    slots = sub.add_parser("slots", help="list, show, delete, export or branch save slots")
    slots_sub = slots.add_subparsers(dest="slots_command", required=True)
    slots_sub.add_parser("list", help="every slot: story, turn, place, saved at")
    for name, text in (("show", "one slot in detail"), ("delete", "remove a slot and its backup")):
        cmd = slots_sub.add_parser(name, help=text)
        cmd.add_argument("name")
    export = slots_sub.add_parser("export", help="a readable transcript of the run in a slot")
    export.add_argument("name")
    export.add_argument("--markdown", action="store_true", help="Markdown instead of plain text")
    export.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")
    branch = slots_sub.add_parser("branch", help="a new slot with the game of a slot as it was after a turn")
    branch.add_argument("name", help="the slot to branch from (left as it is)")
    branch.add_argument("--turn", type=int, required=True, help="the turn to branch after")
    branch.add_argument("new", help="the new slot's name")
    for cmd in (slots, *slots_sub.choices.values()):
        cmd.add_argument("--data-dir", type=Path, default=None, help="saves folder")
        cmd.add_argument("--config", type=Path, default=None, help="TOML settings file")


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve", help="play in a browser: one game per tab (needs the web extra: pip install -e '.[web]')"
    )
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="the port to listen on (default 8000)")
    serve.add_argument(
        "--token",
        default=None,
        help="the page and its games answer only with this token (?token=..., then a cookie); also "
        "STORYECHO_SERVE_TOKEN; needed to listen on any address but this machine's own",
    )
    serve.add_argument("--max-games", type=int, default=4, help="games at once; one more tab is told to try later")
    serve.add_argument(
        "--user-header",
        default=None,
        help="a header an authenticating proxy sets to the player's login (e.g. X-Forwarded-User): their own "
        "folder; without it a signed cookie tells visitors apart. The proxy is trusted: listening beyond this "
        "machine without a token needs it, and then a request without the header is refused",
    )
    serve.add_argument(
        "--idle-minutes",
        type=float,
        default=30.0,
        help="a game with no key for this long is saved and closed (default 30; 0: never; fractions allowed)",
    )
    _add_game_flags(serve)  # each tab's game is started with these


def _add_doctor(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="check the llama.cpp build runs here (--llm local, the default), or whether the model at an "
        "OpenAI-compatible endpoint can play (--llm openai: a 13-turn scripted session, judged)",
    )
    doctor.add_argument("--llm", choices=["local", "openai"], default=None, help="what to check (default: local)")
    doctor.add_argument("--preset", default=None, help=f"with --llm openai: a preset ({preset_names()})")
    doctor.add_argument(
        "--base-url", default=None, help="with --llm openai: the endpoint, e.g. http://127.0.0.1:8080/v1"
    )
    doctor.add_argument(
        "--model", default=None, help="GGUF file (local; default: the configured or bundled one), or the model name"
    )
    doctor.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the configured ones)")
    doctor.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    doctor.add_argument("--config", type=Path, default=None, help="TOML settings file")


def _add_index(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    index = sub.add_parser("index", help="index every story's knowledge base now, so a new game embeds nothing")
    index.add_argument("--story", default=None, help="only this story")
    index.add_argument("--list", action="store_true", help="list the index's collections and their models")
    index.add_argument("--prune", action="store_true", help="drop the collections of other embedding models")
    index.add_argument("--data-dir", type=Path, default=None, help="saves and index folder")
    index.add_argument("--chroma-url", default=None, help="index on a Chroma server instead of the local index")
    index.add_argument("--chroma-token", default=None, help=CHROMA_TOKEN_HELP)
    index.add_argument("--config", type=Path, default=None, help="TOML settings file")


def _add_content(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    content = sub.add_parser("content", help="content pack tools")
    content_sub = content.add_subparsers(dest="content_command", required=True)
    made = content_sub.add_parser(
        "new", help="make a small story that passes 'content check' at once, in your stories folder"
    )
    made.add_argument("id", help="the story's id: lowercase letters, digits and _, starting with a letter")
    made.add_argument("--title", default=None, help="its title (default: from the id)")
    made.add_argument("--genre", default="mystery", help="its genre, in words (default: mystery)")
    made.add_argument("--dir", type=Path, default=None, help="make it in this folder instead of your stories folder")
    replay = content_sub.add_parser(
        "replay", help="play an approved transcript again (scripted narrator) and show the first difference"
    )
    replay.add_argument("id", help="the story")
    replay.add_argument("file", type=Path, help="the approved transcript ('storyecho run' output)")
    replay.add_argument("--seed", type=int, default=0, help="the dice's seed (default 0, as the transcript's)")
    replay.add_argument(
        "--approve", action="store_true", help="play FILE's actions and write what the game tells now into FILE"
    )
    imported = content_sub.add_parser(
        "import",
        help="import a SillyTavern World Info, a character card (V1-V3, JSON or PNG), a lorebook_v3 or a NovelAI "
        "lorebook into a story of yours",
    )
    imported.add_argument("file", type=Path, help="the file to import (at most 20 MB)")
    imported.add_argument("--story", required=True, help="the story of yours to import into")
    imported.add_argument("--new", action="store_true", help="make the story first, as 'content new' does")
    imported.add_argument(
        "--greeting", type=int, default=0, help="a card's greeting that opens the story: 0 first_mes, N its N-th other"
    )
    imported.add_argument(
        "--opening", action="store_true", help="open with the card's greeting even where the story has its own opening"
    )
    imported.add_argument("--place", default="", help="where the card's person stands (a place id; default: the start)")
    imported.add_argument(
        "--keep-orders",
        action="store_true",
        help="keep text that orders the narrator about as the author's note (story.json author_note), shown as the "
        "author's wish for the telling, never as a fact of the world; without it such text is only reported",
    )
    exported = content_sub.add_parser(
        "export", help="write a story's lore as SillyTavern World Info, or one of its people as a V2 character card"
    )
    exported.add_argument("id", help="the story")
    exported.add_argument("--format", choices=("worldinfo", "card"), default="worldinfo", help="what to write")
    exported.add_argument("--person", default="", help="with --format card: the person's id (npcs.json)")
    exported.add_argument("-o", "--output", type=Path, required=True, help="the file to write")
    validate = content_sub.add_parser("validate", help="validate content packs")
    validate.add_argument("--story", default=None)
    check = content_sub.add_parser(
        "check", help="play every path the rules allow: unreachable endings, soft-locks, wasted items, dangling text"
    )
    check.add_argument("--story", default=None, help="the story to check (default: every story)")
    check.add_argument("--pack", type=Path, default=None, help="check the content pack in this folder instead")
    check.add_argument("--json", action="store_true", help="print the reports as one JSON object")
    check.add_argument(
        "--max-states", type=int, default=None, help=f"bound: states per search (default {DEFAULT_MAX_STATES:,})"
    )
    check.add_argument(
        "--max-depth", type=int, default=None, help=f"bound: decisions per path (default {DEFAULT_MAX_DEPTH})"
    )
    check.add_argument(
        "--max-losses", type=int, default=None, help=f"items lost per path, 0 or 1 (default {DEFAULT_MAX_LOSSES})"
    )
    check.add_argument(
        "--fight-seeds", type=int, default=None, help=f"dice each fight is played with (default {DEFAULT_FIGHT_SEEDS})"
    )


def settings_for(args: argparse.Namespace) -> Settings:
    """The settings: flags over environment over the config file (raises ``ConfigError``).

    ``game.config`` (and pydantic, which validates the settings: 0.1 s) loads here, on the first call: the
    Textual game calls this after its title's first frame.
    """
    from game.config import load_settings

    memory_flags = {"embeddings": args.embeddings, "chroma_url": args.chroma_url}
    openai_flags = {"preset": args.preset, "model": args.model, "base_url": args.base_url}
    return load_settings(
        args.config,
        llm=args.llm,
        seed=args.seed,
        data_dir=args.data_dir,
        memory={k: v for k, v in memory_flags.items() if v is not None},
        openai={k: v for k, v in openai_flags.items() if v is not None},
    )


def game_args(args: argparse.Namespace) -> argparse.Namespace | None:
    """The ``play`` arguments when the command starts the Textual game (no command, or ``play`` without
    ``--headless``, in a terminal or with ``--textual``), else None."""
    if args.command not in (None, "play"):
        return None
    play = (
        args
        if args.command == "play"
        else argparse.Namespace(story=args.story, headless=False, textual=False, config=None)
    )
    if play.headless:
        return None
    # ``storyecho serve`` starts each tab's game with --textual: textual-serve talks to it over pipes, not a terminal
    if not (play.textual or (sys.stdin.isatty() and sys.stdout.isatty())):
        return None
    return play


def configure_logging(verbose: bool) -> None:
    """Log to stderr (INFO with ``-v``, else WARNING), every record with the credentials of any URL in it taken
    out (``game.text.RedactingFilter``: httpx logs each request's whole URL). The Textual game holds these
    handlers while it is on screen (``game.tui.logs``)."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
