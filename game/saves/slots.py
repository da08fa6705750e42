"""Save slots on disk: ``<data dir>/<name>.json``, written atomically, with a backup.

A write never leaves a slot unreadable, whenever the process dies:

1. the new save goes to a temporary file in the same folder, flushed and
   ``fsync``-ed;
2. the current version (if any) becomes the backup ``.<name>.json.bak`` (hard
   link then rename, so the slot file itself never disappears);
3. the temporary file is renamed over the slot (atomic on POSIX), and the
   folder is ``fsync``-ed so the rename survives a power cut.

Reading falls back to the backup, with a notice, when the slot file cannot be
read or is not a valid save. Listing the slots reads only each save's header
(``header.read_header``: the first and last bytes of a file the game wrote),
so a folder of long games lists in milliseconds; loading reads everything.

Slot names are letters, digits, spaces, ``_``, ``-`` and ``.`` (no leading
dot, at most :data:`MAX_NAME` characters); a name that would leave the folder (``../x``, an
absolute path) or a slot file that is a symlink pointing out of it is refused.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from game.files import sync_folder, write_synced
from game.memory.export import Parted
from game.saves.format import MAX_SAVE_BYTES, SaveError, SaveFile, SlotKind, branch, decode
from game.saves.header import SaveHeader, read_bytes, read_header
from game.saves.lines import game_of
from game.saves.parted import PartFolder

SLOT_SUFFIX = ".json"
BACKUP_SUFFIX = ".bak"
MAX_NAME = 100
"""Longest slot name: room for the game's own names of the longest story id (64): ``autosave-<id>`` and a game set
aside beside it, ``autosave-<id>-<n>`` (issue 43: ids of 45 to 64 characters were legal, but their games never
saved, and from 56 the Textual game crashed on New game)."""
_NAME = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9 _.\-]{{0,{MAX_NAME - 1}}}$")
STALE_TEMP_S = 600.0
"""A temporary file older than this is a leftover of a killed writer and is removed."""
_TEMP = re.compile(rf"\.[A-Za-z0-9][A-Za-z0-9 _.\-]{{0,{MAX_NAME - 1}}}\.json(?:\.bak)?\.\d+\.[0-9a-f]{{8}}\.tmp")
"""The names of the game's own temporary files: ``.<slot>.json.<pid>.<8 hex>.tmp`` and the backup's, with ``.bak``."""
SET_ASIDE_TRIES = 100
"""How many numbered slots :meth:`SlotStore.set_aside` tries when other processes take the ones it picks."""


class SlotTaken(SaveError):
    """A write meant for a new slot found the slot already there (``SlotStore.write(..., new=True)``)."""


@dataclass(frozen=True)
class Loaded:
    """A save read from a slot, and what the player should be told about it."""

    save: SaveFile
    notices: list[str]
    from_backup: bool = False


@dataclass(frozen=True)
class SlotInfo:
    """One line of the slot list (``error`` set when the slot cannot be read)."""

    name: str
    story_id: str = ""
    story_title: str = ""
    turn: int = 0
    place: str = ""
    saved_at: str = ""
    kind: str = ""
    error: str = ""
    mtime: float = 0.0


def saved_at_text(saved_at: str) -> str:
    """An ISO 8601 save time as local ``YYYY-MM-DD HH:MM``; anything else as it is."""
    try:
        moment = datetime.fromisoformat(saved_at)
    except ValueError:
        return saved_at
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def listing(infos: list[SlotInfo]) -> str:
    """The slots as the ``saves`` command lists them: name, story, turn, place and save time, one a line."""
    if not infos:
        return "No saves yet. Type 'save NAME' to make one."
    width = max(len(info.name) for info in infos)
    lines = [
        f"  {info.name:<{width}}  (cannot be loaded: {info.error})"
        if info.error
        else f"  {info.name:<{width}}  {info.story_title:<20} turn {info.turn:<4} {info.place:<24} "
        f"{saved_at_text(info.saved_at)}"
        for info in infos
    ]
    return "Saves:\n" + "\n".join(lines)


def check_name(name: str) -> str:
    """The slot name, or :class:`SaveError` saying why it cannot be one."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith(".") or ".." in name:
        raise SaveError(
            f"{name!r} is not a slot name: use up to {MAX_NAME} letters, digits, spaces, '_', '-' or '.', "
            "starting with a letter or digit"
        )
    return name


class SlotStore:
    """The save slots of one data folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._written: dict[str, tuple[int, int]] = {}
        """(mtime ns, size) of each slot file this store wrote: known to be a save without reading it again."""
        self._headers: dict[Path, tuple[tuple[int, int, int], SaveHeader | str]] = {}
        self.parts = PartFolder(self.root, MAX_SAVE_BYTES)  # written before the slot that names them (parted.py)
        """The header (or why there is none) of each file listed, by (inode, size, mtime ns): not read again."""

    def path(self, name: str) -> Path:
        """The slot's file; refuses names and symlinks that lead out of the folder."""
        path = self.root / f"{check_name(name)}{SLOT_SUFFIX}"
        root = self.root.resolve()
        if path.is_symlink() and path.resolve().parent != root:
            raise SaveError(f"slot {name!r} is a link out of the saves folder; refusing to use it")
        if path.resolve().parent != root:  # pragma: no cover - the name pattern already prevents it
            raise SaveError(f"slot {name!r} is outside the saves folder")
        return path

    def backup_path(self, name: str) -> Path:
        return self.root / f".{check_name(name)}{SLOT_SUFFIX}{BACKUP_SUFFIX}"

    def exists(self, name: str) -> bool:
        return self.path(name).exists() or self.backup_path(name).exists()

    # ---------------------------------------------------------------- write
    def write(self, name: str, data: bytes, *, new: bool = False) -> Path:
        """Write ``data`` to the slot atomically, keeping the previous version as the backup; with ``new``, only
        to a slot that does not exist yet (a hard link claims it: two processes never both get it).

        Raises:
            SlotTaken: ``new`` and the slot (or its backup) is there; it is left as it was.
            SaveError: the disk is full, the folder is read-only, ...; the
                previous save is left as it was.
        """
        path = self.path(name)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SaveError(f"cannot create the saves folder {self.root}: {exc.strerror or exc}") from None
        self._clean_stale_temps()
        temp = self.root / f".{name}{SLOT_SUFFIX}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            if isinstance(data, Parted):
                self.parts.keep(part for found in data.parts.values() for part in found)
            write_synced(temp, data, exclusive=True)
            if new:
                if self.backup_path(name).exists() or not _claim(temp, path):
                    temp.unlink()
                    raise SlotTaken(f"there is already a save named {name!r}")
            else:
                if path.exists() and self._readable(name, path):  # a backup is only ever a save that reads: a
                    self._keep_backup(path, self.backup_path(name))  # damaged slot is replaced, its good backup
                os.replace(temp, path)  # stays
            sync_folder(self.root)
            info = path.stat()
            self._written[name] = (info.st_mtime_ns, info.st_size)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise SaveError(
                f"could not save to slot {name!r}: {exc.strerror or exc}; the previous save is unchanged"
            ) from None
        return path

    def _readable(self, name: str, path: Path) -> bool:
        """Whether the slot's file is a save: one this store wrote and nothing changed since, or one that reads."""
        try:
            info = path.stat()
        except OSError:
            return False
        return self._written.get(name) == (info.st_mtime_ns, info.st_size) or _valid(path)

    def _keep_backup(self, path: Path, backup: Path) -> None:
        staged = backup.with_name(f"{backup.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            try:
                os.link(path, staged)
            except OSError:  # no hard links on this file system: copy
                shutil.copyfile(path, staged)
                with open(staged, "rb+") as handle:
                    os.fsync(handle.fileno())
            os.replace(staged, backup)
        finally:  # nothing staged is left: not on a failure, nor when the rename did nothing because the backup
            with contextlib.suppress(OSError):  # already was this file (a write that failed or died after it)
                staged.unlink()

    def _clean_stale_temps(self) -> None:
        """Remove what a killed writer left: only the game's own temporary files (never ``.vimrc.tmp``)."""
        cutoff = time.time() - STALE_TEMP_S
        for temp in self.root.glob(".*.tmp"):
            if not _TEMP.fullmatch(temp.name):
                continue
            with contextlib.suppress(OSError):
                if temp.stat().st_mtime < cutoff:
                    temp.unlink()

    def set_aside(self, name: str, prefix: str) -> str | None:
        """Move the game in slot ``name`` to a new slot ``<prefix>-<n>`` (``n`` one past the highest already
        used, so set-aside games sort in the order they were played) and return its name. No slot is ever
        overwritten: each game set aside gets its own. The save that reads and has turns (the slot's file, else
        its backup) is copied, the copy is read back, and only then is ``name`` deleted. A game with no turns is
        not worth a slot: ``name`` is deleted and the answer is None.

        Raises:
            SaveError: neither the slot nor its backup is a save, ``<prefix>-<n>`` is not a slot name, or the copy
                failed; nothing was deleted.
        """
        data = self._worth_keeping(name)
        if data is None:
            self.delete(name)
            return None
        kept = self.claim(prefix, data)
        if not _valid(self.path(kept)):
            raise SaveError(f"the copy in slot {kept!r} does not read back")
        self.delete(name)
        return kept

    def claim(self, prefix: str, data: bytes) -> str:
        """Write ``data`` to a new slot ``<prefix>-<n>`` (``n`` one past the highest already used) and return its
        name: a slot no game has, claimed by a hard link, so two processes never both get it.

        Raises:
            SaveError: ``<prefix>-<n>`` is not a slot name, or no slot could be written.
        """
        first = 1 + max((int(n) for n in self._numbers(prefix)), default=0)
        for number in range(first, first + SET_ASIDE_TRIES):
            name = f"{prefix}-{number}"
            try:
                self.write(name, data, new=True)
            except SlotTaken:  # another StoryEcho took it a moment ago: the next one
                continue
            return name
        raise SaveError(f"no free slot named {prefix!r}-<n> after {SET_ASIDE_TRIES} tries")

    def _worth_keeping(self, name: str) -> bytes | None:
        """The bytes of the game in slot ``name``: its file when that reads and has turns, else its backup when
        that does; None when what reads has no turns (a game never played).

        Raises:
            SaveError: neither the slot nor its backup is a save.
        """
        readable = False
        for source in (self.path(name), self.backup_path(name)):
            try:
                data = read_bytes(source)
                save = decode(data, self.parts.read)
            except SaveError:
                continue
            if save.turn > 0:
                return data
            readable = True
        if not readable:
            raise SaveError(f"slot {name!r} and its backup are both damaged")
        return None

    def _numbers(self, prefix: str) -> list[str]:
        """The ``n`` of every slot named ``<prefix>-<n>``."""
        pattern = re.compile(rf"{re.escape(prefix)}-(\d{{1,9}})")
        return [m.group(1) for m in map(pattern.fullmatch, self._names()) if m]

    def branch(self, name: str, turn: int, new: str, places: Mapping[str, str] | None = None) -> Loaded:
        """Save the game in slot ``name`` as it was after ``turn`` to a new slot ``new`` (``format.branch``);
        returns the branch as it reads back. Slot ``name`` is left as it is.

        Raises:
            SaveError: ``new`` is taken or not a valid name, ``name`` cannot be read, its history does not reach
                ``turn``, or the write failed.
        """
        self.path(new)
        if self.exists(new):
            raise SaveError(f"there is already a save named {new!r}; pick another name")
        loaded = self.read(name)
        self.write(new, branch(loaded.save, turn, places))
        return self.read(new)

    # ----------------------------------------------------------------- read
    def read(self, name: str) -> Loaded:
        """The save in slot ``name``; the backup, with a notice, when the slot file is unreadable.

        Raises:
            SaveError: no such slot, or neither the file nor its backup is a valid save.
        """
        path, backup = self.path(name), self.backup_path(name)
        if not path.exists() and not backup.exists():
            raise SaveError(f"no save named {name!r}")
        try:
            return Loaded(read_save(path), [])
        except SaveError as exc:
            if not backup.exists():
                raise SaveError(f"slot {name!r} cannot be loaded: {exc}") from None
            try:
                save = read_save(backup)
            except SaveError:
                raise SaveError(f"slot {name!r} cannot be loaded: {exc} (and its backup is damaged too)") from None
            return Loaded(
                save,
                [f"Slot {name!r} was damaged ({exc}); loaded its previous version, from turn {save.turn}."],
                from_backup=True,
            )

    def list(self) -> list[SlotInfo]:
        """Every slot in the folder, newest first, from each save's header (:meth:`info`); unreadable ones say
        why."""
        names = self._names()
        infos = [self.info(name) for name in names]
        keep = {self.root / f"{n}{SLOT_SUFFIX}" for n in names} | {self.backup_path(n) for n in names}
        for gone in [path for path in list(self._headers) if path not in keep]:
            self._headers.pop(gone, None)
        return sorted(infos, key=lambda i: (-i.mtime, i.name))

    def newest(self, start: str, *, whole: bool = False) -> SlotInfo | None:
        """The newest readable slot whose name starts with ``start`` (any story's quick slot, at the title), or is
        ``start`` with ``whole``; None when there is none."""
        if whole:
            found = [self.info(start)] if self.exists(start) else []
        else:
            found = [i for i in self.list() if i.name.startswith(start)]
        return max((i for i in found if not i.error), key=lambda i: i.saved_at, default=None)

    def latest(self, kind: SlotKind | None = None) -> SlotInfo | None:
        """The newest slot whose header reads (of ``kind`` when given), reading only as many as it takes: the
        title's Continue asks for the newest autosave first, the game played last in the Textual game (issue 43:
        a ``storyecho run --slot X`` made X the Continue over a 163-turn autosave)."""
        names = sorted(self._names(), key=lambda n: (-self._mtime(n), n))
        for name in names:
            info = self.info(name)
            if not info.error and kind in (None, info.kind):
                return info
        return None

    def _names(self) -> set[str]:
        """The valid slot names in the folder (a slot whose file is gone but whose backup is left counts)."""
        if not self.root.is_dir():
            return set()
        names = {p.name[: -len(SLOT_SUFFIX)] for p in self.root.glob(f"*{SLOT_SUFFIX}") if not p.name.startswith(".")}
        names |= {
            p.name[1 : -len(SLOT_SUFFIX + BACKUP_SUFFIX)] for p in self.root.glob(f".*{SLOT_SUFFIX}{BACKUP_SUFFIX}")
        }
        valid = set()
        for name in names:
            try:
                valid.add(check_name(name))
            except SaveError:
                continue
        return valid

    def _mtime(self, name: str) -> float:
        return _mtime(self.path(name)) or _mtime(self.backup_path(name))

    def info(self, name: str) -> SlotInfo:
        """One line of the slot list: the header of the slot's file, or of its backup when the file is not a save
        (as :meth:`read` falls back to it); ``error`` says why neither reads. Only headers are read: a load still
        validates the whole file, and falls back to the backup when the rest of the file is damaged."""
        try:
            path, backup = self.path(name), self.backup_path(name)
            if not path.exists() and not backup.exists():
                raise SaveError(f"no save named {name!r}")
            try:
                header = self._header(path)
            except SaveError as exc:
                if not backup.exists():
                    raise SaveError(f"slot {name!r} cannot be loaded: {exc}") from None
                try:
                    header = self._header(backup)
                except SaveError:
                    raise SaveError(f"slot {name!r} cannot be loaded: {exc} (and its backup is damaged too)") from None
        except SaveError as exc:
            return SlotInfo(name, error=str(exc))
        h = header
        return SlotInfo(name, h.story_id, h.story_title, h.turn, h.place, h.saved_at, h.kind, "", self._mtime(name))

    def line_of(self, name: str) -> str | None:
        """The line of the moment in slot ``name`` (``lines.py``; its file's header, else its backup's, as a load
        falls back to it); None when neither reads. Headers only: a slot of a long game costs no parse."""
        moment = self.moment_of(name)
        return moment[0] if moment is not None else None

    def game_of(self, name: str) -> str | None:
        """The game (its id) of the moment in slot ``name``, any line of it (``lines.game_of``); None when it does
        not read."""
        line = self.line_of(name)
        return game_of(line) if line is not None else None

    def moment_of(self, name: str) -> tuple[str, int] | None:
        """The line and turn slot ``name`` holds, from its file's header, else its backup's; None when neither
        reads. Headers only."""
        for path in (self.path(name), self.backup_path(name)):
            try:
                header = self._header(path)
            except SaveError:
                continue
            return header.session_id, header.turn
        return None

    def latest_of(self, line: str) -> tuple[str, int] | None:
        """The slot holding the latest turn of ``line``, and that turn (headers only); None when no slot holds it."""
        held = [(moment[1], name) for name in self._names() if (moment := self.moment_of(name)) and moment[0] == line]
        turn, name = max(held, default=(-1, ""))
        return (name, turn) if held else None

    def verify(self, name: str) -> SlotInfo:
        """The slot's line from a full read, as a load reads it (its backup when the file is damaged): what
        :meth:`info` says once the whole save is checked, damage past the header included. It costs a parse of the
        whole file, which holds the interpreter (a thread does not spare the screen's): the load screen checks
        only the slot picked, before the game in play is closed for it."""
        try:
            s = self.read(name).save
        except SaveError as exc:
            return SlotInfo(name, error=str(exc))
        return SlotInfo(name, s.story_id, s.story_title, s.turn, s.place, s.saved_at, s.kind, "", self._mtime(name))

    def _header(self, path: Path) -> SaveHeader:
        """``read_header(path)``, remembered while the file stays the same (inode, size, modification time)."""
        try:
            info = path.stat()
        except OSError as exc:
            raise SaveError(f"cannot read {path.name}: {exc.strerror or exc}") from None
        key = (info.st_ino, info.st_size, info.st_mtime_ns)
        known = self._headers.get(path)
        if known is None or known[0] != key:
            try:
                known = (key, read_header(path))
            except SaveError as exc:
                known = (key, str(exc))
            self._headers[path] = known
        if isinstance(known[1], str):
            raise SaveError(known[1])
        return known[1]

    def delete(self, name: str) -> None:
        """Remove the slot and its backup."""
        path, backup = self.path(name), self.backup_path(name)
        if not path.exists() and not backup.exists():
            raise SaveError(f"no save named {name!r}")
        for target in (path, backup):
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        self._written.pop(name, None)
        sync_folder(self.root)


def read_save(path: Path) -> SaveFile:
    """Read and validate one save file, checking its size before reading it (its parts, if any, from its folder)."""
    return decode(read_bytes(path), PartFolder(path.parent, MAX_SAVE_BYTES).read)


def _claim(temp: Path, path: Path) -> bool:
    """Give ``temp``'s file the name ``path`` unless a file has it (then False; ``temp`` is left). A hard link
    fails when ``path`` exists, even when another process makes it at the same moment; where there are no hard
    links, a check then a rename."""
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    except OSError:  # no hard links on this file system
        if path.exists():
            return False
        os.replace(temp, path)
        return True
    temp.unlink()
    return True


def _valid(path: Path) -> bool:
    """Whether ``path`` holds a save that reads."""
    try:
        read_save(path)
    except SaveError:
        return False
    return True


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
