"""``storyecho content import FILE --story ID [--new]``: a file's lore and character into a story of your own.

Nothing changes on failure. The file is read and checked whole before any story is touched; the import is then
made in a copy of the story (a hidden folder beside it, in the same stories folder), the copy is loaded with
:func:`game.world.loader.load_pack` as the game would load it, and only a copy that loads takes the story's
place (two renames). The source file is kept verbatim in the story's ``imported/`` folder, so a field the game
does not use is never lost.

The two renames survive an interrupt at any point: Ctrl-C between them puts the story back before the copy is
cleared away (it used to clear away the story, notes and all), and a process killed between them leaves the
story as ``previous`` in the hidden folder, which the next import puts back (:func:`recover`). A story folder that
is a symbolic link is written through: the import is made beside the folder the link points to and swapped in
there, and the link stays a link.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from game.checker.imports.mapping import Mapper, PackFiles
from game.checker.imports.readers import read_source
from game.checker.imports.report import ImportReport
from game.checker.imports.sources import ImportFailure
from game.checker.scaffold import ScaffoldError, new_story
from game.files import sync_folder
from game.world.content import ContentError
from game.world.library import StoryLibrary
from game.world.loader import load_pack

IMPORTED = "imported"
"""The folder of a story that keeps each imported file as it came."""


def import_file(
    path: Path,
    library: StoryLibrary,
    folder: Path,
    story: str,
    *,
    new: bool = False,
    greeting: int = 0,
    opening: bool = False,
    place: str = "",
    keep_orders: bool = False,
) -> ImportReport:
    """Import the file at ``path`` into the story ``story`` of the stories folder ``folder`` (made first with
    ``new``); ``greeting`` picks the card's opening (0: ``first_mes``, N: its N-th alternate greeting), which
    replaces an opening the author wrote only with ``opening``; ``place``: where the card's person stands;
    ``keep_orders``: text that orders the narrator about goes to the story's author's note, not only the report.

    Raises:
        ImportFailure: the file cannot be imported or the story cannot take it; nothing was changed.
    """
    source = read_source(path)
    recover(folder)
    target = _target(library, folder, story, new)
    folder.mkdir(parents=True, exist_ok=True)
    target = target.resolve() if target.is_symlink() else target  # written through: the link stays a link
    work = Path(tempfile.mkdtemp(prefix=f".{story}.import-", dir=target.parent))
    try:
        staged = work / story
        if new:
            new_story(work, story, title=source.card.name if source.card else None)
        else:
            shutil.copytree(target, staged)
        report = ImportReport(path, story, target, made=new)
        report.kept_as = _keep(path, staged)
        files = PackFiles.read(staged)
        character = "" if source.card else _imported_character(staged, path)
        Mapper(source, files, report, character=character, opening=opening, place=place, keep_orders=keep_orders).run(
            greeting
        )
        files.write(staged)
        try:
            load_pack(staged)
        except ContentError as exc:
            raise ImportFailure(
                f"{path}: the story it would make does not load, so nothing was changed:\n{exc}"
            ) from None
        _swap(staged, target, work)
    except (OSError, ScaffoldError) as exc:
        raise ImportFailure(f"{path}: cannot import into {target}: {exc}; nothing was changed") from None
    finally:
        _put_back(work, target)
        shutil.rmtree(work, ignore_errors=True)
    return report


def recover(folder: Path) -> list[Path]:
    """Put back any story an import was killed between its two renames left in a hidden work folder of
    ``folder``; the stories put back."""
    back = []
    for work in folder.glob(".*.import-*") if folder.is_dir() else ():
        story = work.name[1:].split(".import-")[0]
        if _put_back(work, folder / story):
            back.append(folder / story)
    return back


def _put_back(work: Path, target: Path) -> bool:
    """Move the story ``work`` kept as ``previous`` back to ``target`` when ``target`` is gone (an import stopped
    between its renames); whether it did."""
    previous = work / "previous"
    if previous.is_dir() and not target.exists():
        os.replace(previous, target)
        return True
    return False


def _target(library: StoryLibrary, folder: Path, story: str, new: bool) -> Path:
    """The story's folder, once it is one an import may change (or, with ``new``, make)."""
    if library.is_shipped(story):
        raise ImportFailure(
            f"{story!r} is a story shipped with the game, which an import never changes; import into a story of "
            f"your own (add --new to make one, with another id)"
        )
    target = folder / story
    if new:
        if target.exists():
            raise ImportFailure(f"{target} already exists; leave out --new to import into it, or pick another id")
        return target
    if story not in library.user_ids or library.path(story).resolve() != target.resolve():
        raise ImportFailure(f"no story {story!r} in your stories folder {folder}; add --new to make it")
    try:
        load_pack(target)
    except ContentError as exc:
        raise ImportFailure(
            f"{target}: the story does not load, so nothing was imported; fix it first:\n{exc}"
        ) from None
    return target


def _imported_character(staged: Path, now: Path) -> str:
    """The name of the one character the story's earlier imports brought as a card (its ``imported/`` folder),
    or "" (none, or more than one): a lorebook's ``{{char}}`` names them, not "the character"."""
    names = set()
    for kept in sorted((staged / IMPORTED).glob("*")) if (staged / IMPORTED).is_dir() else []:
        if kept.name == now.name:
            continue
        try:
            card = read_source(kept).card
        except ImportFailure:
            continue
        if card is not None and card.name:
            names.add(card.name)
    return names.pop() if len(names) == 1 else ""


def _keep(path: Path, staged: Path) -> str:
    """Copy the source file verbatim into the story's ``imported/`` folder; its path there."""
    kept = staged / IMPORTED
    kept.mkdir(exist_ok=True)
    name, n = path.name, 2
    while (kept / name).exists():
        name, n = f"{path.stem}-{n}{path.suffix}", n + 1
    shutil.copyfile(path, kept / name)
    return f"{IMPORTED}/{name}"


def _swap(staged: Path, target: Path, work: Path) -> None:
    """Put ``staged`` in ``target``'s place (the old folder goes to ``work``, and is put back if that fails)."""
    previous = work / "previous"
    had = target.exists()
    if had:
        os.replace(target, previous)
    try:
        os.replace(staged, target)
    except BaseException:  # an OSError, or Ctrl-C between the renames: the story goes back first
        if had and not target.exists():
            os.replace(previous, target)
        raise
    sync_folder(target.parent)
