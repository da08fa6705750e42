"""The ``storyecho content`` commands: validate, check and make stories (``game.cli`` dispatches here).

They work on a :class:`~game.world.library.StoryLibrary` (the shipped stories and the player's folder) and print
for an author: what a story holds, the checker's report, where a new story was made.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import orjson

from game.checker import exports
from game.checker.analysis import check_pack
from game.checker.bounds import DEFAULT_FIGHT_SEEDS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LOSSES, DEFAULT_MAX_STATES
from game.checker.exports import ExportFailure
from game.checker.imports import ImportFailure, import_file
from game.checker.scaffold import ScaffoldError, new_story
from game.files import replace_durably
from game.world.content import ContentError
from game.world.library import StoryLibrary
from game.world.loader import load_pack


def content_command(args: argparse.Namespace, library: StoryLibrary, stories_folder: Path) -> int:
    """Run ``storyecho content <command>``; its exit status."""
    if args.content_command == "check":
        return check(args, library)
    if args.content_command == "new":
        return new(args, library, stories_folder)
    if args.content_command == "import":
        return import_(args, library, stories_folder)
    if args.content_command == "export":
        return export(args, library)
    return validate(args, library)


def export(args: argparse.Namespace, library: StoryLibrary) -> int:
    """``content export ID --format worldinfo|card [--person P] -o FILE``: lore or a person, for SillyTavern."""
    try:
        pack = load_pack(library.path(args.id))
        if args.format == "card":
            if not args.person:
                raise ExportFailure(f"--format card needs --person (one of {', '.join(sorted(pack.npcs))})")
            document = exports.card(pack, args.person)
        else:
            document = exports.world_info(pack)
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        if args.output.is_dir():
            raise ExportFailure(f"{args.output} is a folder; name the file to write")
        replace_durably(args.output, text.encode("utf-8"))
    except (ContentError, ExportFailure, OSError) as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 1
    what = f"{args.person} as a V2 character card" if args.format == "card" else f"{len(pack.knowledge)} lore entries"
    print(f"exported {what} of {args.id!r} to {args.output} (SillyTavern imports it)")
    return 0


def new(args: argparse.Namespace, library: StoryLibrary, stories_folder: Path) -> int:
    """``content new ID``: the starter story in the player's stories folder (or ``--dir``)."""
    if library.is_shipped(args.id):
        print(f"storyecho: {args.id!r} is the id of a story shipped with the game; pick another", file=sys.stderr)
        return 1
    try:
        folder = new_story(args.dir or stories_folder, args.id, title=args.title, genre=args.genre)
    except (ScaffoldError, OSError) as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 1
    print(f"made the story {args.id!r} in {folder}")
    if args.dir is not None and folder.parent.resolve() != stories_folder.resolve():
        print(f"  (outside your stories folder {stories_folder}: set STORYECHO_STORIES_DIR={folder.parent} to play it)")
    print(f"  check it:  storyecho content check --story {args.id}")
    print(f"  play it:   storyecho play --story {args.id}")
    print(f"  what each file is for: {folder / 'README.md'}")
    return 0


def import_(args: argparse.Namespace, library: StoryLibrary, stories_folder: Path) -> int:
    """``content import FILE --story ID [--new]``: a lorebook's or a card's content into a story of the player's."""
    try:
        report = import_file(
            args.file,
            library,
            stories_folder,
            args.story,
            new=args.new,
            greeting=args.greeting,
            opening=args.opening,
            place=args.place,
            keep_orders=args.keep_orders,
        )
    except ImportFailure as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 1
    print(report.text())
    return 0


def title_of(library: StoryLibrary, story: str) -> str:
    try:
        return load_pack(library.path(story)).story.title
    except ContentError as exc:
        return f"cannot be played: {str(exc).splitlines()[0]}"


def validate(args: argparse.Namespace, library: StoryLibrary) -> int:
    """``content validate``: load each story (or ``--story``) and say what it holds; 1 when one is invalid."""
    stories = [args.story] if args.story else library.ids()
    failed = 0
    for line in library.refused:
        print(f"storyecho: {line}", file=sys.stderr)
    for story in stories:
        try:
            pack = load_pack(library.path(story))
        except ContentError as exc:
            failed += 1
            print(f"{story}: INVALID\n" + "\n".join(f"  {line}" for line in str(exc).splitlines()))
        else:
            print(
                f"{story}: OK - {len(pack.nodes)} nodes, {len(pack.npcs)} NPCs, {len(pack.quests.main)} main + "
                f"{len(pack.quests.side)} side quests, {len(pack.enemies)} enemies, {len(pack.endings)} endings"
            )
    return 1 if failed else 0


def check(args: argparse.Namespace, library: StoryLibrary) -> int:
    """``content check``: explore each story's states for soft-locks and dangling content; 1 when defects are found."""
    targets: list[tuple[str, Path | None]] = [(str(args.pack), args.pack)] if args.pack else []
    if not targets:
        for line in library.refused:
            print(f"storyecho: {line}", file=sys.stderr)
        stories = [args.story] if args.story else library.ids()
        targets = [(story, None) for story in stories]
    found = 0
    reports: list[dict[str, Any]] = []
    for name, root in targets:
        try:
            pack = load_pack(root if root is not None else library.path(name))
        except ContentError as exc:
            found += 1
            problems = str(exc).splitlines()
            reports.append({"story": name, "invalid": problems, "defects": len(problems)})
            if not args.json:
                print(f"{name}: INVALID (the loader rejects it)\n" + "\n".join(f"  {line}" for line in problems))
            continue
        report = check_pack(
            pack,
            max_states=DEFAULT_MAX_STATES if args.max_states is None else args.max_states,
            max_depth=DEFAULT_MAX_DEPTH if args.max_depth is None else args.max_depth,
            max_losses=DEFAULT_MAX_LOSSES if args.max_losses is None else args.max_losses,
            fight_seeds=DEFAULT_FIGHT_SEEDS if args.fight_seeds is None else args.fight_seeds,
        )
        found += report.defects
        reports.append(report.to_dict())
        if not args.json:
            print(report.text() + "\n")
    if args.json:
        print(orjson.dumps({"reports": reports, "defects": found}, option=orjson.OPT_INDENT_2).decode())
    return 1 if found else 0
